package eventlog

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/sim"
)

// OpKind is the kind of a history operation.
type OpKind uint8

// The history operations.
const (
	OpSend   OpKind = iota + 1 // a producer appended a value at a position
	OpPoll                     // a group member read values at positions
	OpRemove                   // compaction or retention removed the value at a position
)

// String returns "send", "poll" or "remove".
func (k OpKind) String() string {
	switch k {
	case OpSend:
		return "send"
	case OpPoll:
		return "poll"
	case OpRemove:
		return "remove"
	}
	return "op(" + strconv.Itoa(int(k)) + ")"
}

// Read is one value at one position, as a send placed it or a poll read it.
// Epoch identifies a reading session of a partition within a group: it
// changes whenever the group's position moves other than by reading
// (rebalance, seek, offset reset, rewind after a handler error), so the
// order checks compare only reads of one session.
type Read struct {
	Partition int
	Offset    int64
	Value     sim.ID
	Epoch     uint32
}

// Op is one operation of a History.
type Op struct {
	Kind    OpKind
	Tick    sim.Tick
	Process string // the producer (sends), the member (polls) or the cause (removals)
	Group   string // the consumer group (polls)
	Reads   []Read // a send and a removal have exactly one
}

type op struct {
	kind    OpKind
	tick    sim.Tick
	process string
	group   string
	lo, hi  int32
}

// History is a recorded sequence of sends and polls, in the spirit of the
// histories the Jepsen Kafka checker consumes, and of the removals by
// compaction and retention, which the checker needs to tell a value the
// log deleted from one a reader missed. Values are message IDs. A Log with
// Config.History records one; tests may also write one by hand.
// It costs about 40 bytes per operation plus 32 per read.
type History struct {
	ops   []op
	reads []Read
}

// Send records that process appended value v at partition p, offset off.
// A nil History ignores it.
func (h *History) Send(t sim.Tick, process string, p int, off int64, v sim.ID) {
	if h == nil {
		return
	}
	lo := int32(len(h.reads))
	h.reads = append(h.reads, Read{Partition: p, Offset: off, Value: v})
	h.ops = append(h.ops, op{kind: OpSend, tick: t, process: process, lo: lo, hi: lo + 1})
}

// Remove records that the log deleted value v at partition p, offset off,
// for cause c: sim.CauseCompaction or sim.CauseRetention. A nil History
// ignores it.
func (h *History) Remove(t sim.Tick, c sim.Cause, p int, off int64, v sim.ID) {
	if h == nil {
		return
	}
	lo := int32(len(h.reads))
	h.reads = append(h.reads, Read{Partition: p, Offset: off, Value: v})
	h.ops = append(h.ops, op{kind: OpRemove, tick: t, process: string(c), lo: lo, hi: lo + 1})
}

// Poll records that member of group read the given values in this order.
// A nil History ignores it.
func (h *History) Poll(t sim.Tick, group, member string, reads ...Read) {
	if h == nil {
		return
	}
	lo := int32(len(h.reads))
	h.reads = append(h.reads, reads...)
	h.ops = append(h.ops, op{kind: OpPoll, tick: t, process: member, group: group, lo: lo, hi: int32(len(h.reads))})
}

// Len returns the number of operations.
func (h *History) Len() int {
	if h == nil {
		return 0
	}
	return len(h.ops)
}

// Op returns operation i, or the zero Op when i is out of range; its Reads
// alias the history's storage.
func (h *History) Op(i int) Op {
	if i < 0 || i >= h.Len() {
		return Op{}
	}
	o := h.ops[i]
	return Op{Kind: o.kind, Tick: o.tick, Process: o.process, Group: o.group, Reads: h.reads[o.lo:o.hi:o.hi]}
}

// Ops returns every operation in order.
func (h *History) Ops() []Op {
	if h == nil {
		return nil
	}
	out := make([]Op, len(h.ops))
	for i := range h.ops {
		out[i] = h.Op(i)
	}
	return out
}

