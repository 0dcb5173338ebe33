package eventlog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// CommitMode says when a member commits its offsets.
type CommitMode int

// The commit modes.
const (
	// CommitAfter commits after the batch was processed: at-least-once; a
	// crash re-reads the uncommitted records, and a record whose handler
	// failed is read again at the next poll. Default.
	CommitAfter CommitMode = iota
	// CommitBefore commits right after the poll, before processing:
	// at-most-once. A record whose handler failed is gone, and the records
	// committed but not processed when the member crashes, leaves or loses
	// the partition in a rebalance are lost (sim.CauseCommitBeforeProcess).
	CommitBefore
	// CommitAuto commits the member's progress (the offset of the first
	// record it has not handled) at a poll once AutoCommitEvery ticks have
	// passed, and on revocation; a crash re-reads what was processed since.
	CommitAuto
	// CommitOffByOne is the classic mistake: after processing it commits the
	// offset of the last processed record instead of the next one, so every
	// restart or rebalance re-reads one record per partition.
	CommitOffByOne
)

var commitNames = [...]string{"after", "before", "auto", "off_by_one"}

// String returns the mode's name ("after", "before", "auto", "off_by_one").
func (c CommitMode) String() string {
	if c >= 0 && int(c) < len(commitNames) {
		return commitNames[c]
	}
	return "commit(" + strconv.Itoa(int(c)) + ")"
}

// MarshalText returns the mode's name as String does; an unknown mode is
// an error wrapping ErrInvalidConfig.
func (c CommitMode) MarshalText() ([]byte, error) {
	return marshalName(commitNames[:], int(c), "commit mode")
}

// UnmarshalText sets c from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (c *CommitMode) UnmarshalText(text []byte) error {
	i, err := unmarshalName(commitNames[:], text, "commit mode")
	if err == nil {
		*c = CommitMode(i)
	}
	return err
}

// The defaults of MemberConfig.
const (
	DefaultBatch           = 10
	DefaultAutoCommitEvery = sim.Tick(5)
	DefaultRestartAfter    = sim.Tick(1)
)

// MemberConfig configures a group member.
type MemberConfig struct {
	// Name is required and unique within the group; assignment orders
	// members by it, and the World names the member "member:<group>/<name>".
	Name string
	// Handler handles each record: the one handler contract of every model.
	// It records the record's effect with d.Apply, or d.Skip for a
	// duplicate it recognises; a nil error means it is done with the
	// record, an error of any class fails it (see CommitMode). nil means
	// sim.Effect(""): apply every record. It is wrapped with the topic's
	// fault injector (faults.Injector.Handler), so the handler.* fault
	// points apply to every member. A handler implementing sim.Timed keeps
	// the member busy: it stops polling until the record is done.
	Handler sim.Handler
	// Pull makes the member a pull member for adapters: Step polls nothing,
	// and the adapter drives it with Poll, MarkProcessed, MarkFailed,
	// Commit and CommitRecords. Handler must be nil then.
	Pull bool
	// Commit is the commit mode; the zero value is CommitAfter.
	Commit CommitMode
	// AutoCommitEvery is the interval of CommitAuto in ticks; 0 means
	// DefaultAutoCommitEvery.
	AutoCommitEvery sim.Tick
	// Batch is the most records one Step polls; 0 means DefaultBatch.
	Batch int
	// RestartAfter is how many ticks a crashed member stays down before it
	// rejoins; 0 means DefaultRestartAfter.
	RestartAfter sim.Tick
	// Start is the tick the member joins its group at: it joins at its
	// first Step at or after Start, or at once when Start has come when it
	// is created.
	Start sim.Tick
}

// Validate reports a configuration error.
func (c MemberConfig) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, fmt.Errorf("%w: a member needs a name", ErrInvalidConfig))
	}
	if c.Commit < CommitAfter || c.Commit > CommitOffByOne {
		errs = append(errs, fmt.Errorf("%w: unknown commit mode %d", ErrInvalidConfig, int(c.Commit)))
	}
	if c.AutoCommitEvery < 0 || c.Batch < 0 || c.RestartAfter < 0 || c.Start < 0 {
		errs = append(errs, fmt.Errorf("%w: member %q: start, intervals and batch must not be negative", ErrInvalidConfig, c.Name))
	}
	if c.Pull && c.Handler != nil {
		errs = append(errs, fmt.Errorf("%w: member %q: a pull member has no handler", ErrInvalidConfig, c.Name))
	}
	return errors.Join(errs...)
}

