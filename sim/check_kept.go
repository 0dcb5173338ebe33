package sim

import (
	"cmp"
	"slices"
	"strconv"
)

// Tally is what one checker's Violations would return on the ledger as it
// stands, counted rather than listed, as the ledger keeps it between
// events (see Ledger.Tally). A player judging a run of millions of
// messages on every tick reads it instead of walking every outcome.
type Tally struct {
	// Count is len(Violations(l)).
	Count int
	// Fixed counts the violations that nothing the run does later can
	// undo, because what they rest on only grows: an effect applied more
	// than once (at-most-once, exactly-once) and an inversion of order
	// (ordered-per-key), more duplicate deliveries than allowed
	// (max-duplicates), and a loss no later event can undo (no-loss,
	// at-least-once; see LostForGood). Nothing else is fixed: a message
	// still pending may yet be applied.
	Fixed int
	// First is the first of the fixed violations in the order Violations
	// returns them, the zero Violation when Fixed is 0.
	First Violation
	// Duplicates is Duplicates(consumer): the repeated deliveries of the
	// consumer's origins, summed over every consumer for "".
	Duplicates int
}

// Tally counts the violations the checker named check ("no-loss",
// "at-least-once", "at-most-once", "exactly-once", "ordered-per-key",
// "max-duplicates"; see Checker.Name) on consumer ("" for every consumer,
// as the checker's constructor takes it) would report now, with n the
// bound of max-duplicates. ok is false for a check it does not know or a
// nil ledger.
//
// The counts are kept as the ledger folds events, beside Stats: per chunk
// of 128 IDs, the outcomes of the chunk's unlinked copies counted by how
// each checker judges them, refolded when an event touched the chunk; the
// linked copies' outcomes and the smallest origin applied twice are taken
// again at each call. ordered-per-key keeps, per consumer, its fold over
// the order of first applications (a bit per ID for the origins it
// judged, and the last origin per key) and reads only the applications
// added since the last call; it starts over only when a copy it took for
// its own origin has been given one since. A call therefore costs
// O(chunks touched since the last call x 128 x consumers + linked copies
// x consumers + chunks), never a pass over every outcome, and allocates
// what the kept counts grow by, the first fixed violation's words, and
// O(lineages) while it folds the lineages; a run with many redriven or
// re-published copies pays for them at every call, as Stats does.
func (l *Ledger) Tally(check, consumer string, n int) (t Tally, ok bool) {
	if l == nil {
		return t, false
	}
	switch check {
	case "no-loss", "at-least-once", "at-most-once", "exactly-once", "ordered-per-key", "max-duplicates":
	default:
		return t, false
	}
	x := l.statsNow()
	ref := NoConsumer
	if consumer != "" {
		ref = l.Consumer(consumer)
	}
	t.Duplicates = x.duplicates(l, ref, consumer)
	if check == "no-loss" {
		if l.recs.len() <= 1 {
			t.Count = 1
			return t, true
		}
		t.Count = x.total.beforeLost + x.total.unrouted
		for i := range l.consumers {
			j := x.judged(l, ConsumerRef(i))
			t.Count += j.lossBad
			t.settleLosses(l, x, ConsumerRef(i), &j, check)
		}
		return t, true
	}
	if check == "max-duplicates" && n < 0 || consumer != "" && ref == NoConsumer {
		t.Count = 1 // a misuse: a negative bound, or a consumer the ledger does not know
		return t, true
	}
	if check == "ordered-per-key" {
		return x.ordered(l, ref, t), true
	}
	var sum judgeCount
	first := NoConsumer // the first consumer with an effect applied twice
	for i := range l.consumers {
		c := ConsumerRef(i)
		if ref != NoConsumer && c != ref {
			continue
		}
		j := x.judged(l, c)
		sum.add(&j, 1)
		if j.twice > 0 && first == NoConsumer {
			first = c
		}
		if check == "at-least-once" {
			t.settleLosses(l, x, c, &j, check)
		}
	}
	if sum.routed == 0 {
		t.Count = 1 // nothing routed: nothing to judge, which never passes
		return t, true
	}
	switch check {
	case "at-least-once":
		t.Count = sum.lossBad
	case "at-most-once":
		t.Count = sum.atMostBad
	case "exactly-once":
		t.Count = sum.exactlyBad
	case "max-duplicates":
		t.Count = 0
		if t.Duplicates > n {
			t.Count, t.Fixed = 1, 1
			t.First = Violation{Check: check, Consumer: consumer, Tick: l.last,
				Detail: strconv.Itoa(t.Duplicates) + " duplicate deliveries, at most " + strconv.Itoa(n) + " allowed"}
		}
		return t, true
	}
	if first != NoConsumer && (check == "at-most-once" || check == "exactly-once") {
		t.Fixed = sum.twice
		o := x.firstTwice(l, first)
		t.First = o.violation(l, check, "effect applied "+strconv.Itoa(o.Effects)+" times")
	}
	return t, true
}

