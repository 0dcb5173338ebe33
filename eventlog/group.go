package eventlog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/sim"
)

// Reset is a group's auto.offset.reset policy: where a member starts
// reading a partition that has no committed offset, or whose position fell
// below the log start.
type Reset int

// The auto.offset.reset policies.
const (
	// ResetEarliest starts at the log start. Default.
	ResetEarliest Reset = iota
	// ResetLatest starts at the log end; the records it skips are lost with
	// sim.CauseOffsetReset.
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

// ParseReset parses a policy name as String returns it.
func ParseReset(s string) (Reset, error) {
	for i, n := range resetNames {
		if s == n {
			return Reset(i), nil
		}
	}
	if s == "" {
		return ResetEarliest, nil
	}
	return 0, fmt.Errorf("%w: unknown auto.offset.reset %q", ErrInvalidConfig, s)
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
	pos       int64   // the owner's fetch position; -1 = no position (reset none)
	epoch     uint32  // bumped whenever pos moves other than by reading
	stuck     bool    // out of range under ResetNone, already traced
}

// Group is a consumer group on one topic: its members, the current
// generation and assignment, and a committed offset per partition. At most
// one member owns a partition at a time. Rebalances are synchronous: a
// join, leave, crash or session timeout reassigns at once and bumps the
// generation; every owner then resumes from the committed offset (eager
// protocol). Not safe for concurrent use.
type Group struct {
	t     *Topic
	env   *sim.Env
	name  string
	cfg   GroupConfig
	ref   sim.ConsumerRef
	gen   int
	mems  []*Member // in the group now, in join order
	parts []groupPart
	asg   []Assignment

	commits, rejected, rebalances int64
}

// NewGroup creates the consumer group cfg.Name on the topic. The group
// starts at the log start (ResetEarliest) or the log end (otherwise) of
// every partition and expects every record from there on. O(records in the
// topic) for ResetEarliest, O(partitions) otherwise.
func (t *Topic) NewGroup(cfg GroupConfig) (*Group, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if t.Group(cfg.Name) != nil {
		return nil, fmt.Errorf("%w: %q on topic %s", ErrDuplicateGroup, cfg.Name, t.cfg.Name)
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	g := &Group{t: t, env: t.env, name: cfg.Name, cfg: cfg, ref: t.env.Ledger.Consumer(cfg.Name)}
	for _, p := range t.parts {
		gp := groupPart{committed: -1, initial: p.end, pos: -1}
		if cfg.Reset == ResetEarliest {
			gp.initial = p.start
			if l := t.env.Ledger; l != nil {
				for _, e := range p.live() {
					l.Expect(e.msg.ID, g.ref)
				}
			}
		}
		g.parts = append(g.parts, gp)
	}
	t.groups = append(t.groups, g)
	return g, nil
}

// Name returns the group's name.
func (g *Group) Name() string { return g.name }

// Topic returns the topic the group reads.
func (g *Group) Topic() *Topic { return g.t }

// Generation returns the current generation; it starts at 0 and every
// rebalance adds one.
func (g *Group) Generation() int { return g.gen }

// Assignment returns the current assignment, one entry per member sorted by
// name. The slice is the group's own; do not modify it.
func (g *Group) Assignment() []Assignment { return g.asg }

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
		gp := groupPart{committed: -1, initial: 0, pos: -1}
		g.parts = append(g.parts, gp)
	}
	if len(g.mems) > 0 {
		g.rebalance("partitions added")
	}
}

func (g *Group) add(m *Member) {
	m.g = g
	g.mems = append(g.mems, m)
	g.rebalance(m.cfg.Name + " joined")
}

func (g *Group) remove(m *Member, why string) {
	for i, x := range g.mems {
		if x == m {
			g.mems = append(g.mems[:i], g.mems[i+1:]...)
			break
		}
	}
	for p := range g.parts {
		if g.parts[p].owner == m {
			g.parts[p].owner = nil
		}
	}
	m.owned = m.owned[:0]
	g.rebalance(m.cfg.Name + " " + why)
}

// rebalance bumps the generation and reassigns every partition. Members in
// auto-commit mode commit their positions first (as on revocation); every
// owner then resumes from the committed offset.
func (g *Group) rebalance(why string) {
	for _, m := range g.mems {
		if m.cfg.Commit == CommitAuto && m.state == stateActive {
			m.commitPositions(false, nil)
		}
	}
	g.gen++
	g.rebalances++
	names := make([]string, len(g.mems))
	for i, m := range g.mems {
		names[i] = m.cfg.Name
	}
	g.asg = Assign(g.cfg.Strategy, names, len(g.parts), g.asg)
	for p := range g.parts {
		g.parts[p].owner = nil
	}
	for _, a := range g.asg {
		m := g.Member(a.Member)
		m.gen = g.gen
		m.owned = append(m.owned[:0], a.Partitions...)
		for _, p := range a.Partitions {
			gp := &g.parts[p]
			gp.owner = m
			gp.epoch++
			gp.stuck = false
			switch {
			case gp.committed >= 0:
				gp.pos = gp.committed
			case g.cfg.Reset == ResetNone:
				gp.pos = -1
			default:
				gp.pos = gp.initial
			}
		}
	}
	if g.env.Trace.Enabled() {
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
		g.env.Emit(sim.Event{Kind: sim.KindRebalanced, Where: g.t.where, Actor: g.name, Detail: b.String()})
	} else {
		g.env.Emit(sim.Event{Kind: sim.KindRebalanced, Where: g.t.where, Actor: g.name})
	}
}