type memberState uint8

const (
	stateIdle    memberState = iota // created, waiting for its start tick
	stateActive                     // polling (in the group, or removed by the coordinator and about to rejoin)
	stateStalled                    // paused past its session timeout; commits pending
	stateDown                       // crashed, restarting
	stateLeft                       // left the group
)

// held is a record of the member's last poll as the log keeps it: its
// partition and offset, its entry in the log and, when the partition is
// wide, its aside (24 bytes), so a handler member never builds the
// 184-byte Record that Poll hands out. While the member has not handled
// it (from got[next] on), e and a point into the partition; before the
// log clears or moves them (retention, compaction), it gives the member a
// copy (Log.detach), so the record survives while the member works
// through the batch. Poll hands its caller Records instead and keeps no
// held record, so the log never copies one for a pull member.
type held struct {
	e   *entry
	a   *aside // nil: created in the tick it was appended, no origin
	p   int
	off int64
}

// message returns the held record's message.
func (h *held) message() sim.Message {
	if h.a != nil {
		return h.e.message(h.a.created, h.a.origin)
	}
	return h.e.message(h.e.tick, 0)
}

// fill writes the held record's message into *dst, as message returns it.
func (h *held) fill(dst *sim.Message) {
	if h.a != nil {
		h.e.fill(dst, h.a.created, h.a.origin)
		return
	}
	h.e.fill(dst, h.e.tick, 0)
}

// record returns h as Poll hands it out.
func (h *held) record() Record {
	return Record{Partition: h.p, Offset: h.off, Tick: h.e.tick, Message: h.message()}
}

// reserve makes room in m.got and m.out for n more records. A member
// without a batch, or without outstanding records, takes the group's
// spare buffer for them when it has the room (see handBack). Otherwise,
// the first time either grows it takes room for a whole batch
// (cfg.Batch), so a member polling its batch size allocates each once;
// after that it grows as append does. The check that both have the room
// already (as they have at every fetch of a poll after the first) is
// small enough to be inlined into fetch; the rest is makeRoom.
func (m *Member) reserve(n int) {
	if len(m.got)+n > cap(m.got) || len(m.out)+n > cap(m.out) {
		m.makeRoom(n)
	}
}

// makeRoom is reserve where m.got or m.out lacks the room.
func (m *Member) makeRoom(n int) {
	if len(m.got)+n > cap(m.got) {
		if g := m.g; len(m.got) == 0 && cap(g.spare) >= n {
			m.got, g.spare = g.spare, nil
		} else {
			m.got = slices.Grow(m.got, max(n, m.cfg.Batch-len(m.got)))
		}
	}
	if len(m.out)+n > cap(m.out) {
		switch g := m.g; {
		case len(m.out)+n <= cap(m.outBuf):
			// Room is left before m.out, where finish took records off
			// its front: slide them back to the start.
			m.out = append(m.outBuf[:0], m.out...)
		case len(m.out) == 0 && cap(g.spareOut) >= n:
			m.out, m.outBuf, g.spareOut = g.spareOut, g.spareOut, nil
		default:
			m.out = slices.Grow(m.out, max(n, m.cfg.Batch-len(m.out)))
			m.outBuf = m.out[:0]
		}
	}
}

// own makes ps the member's partitions. The list starts in the room the
// member keeps for a few (ownRoom), and is allocated when the member
// first owns more partitions than there is room for, so it does not grow
// by appending, with room for every partition of the group, so that
// rebalances handing the member more of them later do not allocate
// again.
func (m *Member) own(ps []int) {
	if cap(m.owned) < len(ps) {
		if len(ps) <= len(m.ownRoom) {
			m.owned = m.ownRoom[:0]
		} else {
			m.owned = make([]int, 0, max(len(ps), len(m.g.parts)))
		}
	}
	m.owned = append(m.owned[:0], ps...)
}

// outRec is a record a member fetched and has not handled: outstanding.
type outRec struct {
	off     int64
	id      sim.ID
	p       int32
	attempt int32
}