// settleLosses adds consumer c's losses that no later event can undo, j
// being c's judged counts, to t.Fixed, the fixed violations of check
// (no-loss or at-least-once), and makes the first of them t.First when it
// has none yet: the consumers are asked in the ledger's order, the order
// the checker reports them in, and no-loss reports its losses before any
// consumer first, which are never fixed.
func (t *Tally) settleLosses(l *Ledger, x *statsIndex, c ConsumerRef, j *judgeCount, check string) {
	if j.final == 0 {
		return
	}
	if t.Fixed == 0 {
		o := x.firstFinal(l, c)
		_, why := lossWhy(l, &o)
		t.First = o.violation(l, check, why)
	}
	t.Fixed += j.final
}

// judgeCount is what a set of one consumer's outcomes gives each checker
// that judges outcomes one at a time.
type judgeCount struct {
	routed     int // outcomes
	lossBad    int // no-loss and at-least-once violations (lossWhy)
	atMostBad  int // at-most-once violations
	exactlyBad int // exactly-once violations
	twice      int // outcomes whose effect was applied more than once
	first      ID  // the smallest origin applied more than once, when twice > 0
	final      int // outcomes lost for good (lostForGood)
	firstFinal ID  // the smallest origin lost for good, when final > 0
}

// add adds c's counts to j, times sign (1 or -1); first is left to the
// caller.
func (j *judgeCount) add(c *judgeCount, sign int) {
	j.routed += sign * c.routed
	j.lossBad += sign * c.lossBad
	j.atMostBad += sign * c.atMostBad
	j.exactlyBad += sign * c.exactlyBad
	j.twice += sign * c.twice
	j.final += sign * c.final
}

// count judges outcome o with the outcome checkers' own decisions
// (isLoss, atMostOnceBad, exactlyOnceBad) and counts it.
func (j *judgeCount) count(l *Ledger, o *Outcome) {
	j.routed++
	if isLoss(o) {
		j.lossBad++
	}
	if atMostOnceBad(l, o) {
		j.atMostBad++
	}
	if exactlyOnceBad(l, o) {
		j.exactlyBad++
	}
	if o.Effects > 1 {
		if j.twice == 0 || o.Origin < j.first {
			j.first = o.Origin
		}
		j.twice++
	}
	if lostForGood(l, o) {
		if j.final == 0 || o.Origin < j.firstFinal {
			j.firstFinal = o.Origin
		}
		j.final++
	}
}

// judged returns what consumer c's outcomes give the outcome checkers:
// the kept sums of the unlinked copies' chunks plus the lineages, folded
// now. O(linked copies).
func (x *statsIndex) judged(l *Ledger, c ConsumerRef) judgeCount {
	var j judgeCount
	if int(c) < len(x.total.judge) {
		j = x.total.judge[c]
	}
	l.eachLineageOutcome(c, func(o *Outcome) { j.count(l, o) })
	return j
}

// eachLineageOutcome calls f with the outcome of every lineage routed to
// consumer c, in no particular order: O(linked copies).
func (l *Ledger) eachLineageOutcome(c ConsumerRef, f func(o *Outcome)) {
	if len(l.lineage) == 0 {
		return
	}
	aggs, roots := l.lineages(l.consumers[c])
	for _, root := range roots {
		o := aggs[root].finish()
		o.Key = l.lineageKey(&o)
		f(&o)
	}
}