// expireSessions removes every member that has not polled for more than
// the session timeout.
func (g *Group) expireSessions(now sim.Tick) {
	for i := 0; i < len(g.mems); {
		m := g.mems[i]
		if now-m.lastPoll > g.cfg.SessionTimeout {
			m.expired = true
			g.remove(m, "removed: session timeout (last poll "+m.lastPoll.String()+")")
			continue
		}
		i++
	}
}

// Commit stores offset off as the next offset to read of partition p, on
// behalf of member in generation gen. A commit from an older generation
// (a member that was removed meanwhile), from a member that does not own p,
// or outside [0, end] is rejected, traced and counted. O(members).
func (g *Group) Commit(member string, gen int, p int, off int64) error {
	m := g.Member(member)
	if m == nil {
		g.reject(member, p, off, "unknown member")
		return fmt.Errorf("%w: %q in group %s", ErrUnknownMember, member, g.name)
	}
	return g.commit(m, gen, p, off)
}

func (g *Group) reject(member string, p int, off int64, why string) {
	g.rejected++
	g.env.Emit(sim.Event{Kind: sim.KindRejected, Where: g.t.where, Actor: member, HasPos: true, Partition: p, Offset: off, Detail: "commit by group " + g.name + ": " + why})
}

func (g *Group) commit(m *Member, gen int, p int, off int64) error {
	name := m.cfg.Name
	if gen != g.gen || m.g != g || m.state != stateActive && m.state != stateStalled || m.expired {
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
	if off < 0 || off > g.t.parts[p].end {
		g.reject(name, p, off, "offset out of range")
		return fmt.Errorf("%w: commit %d", ErrOffsetOutOfRange, off)
	}
	g.parts[p].committed = off
	g.commits++
	g.env.Emit(sim.Event{Kind: sim.KindCommitted, Where: g.t.where, Actor: name, HasPos: true, Partition: p, Offset: off, Detail: "group " + g.name + " gen=" + strconv.Itoa(gen)})
	return nil
}

// SeekOffset moves the group to offset off of partition p (AllPartitions
// for every partition): it becomes the committed offset and the owner's
// position. Records before it are not re-read, records after it are read
// (again). An offset past the end is ErrOffsetOutOfRange; one below the log
// start is resolved by auto.offset.reset at the next poll.
func (g *Group) SeekOffset(p int, off int64) error {
	return g.seek(p, "offset "+strconv.FormatInt(off, 10), func(int) (int64, error) { return off, nil })
}

// SeekEarliest moves the group to the log start of partition p
// (AllPartitions for every partition): a replay.
func (g *Group) SeekEarliest(p int) error {
	return g.seek(p, "earliest", func(p int) (int64, error) { return g.t.parts[p].start, nil })
}

// SeekLatest moves the group to the log end of partition p (AllPartitions
// for every partition): it skips the backlog.
func (g *Group) SeekLatest(p int) error {
	return g.seek(p, "latest", func(p int) (int64, error) { return g.t.parts[p].end, nil })
}

// SeekTick moves the group to the first record of partition p
// (AllPartitions for every partition) appended at or after tick at, or to
// the end when there is none. O(log n) per partition.
func (g *Group) SeekTick(p int, at sim.Tick) error {
	return g.seek(p, "first record at or after "+at.String(), func(p int) (int64, error) { return g.t.OffsetForTick(p, at) })
}

func (g *Group) seek(p int, what string, target func(p int) (int64, error)) error {
	lo, hi := p, p+1
	if p == AllPartitions {
		lo, hi = 0, len(g.parts)
	} else if p < 0 || p >= len(g.parts) {
		return fmt.Errorf("%w: %d", ErrNoPartition, p)
	}
	for q := lo; q < hi; q++ {
		off, err := target(q)
		if err != nil {
			return err
		}
		if off < 0 || off > g.t.parts[q].end {
			return fmt.Errorf("%w: seek partition %d to %d (end %d)", ErrOffsetOutOfRange, q, off, g.t.parts[q].end)
		}
		gp := &g.parts[q]
		gp.committed = off
		gp.stuck = false
		if gp.owner != nil {
			gp.pos = off
			gp.epoch++
		}
		g.env.Emit(sim.Event{Kind: sim.KindSeeked, Where: g.t.where, Actor: g.name, HasPos: true, Partition: q, Offset: off, Detail: what})
	}
	return nil
}

// fetch appends up to max records of partition p from the owner's position
// to dst, applying auto.offset.reset when the position is out of range, and
// records each as a delivery. O(log n + max), plus O(skipped records) for
// a reset to latest.
func (g *Group) fetch(m *Member, p int, max int, dst []Record) []Record {
	gp := &g.parts[p]
	part := g.t.parts[p]
	now := g.env.Now()
	if gp.pos < 0 || gp.pos < part.start || gp.pos > part.end {
		if !g.reset(m, p, gp, part, now) {
			return dst
		}
	}
	l := g.env.Ledger
	for i := part.search(gp.pos); i < len(part.recs) && max > 0; i++ {
		e := &part.recs[i]
		n := l.Delivered(e.msg.ID, g.ref, now)
		dst = append(dst, Record{Partition: p, Offset: e.off, Tick: e.tick, Message: e.msg})
		if tr := g.env.Trace; tr.Enabled() {
			g.env.Emit(sim.Event{Kind: sim.KindPolled, Where: g.t.where, Actor: m.cfg.Name, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.msg.Headers.CorrelationID, Attempt: n, HasPos: true, Partition: p, Offset: e.off})
		} else {
			tr.Skip() // numbers the event as Emit would, without building it
		}
		gp.pos = e.off + 1
		max--
	}
	return dst
}

// reset applies auto.offset.reset to partition p; it reports whether the
// member may read.
func (g *Group) reset(m *Member, p int, gp *groupPart, part *partition, now sim.Tick) bool {
	if g.cfg.Reset == ResetNone {
		if !gp.stuck {
			gp.stuck = true
			why := "no committed offset"
			if gp.pos >= 0 {
				why = "offset " + strconv.FormatInt(gp.pos, 10) + " out of range [" + strconv.FormatInt(part.start, 10) + ", " + strconv.FormatInt(part.end, 10) + ")"
			}
			g.env.Emit(sim.Event{Kind: sim.KindRejected, Where: g.t.where, Actor: m.cfg.Name, HasPos: true, Partition: p, Offset: max(gp.pos, 0),
				Detail: "poll by group " + g.name + ": " + why + " and auto.offset.reset=none"})
		}
		return false
	}
	from := gp.pos
	switch g.cfg.Reset {
	case ResetLatest:
		l := g.env.Ledger
		for i := part.search(max(from, part.start)); i < len(part.recs); i++ {
			e := &part.recs[i]
			d := l.Delivery(e.msg.ID, g.ref)
			if l != nil && d.Expected && d.Applied == 0 && d.Lost == "" {
				l.Lost(e.msg.ID, g.ref, sim.CauseOffsetReset, now)
				g.env.Emit(sim.Event{Kind: sim.KindLost, Where: g.t.where, Actor: g.name, Msg: e.msg.ID, Key: e.msg.Key, HasPos: true, Partition: p, Offset: e.off, Detail: string(sim.CauseOffsetReset)})
			}
		}
		gp.pos = part.end
	default:
		gp.pos = part.start
	}
	gp.epoch++
	g.env.Emit(sim.Event{Kind: sim.KindSeeked, Where: g.t.where, Actor: m.cfg.Name, HasPos: true, Partition: p, Offset: gp.pos,
		Detail: "auto.offset.reset=" + g.cfg.Reset.String() + " from offset " + strconv.FormatInt(from, 10) + " (log start " + strconv.FormatInt(part.start, 10) + ")"})
	return true
}

// PartitionLag is a group's standing on one partition.
type PartitionLag struct {
	Partition int
	LogStart  int64  // first readable offset
	End       int64  // log end offset
	Committed int64  // next offset to read; -1 when nothing was committed
	Position  int64  // the owner's fetch position; -1 without an owner
	Lag       int64  // End minus the committed offset (the start position while nothing was committed), counting only records still in the log: retention's deletions are losses, not lag
	Owner     string // the owning member, "" when unassigned
}

// GroupMetrics summarises a group.
type GroupMetrics struct {
	Group           string
	Generation      int
	Members         int
	Lag             int64 // sum over partitions
	Commits         int64
	RejectedCommits int64
	Rebalances      int64
	Partitions      []PartitionLag
}

// Metrics returns the group's metrics. O(partitions).
func (g *Group) Metrics() GroupMetrics {
	m := GroupMetrics{Group: g.name, Generation: g.gen, Members: len(g.mems), Commits: g.commits, RejectedCommits: g.rejected, Rebalances: g.rebalances}
	for p := range g.parts {
		gp := &g.parts[p]
		part := g.t.parts[p]
		pl := PartitionLag{Partition: p, LogStart: part.start, End: part.end, Committed: gp.committed, Position: -1, Lag: part.end - max(g.readFrom(p), part.start)}
		if gp.owner != nil {
			pl.Owner = gp.owner.cfg.Name
			pl.Position = gp.pos
		}
		m.Lag += pl.Lag
		m.Partitions = append(m.Partitions, pl)
	}
	return m
}
