package eventlog

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// CommitMode says when a member commits its offsets.
type CommitMode int

// The commit modes.
const (
	// CommitAfter commits after the batch was processed: at-least-once; a
	// crash re-reads the uncommitted records. Default.
	CommitAfter CommitMode = iota
	// CommitBefore commits right after the poll, before processing:
	// at-most-once; a crash loses the committed but unprocessed records.
	CommitBefore
	// CommitAuto commits the current positions every AutoCommitEvery ticks
	// (and on revocation); a crash re-reads what was processed since.
	CommitAuto
	// CommitOffByOne is the classic mistake: after processing it commits the
	// offset of the last processed record instead of the next one, so every
	// restart or rebalance re-reads one record per partition.
	CommitOffByOne
)

var commitNames = [...]string{"after", "before", "auto", "off-by-one"}

// String returns the mode's name ("after", "before", "auto", "off-by-one").
func (c CommitMode) String() string {
	if c >= 0 && int(c) < len(commitNames) {
		return commitNames[c]
	}
	return "commit(" + strconv.Itoa(int(c)) + ")"
}

// ParseCommitMode parses a mode name as String returns it.
func ParseCommitMode(s string) (CommitMode, error) {
	for i, n := range commitNames {
		if s == n {
			return CommitMode(i), nil
		}
	}
	if s == "" {
		return CommitAfter, nil
	}
	return 0, fmt.Errorf("%w: unknown commit mode %q", ErrInvalidConfig, s)
}

// Handler processes one record. A nil error means its effect was applied;
// an error leaves the record to be retried at the next poll (the partition
// waits behind it).
type Handler func(r Record) error

// ErrAlreadyApplied is what an idempotent handler returns (wrapped or not)
// for a record whose effect it applied before: the member moves past the
// record, traced as deduplicated, without recording the effect again.
var ErrAlreadyApplied = errors.New("eventlog: effect already applied")

// The defaults of MemberConfig.
const (
	DefaultBatch           = 10
	DefaultAutoCommitEvery = sim.Tick(5)
	DefaultRestartAfter    = sim.Tick(1)
)

// MemberConfig configures a group member.
type MemberConfig struct {
	// Name is required and unique within the group; assignment orders
	// members by it.
	Name string
	// Handler processes each record; nil accepts every record.
	Handler Handler
	// Commit is the commit mode; the zero value is CommitAfter.
	Commit CommitMode
	// AutoCommitEvery is the interval of CommitAuto in ticks; 0 means
	// DefaultAutoCommitEvery.
	AutoCommitEvery sim.Tick
	// Batch is the most records one poll returns; 0 means DefaultBatch.
	Batch int
	// RestartAfter is how many ticks a crashed member stays down before it
	// rejoins; 0 means DefaultRestartAfter.
	RestartAfter sim.Tick
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
	if c.AutoCommitEvery < 0 || c.Batch < 0 || c.RestartAfter < 0 {
		errs = append(errs, fmt.Errorf("%w: member %q: intervals and batch must not be negative", ErrInvalidConfig, c.Name))
	}
	return errors.Join(errs...)
}

type memberState uint8

const (
	stateActive  memberState = iota
	stateStalled             // paused past its session timeout; commits pending
	stateDown                // crashed, restarting
	stateLeft                // left the group
)

// Member is a consumer-group member: a sim.Actor for sim.PhaseConsumer.
// Each Step polls at most Batch records from its partitions (rotating the
// partition it starts with), runs the handler on each in order, records
// each success as a ledger application, and commits by its CommitMode. It
// consults the fault points member.leave, broker.unavailable (the poll
// fails), member.crash, consumer.crash_after_effect,
// consumer.crash_before_commit and member.session_timeout. O(partitions owned + batch x log n) per Step.
type Member struct {
	g        *Group
	cfg      MemberConfig
	state    memberState
	expired  bool // removed by the coordinator while stalled
	gen      int
	owned    []int
	rr       int
	lastPoll sim.Tick
	lastAuto sim.Tick
	until    sim.Tick // end of a stall or a restart
	pending  []Position
	batch    []Record
	touched  []int
	reads    []Read

	crashes int
}