// firstTwice returns consumer c's outcome with the smallest origin whose
// effect was applied more than once, which it must have: the smallest
// over the chunks' (O(chunks)) and the lineages'.
func (x *statsIndex) firstTwice(l *Ledger, c ConsumerRef) Outcome {
	var best Outcome
	for _, p := range x.parts {
		if int(c) < len(p.judge) && p.judge[c].twice > 0 && (best.Origin == 0 || p.judge[c].first < best.Origin) {
			best.Origin = p.judge[c].first
		}
	}
	if best.Origin != 0 {
		best = l.unlinkedOutcome(best.Origin, c)
	}
	l.eachLineageOutcome(c, func(o *Outcome) {
		if o.Effects > 1 && (best.Origin == 0 || o.Origin < best.Origin) {
			best = *o
		}
	})
	return best
}

// firstFinal returns consumer c's outcome with the smallest origin lost
// for good, which it must have: lostForGood takes no lineage, so the
// smallest over the chunks' kept origins is it. O(chunks).
func (x *statsIndex) firstFinal(l *Ledger, c ConsumerRef) Outcome {
	var first ID
	for _, p := range x.parts {
		if int(c) < len(p.judge) && p.judge[c].final > 0 && (first == 0 || p.judge[c].firstFinal < first) {
			first = p.judge[c].firstFinal
		}
	}
	return l.unlinkedOutcome(first, c)
}

// unlinkedOutcome returns the outcome of the unlinked copy id for consumer
// c, as eachBookOutcome folds it.
func (l *Ledger) unlinkedOutcome(id ID, c ConsumerRef) Outcome {
	b := l.consumers[c]
	e, ok := b.entries.get(uint64(id))
	if !ok {
		return Outcome{Origin: id, Consumer: b.name}
	}
	d := l.exportDelivery(id, c, &e)
	a := agg{o: Outcome{Origin: id, Consumer: b.name}}
	a.add(l, id, &d)
	o := a.finish()
	o.Key = l.keyOf(id)
	return o
}

// Effects returns how many times consumer name applied the effect of
// origin over all its copies, as its Outcome says; 0 when it was not
// routed the origin or the ledger does not know the consumer. It costs
// O(1) for an unlinked copy, O(linked copies) for the origin of a lineage.
func (l *Ledger) Effects(origin ID, name string) int {
	c := l.Consumer(name)
	if c == NoConsumer || origin == 0 {
		return 0
	}
	if !l.linked(origin) {
		if e, ok := l.consumers[c].entries.get(uint64(origin)); ok && e.bits&delExpected != 0 {
			return int(l.halfCount(origin, c, fieldApplied, e.handled, lowHalf))
		}
		return 0
	}
	n := 0
	b := l.consumers[c]
	for _, id := range l.linkedIDs() {
		if e, ok := b.entries.get(uint64(id)); ok && e.bits&delExpected != 0 && l.Root(id) == origin {
			n += int(l.halfCount(id, b.ref, fieldApplied, e.handled, lowHalf))
		}
	}
	return n
}

// duplicates returns Duplicates(name) for consumer ref (NoConsumer and a
// name: a consumer the ledger does not know, which has none; NoConsumer
// and "": every consumer) from the kept sums and the lineages.
func (x *statsIndex) duplicates(l *Ledger, ref ConsumerRef, name string) int {
	if ref == NoConsumer && name != "" {
		return 0
	}
	n := 0
	for i := range l.consumers {
		c := ConsumerRef(i)
		if ref != NoConsumer && c != ref {
			continue
		}
		if i < len(x.total.cons) {
			n += x.total.cons[i].Repeats
		}
		l.eachLineageOutcome(c, func(o *Outcome) {
			if o.Deliveries > 1 {
				n += o.Deliveries - 1
			}
		})
	}
	return n
}

// orderFold is OrderedPerKey's walk over one consumer's first
// applications, kept between calls: where it stopped in the sequence,
// the last origin per key, and what it found.
type orderFold struct {
	chunk, off int // the next entry of the idSeq: chunk index and byte offset into it
	inRun      int // the IDs of the run at off judged already
	id         ID  // the last ID decoded
	last       map[string]ID
	seen       table[uint64] // a bit per ID, 64 to a word: the roots judged so far; far IDs cost their chunk, not the span
	keyed      int
	inversions int
	first      Violation
	firsts     []Violation // the first keep inversions
	keep       int         // inversions to keep in firsts; all of them when negative
}