// Member is a consumer-group member, a sim.Component of sim.PhaseConsumer.
//
// A handler member (the default) runs one poll-handle-commit cycle per
// Step: it polls at most Batch records from its partitions (Poll, rotating
// the partition it starts with), hands each to its handler in order,
// reports each as done (MarkProcessed or MarkFailed) and commits by its
// CommitMode (Commit). A handler failure ends the batch: the rest of it is
// dropped and read again at the next poll. A handler that takes time
// (sim.Timed, handler.slow) keeps the member busy: the member stops
// polling, and the record is handled when the time is up, so its effect
// lands then; a record whose partition is revoked meanwhile is abandoned
// unhandled. A pull member (MemberConfig.Pull) is driven by an adapter
// through the same calls; its Step only restarts, rejoins and wakes it.
//
// Fault points: member.leave, broker.unavailable (the poll or a commit
// fails), broker.ack_lost (a commit is lost on its way), member.crash
// (before a record), consumer.crash_after_effect,
// consumer.crash_before_commit and member.session_timeout; the handler.*
// points through the wrapped handler. O(partitions owned + batch x log n)
// per Step.
//
// The pull API (Poll, Delivery, MarkProcessed, MarkFailed, Commit,
// CommitRecords) is what Step is built from, so a pull member driven by an
// adapter behaves exactly as a handler member does. Its invariants:
//
//   - Poll returns records only of partitions the member owns in the
//     group's current generation, each partition's records in offset order
//     from the member's position, which moves past them. A record Poll
//     returns is outstanding until the member reports it done with
//     MarkProcessed or MarkFailed, or drops it.
//   - The member drops its outstanding records of a partition whenever the
//     partition's position moves other than by reading: a rebalance (which a
//     join, leave, crash or session timeout causes), a seek, an
//     auto.offset.reset, and a failure (MarkFailed drops the records after
//     the failed one, and the member reads them again at its next poll).
//   - When the member gives a partition up (rebalance, crash, leave, session
//     timeout), the next owner resumes at the committed offset: the records
//     below it that the member never handled (outstanding ones, and those
//     between its position and the committed offset after a CommitBefore
//     failure) were committed but never processed, and the member books
//     them lost with sim.CauseCommitBeforeProcess, at that moment. When the
//     next owner's position is decided only at its fetch (no committed
//     offset in a latest group, or one past the end), the fetch books what
//     it passes. A seek forward books the records it skips that the group
//     has not handled with sim.CauseSeek, at the seek.
//   - Effects are recorded on the Delivery (Apply, Skip) and count for the
//     group whenever they happen: a handler that applies a dropped record
//     after all still applied it, and the ledger reconciles a booked loss.
//   - The member's progress in a partition is the offset of its first
//     outstanding record there, or its position when none is outstanding.
//     Commit commits progress (minus one in CommitOffByOne), so a commit
//     never passes a record that was not handled; CommitRecords commits
//     exactly what it is given; CommitBefore commits the position right
//     after Poll; CommitAuto commits progress at a Poll once the interval
//     has passed, and on revocation.
//   - A handler member busy with a slow record refuses Poll and Fetch
//     (ErrBusy) and keeps the batch its handler is working through.
//   - A member the coordinator removed (no poll for longer than the
//     session timeout) rejoins at its next Poll; its commits in between are
//     rejected as stale.
//
// The adapter must call the pull API from the goroutine that drives the
// World, like every other call of this package.
type Member struct {
	g         *Group
	cfg       MemberConfig
	h         sim.Handler // cfg.Handler behind the injector's handler faults; nil until first needed (see handler)
	state     memberState
	in        bool // in the group now
	expired   bool // removed by the coordinator (session timeout); rejoins at its next poll
	gen       int
	owned     []int  // in ownRoom while it fits there
	ownRoom   [3]int // room for the partitions of a member that owns a few: the 24 bytes its size class has left
	rr        int
	lastPoll  sim.Tick
	lastAuto  sim.Tick
	until     sim.Tick // end of a stall or a restart
	busy      bool     // the handler is working on got[next]: next < len(got) while set
	busyUntil sim.Tick
	got       []held        // a handler member's last poll; empty after Poll, which hands out Records
	next      int           // the index in got of the record to handle next
	out       []outRec      // outstanding records, in fetch order: a part of outBuf
	outBuf    []outRec      // the array out is in, from its start; finish takes the first record of out off by moving out's start
	x         *memberBufs   // nil until first needed
	d         *sim.Delivery // the delivery the handler reads; nil until first needed (see delivery)

	crashes int
}