// String formats the history one operation per line:
//
//	t=3 send producer p0/4=m9
//	t=5 poll g1/a p0/3=m8 p0/4=m9
//	t=6 remove compaction p0/3=m8
func (h *History) String() string {
	var b strings.Builder
	for i := 0; i < h.Len(); i++ {
		o := h.Op(i)
		b.WriteString(o.Tick.String())
		b.WriteByte(' ')
		b.WriteString(o.Kind.String())
		b.WriteByte(' ')
		if o.Group != "" {
			b.WriteString(o.Group)
			b.WriteByte('/')
		}
		b.WriteString(o.Process)
		for _, r := range o.Reads {
			b.WriteString(" p")
			b.WriteString(strconv.Itoa(r.Partition))
			b.WriteByte('/')
			b.WriteString(strconv.FormatInt(r.Offset, 10))
			b.WriteByte('=')
			b.WriteString(r.Value.String())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// AnomalyKind names a class of history anomaly.
type AnomalyKind string

// The anomaly classes, in report order.
const (
	// LostWrite: an acknowledged write that no consumer ever read although
	// a higher offset of its partition was read (CheckOptions.PerGroup: a
	// sent value a group never read although it read offsets below and
	// above it in the same partition).
	LostWrite AnomalyKind = "lost-write"
	// Duplicate: a value at more than one position (CheckOptions.PerGroup:
	// also one position read more than once by one group, a redelivery).
	Duplicate AnomalyKind = "duplicate"
	// PollSkip: consecutive reads of one partition in one session jumped
	// over offsets known to hold values.
	PollSkip AnomalyKind = "poll-skip"
	// NonMonotonicPoll: consecutive reads of one partition in one session
	// went back or stood still.
	NonMonotonicPoll AnomalyKind = "nonmonotonic-poll"
	// NonMonotonicSend: consecutive sends of one producer to one partition
	// got offsets that went back or stood still.
	NonMonotonicSend AnomalyKind = "nonmonotonic-send"
	// InconsistentOffset: two different values observed at one position.
	InconsistentOffset AnomalyKind = "inconsistent-offset"
)

var kindOrder = map[AnomalyKind]int{LostWrite: 0, Duplicate: 1, PollSkip: 2, NonMonotonicPoll: 3, NonMonotonicSend: 4, InconsistentOffset: 5}

// Anomaly is one finding of CheckHistory, with the offending offsets and
// values.
type Anomaly struct {
	Kind      AnomalyKind
	Group     string // the group, for read anomalies
	Process   string // the member or producer
	Partition int
	Offsets   []int64  // the offending offsets
	Values    []sim.ID // the values involved
	Tick      sim.Tick // when the evidence was recorded
	Detail    string
}

// String formats the anomaly on one line.
func (a Anomaly) String() string {
	var b strings.Builder
	b.WriteString(string(a.Kind))
	if a.Group != "" {
		b.WriteString(" group=")
		b.WriteString(a.Group)
	}
	if a.Process != "" {
		b.WriteString(" by=")
		b.WriteString(a.Process)
	}
	b.WriteString(" p=")
	b.WriteString(strconv.Itoa(a.Partition))
	b.WriteString(" offsets=")
	b.WriteString(fmtOffsets(a.Offsets))
	if len(a.Values) > 0 {
		b.WriteString(" values=[")
		for i, v := range a.Values {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(v.String())
		}
		b.WriteByte(']')
	}
	b.WriteByte(' ')
	b.WriteString(a.Tick.String())
	b.WriteString(": ")
	b.WriteString(a.Detail)
	return b.String()
}

func fmtOffsets(o []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range o {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// HistoryReport is what CheckHistory found.
type HistoryReport struct {
	Anomalies []Anomaly
	Sends     int // send operations
	Reads     int // values read by polls
	Unseen    int // sent values no group ever read (not an anomaly: maybe not read yet)
	// Compacted counts the sent values no group ever read that compaction
	// removed before any consumer read past them: no anomalies, as a
	// compacted topic keeps only the latest value of a key. The ledger
	// books them, for a group that expected them, as losses with cause
	// compaction.
	Compacted int
}

// Count returns how many anomalies of kind k were found.
func (r HistoryReport) Count(k AnomalyKind) int {
	n := 0
	for _, a := range r.Anomalies {
		if a.Kind == k {
			n++
		}
	}
	return n
}

// Err returns nil for a clean history, else a *HistoryError listing every
// anomaly.
func (r HistoryReport) Err() error {
	if len(r.Anomalies) == 0 {
		return nil
	}
	return &HistoryError{Anomalies: r.Anomalies}
}

// HistoryError lists every anomaly of a history.
type HistoryError struct {
	Anomalies []Anomaly
}

// Error lists the anomalies one per line.
func (e *HistoryError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "eventlog: %d history anomal(ies):", len(e.Anomalies))
	for _, a := range e.Anomalies {
		b.WriteString("\n\t")
		b.WriteString(a.String())
	}
	return b.String()
}

// maxListed caps the offsets listed in one poll-skip anomaly.
const maxListed = 16

type pos struct {
	p   int
	off int64
}

// CheckOptions selects how CheckHistoryWith judges a history.
type CheckOptions struct {
	// PerGroup judges every consumer group on its own, a stricter reading
	// than the Jepsen checker's: a value a group never read although it
	// read offsets below and above it in that partition is a lost write
	// for that group (offsets below a group's first read are not judged),
	// and a position a group read more than once is a duplicate (a
	// redelivery, one anomaly per group and position, with the count).
	PerGroup bool
}

// CheckHistory checks a history of sends and polls as the Jepsen Kafka
// checker (jepsen.tests.kafka) defines its anomalies; it is
// CheckHistoryWith(h, CheckOptions{}).
func CheckHistory(h *History) HistoryReport { return CheckHistoryWith(h, CheckOptions{}) }

// CheckHistoryWith checks a history of sends and polls and reports every
// anomaly at once. By default it follows the Jepsen Kafka checker
// (jepsen.tests.kafka):
//
//   - lost-write: an acknowledged write (every recorded send is one) whose
//     value no consumer of any group ever read in its partition, although
//     some consumer read that partition at a higher offset, including
//     offsets below where a group started reading (Jepsen's
//     lost-write-cases: "every :ok :send operation with an equal or lower
//     offset" than the highest read "was also read by at least one
//     consumer"); a value sent more than once is judged at its last
//     position, so one sent at offsets 1 and 3 with offset 2 the highest
//     read is only a duplicate;
//   - duplicate: a value seen at more than one position (Jepsen's
//     duplicate-cases); reading one position twice, after a rebalance or
//     a seek, is not a duplicate;
//
// and, judged per reading session (see Read.Epoch) or per producer:
//
//   - poll-skip: within one poll, or between consecutive polls of one
//     session (see Read.Epoch), a jump over offsets known to hold values;
//   - nonmonotonic-poll: within a session, a read at or below the previous
//     read offset of that partition;
//   - nonmonotonic-send: a producer's send at or below its previous offset
//     in that partition;
//   - inconsistent-offset: two different values at one position.
//
// With CheckOptions.PerGroup, lost writes and duplicates are judged per
// group instead (see CheckOptions).
//
// The removals the history records (see History.Remove) are judged as the
// ledger judges them. An offset the log had removed, by compaction or
// retention, before a poll holds no value for that poll: reading past it
// is no skip. A value compaction removed before any consumer (of the
// group, with PerGroup) read past it is no lost write, as a compacted
// topic keeps only the latest value of each key; HistoryReport.Compacted
// counts those nobody read. A value retention deleted unread is still a
// lost write, as the ledger books it as a loss with cause retention, and
// its detail names retention. A removal after a reader passed the offset
// explains nothing: the skip and the lost write stay anomalies.
// O(n log n) in the history's size.
func CheckHistoryWith(h *History, opts CheckOptions) HistoryReport {
	var rep HistoryReport
	if h == nil {
		return rep
	}
	var out []Anomaly
	valueAt := map[pos]sim.ID{}
	inconsistent := map[pos][]sim.ID{}
	where := map[sim.ID][]pos{}
	known := map[int][]int64{}
	observe := func(r Read) {
		k := pos{r.Partition, r.Offset}
		v, ok := valueAt[k]
		if !ok {
			valueAt[k] = r.Value
			known[r.Partition] = append(known[r.Partition], r.Offset)
		} else if v != r.Value && !slices.Contains(inconsistent[k], r.Value) {
			if len(inconsistent[k]) == 0 {
				inconsistent[k] = append(inconsistent[k], v)
			}
			inconsistent[k] = append(inconsistent[k], r.Value)
		}
		if ps := where[r.Value]; !slices.Contains(ps, k) {
			where[r.Value] = append(ps, k)
		}
	}
	for i := range h.ops {
		for _, r := range h.reads[h.ops[i].lo:h.ops[i].hi] {
			observe(r)
		}
	}
	for p := range known {
		slices.Sort(known[p])
	}
	// The removals, by position: the op index orders each against the
	// polls, as a removal only explains what was read past it later.
	type removal struct {
		op    int
		tick  sim.Tick
		cause sim.Cause
	}
	removed := map[pos]removal{}
	for i := range h.ops {
		if o := &h.ops[i]; o.kind == OpRemove {
			for _, r := range h.reads[o.lo:o.hi] {
				if _, ok := removed[pos{r.Partition, r.Offset}]; !ok {
					removed[pos{r.Partition, r.Offset}] = removal{i, o.tick, sim.Cause(o.process)}
				}
			}
		}
	}
	// gone reports whether the log had removed the record at k before op
	// i: an offset it had removed holds no value for a reader.
	gone := func(k pos, i int) bool {
		rm, ok := removed[k]
		return ok && rm.op < i
	}
	// knownBetween lists the known offsets of p strictly between a and b.
	knownBetween := func(p int, a, b int64) []int64 {
		ks := known[p]
		i, _ := slices.BinarySearch(ks, a+1)
		j, _ := slices.BinarySearch(ks, b)
		return ks[i:j]
	}

	type procPart struct {
		proc string
		p    int
	}
	type session struct {
		group string
		p     int
		epoch uint32
	}
	type last struct {
		off  int64
		same int // the op index of the previous read
	}
	type groupValue struct {
		group string
		at    pos
	}
	type groupPart struct {
		group string
		p     int
	}
	// past holds, per partition (group ""), and per group and partition,
	// the op indexes at which the highest offset read grew, with that
	// offset: firstPast finds the first op that read past an offset.
	type growth struct {
		op  int
		off int64
	}
	past := map[groupPart][]growth{}
	grow := func(k groupPart, i int, off int64) {
		if g := past[k]; len(g) == 0 || off > g[len(g)-1].off {
			past[k] = append(g, growth{i, off})
		}
	}
	firstPast := func(k groupPart, off int64) int {
		g := past[k]
		j, _ := slices.BinarySearchFunc(g, off+1, func(x growth, t int64) int { return cmp.Compare(x.off, t) })
		if j == len(g) {
			return len(h.ops)
		}
		return g[j].op
	}
	// removedUnread returns the removal of the record at k that came
	// before the reads of k.p (by group g, or by anyone when g is "")
	// passed it, if there was one: a removal after that explains nothing.
	removedUnread := func(g string, k pos) (removal, bool) {
		rm, ok := removed[k]
		return rm, ok && rm.op < firstPast(groupPart{g, k.p}, k.off)
	}
	// excused reports whether compaction removed the record at k unread.
	excused := func(g string, k pos) bool {
		rm, ok := removedUnread(g, k)
		return ok && rm.cause == sim.CauseCompaction
	}
	type topRead struct {
		off int64
		by  string // group/member of the first read of it
	}
	highest := map[int]topRead{}        // the highest offset read per partition
	readIn := map[int]map[sim.ID]bool{} // the values read per partition, by anyone
	lastSend := map[procPart]int64{}
	lastRead := map[session]last{}
	readCount := map[groupValue]int{}
	var readOrder []groupValue
	firstRead := map[groupValue]Read{}
	valueRead := map[string]map[sim.ID]bool{}
	lastTick := map[groupValue]sim.Tick{}
	span := map[groupPart][2]int64{}
	var groups []string
	type sent struct {
		r    Read
		tick sim.Tick
		proc string
	}
	var sends []sent
	for i := range h.ops {
		o := &h.ops[i]
		reads := h.reads[o.lo:o.hi]
		if o.kind == OpSend {
			for _, r := range reads {
				rep.Sends++
				sends = append(sends, sent{r, o.tick, o.process})
				k := procPart{o.process, r.Partition}
				if prev, ok := lastSend[k]; ok && r.Offset <= prev {
					out = append(out, Anomaly{Kind: NonMonotonicSend, Process: o.process, Partition: r.Partition, Offsets: []int64{prev, r.Offset}, Values: []sim.ID{valueAt[pos{r.Partition, prev}], r.Value}, Tick: o.tick,
						Detail: "send got offset " + strconv.FormatInt(r.Offset, 10) + " after offset " + strconv.FormatInt(prev, 10)})
				}
				lastSend[k] = r.Offset
			}
			continue
		}
		if o.kind == OpRemove {
			continue
		}
		if !slices.Contains(groups, o.group) {
			groups = append(groups, o.group)
		}
		for _, r := range reads {
			rep.Reads++
			if readIn[r.Partition] == nil {
				readIn[r.Partition] = map[sim.ID]bool{}
			}
			readIn[r.Partition][r.Value] = true
			if top, ok := highest[r.Partition]; !ok || r.Offset > top.off {
				highest[r.Partition] = topRead{r.Offset, o.group + "/" + o.process}
			}
			gv := groupValue{o.group, pos{r.Partition, r.Offset}}
			if valueRead[o.group] == nil {
				valueRead[o.group] = map[sim.ID]bool{}
			}
			valueRead[o.group][r.Value] = true
			if readCount[gv] == 0 {
				readOrder = append(readOrder, gv)
				firstRead[gv] = r
			}
			readCount[gv]++
			lastTick[gv] = o.tick
			grow(groupPart{"", r.Partition}, i, r.Offset)
			grow(groupPart{o.group, r.Partition}, i, r.Offset)
			gp := groupPart{o.group, r.Partition}
			if s, ok := span[gp]; !ok {
				span[gp] = [2]int64{r.Offset, r.Offset}
			} else {
				span[gp] = [2]int64{min(s[0], r.Offset), max(s[1], r.Offset)}
			}
			sk := session{o.group, r.Partition, r.Epoch}
			prev, ok := lastRead[sk]
			lastRead[sk] = last{r.Offset, i}
			if !ok {
				continue
			}
			where := "between polls"
			if prev.same == i {
				where = "within one poll"
			}
			switch {
			case r.Offset <= prev.off:
				out = append(out, Anomaly{Kind: NonMonotonicPoll, Group: o.group, Process: o.process, Partition: r.Partition, Offsets: []int64{prev.off, r.Offset}, Values: []sim.ID{valueAt[pos{r.Partition, prev.off}], r.Value}, Tick: o.tick,
					Detail: "read offset " + strconv.FormatInt(r.Offset, 10) + " after offset " + strconv.FormatInt(prev.off, 10) + " " + where})
			case r.Offset > prev.off+1:
				var gap []int64
				for _, x := range knownBetween(r.Partition, prev.off, r.Offset) {
					if !gone(pos{r.Partition, x}, i) {
						gap = append(gap, x)
					}
				}
				if len(gap) == 0 {
					break
				}
				listed := gap[:min(len(gap), maxListed)]
				vals := make([]sim.ID, len(listed))
				for j, x := range listed {
					vals[j] = valueAt[pos{r.Partition, x}]
				}
				d := "read offset " + strconv.FormatInt(r.Offset, 10) + " after offset " + strconv.FormatInt(prev.off, 10) + " " + where + ", skipping " + strconv.Itoa(len(gap)) + " offset(s) holding values"
				out = append(out, Anomaly{Kind: PollSkip, Group: o.group, Process: o.process, Partition: r.Partition, Offsets: slices.Clone(listed), Values: vals, Tick: o.tick, Detail: d})
			}
		}
	}
	readBy := func(g string, v sim.ID) bool { return valueRead[g][v] }
	// retained names retention as the cause of a lost write at k when it
	// deleted the record unread, as the ledger books the loss.
	retained := func(g string, k pos) string {
		if rm, ok := removedUnread(g, k); ok && rm.cause == sim.CauseRetention {
			return "; retention deleted it at " + rm.tick.String()
		}
		return ""
	}
	// A value sent more than once is judged at its last appearance in a
	// partition, as Jepsen does: the earlier positions are duplicates.
	type partValue struct {
		p int
		v sim.ID
	}
	lastAt := map[partValue]int64{}
	for _, s := range sends {
		k := partValue{s.r.Partition, s.r.Value}
		if off, ok := lastAt[k]; !ok || s.r.Offset > off {
			lastAt[k] = s.r.Offset
		}
	}
	for _, s := range sends {
		seen := false
		at := pos{s.r.Partition, s.r.Offset}
		for _, g := range groups {
			if readBy(g, s.r.Value) {
				seen = true
				continue
			}
			if !opts.PerGroup || excused(g, at) {
				continue
			}
			// Per group: sent values inside the span the group read.
			sp, ok := span[groupPart{g, s.r.Partition}]
			if ok && sp[0] <= s.r.Offset && s.r.Offset <= sp[1] {
				d := "sent value never read by the group, which read offsets " + strconv.FormatInt(sp[0], 10) + ".." + strconv.FormatInt(sp[1], 10)
				d += retained(g, at)
				out = append(out, Anomaly{Kind: LostWrite, Group: g, Process: s.proc, Partition: s.r.Partition, Offsets: []int64{s.r.Offset}, Values: []sim.ID{s.r.Value}, Tick: s.tick, Detail: d})
			}
		}
		if !seen {
			rep.Unseen++
			if excused("", at) {
				rep.Compacted++
			}
		}
		// Jepsen: an acknowledged write at or below the highest offset any
		// consumer read in its partition, whose value no consumer read there.
		// A write compaction superseded before any consumer read past it
		// is not lost; one retention deleted is, with that cause.
		if opts.PerGroup || readIn[s.r.Partition][s.r.Value] || s.r.Offset < lastAt[partValue{s.r.Partition, s.r.Value}] || excused("", at) {
			continue
		}
		if top, ok := highest[s.r.Partition]; ok && s.r.Offset <= top.off {
			d := "acknowledged write never read by any consumer, although " + top.by + " read offset " + strconv.FormatInt(top.off, 10) + " of the partition"
			d += retained("", at)
			out = append(out, Anomaly{Kind: LostWrite, Process: s.proc, Partition: s.r.Partition, Offsets: []int64{s.r.Offset}, Values: []sim.ID{s.r.Value}, Tick: s.tick, Detail: d})
		}
	}
	// Duplicates: a value at several positions, or read several times.
	var vals []sim.ID
	for v, ps := range where {
		if len(ps) > 1 {
			vals = append(vals, v)
		}
	}
	slices.Sort(vals)
	for _, v := range vals {
		ps := where[v]
		a := Anomaly{Kind: Duplicate, Partition: ps[0].p, Values: []sim.ID{v}, Detail: "value at " + strconv.Itoa(len(ps)) + " positions:"}
		for _, x := range ps {
			a.Offsets = append(a.Offsets, x.off)
			a.Detail += " p" + strconv.Itoa(x.p) + "/" + strconv.FormatInt(x.off, 10)
		}
		out = append(out, a)
	}
	for _, gv := range readOrder {
		if n := readCount[gv]; n > 1 && opts.PerGroup {
			r := firstRead[gv]
			out = append(out, Anomaly{Kind: Duplicate, Group: gv.group, Partition: r.Partition, Offsets: []int64{r.Offset}, Values: []sim.ID{r.Value}, Tick: lastTick[gv],
				Detail: "read " + strconv.Itoa(n) + " times by the group"})
		}
	}
	// Inconsistent offsets.
	var bad []pos
	for k := range inconsistent {
		bad = append(bad, k)
	}
	slices.SortFunc(bad, func(a, b pos) int { return cmp.Or(cmp.Compare(a.p, b.p), cmp.Compare(a.off, b.off)) })
	for _, k := range bad {
		vs := inconsistent[k]
		d := strconv.Itoa(len(vs)) + " values at one offset:"
		for _, v := range vs {
			d += " " + v.String()
		}
		out = append(out, Anomaly{Kind: InconsistentOffset, Partition: k.p, Offsets: []int64{k.off}, Values: vs, Detail: d})
	}
	slices.SortStableFunc(out, func(a, b Anomaly) int { return cmp.Compare(kindOrder[a.Kind], kindOrder[b.Kind]) })
	rep.Anomalies = out
	return rep
}