// ordered is Tally for ordered-per-key: O(first applications since the
// last call), plus O(linked copies) when a copy was linked since, and
// O(all first applications) of a consumer whose fold judged a copy as its
// own origin that has an origin now (see rooted).
func (x *statsIndex) ordered(l *Ledger, ref ConsumerRef, t Tally) Tally {
	if len(l.lineage) != x.orderLinks {
		x.orderLinks = len(l.lineage)
		for i, f := range x.order {
			if f != nil && !f.rooted(l) {
				x.order[i] = nil
			}
		}
	}
	keyed := 0
	for i, b := range l.consumers {
		if ref != NoConsumer && ConsumerRef(i) != ref {
			continue
		}
		for len(x.order) <= i {
			x.order = append(x.order, nil)
		}
		f := x.order[i]
		if f == nil {
			f = &orderFold{last: map[string]ID{}, keep: keptInversions}
			x.order[i] = f
		}
		f.fold(l, b)
		keyed += f.keyed
		if f.inversions > 0 && t.Fixed == 0 {
			t.First = f.first
		}
		t.Fixed += f.inversions
	}
	if keyed == 0 {
		t.Count, t.Fixed, t.First = 1, 0, Violation{}
		return t
	}
	t.Count = t.Fixed
	return t
}

// rooted reports whether every root f judged is a root still: no copy it
// took for its own origin has been given one since (a copy linked later
// as the origin of new copies stays its own root, and is judged once as
// OrderedPerKey does, since its bit is set). O(linked copies).
func (f *orderFold) rooted(l *Ledger) bool {
	for _, id := range l.linkedIDs() {
		if p := f.seen.get(uint64(id) / 64); p != nil && *p&(1<<(uint64(id)%64)) != 0 && l.originOf(id) != 0 {
			return false
		}
	}
	return true
}

// fold reads b's first applications past where it stopped, judging them
// as OrderedPerKey does.
func (f *orderFold) fold(l *Ledger, b *consumerBook) {
	s := &b.order
	for f.chunk < len(s.chunks) {
		c := s.used(f.chunk)
		for f.off < len(c) {
			d, run, n := seqEntry(c[f.off:])
			switch {
			case n == 0:
				return
			case run == 0: // the same ID again
				f.judge(l, b, f.id)
			case run > 0:
				for ; f.inRun < run; f.inRun++ {
					f.id++
					f.judge(l, b, f.id)
				}
				if f.off+n == len(c) && f.chunk == len(s.chunks)-1 {
					return // the last run may still grow: read it again next time
				}
				f.inRun = 0
			default:
				f.id += ID(d)
				f.judge(l, b, f.id)
			}
			f.off += n
		}
		if f.chunk == len(s.chunks)-1 {
			return // the last chunk may still grow
		}
		f.chunk, f.off = f.chunk+1, 0
	}
}

// judge judges the first application of copy id, as OrderedPerKey does.
func (f *orderFold) judge(l *Ledger, b *consumerBook, id ID) {
	root := l.Root(id)
	w, bit := uint64(root)/64, uint64(1)<<(uint64(root)%64)
	p := f.seen.at(w)
	if *p&bit != 0 {
		return
	}
	*p |= bit
	key := l.keyOf(root)
	if key == "" {
		return
	}
	f.keyed++
	if prev, ok := f.last[key]; ok && prev > root {
		if f.keep < 0 || f.inversions < f.keep {
			f.firsts = append(f.firsts, Violation{Check: "ordered-per-key", Msg: root, Key: key, Consumer: b.name, Tick: l.Entry(id, b.ref).FirstApplied,
				Detail: "applied after " + prev.String() + ", which was created later"})
			f.first = f.firsts[0]
		}
		f.inversions++
		return
	}
	f.last[key] = root
}