// memberBufs are the buffers only some members need: the commits a stall
// holds back, the records Poll returns and the reads a history records. A
// member makes them at the first use, so a handler member that needs none
// fits in 320 bytes (see TestMemberSize).
type memberBufs struct {
	pending []Position // commits held back by a stall
	batch   []Record   // the last poll as Poll returns it; built only for Poll's callers
	reads   []Read
}

// delivery returns the delivery the member hands its handler, making it
// at the first call: a member whose records all take the plain effect's
// short path (see plain) never prepares one, and saves its 320 bytes.
// The member prepares every record in the same delivery, so what it
// holds already need not be stored again (see entry.fill), and a slow
// handler finds it as it left it when its record is done. O(1).
func (m *Member) delivery() *sim.Delivery {
	if m.d == nil {
		m.d = &sim.Delivery{}
	}
	return m.d
}

// bufs returns the member's buffers, making them at the first call.
func (m *Member) bufs() *memberBufs {
	if m.x == nil {
		m.x = &memberBufs{}
	}
	return m.x
}

// memberHandler calls the member's current handler, so SetHandler takes
// effect behind the fault wrapper.
type memberHandler struct{ m *Member }

// Handle calls the configured handler, or applies the record without one.
func (x memberHandler) Handle(d *sim.Delivery) error {
	if h := x.m.cfg.Handler; h != nil {
		return h.Handle(d)
	}
	d.Apply("")
	return nil
}

// Duration is the configured handler's processing time.
func (x memberHandler) Duration(d *sim.Delivery) sim.Tick {
	if h := x.m.cfg.Handler; h != nil {
		return sim.DurationOf(h, d)
	}
	return 0
}

