package eventlog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Reset is a group's auto.offset.reset policy: where a member starts
// reading a partition that has no committed offset, or whose position is
// out of range (below what retention deleted, or past the end after a
// seek or a commit beyond it). Like Kafka's consumer, the policy is
// applied at the member's first fetch of the partition, not before: a
// group created with ResetLatest starts at the log end as it is at its
// first poll.
type Reset int

// The auto.offset.reset policies.
const (
	// ResetEarliest starts at the log start. Default.
	ResetEarliest Reset = iota
	// ResetLatest starts at the log end at the first fetch; the records it
	// skips (for a new group, those produced between its creation and its
	// first poll) are lost with sim.CauseOffsetReset.
	ResetLatest
	// ResetNone refuses to guess: the member gets ErrOffsetOutOfRange (traced
	// once) and reads nothing from the partition until someone seeks.
	ResetNone
)

var resetNames = [...]string{"earliest", "latest", "none"}

// String returns the policy's name ("earliest", "latest", "none").
func (r Reset) String() string {
	if r >= 0 && int(r) < len(resetNames) {
		return resetNames[r]
	}
	return "reset(" + strconv.Itoa(int(r)) + ")"
}

// MarshalText returns the policy's name as String does; an unknown policy
// is an error wrapping ErrInvalidConfig.
func (r Reset) MarshalText() ([]byte, error) {
	return marshalName(resetNames[:], int(r), "auto.offset.reset")
}

// UnmarshalText sets r from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (r *Reset) UnmarshalText(text []byte) error {
	i, err := unmarshalName(resetNames[:], text, "auto.offset.reset")
	if err == nil {
		*r = Reset(i)
	}
	return err
}

// DefaultSessionTimeout is the session timeout in ticks when
// GroupConfig.SessionTimeout is 0.
const DefaultSessionTimeout sim.Tick = 10

// AllPartitions selects every partition in the Seek methods.
const AllPartitions = -1

// GroupConfig configures a consumer group.
type GroupConfig struct {
	// Name is required; it is also the logical consumer in the ledger.
	Name string
	// Strategy assigns partitions to members; the zero value is Range.
	Strategy Strategy
	// Reset is the auto.offset.reset policy; the zero value is ResetEarliest.
	Reset Reset
	// SessionTimeout removes a member that has not polled for more than this
	// many ticks; 0 means DefaultSessionTimeout.
	SessionTimeout sim.Tick
}

// Validate reports a configuration error.
func (c GroupConfig) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, fmt.Errorf("%w: a group needs a name", ErrInvalidConfig))
	}
	if c.Strategy < Range || c.Strategy > Sticky {
		errs = append(errs, fmt.Errorf("%w: unknown strategy %d", ErrInvalidConfig, int(c.Strategy)))
	}
	if c.Reset < ResetEarliest || c.Reset > ResetNone {
		errs = append(errs, fmt.Errorf("%w: unknown auto.offset.reset %d", ErrInvalidConfig, int(c.Reset)))
	}
	if c.SessionTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: session timeout %d is negative", ErrInvalidConfig, c.SessionTimeout))
	}
	return errors.Join(errs...)
}

// groupPart is a group's state for one partition.
type groupPart struct {
	committed int64   // next offset to read; -1 when nothing was committed
	initial   int64   // where the group started; used while nothing is committed
	owner     *Member // nil when unassigned
	pos       int64   // the owner's fetch position; -1 = none yet (resolved by auto.offset.reset at the first fetch)
	hw        int64   // the next offset the group never fetched: reads below it are redeliveries
	epoch     uint32  // bumped whenever pos moves other than by reading
	stuck     bool    // out of range under ResetNone, already traced
	// byCause is the cause of loss for the records the committed offset
	// passes unhandled: sim.CauseSeek after a seek,
	// sim.CauseCommitBeforeProcess after a commit from a resolved
	// position (a commit from an unresolved one keeps the cause of the
	// offset it came from), none before any. A byte beside stuck, so a
	// group's state of a partition stays within 128 bytes (TestGroupPartSize).
	byCause passCause
	// owe is, while the group's position is unresolved or out of range,
	// the first offset it has not handled (-1 otherwise): when the
	// position is resolved, the live records from owe up to it are lost,
	// with sim.CauseOffsetReset after a reset to latest and byCause when
	// the log has grown to a committed offset that was past its end.
	owe int64
	// skipped lists the records a CommitBefore member failed on and moved
	// past while the broker had stored no commit past them (the commit was
	// lost or refused): they are lost once a commit, seek or resolved
	// position passes them, and read again when the group resumes at or
	// below them.
	skipped []int64
	// again lists, in offset order, what the group remembers of the
	// records of the partition it may read more than once (see attempt and
	// markApplied): live records only, as far as it matters, since every
	// look-up is of a live record. The records it remembers as applied
	// after one delivery at consecutive offsets past every one it lists,
	// the usual case of a member handling its batch, are kept as the run
	// [runLo, runHi) instead of one entry each: what the group remembers
	// is again followed by a record {off, seen{applied: true}} for every
	// offset of the run (list writes it out so), and again lists only offsets
	// below runLo while the run is not empty.
	again        []againRec
	runLo, runHi int64
}

// passCause is a cause of loss a committed offset can pass records with
// (groupPart.byCause), in a byte.
type passCause uint8

// The passCauses.
const (
	passNone   passCause = iota // no commit or seek has set one
	passCommit                  // sim.CauseCommitBeforeProcess
	passSeek                    // sim.CauseSeek
)

// cause returns the sim.Cause c stands for, "" for passNone.
func (c passCause) cause() sim.Cause {
	switch c {
	case passCommit:
		return sim.CauseCommitBeforeProcess
	case passSeek:
		return sim.CauseSeek
	}
	return ""
}

// againRec is what a group remembers of the record at off.
type againRec struct {
	off int64
	seen
}

// groupFirst is the number of members a group has room for when it is
// made (see NewGroup); a larger group grows its lists as append does.
const groupFirst = 4