// FirstViolations returns the first k violations checker c, built for
// consumer with bound n (as Tally takes them), reports on the ledger as
// it stands: c.Violations(l)[:k], or all of them when there are fewer.
// For the outcome checkers it reads only the chunks of 128 IDs whose kept
// counts (see Tally) hold a violation, in ID order, until it has k, and
// the lineages: O(chunks + chunks read x 128 + linked copies + losses),
// not a pass over every outcome. ordered-per-key reads its kept fold. A
// check whose only violation is that there is nothing to judge, or that
// it was asked wrongly, is answered by c itself, which has nothing to
// walk then.
func (l *Ledger) FirstViolations(c Checker, consumer string, n, k int) []Violation {
	cut := func(vs []Violation) []Violation { return vs[:min(k, len(vs))] }
	t, ok := l.Tally(c.Name(), consumer, n)
	if !ok {
		return cut(c.Violations(l))
	}
	if k <= 0 || t.Count == 0 {
		return nil
	}
	x := l.stats
	ref := l.Consumer(consumer)
	switch c.Name() {
	case "max-duplicates":
		if t.Fixed > 0 {
			return []Violation{t.First}
		}
		return cut(c.Violations(l))
	case "ordered-per-key":
		if t.Fixed == 0 || k > keptInversions {
			return cut(c.Violations(l))
		}
		var out []Violation
		for i := range l.consumers {
			if (ref == NoConsumer || ConsumerRef(i) == ref) && i < len(x.order) && x.order[i] != nil {
				out = append(out, x.order[i].firsts...)
			}
		}
		return cut(out)
	case "no-loss":
		if l.recs.len() <= 1 {
			return cut(c.Violations(l))
		}
		var out []Violation
		for v := range l.allLosses() {
			if len(out) == k {
				return out
			}
			if l.standsBeforeConsumers(v) {
				root, why := l.Root(v.ID), "lost before any consumer ("+string(v.Cause)+")"
				if root != v.ID {
					why += ": its copy " + v.ID.String()
				}
				out = append(out, Violation{Check: "no-loss", Msg: root, Key: l.keyOf(v.ID), Tick: v.Tick, Detail: why})
			}
		}
		for i := range l.consumers {
			if len(out) >= k {
				return cut(out)
			}
			out = x.firstBad(l, ConsumerRef(i), "no-loss", k-len(out), out, func(o *Outcome) (bool, string) { return lossWhy(l, o) })
		}
		for _, ch := range x.chunksWith(func(p *statsPart) bool { return p.unrouted > 0 }) {
			if len(out) >= k {
				break
			}
			rs := l.recs.chunk(ch)
			for j := range rs {
				id := ID(ch*tableChunk + uint64(j))
				if id == 0 || rs[j].flags&recRegistered == 0 || rs[j].State != StatePending || l.routed(id) {
					continue
				}
				r := l.export(id, &rs[j])
				out = append(out, Violation{Check: "no-loss", Msg: r.ID, Key: r.Key, Tick: r.Changed,
					Detail: "still pending in " + r.Where + " at t=" + strconv.FormatInt(int64(l.last), 10) + ", and no consumer is routed it"})
			}
		}
		return cut(out)
	}
	// at-least-once, at-most-once, exactly-once: their own judgement of
	// each outcome, handed the outcomes of the chunks that hold one.
	cf, isFunc := c.(checkFunc)
	if !isFunc || cf.start == nil || consumer != "" && ref == NoConsumer || x.routed(l, ref) == 0 {
		return cut(c.Violations(l))
	}
	var out []Violation
	for i := range l.consumers {
		if ref != NoConsumer && ConsumerRef(i) != ref || len(out) >= k {
			continue
		}
		p, found := cf.start(l), 0
		out = x.firstBad(l, ConsumerRef(i), c.Name(), k-len(out), out, func(o *Outcome) (bool, string) {
			p.visit(o) // the checker's judgement of o; having visited one, finish lists what it found
			if vs := p.finish(); len(vs) > found {
				found = len(vs)
				return true, vs[found-1].Detail
			}
			return false, ""
		})
	}
	return cut(out)
}

// keptInversions is how many inversions an ordered-per-key fold keeps
// for FirstViolations.
const keptInversions = 8

// routed returns how many outcomes consumer ref (every consumer for
// NoConsumer) has, from the kept counts and the lineages.
func (x *statsIndex) routed(l *Ledger, ref ConsumerRef) int {
	n := 0
	for i := range l.consumers {
		if ref == NoConsumer || ConsumerRef(i) == ref {
			j := x.judged(l, ConsumerRef(i))
			n += j.routed
		}
	}
	return n
}

// chunksWith returns, in order, the chunks whose parts satisfy f:
// O(chunks log chunks).
func (x *statsIndex) chunksWith(f func(p *statsPart) bool) []uint64 {
	var cs []uint64
	for c, p := range x.parts {
		if f(p) {
			cs = append(cs, c)
		}
	}
	slices.Sort(cs)
	return cs
}