// Join adds a member to the group, which rebalances. The member must be
// stepped (registered as a sim.Actor, or its Step called by hand) while the
// topic steps, or its session times out.
func (g *Group) Join(cfg MemberConfig) (*Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if g.Member(cfg.Name) != nil {
		return nil, fmt.Errorf("%w: %q in group %s", ErrDuplicateMember, cfg.Name, g.name)
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
	now := g.env.Now()
	m := &Member{cfg: cfg, lastPoll: now, lastAuto: now}
	g.add(m)
	return m, nil
}

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
func (m *Member) Active() bool { return m.state == stateActive }

// Crashes returns how often the member crashed.
func (m *Member) Crashes() int { return m.crashes }

// SetHandler replaces the handler ("deploy the fix"); nil accepts every
// record.
func (m *Member) SetHandler(h Handler) { m.cfg.Handler = h }

// Leave takes the member out of the group (the group rebalances). A member
// in auto-commit mode commits its positions first. Leaving twice is a no-op.
func (m *Member) Leave() {
	switch m.state {
	case stateLeft:
		return
	case stateDown:
		m.state = stateLeft
		return
	}
	if m.state == stateActive && m.cfg.Commit == CommitAuto {
		m.commitPositions(false, nil)
	}
	was := m.state
	m.state = stateLeft
	if was == stateActive || !m.expired {
		m.g.remove(m, "left")
	}
}

// Rejoin puts a member that left, crashed or was removed back into the
// group, which rebalances. It fails when the member is in the group.
func (m *Member) Rejoin() error {
	if m.state == stateActive || m.state == stateStalled && !m.expired {
		return fmt.Errorf("%w: %q in group %s", ErrDuplicateMember, m.cfg.Name, m.g.name)
	}
	if m.g.Member(m.cfg.Name) != nil {
		return fmt.Errorf("%w: %q in group %s", ErrDuplicateMember, m.cfg.Name, m.g.name)
	}
	now := m.g.env.Now()
	m.state, m.expired, m.pending = stateActive, false, m.pending[:0]
	m.lastPoll, m.lastAuto = now, now
	m.g.add(m)
	return nil
}

// Crash makes the member crash now: it loses its uncommitted progress,
// leaves the group and rejoins after RestartAfter ticks. rule names the
// fault rule in the trace ("" for a crash by hand).
func (m *Member) Crash(rule string) { m.crash(nil, rule, "") }

// Stall makes the member stop polling for d ticks (a long pause). When d
// exceeds the session timeout, the coordinator removes it; its commits
// after waking are rejected as stale and it rejoins.
func (m *Member) Stall(d sim.Tick) {
	if m.state != stateActive {
		return
	}
	m.state = stateStalled
	m.until = m.g.env.Now() + d
}

// crash loses rest (records committed but not processed, for CommitBefore)
// and takes the member down.
func (m *Member) crash(rest []Record, rule, why string) {
	if m.state != stateActive && m.state != stateStalled {
		return
	}
	g := m.g
	now := g.env.Now()
	if m.cfg.Commit == CommitBefore {
		for _, r := range rest {
			m.lose(r.Partition, r.Offset, r.Message, rule)
		}
		// A rewind after a handler error leaves committed offsets ahead of
		// the position: those records are committed but unprocessed too.
		for _, p := range m.owned {
			gp := &g.parts[p]
			if gp.owner != m || gp.pos < 0 || gp.committed <= gp.pos {
				continue
			}
			part := g.t.parts[p]
			for i := part.search(gp.pos); i < len(part.recs) && part.recs[i].off < gp.committed; i++ {
				m.lose(p, part.recs[i].off, part.recs[i].msg, rule)
			}
		}
	}
	m.crashes++
	detail := "member of group " + g.name + " crashed, restarts at " + (now + m.cfg.RestartAfter).String()
	if why != "" {
		detail = why + ": " + detail
	}
	g.env.Emit(sim.Event{Kind: sim.KindCrashed, Where: g.t.where, Actor: m.cfg.Name, Rule: rule, Detail: detail})
	wasIn := m.state == stateActive || !m.expired
	m.state = stateDown
	m.until = now + m.cfg.RestartAfter
	m.pending = m.pending[:0]
	if wasIn {
		g.remove(m, "crashed")
	}
}

// lose records a commit-before-processing loss of a record the group never
// applied.
func (m *Member) lose(p int, off int64, msg sim.Message, rule string) {
	g := m.g
	l := g.env.Ledger
	if l == nil {
		return
	}
	if d := l.Delivery(msg.ID, g.ref); d.Applied > 0 || d.Lost != "" {
		return
	}
	l.Lost(msg.ID, g.ref, sim.CauseCommitBeforeProcess, g.env.Now())
	g.env.Emit(sim.Event{Kind: sim.KindLost, Where: g.t.where, Actor: m.cfg.Name, Msg: msg.ID, Key: msg.Key, HasPos: true, Partition: p, Offset: off, Rule: rule, Detail: string(sim.CauseCommitBeforeProcess)})
}

func (m *Member) fault(p faults.Point, r *Record) (faults.Firing, bool) {
	in := m.g.t.cfg.Faults
	if !in.Has(p) {
		return faults.Firing{}, false
	}
	c := faults.Context{Where: m.g.t.where, Consumer: m.cfg.Name, Group: m.g.name}
	if r != nil {
		c.Key, c.Type, c.Msg = r.Message.Key, r.Message.Headers.Type, r.Message.ID
	}
	return in.Check(p, c)
}

// Step runs one poll-process-commit cycle at tick now.
func (m *Member) Step(now sim.Tick) {
	switch m.state {
	case stateLeft:
		return
	case stateDown:
		if now < m.until {
			return
		}
		_ = m.Rejoin()
	case stateStalled:
		if now < m.until {
			return
		}
		m.wake()
		return
	}
	g := m.g
	m.lastPoll = now
	if f, ok := m.fault(faults.MemberLeave, nil); ok {
		g.env.Emit(sim.Event{Kind: sim.KindAction, Where: g.t.where, Actor: m.cfg.Name, Rule: f.Rule, Detail: "member leaves group " + g.name})
		m.Leave()
		return
	}
	if m.cfg.Commit == CommitAuto && now-m.lastAuto >= m.cfg.AutoCommitEvery {
		m.commitPositions(false, nil)
		m.lastAuto = now
	}
	if f, ok := m.fault(faults.BrokerUnavailable, nil); ok {
		g.env.Emit(sim.Event{Kind: sim.KindRejected, Where: g.t.where, Actor: m.cfg.Name, Rule: f.Rule, Detail: "poll: broker unavailable"})
		return
	}
	m.poll()
	batch := m.batch
	if len(batch) == 0 {
		return
	}
	if m.cfg.Commit == CommitBefore {
		if f, ok := m.fault(faults.ConsumerCrashBeforeCommit, &batch[0]); ok {
			m.crash(nil, f.Rule, "before commit")
			return
		}
		m.commitPositions(true, nil)
	}
	l := g.env.Ledger
	for i := range batch {
		r := &batch[i]
		if f, ok := m.fault(faults.MemberCrash, r); ok {
			m.crash(batch[i:], f.Rule, "")
			return
		}
		if h := m.cfg.Handler; h != nil {
			if err := h(*r); errors.Is(err, ErrAlreadyApplied) {
				g.env.Emit(sim.Event{Kind: sim.KindDeduplicated, Where: g.t.where, Actor: m.cfg.Name, Msg: r.Message.ID, Key: r.Message.Key, HasPos: true, Partition: r.Partition, Offset: r.Offset, Detail: "effect already applied"})
				continue
			} else if err != nil {
				g.env.Emit(sim.Event{Kind: sim.KindFailed, Where: g.t.where, Actor: m.cfg.Name, Msg: r.Message.ID, Key: r.Message.Key, HasPos: true, Partition: r.Partition, Offset: r.Offset, Detail: err.Error()})
				m.rewind(batch[i:])
				batch = batch[:i]
				break
			}
		}
		l.Applied(r.Message.ID, g.ref, now)
		if tr := g.env.Trace; tr.Enabled() {
			g.env.Emit(sim.Event{Kind: sim.KindProcessed, Where: g.t.where, Actor: m.cfg.Name, Msg: r.Message.ID, Key: r.Message.Key, HasPos: true, Partition: r.Partition, Offset: r.Offset})
		} else {
			tr.Skip() // numbers the event as Emit would, without building it
		}
		if f, ok := m.fault(faults.ConsumerCrashAfterEffect, r); ok {
			m.crash(batch[i+1:], f.Rule, "after effect")
			return
		}
	}
	if m.cfg.Commit == CommitAfter || m.cfg.Commit == CommitOffByOne {
		if f, ok := m.fault(faults.ConsumerCrashBeforeCommit, nil); ok {
			m.crash(nil, f.Rule, "before commit")
			return
		}
	}
	if _, ok := m.fault(faults.MemberSessionTimeout, nil); ok {
		if m.cfg.Commit == CommitAfter || m.cfg.Commit == CommitOffByOne {
			m.pending = m.pending[:0]
			m.commitPositions(true, &m.pending)
		}
		m.Stall(g.cfg.SessionTimeout + 1)
		return
	}
	if m.cfg.Commit == CommitAfter || m.cfg.Commit == CommitOffByOne {
		m.commitPositions(true, nil)
	}
}

// wake ends a stall: the member sends the commits it had pending. When the
// coordinator removed it meanwhile, they are rejected as stale and it
// rejoins.
func (m *Member) wake() {
	g := m.g
	m.state = stateActive
	for _, p := range m.pending {
		_ = g.commit(m, m.gen, p.Partition, p.Offset)
	}
	m.pending = m.pending[:0]
	m.lastPoll = g.env.Now()
	if m.expired {
		m.state = stateLeft
		_ = m.Rejoin()
	}
}

// poll fills m.batch with up to Batch records, starting at a rotating
// partition, and records the poll in the history.
func (m *Member) poll() {
	m.batch = m.batch[:0]
	m.touched = m.touched[:0]
	n := len(m.owned)
	if n == 0 {
		return
	}
	g := m.g
	start := m.rr % n
	m.rr++
	for i := 0; i < n && len(m.batch) < m.cfg.Batch; i++ {
		p := m.owned[(start+i)%n]
		before := len(m.batch)
		m.batch = g.fetch(m, p, m.cfg.Batch-len(m.batch), m.batch)
		if len(m.batch) > before {
			m.touched = append(m.touched, p)
		}
	}
	if h := g.t.history; h != nil && len(m.batch) > 0 {
		m.reads = m.reads[:0]
		for _, r := range m.batch {
			m.reads = append(m.reads, Read{Partition: r.Partition, Offset: r.Offset, Value: r.Message.ID, Epoch: g.parts[r.Partition].epoch})
		}
		h.Poll(g.env.Now(), g.name, m.cfg.Name, m.reads...)
	}
}

// rewind moves the positions back to the first unprocessed record of each
// partition in rest.
func (m *Member) rewind(rest []Record) {
	g := m.g
	for _, r := range rest {
		gp := &g.parts[r.Partition]
		if gp.owner == m && r.Offset < gp.pos {
			gp.pos = r.Offset
			gp.epoch++
		}
	}
}

// commitPositions commits the member's positions: of the partitions touched
// by the last poll when touched is set, else of every owned partition whose
// position moved past the committed offset. With into set, the commits are
// collected instead of sent.
func (m *Member) commitPositions(touched bool, into *[]Position) {
	g := m.g
	parts := m.owned
	if touched {
		parts = m.touched
	}
	for _, p := range parts {
		gp := &g.parts[p]
		if gp.owner != m || gp.pos < 0 {
			continue
		}
		off := gp.pos
		if m.cfg.Commit == CommitOffByOne {
			off--
			if off < 0 {
				continue
			}
		}
		if !touched && off == gp.committed {
			continue
		}
		if into != nil {
			*into = append(*into, Position{Partition: p, Offset: off})
			continue
		}
		_ = g.commit(m, m.gen, p, off)
	}
}