// NewMember creates a member of group g on the world w and registers it
// there as the component "member:<group>/<name>". It joins the group (which
// rebalances) at once when cfg.Start has come, else at its first Step at or
// after cfg.Start. A name is used once per group: a member that left comes
// back with Rejoin.
func NewMember(w *sim.World, g *Group, cfg MemberConfig) (*Member, error) {
	if w == nil || g == nil {
		return nil, fmt.Errorf("%w: a member needs a world and a group", ErrInvalidConfig)
	}
	if g.env != w.Env() {
		return nil, fmt.Errorf("%w: group %s belongs to another world", ErrInvalidConfig, g.cfg.Name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, x := range g.all {
		if x.cfg.Name == cfg.Name {
			return nil, fmt.Errorf("%w: %q in group %s", ErrDuplicateMember, cfg.Name, g.cfg.Name)
		}
	}
	if cfg.Batch == 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.AutoCommitEvery == 0 {
		cfg.AutoCommitEvery = DefaultAutoCommitEvery
	}
	if cfg.RestartAfter == 0 {
		cfg.RestartAfter = DefaultRestartAfter
	}
	m := &Member{g: g, cfg: cfg}
	if err := w.Add("member:"+g.cfg.Name+"/"+cfg.Name, m); err != nil {
		return nil, err
	}
	g.all = append(g.all, m)
	if cfg.Start <= w.Now() {
		m.join("joined")
	}
	return m, nil
}

// Phase returns sim.PhaseConsumer.
func (m *Member) Phase() sim.Phase { return sim.PhaseConsumer }

// Name returns the member's name.
func (m *Member) Name() string { return m.cfg.Name }

// Group returns the member's group.
func (m *Member) Group() *Group { return m.g }

// Generation returns the generation the member last joined or was
// reassigned in; it lags the group's after the member was removed.
func (m *Member) Generation() int { return m.gen }

// Assigned returns the partitions the member owns, in numeric order. The
// slice is the member's own; do not modify it.
func (m *Member) Assigned() []int { return m.owned }

// Active reports whether the member is in the group and polling.
func (m *Member) Active() bool { return m.state == stateActive && m.in }

// Busy reports whether a slow handler is working on a record.
func (m *Member) Busy() bool { return m.busy }

// Crashes returns how often the member crashed.
func (m *Member) Crashes() int { return m.crashes }

// SetHandler replaces the handler ("deploy the fix"); nil applies every
// record. The handler fault points still apply.
func (m *Member) SetHandler(h sim.Handler) { m.cfg.Handler = h }

// join puts the member into the group afresh.
func (m *Member) join(why string) {
	now := m.g.env.Now()
	m.state, m.expired, m.busy = stateActive, false, false
	letGo(m.got)
	m.out, m.got, m.next = m.out[:0], m.got[:0], 0
	if x := m.x; x != nil {
		x.pending, x.batch = x.pending[:0], x.batch[:0]
	}
	m.lastPoll, m.lastAuto = now, now
	m.g.add(m, why)
}

// Leave takes the member out of the group (the group rebalances): it
// drops the records it fetched and has not handled, and stops until
// Rejoin. A member in auto-commit mode commits its progress first. Records
// committed but not processed are lost (CommitBefore). A member that has
// not started yet will not start; leaving twice is a no-op.
func (m *Member) Leave() { m.leave("") }

func (m *Member) leave(rule string) {
	switch m.state {
	case stateLeft:
		return
	case stateIdle, stateDown:
		m.state = stateLeft
		return
	}
	if m.state == stateActive && m.in && m.cfg.Commit == CommitAuto {
		_ = m.commitProgress()
	}
	m.state, m.busy = stateLeft, false
	if m.in {
		m.g.remove(m, "left", rule)
	}
	m.dropBatch()
}

// dropBatch forgets the records the member fetched and has not handled,
// so that retention no longer copies entries for it (see Log.detach), and
// hands its batch buffer back (see handBack).
func (m *Member) dropBatch() {
	m.out = m.out[:0]
	m.handBack()
}

// Rejoin puts a member that left, crashed or was removed back into the
// group, which rebalances; a member whose start tick has not come yet
// waits for it. It fails when the member is in the group.
func (m *Member) Rejoin() error {
	if m.in {
		return fmt.Errorf("%w: %q in group %s", ErrDuplicateMember, m.cfg.Name, m.g.cfg.Name)
	}
	if m.state == stateIdle {
		return nil
	}
	if m.state == stateLeft && m.g.env.Now() < m.cfg.Start {
		m.state = stateIdle
		return nil
	}
	m.join("joined")
	return nil
}

// Crash makes the member crash now: it loses its uncommitted progress and
// the records it fetched and has not handled, leaves the group and rejoins
// after RestartAfter ticks. Records committed but not processed are lost
// (CommitBefore). rule names the fault rule in the trace ("" for a crash
// by hand).
func (m *Member) Crash(rule string) { m.crash(rule, "") }

// crash takes the member down.
func (m *Member) crash(rule, why string) {
	if m.state != stateActive && m.state != stateStalled {
		return
	}
	g := m.g
	now := g.env.Now()
	m.crashes++
	if !g.env.Trace.BookCrashed(now) { // only the ledger listens: booked without building the event
		ev := sim.Event{Kind: sim.KindCrashed, Where: g.t.where, Actor: m.cfg.Name, Consumer: g.cfg.Name, Rule: rule}
		if g.env.Trace.Detailed() {
			ev.Detail = "member of group " + g.cfg.Name + " crashed, restarts at " + (now + m.cfg.RestartAfter).String()
			if why != "" {
				ev.Detail = why + ": " + ev.Detail
			}
		}
		g.env.Emit(ev)
	}
	m.state, m.busy = stateDown, false
	m.until = now + m.cfg.RestartAfter
	if x := m.x; x != nil {
		x.pending = x.pending[:0]
	}
	if m.in {
		g.remove(m, "crashed", rule)
	}
	m.dropBatch()
}

// Stall makes the member stop polling for d ticks (a long pause). When d
// exceeds the session timeout, the coordinator removes it; its commits
// after waking are rejected as stale and it rejoins. A member that is not
// active, or busy with a slow record, does not stall.
func (m *Member) Stall(d sim.Tick) {
	if m.state != stateActive || m.busy {
		return
	}
	m.state = stateStalled
	m.until = m.g.env.Now() + d
}

// wake ends a stall: the member sends the commits it had pending. When the
// coordinator removed it meanwhile, they are rejected as stale and it
// rejoins. A commit that is accepted (the member kept the partition
// through a rebalance) also moves its position up to the committed offset:
// it handled those records before the stall.
func (m *Member) wake() {
	g := m.g
	m.state = stateActive
	if x := m.x; x != nil {
		for _, p := range x.pending {
			if g.commit(m, m.gen, p.Partition, p.Offset) == nil {
				if gp := &g.parts[p.Partition]; gp.pos >= 0 && gp.pos < p.Offset {
					gp.pos = p.Offset
					gp.epoch++
				}
			}
		}
		x.pending = x.pending[:0]
	}
	m.lastPoll = g.env.Now()
	if m.expired {
		m.join("joined")
	}
}

// fault consults point s (one of the topic's sites) for the member, about
// the record e if set. It returns the firing, which belongs to the
// injector and is overwritten by its next firing, or nil. When no rule
// targets the point it costs a bit test and builds no context.
func (m *Member) fault(s faults.Site, e *entry) *faults.Firing {
	if !s.Armed() {
		return nil
	}
	c := m.context(e)
	return s.Check(&c)
}

// context returns the context of a fault point the member consults, about
// the record e if set. Its Where is never empty.
func (m *Member) context(e *entry) faults.Context {
	c := faults.Context{Where: m.g.t.where, Consumer: m.cfg.Name, Group: m.g.cfg.Name}
	if e != nil {
		aboutEntry(&c, e)
	}
	return c
}

// aboutEntry makes c, a member's context, about the record e: it writes
// the record's part of it (key, type, message).
func aboutEntry(c *faults.Context, e *entry) {
	c.Key, c.Type, c.Msg = e.key, e.hdr.Type, e.id
}

// Step runs the member at tick now. A handler member finishes the record
// its handler is busy with, or polls a batch, hands each record to the
// handler and commits: the same calls a pull member's adapter makes. It
// also joins at the start tick, restarts after a crash and wakes from a
// stall.
func (m *Member) Step(now sim.Tick) {
	switch m.state {
	case stateLeft:
		return
	case stateIdle:
		if now < m.cfg.Start {
			return
		}
		m.join("joined")
	case stateDown:
		if now < m.until {
			return
		}
		m.join("joined")
	case stateStalled:
		if now < m.until {
			return
		}
		m.wake()
		return
	}
	switch {
	case m.busy:
		if now < m.busyUntil {
			return
		}
	case m.cfg.Pull:
		return
	default:
		if n, _ := m.poll(m.cfg.Batch); n == 0 {
			return
		}
	}
	m.process(now)
}

// plain reports whether the member's handler is the plain effect
// (sim.Effect, or none, which applies every record alike): its whole
// record of a delivery is one processed event, so when the trace would
// not build that event (sim.EffectRun.Book) and the fault wrapper would
// pass the delivery straight through, the member need not prepare the
// delivery or call the handler at all.
func (m *Member) plain() bool {
	return m.cfg.Handler == nil || sim.IsEffect(m.cfg.Handler)
}

// handler returns the member's handler behind the injector's handler
// faults, wrapping it at the first call: a member whose records all take
// the plain effect's short path, or a pull member, never needs the
// wrapper, and one made later behaves as one made with the member would,
// as the wrapper finds the rules of its points whenever they were added.
func (m *Member) handler() sim.Handler {
	if m.h == nil {
		m.wrap()
	}
	return m.h
}

// wrap makes the member's handler behind the injector's handler faults.
func (m *Member) wrap() { m.h = m.g.t.cfg.Faults.Handler(memberHandler{m}) }

// done ends the outstanding record r, at index i of m.out, that the plain
// effect applied without a delivery, as finish ends a delivery of it that
// applied one effect and succeeded.
func (m *Member) done(i int, r *held) {
	m.g.markApplied(r.p, r.off)
	if m.out[i].id != r.e.id {
		return // not the record finish would end: it ends none
	}
	if i == 0 {
		m.out = m.out[1:]
	} else {
		m.out = append(m.out[:i], m.out[i+1:]...)
	}
}

// handBack ends the member's batch, whose records it has handled,
// dropped, or handed to Fetch's caller as Records: it lets go of them and
// leaves the batch buffer to the group as the spare, unless the spare is
// as large already, so the members of a group, which step one after the
// other, poll into one buffer rather than one each. The buffer of its
// outstanding records goes the same way when none is left (a handler
// member's, after its batch; not a pull member's, whose fetched records
// stay outstanding until it commits them). A member busy with a slow
// record has not ended its batch and keeps it, and one that takes a spare
// takes it from the group, so no two members ever hold one buffer.
// O(batch).
func (m *Member) handBack() {
	g := m.g
	letGo(m.got)
	if cap(m.got) > cap(g.spare) {
		g.spare = m.got[:0]
	}
	m.got, m.next = nil, 0
	if len(m.out) == 0 {
		// Nothing is outstanding either: the buffer of the outstanding
		// records goes the same way.
		if cap(m.outBuf) > cap(g.spareOut) {
			g.spareOut = m.outBuf[:0]
		}
		m.out, m.outBuf = nil, nil
	}
}

// letGo clears the pointers of the held records b, so that they no
// longer keep entries the log has let go of alive. It stores nil field by
// field, the entry always (every held record has one) and the other
// pointer only where it is set: a store of a pointer takes a
// write barrier while the collector marks, which the compiler makes a
// test and a buffered store, where clearing the records as a whole
// (clear) takes the runtime's bulk barrier over every word. O(len(b)).
func letGo(b []held) {
	for i := range b {
		h := &b[i]
		h.e = nil
		if h.a != nil {
			h.a = nil
		}
	}
}

// process hands the records of the last poll to the handler, from
// got[next] on, then ends the batch. It returns early while the handler
// is busy with a slow record, or when the member crashed or left.
func (m *Member) process(now sim.Tick) {
	// The plain effect's run of processed events (see plain), taken once
	// for the batch.
	var er sim.EffectRun
	plain := m.plain()
	if plain {
		er = m.g.env.Trace.Effects(now, m.g.cfg.Name, &m.g.lc)
	}
	// The fault context of the record being handled, used for the crash
	// and the crash-after-effect points: the member's part of it is built
	// once for the batch, and the record's part (about) is written when a
	// record needs it: before the crash point when it is armed, else
	// before the handler runs (or, for a booked record, at the
	// crash-after-effect point). The injector neither changes nor keeps
	// it. A local, so writing it costs no write barrier.
	fc := m.context(nil)
	for m.next < len(m.got) {
		if m.state != stateActive {
			return
		}
		r := &m.got[m.next]
		about := false // fc is about r
		booked := false
		i := m.find(r.p, r.off)
		if i < 0 {
			m.busy = false // dropped by a rebalance or a seek: abandoned unhandled
			m.next++
			continue
		}
		if !m.busy {
			if s := m.g.t.fx.crash; s.Armed() {
				aboutEntry(&fc, r.e)
				about = true
				if f := s.Check(&fc); f != nil {
					m.crash(f.Rule, "")
					return
				}
			}
			// The handler's whole record, its one processed event, is
			// numbered or booked when booked is set: no delivery is
			// prepared, and the record is done as finish would end it.
			booked = plain && m.g.t.cfg.Faults.Passes(m.h) && er.Book(r.e.id)
			if booked {
				m.done(i, r)
			} else {
				d := m.delivery()
				r.fill(&d.Msg) // built in place, not copied once more
				m.prepareInPlace(d, r.p, r.off, int(m.out[i].attempt))
				if t := sim.DurationOf(m.handler(), d); t > 0 {
					m.busy, m.busyUntil = true, now+t
					return
				}
			}
		}
		if !booked {
			if !about {
				// Now, not after the handler: a handler that crashes or
				// removes its own member ends the batch, which lets go of
				// r (handBack), and the crash-after-effect point still
				// names r's record.
				aboutEntry(&fc, r.e)
				about = true
			}
			m.busy = false
			d := m.delivery() // prepared above, or before a slow handler made the member busy
			err := m.handler().Handle(d)
			_ = m.finish(d, err)
			if err != nil {
				m.dropAll()
				break
			}
		}
		if s := m.g.t.fx.crashAfter; s.Armed() {
			if !about { // a booked record: no handler ran
				aboutEntry(&fc, r.e)
			}
			if f := s.Check(&fc); f != nil {
				m.crash(f.Rule, "after effect")
				return
			}
		}
		m.next++
	}
	m.handBack()
	if m.state != stateActive || !m.in {
		return
	}
	switch m.cfg.Commit {
	case CommitAfter, CommitOffByOne:
		_ = m.Commit()
	default:
		if f := m.fault(m.g.t.fx.sessionTimeout, nil); f != nil {
			m.Stall(m.g.cfg.SessionTimeout + 1)
		}
	}
}