// firstBad appends to out, in origin order, the violations bad finds
// among consumer c's outcomes, until it has added want of them: it reads
// the lineages' outcomes and the unlinked outcomes of the chunks whose
// kept count for check holds one.
func (x *statsIndex) firstBad(l *Ledger, c ConsumerRef, check string, want int, out []Violation, bad func(o *Outcome) (bool, string)) []Violation {
	count := func(j *judgeCount) int {
		switch check {
		case "at-most-once":
			return j.atMostBad
		case "exactly-once":
			return j.exactlyBad
		}
		return j.lossBad
	}
	if all := x.judged(l, c); count(&all) == 0 {
		return out
	}
	var lineage []Outcome
	l.eachLineageOutcome(c, func(o *Outcome) { lineage = append(lineage, *o) })
	slices.SortFunc(lineage, func(a, b Outcome) int { return cmp.Compare(a.Origin, b.Origin) })
	added, next := 0, 0
	emit := func(o *Outcome) {
		if ok, why := bad(o); ok && added < want {
			out = append(out, o.violation(l, check, why))
			added++
		}
	}
	flush := func(upTo ID) {
		for next < len(lineage) && lineage[next].Origin < upTo && added < want {
			emit(&lineage[next])
			next++
		}
	}
	b := l.consumers[c]
	for _, ch := range x.chunksWith(func(p *statsPart) bool { return int(c) < len(p.judge) && count(&p.judge[c]) > 0 }) {
		es := b.entries.chunk(ch)
		for j := range es {
			id := ID(ch*tableChunk + uint64(j))
			if added == want {
				return out
			}
			if id == 0 || es[j].bits&delExpected == 0 || l.linked(id) {
				continue
			}
			flush(id)
			o := l.unlinkedOutcome(id, c)
			emit(&o)
		}
	}
	flush(^ID(0))
	return out
}

// finalCauses are the causes of a loss that the models never take back:
// the copy was deleted (retention, compaction, purge), dropped by a full
// buffer (overflow), thrown away by a disconnect, given up by a publish
// nobody retries (broker unavailable), acknowledged before a handler that
// then crashed (ack before processing), or failed in an ephemeral
// delivery that is never redelivered (handler failed). The other causes
// leave a way back: a seek or an offset reset moves a group past a record
// the log still holds, and a seek back reads it again (so may a group
// that committed before processing); a projection's skipped record is
// applied by a rebuild; a dead outbox row or a fan-out's forward belongs
// to copies of a lineage, which a redrive or a relay can carry on.
var finalCauses = [...]Cause{CauseRetention, CauseCompaction, CausePurge, CauseOverflow, CauseDisconnect,
	CauseBrokerUnavailable, CauseAckBeforeProcess, CauseHandlerFailed}

// lostForGood reports whether outcome o is a loss that no later event can
// undo, so a no-loss or at-least-once violation about it is settled
// before the end of the run: its verdict is lost, with one of the
// finalCauses, and its one copy, the origin itself (no lineage that a
// redrive, a relay or a fan-out could carry on), left every broker with
// no way back: it was handed to a broker once (a copy from an outbox,
// which a relay may publish again, is handed over twice), and it is not
// held, parked or waiting to enter one (pending, created, dead-lettered
// or redriven). Anything else, a message still pending above all, may yet
// be applied. It reads the copy's record: O(1).
func lostForGood(l *Ledger, o *Outcome) bool {
	if o.Verdict != VerdictLost || o.Copies != 1 || o.Last != o.Origin || l.linked(o.Origin) {
		return false
	}
	if !slices.Contains(finalCauses[:], o.Cause) {
		return false
	}
	r, ok := l.recs.get(uint64(o.Origin))
	if !ok || r.flags&recRegistered == 0 || r.sends != 1 {
		return false
	}
	switch r.State {
	case StatePending, StateCreated, StateDeadLettered, StateRedriven:
		return false
	}
	return true
}

// LostForGood reports whether the consumer called name lost origin in a
// way no later event can undo (see Tally.Fixed): a no-loss or
// at-least-once violation about it is settled before the end of the run.
// It is false for an origin the consumer applied, still waits for, or may
// yet get again, and for a consumer or origin the ledger does not know.
// It costs O(1).
func (l *Ledger) LostForGood(origin ID, name string) bool {
	if l == nil || origin == 0 || l.linked(origin) {
		return false
	}
	c := l.Consumer(name)
	if c == NoConsumer {
		return false
	}
	if e, ok := l.consumers[c].entries.get(uint64(origin)); !ok || e.bits&delExpected == 0 {
		return false
	}
	o := l.unlinkedOutcome(origin, c)
	return lostForGood(l, &o)
}