// againFirst is the room a partition's list of remembered records starts
// with. The records a batch applies after one delivery are kept as the
// run, not listed (see groupPart.again), so the list holds mostly records
// read more than once, which a rebalance's redeliveries add a few at a
// time. A group made with the topic's partitions gets the room for all
// of them at once (NewGroup); a partition added later gets it when it
// lists its first record.
const againFirst = 4

// recall returns the index in gp.again of the record at off and whether
// it is there; when it is not, the index is where it belongs. It does not
// look at the run. O(1) when off is past every listed record (the usual
// case: records are handled in offset order), else O(log n): a binary
// search written out, as slices.BinarySearchFunc would call a comparison
// function at every step.
func (gp *groupPart) recall(off int64) (int, bool) {
	a := gp.again
	n := len(a)
	if n == 0 || a[n-1].off < off {
		return n, false
	}
	// Invariant: a[lo-1].off < off <= a[hi].off (a[n-1].off >= off).
	lo, hi := 0, n-1
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if a[h].off < off {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, a[lo].off == off
}

// inRun reports whether off is in the run of records applied after one
// delivery.
func (gp *groupPart) inRun(off int64) bool { return off >= gp.runLo && off < gp.runHi }

// list appends the run to again as one entry per offset and empties it,
// so again alone is what the group remembers. O(run).
func (gp *groupPart) list() {
	for off := gp.runLo; off < gp.runHi; off++ {
		gp.listAt(len(gp.again), againRec{off: off, seen: seen{applied: true}})
	}
	gp.runLo, gp.runHi = 0, 0
}

// listAt inserts x into again at index i, where it belongs.
func (gp *groupPart) listAt(i int, x againRec) {
	switch {
	case gp.again == nil:
		gp.again = make([]againRec, 0, againFirst)
		fallthrough
	case i == len(gp.again):
		gp.again = append(gp.again, x) // the usual case: past every remembered record
	default:
		gp.again = slices.Insert(gp.again, i, x)
	}
}

// remember returns what the group remembers of the record at off, a zero
// seen that it now remembers when it remembered nothing. It lists the run
// first (see list), as the caller may change what it returns. O(log n),
// plus O(run) when there is one.
func (gp *groupPart) remember(off int64) *seen {
	if gp.runLo < gp.runHi {
		gp.list()
	}
	i, ok := gp.recall(off)
	if !ok {
		gp.listAt(i, againRec{off: off})
	}
	return &gp.again[i].seen
}

// rememberApplied remembers that a delivery applied the record at off.
// O(1) when off extends the run, or starts one past every listed record,
// as handling a batch in offset order does; else as remember.
func (gp *groupPart) rememberApplied(off int64) {
	if off == gp.runHi && gp.runLo < gp.runHi {
		gp.runHi++ // the usual case, inlined: off extends the run
		return
	}
	gp.rememberAppliedElse(off)
}

// rememberAppliedElse is rememberApplied where off does not extend the
// run.
func (gp *groupPart) rememberAppliedElse(off int64) {
	switch {
	case gp.inRun(off):
		return // remembered as applied already
	case gp.runLo == gp.runHi:
		if n := len(gp.again); n == 0 || gp.again[n-1].off < off {
			gp.runLo, gp.runHi = off, off+1
			return
		}
	}
	gp.remember(off).applied = true
}

// isApplied reports whether the group remembers the record at off as
// applied. O(log n).
func (gp *groupPart) isApplied(off int64) bool {
	if gp.inRun(off) {
		return true
	}
	i, ok := gp.recall(off)
	return ok && gp.again[i].applied
}

// forgetTo drops what the group remembers of the records at or below off
// (below means: deleted by retention before it, so nothing is left). O(1)
// per listed record dropped.
func (gp *groupPart) forgetTo(off int64) {
	for len(gp.again) > 0 && gp.again[0].off <= off {
		gp.again = gp.again[1:]
	}
	switch {
	case gp.runHi <= off+1:
		gp.runLo, gp.runHi = 0, 0
	case gp.runLo <= off:
		gp.runLo = off + 1
	}
}

// forgetGone drops what the group remembers of records of partition part
// that are no longer in the log (compaction removed them). O(remembered x
// log n).
func (gp *groupPart) forgetGone(part *partition) {
	gp.list()
	j := 0
	for _, x := range gp.again {
		if part.at(x.off) >= 0 {
			gp.again[j] = x
			j++
		}
	}
	clear(gp.again[j:])
	gp.again = gp.again[:j]
}

// Group is a consumer group on one topic: its members, the current
// generation and assignment, and a committed offset per partition. At most
// one member owns a partition at a time. Rebalances are synchronous: a
// join, leave, crash or session timeout reassigns at once and bumps the
// generation; every owner then resumes from the committed offset (eager
// protocol), and records a member had fetched but not handled are
// dropped. Not safe for concurrent use.
//
// A group is the logical consumer of the ledger: its name is the Consumer
// of every event about it, and it is created "subscribed" to its topic.
type Group struct {
	t        *Log
	env      *sim.Env
	cfg      GroupConfig
	gen      int
	mems     []*Member // in the group now, in join order
	all      []*Member // every member ever created for the group, in creation order
	parts    []groupPart
	asg      []Assignment
	bufs     [2]assignBuf // asg is built in bufs[next^1]; the next rebalance builds in bufs[next]
	next     int
	names    []string           // scratch of rebalance: the members' names
	lc       sim.LedgerConsumer // the group's ledger handle, for the polled events fetch books
	spare    []held             // a batch buffer no member holds, empty (see Member.handBack)
	spareOut []outRec           // a buffer of outstanding records no member holds, empty

	commits, rejected, rebalances, commitsLost int64
}

// NewGroup creates the consumer group cfg.Name on topic t of the world w.
// With ResetEarliest the group starts at the log start of every
// partition; otherwise its position is resolved at its first fetch of each
// partition (ResetLatest: the log end then; ResetNone: not at all). It
// traces a "subscribed" event whose Detail names the policy ("earliest",
// "latest" or "none"), from which the ledger learns which records the
// group expects: every record still in the log for "earliest", every
// record produced from now on in every case (the ledger treats any Detail
// but "earliest" alike); a "latest" group loses the records produced
// before its first fetch (sim.CauseOffsetReset). O(partitions).
func NewGroup(w *sim.World, t *Log, cfg GroupConfig) (*Group, error) {
	if w == nil || t == nil {
		return nil, fmt.Errorf("%w: a group needs a world and a topic", ErrInvalidConfig)
	}
	if t.env != w.Env() {
		return nil, fmt.Errorf("%w: topic %s belongs to another world", ErrInvalidConfig, t.cfg.Name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if t.Group(cfg.Name) != nil {
		return nil, fmt.Errorf("%w: %q on topic %s", ErrDuplicateGroup, cfg.Name, t.cfg.Name)
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	g := &Group{t: t, env: t.env, cfg: cfg, parts: make([]groupPart, 0, len(t.parts))}
	// Every partition's first room for remembered records, in one
	// allocation: a member handling records remembers some in each
	// partition it reads (see markApplied). Each part is capped, so one
	// that grows moves out rather than into its neighbour's.
	again := make([]againRec, len(t.parts)*againFirst)
	for i, p := range t.parts {
		gp := groupPart{committed: -1, initial: p.end, pos: -1, hw: p.start, owe: -1, again: again[i*againFirst : i*againFirst : (i+1)*againFirst]}
		if cfg.Reset == ResetEarliest {
			gp.initial = p.start
		} else {
			gp.owe = p.end
		}
		g.parts = append(g.parts, gp)
	}
	// Room for groupFirst members in the lists a join appends to (every
	// member, the members now, and rebalance's names), in two allocations
	// rather than three growths each. Each list is capped, so one that
	// grows moves out rather than into its neighbour's.
	mems := make([]*Member, 2*groupFirst)
	g.all, g.mems = mems[:0:groupFirst], mems[groupFirst:groupFirst:2*groupFirst]
	g.names = make([]string, 0, groupFirst)
	t.groups = append(t.groups, g)
	g.env.Emit(sim.Event{Kind: sim.KindSubscribed, Where: t.where, Actor: g.cfg.Name, Consumer: g.cfg.Name, Detail: cfg.Reset.String()})
	return g, nil
}

// Name returns the group's name.
func (g *Group) Name() string { return g.cfg.Name }

// Log returns the topic the group reads.
func (g *Group) Log() *Log { return g.t }

// Generation returns the current generation; it starts at 0 and every
// rebalance adds one.
func (g *Group) Generation() int { return g.gen }

// Assignment returns the current assignment, one entry per member sorted by
// name, as a copy the caller owns: changing it changes nothing in the
// group, and rebalances leave it as it is. O(members + partitions); it
// allocates twice.
func (g *Group) Assignment() []Assignment { return cloneAssignment(g.asg) }

// Members returns the names of the members in the group now, sorted.
func (g *Group) Members() []string {
	out := make([]string, 0, len(g.asg))
	for _, a := range g.asg {
		out = append(out, a.Member)
	}
	return out
}

// Member returns the member called name currently in the group, or nil.
func (g *Group) Member(name string) *Member {
	for _, m := range g.mems {
		if m.cfg.Name == name {
			return m
		}
	}
	return nil
}

// Committed returns the committed offset of partition p (the next offset to
// read) and whether one was committed.
func (g *Group) Committed(p int) (int64, bool) {
	if p < 0 || p >= len(g.parts) || g.parts[p].committed < 0 {
		return 0, false
	}
	return g.parts[p].committed, true
}

// Owner returns the name of the member that owns partition p, or "".
func (g *Group) Owner(p int) string {
	if p < 0 || p >= len(g.parts) || g.parts[p].owner == nil {
		return ""
	}
	return g.parts[p].owner.cfg.Name
}

// CaughtUp reports whether the group has nothing left to read or handle:
// every partition has an owner whose position is at the log end, and no
// member holds a record it fetched and has not handled. A fetch that
// finds no record past the position moves it to the end, so a tail that
// compaction emptied does not hold a group back. Unlike a lag of zero, it
// also accounts for records a member must read again below its committed
// offset (after a handler failure with CommitBefore). O(partitions +
// members).
func (g *Group) CaughtUp() bool {
	for p := range g.parts {
		gp := &g.parts[p]
		if gp.owner == nil || gp.pos != g.t.parts[p].end {
			return false
		}
	}
	for _, m := range g.mems {
		if len(m.out) > 0 {
			return false
		}
	}
	return true
}

// readFrom is where the group resumes partition p from after a restart.
func (g *Group) readFrom(p int) int64 {
	gp := &g.parts[p]
	if gp.committed >= 0 {
		return gp.committed
	}
	return gp.initial
}

func (g *Group) addPartitions(n int) {
	for i := 0; i < n; i++ {
		gp := groupPart{committed: -1, initial: 0, pos: -1, owe: -1}
		if g.cfg.Reset != ResetEarliest {
			gp.owe = 0
		}
		g.parts = append(g.parts, gp)
	}
	if len(g.mems) > 0 {
		g.rebalance("partitions added", "")
	}
}

// add puts m into the group, which rebalances.
func (g *Group) add(m *Member, why string) {
	m.in = true
	g.mems = append(g.mems, m)
	if g.env.Trace.Detailed() {
		why = m.cfg.Name + " " + why
	}
	g.rebalance(why, "")
}

// remove takes m out of the group: m gives its partitions up (see
// Member.release) and the group rebalances. why is only used for the
// trace; rule names the fault that caused it.
func (g *Group) remove(m *Member, why, rule string) {
	for i, x := range g.mems {
		if x == m {
			g.mems = slices.Delete(g.mems, i, i+1) // clears the freed slot: no stale pointer past the length
			break
		}
	}
	for p := range g.parts {
		if g.parts[p].owner == m {
			m.release(p, rule)
			g.parts[p].owner = nil
		}
	}
	m.in = false
	m.out = m.out[:0]
	m.owned = m.owned[:0]
	if g.env.Trace.Detailed() {
		why = m.cfg.Name + " " + why
	}
	g.rebalance(why, rule)
}

// rebalance bumps the generation and reassigns every partition. Members in
// auto-commit mode commit their progress first (as on revocation); every
// owner gives its partitions up (Member.release) and every new owner
// resumes from the committed offset.
func (g *Group) rebalance(why, rule string) {
	for _, m := range g.mems {
		if m.cfg.Commit == CommitAuto && m.state == stateActive {
			_ = m.commitProgress()
		}
	}
	for p := range g.parts {
		if m := g.parts[p].owner; m != nil {
			m.release(p, rule)
		}
	}
	g.gen++
	g.rebalances++
	g.names = g.names[:0]
	for _, m := range g.mems {
		g.names = append(g.names, m.cfg.Name)
		m.owned = m.owned[:0]
	}
	if g.bufs[0].entries == nil {
		g.makeBufs()
	}
	g.asg = assign(g.cfg.Strategy, g.names, len(g.parts), g.asg, &g.bufs[g.next])
	g.next ^= 1
	// The assignment lists every partition once when a member is left
	// (TestAssignBalanced), and every partition it lists gets its new
	// owner below: the owners are cleared first only when it lists fewer,
	// so an owner that stays is not stored twice (every store of a pointer
	// takes a write barrier while the collector marks).
	listed := 0
	for _, a := range g.asg {
		listed += len(a.Partitions)
	}
	if listed != len(g.parts) {
		for p := range g.parts {
			g.parts[p].owner = nil
		}
	}
	for _, a := range g.asg {
		m := g.Member(a.Member)
		m.gen = g.gen
		m.own(a.Partitions)
		for _, p := range a.Partitions {
			gp := &g.parts[p]
			if gp.owner != m {
				gp.owner = m
			}
			gp.epoch++
			gp.stuck = false
			switch {
			case gp.committed >= 0:
				gp.pos = gp.committed
			case g.cfg.Reset == ResetEarliest:
				gp.pos = gp.initial
			default:
				gp.pos = -1 // resolved by auto.offset.reset at the first fetch
			}
		}
	}
	if g.env.Trace.BookRebalanced(g.env.Now()) {
		return // only the ledger listens: booked without building the event
	}
	ev := sim.Event{Kind: sim.KindRebalanced, Where: g.t.where, Actor: g.cfg.Name, Consumer: g.cfg.Name, Rule: rule}
	if g.env.Trace.Detailed() {
		var b strings.Builder
		b.WriteString("gen=")
		b.WriteString(strconv.Itoa(g.gen))
		b.WriteByte(' ')
		b.WriteString(g.cfg.Strategy.String())
		b.WriteString(" (")
		b.WriteString(why)
		b.WriteString("):")
		for _, a := range g.asg {
			b.WriteByte(' ')
			b.WriteString(a.String())
		}
		ev.Detail = b.String()
	}
	g.env.Emit(ev)
}

// makeBufs gives both of the group's assignment buffers (see assignBuf)
// their first room at its first rebalance: entries for groupFirst members
// each, in one allocation, and, unless the strategy is Sticky (which
// allocates the members' partitions itself), each the partitions of the
// group, in another, so that a group growing to groupFirst members
// allocates twice for its assignments rather than once per buffer at
// every member it grows by. Each buffer is capped, so one that grows
// moves out rather than into the other.
func (g *Group) makeBufs() {
	entries := make([]Assignment, 2*groupFirst)
	g.bufs[0].entries, g.bufs[1].entries = entries[:groupFirst:groupFirst], entries[groupFirst:]
	if n := len(g.parts); n > 0 && g.cfg.Strategy != Sticky {
		parts := make([]int, 2*n)
		g.bufs[0].parts, g.bufs[1].parts = parts[:n:n], parts[n:]
	}
}

// expireSessions removes every member that has not polled for more than
// the session timeout: a stalled member, a member busy with a slow record,
// or a pull member whose adapter stopped polling.
func (g *Group) expireSessions(now sim.Tick) {
	for i := 0; i < len(g.mems); {
		m := g.mems[i]
		if now-m.lastPoll > g.cfg.SessionTimeout {
			m.expired = true
			why := ""
			if g.env.Trace.Detailed() {
				why = "removed: session timeout (last poll " + m.lastPoll.String() + ")"
			}
			g.remove(m, why, "")
			continue
		}
		i++
	}
}

// Commit stores offset off as the next offset to read of partition p, on
// behalf of member in generation gen. A commit from an older generation
// (a member that was removed meanwhile), from a member that does not own p,
// of a negative offset, or of an offset past the partition's end (the
// offset the next record will get) is rejected with an error, traced and
// counted.
//
// Kafka's group coordinator would accept a commit past the end, as it does
// not check committed offsets against the log: the next owner's fetch
// finds it out of range and applies auto.offset.reset. The simulator
// refuses it instead: no member can have handled a record that does not
// exist yet, and a committed offset ahead of the log would pass the
// records produced up to it, which the ledger would book as lost with
// sim.CauseCommitBeforeProcess although nobody committed them, while the
// group's lag showed 0. A seek past the end is still accepted (see
// SeekOffset).
//
// Fault points, consulted first: while broker.unavailable fires, the
// commit fails with an error wrapping ErrUnavailable, traced as rejected;
// broker.ack_lost loses it on its way: Commit returns nil, the fault is
// traced and the committed offset does not change, so after a rebalance
// the next owner reads again from the older committed offset.
// O(members).
func (g *Group) Commit(member string, gen int, p int, off int64) error {
	m := g.Member(member)
	if m == nil {
		g.reject(member, p, off, "unknown member")
		return fmt.Errorf("%w: %q in group %s", ErrUnknownMember, member, g.cfg.Name)
	}
	return g.commit(m, gen, p, off)
}

func (g *Group) reject(member string, p int, off int64, why string) {
	g.rejectRule(member, p, off, why, "")
}

func (g *Group) rejectRule(member string, p int, off int64, why, rule string) {
	g.rejected++
	ev := sim.Event{Kind: sim.KindRejected, Where: g.t.where, Actor: member, Consumer: g.cfg.Name, HasPos: true, Partition: p, Offset: off, Rule: rule}
	if g.env.Trace.Detailed() {
		ev.Detail = "commit by group " + g.cfg.Name + ": " + why
	}
	g.env.Emit(ev)
}

func (g *Group) commit(m *Member, gen int, p int, off int64) error {
	name := m.cfg.Name
	if fx := &g.t.fx; fx.unavailable.Armed() || fx.ackLost.Armed() {
		c := faults.Context{Where: g.t.where, Consumer: name, Group: g.cfg.Name}
		if f := fx.unavailable.Check(&c); f != nil {
			g.rejectRule(name, p, off, "broker unavailable", f.Rule)
			return fmt.Errorf("%w: commit by group %s: %s", ErrUnavailable, g.cfg.Name, f.Error)
		}
		if f := fx.ackLost.Check(&c); f != nil {
			g.commitsLost++
			return nil
		}
	}
	if gen != g.gen || !m.in || m.state != stateActive && m.state != stateStalled {
		why := "generation " + strconv.Itoa(gen) + " is stale (current " + strconv.Itoa(g.gen) + ")"
		g.reject(name, p, off, why)
		return fmt.Errorf("%w: %s", ErrStaleGeneration, why)
	}
	if p < 0 || p >= len(g.parts) {
		g.reject(name, p, off, "no such partition")
		return fmt.Errorf("%w: %d", ErrNoPartition, p)
	}
	if g.parts[p].owner != m {
		g.reject(name, p, off, "partition not assigned to the member")
		return fmt.Errorf("%w: %s does not own partition %d", ErrNotAssigned, name, p)
	}
	if off < 0 {
		g.reject(name, p, off, "negative offset")
		return fmt.Errorf("%w: commit %d", ErrOffsetOutOfRange, off)
	}
	if end := g.t.parts[p].end; off > end {
		why := "offset " + strconv.FormatInt(off, 10) + " is past the end " + strconv.FormatInt(end, 10)
		g.reject(name, p, off, why)
		return fmt.Errorf("%w: commit %d to partition %d, whose end is %d: a commit may be at most the end", ErrOffsetOutOfRange, off, p, end)
	}
	gp := &g.parts[p]
	from := g.readFrom(p)
	gp.committed = off
	if gp.owe < 0 && gp.pos >= 0 && g.t.parts[p].valid(gp.pos) {
		gp.byCause = passCommit
	}
	g.commits++
	if !g.env.Trace.BookCommitted(g.env.Now()) { // only the ledger listens: booked without building the event
		ev := sim.Event{Kind: sim.KindCommitted, Where: g.t.where, Actor: name, Consumer: g.cfg.Name, HasPos: true, Partition: p, Offset: off}
		if g.env.Trace.Detailed() {
			ev.Detail = "group " + g.cfg.Name + " gen=" + strconv.Itoa(gen)
		}
		g.env.Emit(ev)
	}
	g.settle(name, p, gp, off, true)
	g.prune(p, from, off)
	return nil
}

// passedBy returns the cause of loss for the records the committed offset
// passes unhandled (see groupPart.byCause); sim.CauseCommitBeforeProcess
// when nothing else set it.
func (gp *groupPart) passedBy() sim.Cause {
	if gp.byCause == passNone {
		return sim.CauseCommitBeforeProcess
	}
	return gp.byCause.cause()
}

// settle resolves the records of partition p that a CommitBefore member
// skipped after a failure (groupPart.skipped) against offset to, where the
// group now stands: those below it that are still in the log are lost for
// good (sim.CauseCommitBeforeProcess: committed but never processed). The
// others are kept when keep is set (a commit: the member is past them, a
// later commit or rebalance decides) and forgotten otherwise (the group
// resumes at to and reads them again). O(skipped + log n each).
func (g *Group) settle(actor string, p int, gp *groupPart, to int64, keep bool) {
	if len(gp.skipped) == 0 {
		return
	}
	part := g.t.parts[p]
	j := 0
	for _, off := range gp.skipped {
		switch {
		case off < to:
			if i := part.at(off); i >= 0 && !g.applied(p, off) {
				g.lose(actor, p, part.recs.at(i), off, sim.CauseCommitBeforeProcess, "")
			}
		case keep:
			gp.skipped[j] = off
			j++
		}
	}
	gp.skipped = gp.skipped[:j]
}

// lose traces that the group lost the record e at offset off of partition p with cause:
// the ledger books the loss from this event. actor is the member (or the
// group) whose action lost it; rule the fault rule behind it, if any.
func (g *Group) lose(actor string, p int, e *entry, off int64, cause sim.Cause, rule string) {
	ev := sim.Event{Tick: g.env.Now(), Kind: sim.KindLost, Where: g.t.where, Actor: actor, Consumer: g.cfg.Name, Msg: e.id, Key: e.key,
		Cause: cause, Corr: e.hdr.CorrelationID, HasPos: true, Partition: p, Offset: off, Rule: rule}
	g.env.Trace.EmitRef(&ev)
}

// SeekTo says where Seek moves a group: to the log start, the log end, an
// offset or the first record at or after a tick.
type SeekTo uint8

// The seek targets.
const (
	SeekToEarliest SeekTo = iota // SeekEarliest
	SeekToLatest                 // SeekLatest
	SeekToOffset                 // SeekOffset
	SeekToTick                   // SeekTick
)

var seekNames = [...]string{"earliest", "latest", "offset", "tick"}

// String returns the target's name ("earliest", "latest", "offset",
// "tick"), as scenario files and the trace write it.
func (t SeekTo) String() string {
	if int(t) < len(seekNames) {
		return seekNames[t]
	}
	return "seek(" + strconv.Itoa(int(t)) + ")"
}

// MarshalText returns the target's name as String does; an unknown target
// is an error wrapping ErrInvalidConfig.
func (t SeekTo) MarshalText() ([]byte, error) {
	return marshalName(seekNames[:], int(t), "seek target")
}

// UnmarshalText sets t from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (t *SeekTo) UnmarshalText(text []byte) error {
	i, err := unmarshalName(seekNames[:], text, "seek target")
	if err == nil {
		*t = SeekTo(i)
	}
	return err
}

// Seek moves the group as to says: SeekEarliest, SeekLatest,
// SeekOffset(p, off) or SeekTick(p, at); off and at are used only by the
// target that takes them. An unknown target is an error wrapping
// ErrInvalidConfig and changes nothing.
func (g *Group) Seek(p int, to SeekTo, off int64, at sim.Tick) error {
	switch to {
	case SeekToEarliest:
		return g.SeekEarliest(p)
	case SeekToLatest:
		return g.SeekLatest(p)
	case SeekToOffset:
		return g.SeekOffset(p, off)
	case SeekToTick:
		return g.SeekTick(p, at)
	}
	return fmt.Errorf("%w: unknown seek target %d", ErrInvalidConfig, int(to))
}

// SeekOffset moves the group to offset off of partition p (AllPartitions
// for every partition): it becomes the committed offset and the owner's
// position. Records before it are not re-read, records after it are read
// (again). A negative offset is refused (ErrOffsetOutOfRange). An offset
// past the end is accepted, as Kafka's consumer accepts any seek: the next
// fetch finds it out of range and applies auto.offset.reset (or reads from
// it once the log has grown that far); one below the log start is
// resolved by auto.offset.reset at the next fetch likewise.
//
// A seek is atomic: every partition's target is computed and validated
// before any partition moves, so a refused seek changes nothing. It takes
// effect at once: the owner drops the records of the partition it fetched
// and has not handled. A seek forward past records the group has not
// handled yet books each of them lost with sim.CauseSeek, at the seek; for
// a seek past the end, the records it passes are booked when the position
// is resolved (sim.CauseOffsetReset after a reset to latest, sim.CauseSeek
// when the log reaches the offset, nothing after a reset to earliest).
func (g *Group) SeekOffset(p int, off int64) error {
	return g.seek(p, SeekToOffset.String(), off, func(int) (int64, error) { return off, nil })
}

// SeekEarliest moves the group to the log start of partition p
// (AllPartitions for every partition): a replay. See SeekOffset.
func (g *Group) SeekEarliest(p int) error {
	return g.seek(p, SeekToEarliest.String(), 0, func(p int) (int64, error) { return g.t.parts[p].start, nil })
}

// SeekLatest moves the group to the log end of partition p (AllPartitions
// for every partition): it skips the backlog, whose records are lost for
// the group (sim.CauseSeek). See SeekOffset.
func (g *Group) SeekLatest(p int) error {
	return g.seek(p, SeekToLatest.String(), 0, func(p int) (int64, error) { return g.t.parts[p].end, nil })
}

// SeekTick moves the group to the first record of partition p
// (AllPartitions for every partition) appended at or after tick at, or to
// the end when there is none. O(log n) per partition. See SeekOffset.
func (g *Group) SeekTick(p int, at sim.Tick) error {
	return g.seek(p, SeekToTick.String(), int64(at), func(p int) (int64, error) { return g.t.OffsetForTick(p, at) })
}

// seek moves partition p (or all) to target(p); what and arg describe it in
// the trace. It validates every target first and applies none when one is
// refused. It costs O(log n) per partition plus O(records skipped).
func (g *Group) seek(p int, what string, arg int64, target func(p int) (int64, error)) error {
	lo, hi := p, p+1
	if p == AllPartitions {
		lo, hi = 0, len(g.parts)
	} else if p < 0 || p >= len(g.parts) {
		return fmt.Errorf("%w: %d", ErrNoPartition, p)
	}
	var one [1]int64
	targets := one[:0]
	if hi-lo > 1 {
		targets = make([]int64, 0, hi-lo)
	}
	for q := lo; q < hi; q++ {
		off, err := target(q)
		if err != nil {
			return err
		}
		if off < 0 {
			return fmt.Errorf("%w: seek partition %d to %d: a negative offset", ErrOffsetOutOfRange, q, off)
		}
		targets = append(targets, off)
	}
	detailed := g.env.Trace.Detailed()
	for i, off := range targets {
		q := lo + i
		part := g.t.parts[q]
		gp := &g.parts[q]
		ev := sim.Event{Kind: sim.KindSeeked, Where: g.t.where, Actor: g.cfg.Name, Consumer: g.cfg.Name, HasPos: true, Partition: q, Offset: off}
		if detailed {
			switch what {
			case "offset":
				ev.Detail = "offset " + strconv.FormatInt(arg, 10)
			case "tick":
				ev.Detail = "first record at or after " + sim.Tick(arg).String()
			default:
				ev.Detail = what
			}
			if off > part.end {
				ev.Detail += ": past the end " + strconv.FormatInt(part.end, 10) + ", auto.offset.reset at the next fetch"
			}
		}
		g.env.Emit(ev)
		if off > part.end {
			// Resolved at the next fetch: the group owes what it has not
			// handled from where it stands now.
			from, _ := g.standing(q, gp)
			gp.owe = from
		} else {
			g.skip(q, gp, part, off)
			g.settle(g.cfg.Name, q, gp, off, false)
			gp.owe = -1
		}
		gp.committed, gp.byCause = off, passSeek
		gp.stuck = false
		if m := gp.owner; m != nil {
			m.drop(q)
			gp.pos = off
			gp.epoch++
		}
	}
	return nil
}

// standing returns the first offset of partition q the group has not
// handled, as far as the model knows, and the member whose outstanding
// records and position say which records below its position it handled
// (nil when the offset alone says it): the owed offset while the position
// is unresolved, the owner's progress, or the offset the group resumes
// from.
func (g *Group) standing(q int, gp *groupPart) (int64, *Member) {
	switch m := gp.owner; {
	case gp.owe >= 0:
		return gp.owe, nil
	case m != nil && gp.pos >= 0:
		return m.progress(q), m
	default:
		return g.readFrom(q), nil
	}
}

// skip books as lost with sim.CauseSeek the live records of partition q
// below off that the group has not handled yet and would have without the
// seek: with an owner, the records it holds unhandled and those at or past
// its position; without one (or while its position is unresolved), those
// at or past the offset it stands at.
func (g *Group) skip(q int, gp *groupPart, part *partition, off int64) {
	from, m := g.standing(q, gp)
	for i := part.search(max(from, part.start)); i < part.recs.len() && part.off(i) < off; i++ {
		o := part.off(i)
		if m != nil && o < gp.pos && m.find(q, o) < 0 || g.applied(q, o) {
			continue // handled already
		}
		g.lose(g.cfg.Name, q, part.recs.at(i), o, sim.CauseSeek, "")
	}
}

// seen is what a group remembers of a record it may read more than once.
type seen struct {
	n       int32 // deliveries; 0 while it was delivered once
	applied bool  // a delivery to the group recorded an effect or an absorbed duplicate
}

// attempt returns the delivery count of the record at off of partition p
// for the group, counting this delivery. Only records read more than once
// take memory. The first delivery, the usual case, is small enough to be
// inlined into fetch; a redelivery is counted by redelivered.
func (g *Group) attempt(gp *groupPart, off int64) int {
	if off >= gp.hw {
		gp.hw = off + 1
		return 1
	}
	return gp.redelivered(off)
}

// redelivered counts a redelivery of the record at off and returns its
// delivery count (see attempt).
func (gp *groupPart) redelivered(off int64) int {
	x := gp.remember(off)
	if x.n == 0 {
		x.n = 1
	}
	x.n++
	return int(x.n)
}

// markApplied remembers that a delivery applied (or absorbed) the record at
// off of partition p, when the group may read it again: at or past its
// committed offset. The losses the model books are certain only for
// records no delivery applied, and a record read again is one it may have
// applied before. It takes memory only until a commit passes the record
// (see prune) or the record is read again. O(1) for a record past those
// remembered, else O(log n) plus the insertion.
func (g *Group) markApplied(p int, off int64) {
	if p < 0 || p >= len(g.parts) {
		return
	}
	gp := &g.parts[p]
	if c := gp.committed; c >= 0 && off < c && c <= g.t.parts[p].end {
		return
	}
	gp.rememberApplied(off)
}

// applied reports whether a delivery of the record at off of partition p
// to the group applied it, as far as markApplied remembers. O(log n).
func (g *Group) applied(p int, off int64) bool {
	if p < 0 || p >= len(g.parts) {
		return false
	}
	return g.parts[p].isApplied(off)
}

// prune forgets, once a commit has moved partition p from offset from to
// offset to, the records in between that the group applied after reading
// them once: it reads them again only after a seek back. O(log n +
// remembered records from on).
func (g *Group) prune(p int, from, to int64) {
	gp := &g.parts[p]
	if len(gp.again) == 0 && gp.runLo == gp.runHi || to > g.t.parts[p].end || to <= from {
		return
	}
	gp.pruneRange(from, to)
}

// pruneRange forgets the records in [from, to) that were read once: the
// listed ones, and the part of the run in the range. O(log n + listed
// records from on), plus O(run) when the range cuts the run in two.
func (gp *groupPart) pruneRange(from, to int64) {
	a := gp.again
	i, _ := gp.recall(from)
	j, k := i, i
	for ; k < len(a) && a[k].off < to; k++ {
		if a[k].n != 0 {
			a[j] = a[k]
			j++
		}
	}
	n := j + copy(a[j:], a[k:])
	clear(a[n:])
	gp.again = gp.again[:n] // a itself: resliced in place, storing no pointer (no write barrier)
	lo, hi := max(from, gp.runLo), min(to, gp.runHi)
	switch {
	case lo >= hi: // the range misses the run
	case lo == gp.runLo && hi == gp.runHi:
		gp.runLo, gp.runHi = 0, 0
	case lo == gp.runLo:
		gp.runLo = hi
	case hi == gp.runHi:
		gp.runHi = lo
	default: // the run's part below the range is listed, its part past it stays the run
		rest := gp.runHi
		gp.runHi = lo
		gp.list()
		gp.runLo, gp.runHi = hi, rest
	}
}

// fetch appends up to max records of partition p from the owner's
// position to m.got and returns how many, applying auto.offset.reset when
// the position is unresolved or out of range, and traces each as "polled"
// (one delivery for the ledger; booked with sim.Trace.BookDelivery when
// the ledger is the only listener). The records become outstanding for m.
// A fetch that reaches the last record moves the position to the end,
// past any offsets compaction emptied there. O(log n + max), plus O(skipped records) when a
// resolution books records lost; it allocates only when m.got or m.out
// must grow.
func (g *Group) fetch(m *Member, p int, max int) int {
	gp := &g.parts[p]
	part := g.t.parts[p]
	if gp.pos < 0 && gp.committed >= 0 {
		// Committed since the member got the partition: like Kafka's
		// consumer, a position is taken from the committed offset first.
		gp.pos = gp.committed
		gp.epoch++
	}
	if gp.pos < 0 || !part.valid(gp.pos) {
		if !g.reset(m, p, gp, part) {
			return 0
		}
	} else if gp.owe >= 0 {
		// The log has grown to a position set past its end (a seek or a
		// commit beyond it): the records the group owed below it are
		// skipped.
		cause := gp.byCause.cause()
		if cause == "" {
			cause = sim.CauseOffsetReset // a latest group that never resolved its position
		}
		g.owed(m.cfg.Name, p, gp, part, gp.pos, cause)
	}
	tr := g.env.Trace
	i := part.search(gp.pos)
	if want := min(max, part.recs.len()-i); want > 0 {
		m.reserve(want)
	}
	got := 0
	for ; i < part.recs.len() && got < max; i++ {
		e, a, off := part.entry(i)
		n := g.attempt(gp, off)
		m.got = append(m.got, held{e: e, a: a, p: p, off: off})
		m.out = append(m.out, outRec{off: off, id: e.id, p: int32(p), attempt: int32(n)})
		switch {
		case !tr.Enabled():
			tr.Skip() // numbers the event as Emit would, without building it
		case tr.BookDelivery(g.env.Now(), e.id, g.cfg.Name, &g.lc):
			// Only the ledger listens: booked without building the event.
		default:
			ev := sim.Event{Tick: g.env.Now(), Kind: sim.KindPolled, Where: g.t.where, Actor: m.cfg.Name, Consumer: g.cfg.Name, Msg: e.id, Key: e.key,
				Corr: e.hdr.CorrelationID, Attempt: n, HasPos: true, Partition: p, Offset: off}
			tr.EmitRef(&ev)
		}
		gp.pos = off + 1
		got++
	}
	if i == part.recs.len() {
		// Nothing is left past the position: the offsets up to the end
		// hold no record (compaction removed them), and a position there
		// reads as the end (Kafka's "equivalent positions").
		gp.pos = part.end
	}
	return got
}

// owed books as lost with cause the live records of partition p the group
// owed (from gp.owe) below offset to, where its position was resolved, and
// settles the skipped records against to; it clears the debt. actor is
// the member whose fetch resolved it.
func (g *Group) owed(actor string, p int, gp *groupPart, part *partition, to int64, cause sim.Cause) {
	if gp.owe >= 0 {
		for i := part.search(max(gp.owe, part.start)); i < part.recs.len() && part.off(i) < to; i++ {
			if o := part.off(i); !g.applied(p, o) {
				g.lose(actor, p, part.recs.at(i), o, cause, "")
			}
		}
	}
	gp.owe = -1
	g.settle(actor, p, gp, to, false)
}

// reset applies auto.offset.reset to partition p; it reports whether the
// member may read. A reset to latest books every record it skips that the
// group has not handled as lost with sim.CauseOffsetReset.
func (g *Group) reset(m *Member, p int, gp *groupPart, part *partition) bool {
	detailed := g.env.Trace.Detailed()
	if g.cfg.Reset == ResetNone {
		if !gp.stuck {
			gp.stuck = true
			ev := sim.Event{Kind: sim.KindRejected, Where: g.t.where, Actor: m.cfg.Name, Consumer: g.cfg.Name, HasPos: true, Partition: p, Offset: max(gp.pos, 0)}
			if detailed {
				why := "no committed offset"
				if gp.pos >= 0 {
					why = "offset " + strconv.FormatInt(gp.pos, 10) + " out of range [" + strconv.FormatInt(part.start, 10) + ", " + strconv.FormatInt(part.end, 10) + ")"
				}
				ev.Detail = "poll by group " + g.cfg.Name + ": " + why + " and auto.offset.reset=none"
			}
			g.env.Emit(ev)
		}
		return false
	}
	from := gp.pos
	m.drop(p)
	ev := sim.Event{Kind: sim.KindSeeked, Where: g.t.where, Actor: m.cfg.Name, Consumer: g.cfg.Name, HasPos: true, Partition: p}
	switch g.cfg.Reset {
	case ResetLatest:
		gp.pos = part.end
	default:
		gp.pos = part.start
	}
	gp.epoch++
	ev.Offset = gp.pos
	if detailed {
		if from < 0 {
			ev.Detail = "auto.offset.reset=" + g.cfg.Reset.String() + ": no committed offset (log start " + strconv.FormatInt(part.start, 10) + ", end " + strconv.FormatInt(part.end, 10) + ")"
		} else {
			ev.Detail = "auto.offset.reset=" + g.cfg.Reset.String() + " from offset " + strconv.FormatInt(from, 10) + " (log start " + strconv.FormatInt(part.start, 10) + ")"
		}
	}
	g.env.Emit(ev)
	if gp.owe < 0 && from >= 0 && from <= part.end {
		gp.owe = from // below the log start: the records from it on are unhandled
	}
	if g.cfg.Reset != ResetLatest {
		gp.owe = -1 // earliest re-reads everything still in the log
	}
	g.owed(m.cfg.Name, p, gp, part, gp.pos, sim.CauseOffsetReset)
	return true
}

// PartitionLag is a group's standing on one partition.
type PartitionLag struct {
	Partition int
	LogStart  int64  // first readable offset
	End       int64  // log end offset
	Committed int64  // next offset to read; -1 when nothing was committed
	Position  int64  // the owner's fetch position; -1 without an owner
	Lag       int64  // End minus the position the group resumes from (the committed offset; the start position while nothing was committed), where a position below the log start counts as the log start and one whose record compaction removed as the next record that remains: retention's and compaction's deletions are losses, not lag. 0 when the committed offset is past the end
	Owner     string // the owning member, "" when unassigned
}

// GroupMetrics summarises a group.
type GroupMetrics struct {
	Group           string
	Generation      int
	Members         int
	Lag             int64 // sum over partitions
	Outstanding     int   // records members fetched and have not handled yet
	Commits         int64
	RejectedCommits int64 // including those refused while the broker was unavailable
	LostCommits     int64 // commits broker.ack_lost lost on their way (the member believes they succeeded)
	Rebalances      int64
	Partitions      []PartitionLag
}

// Metrics returns the group's metrics. O(partitions x log n + members);
// it allocates the Partitions slice once.
func (g *Group) Metrics() GroupMetrics {
	m := GroupMetrics{Group: g.cfg.Name, Generation: g.gen, Members: len(g.mems), Commits: g.commits, RejectedCommits: g.rejected, LostCommits: g.commitsLost,
		Rebalances: g.rebalances, Partitions: make([]PartitionLag, 0, len(g.parts))}
	for _, x := range g.mems {
		m.Outstanding += len(x.out)
	}
	for p := range g.parts {
		gp := &g.parts[p]
		part := g.t.parts[p]
		pl := PartitionLag{Partition: p, LogStart: part.start, End: part.end, Committed: gp.committed, Position: -1, Lag: g.lag(p)}
		if gp.owner != nil {
			pl.Owner = gp.owner.cfg.Name
			pl.Position = gp.pos
		}
		m.Lag += pl.Lag
		m.Partitions = append(m.Partitions, pl)
	}
	return m
}

// Lag returns the group's lag summed over its partitions, as
// Metrics().Lag does, without building the metrics: a condition checked
// every tick (RunUntil's) calls it. O(partitions), O(partitions x log n)
// when compaction left gaps; it never allocates.
func (g *Group) Lag() int64 {
	var n int64
	for p := range g.parts {
		n += g.lag(p)
	}
	return n
}

// lag is PartitionLag.Lag of partition p.
func (g *Group) lag(p int) int64 {
	part := g.t.parts[p]
	if from := g.readFrom(p); from <= part.end {
		return part.end - part.next(max(from, part.start))
	}
	return 0
}
