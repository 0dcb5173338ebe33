package sim

import (
	"math"
	"slices"
)

// Verdict is where one origin stands for one logical consumer at the end
// of a run: the terminal state the checkers judge.
type Verdict uint8

// The verdicts, from the ledger's fold over every copy of an origin.
const (
	VerdictPending   Verdict = iota // a copy is still held by a broker or buffered for the consumer
	VerdictApplied                  // the consumer's handler recorded its effect at least once
	VerdictAbsorbed                 // the handler recognised every delivery as a duplicate and applied nothing
	VerdictParked                   // the newest copy waits in a dead-letter queue
	VerdictMissed                   // missed by design (offline ephemeral subscriber)
	VerdictLost                     // lost, with a cause
	VerdictUnsettled                // gone from the broker without an effect and without a recorded cause
)

var verdictNames = [...]string{"pending", "applied", "absorbed", "parked", "missed", "lost", "unsettled"}

// String returns the verdict's name.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "unknown"
}

// Outcome is what the ledger concludes about one origin (the root of a
// lineage of copies) and one logical consumer, folded over every copy of
// the origin that was routed to the consumer.
type Outcome struct {
	Origin     ID
	Key        string
	Consumer   string
	Verdict    Verdict
	Cause      Cause // why it was lost, for VerdictLost
	Effects    int   // effects applied over every copy
	Deliveries int   // deliveries over every copy
	Skipped    int   // deliveries absorbed as duplicates
	Copies     int   // copies routed to the consumer
	Acked      bool  // some copy was acknowledged by the consumer
	Last       ID    // the newest copy routed to the consumer
	Where      string
	State      State // the newest copy's broker-level state
	Tick       Tick  // the evidence: the first effect, or the last contact or state change
	// Again is when the effect was applied the second time, over every
	// copy: the tick an origin applied more than once broke at-most-once.
	// It is 0 while Effects is below 2.
	Again Tick
}

// maxCachedOutcomes is the most outcomes Outcomes keeps between calls.
const maxCachedOutcomes = 1 << 16

// agg accumulates the copies of one origin for one consumer.
type agg struct {
	o            Outcome
	lastLost     Cause // the newest copy's loss
	anyLost      Cause
	handledLast  bool
	missed       bool
	firstApplied Tick
	again        Tick // the second smallest effect tick over the copies, once Effects > 1
	hasApplied   bool
	hasAgain     bool
}

// add folds copy id's delivery d into a.
func (a *agg) add(l *Ledger, id ID, d *Entry) {
	r, _ := l.recs.get(uint64(id))
	a.addRec(l, id, d, &r)
}

// addRec is add for a caller that has copy id's record r at hand (the
// zero record when the ledger has none).
func (a *agg) addRec(l *Ledger, id ID, d *Entry, r *record) {
	a.o.Copies++
	a.o.Effects += int(d.Applied)
	a.o.Deliveries += int(d.Delivered)
	a.o.Skipped += int(d.Skipped)
	a.o.Acked = a.o.Acked || d.Acked
	a.missed = a.missed || d.Missed
	if d.Applied > 0 {
		a.effectAt(d.FirstApplied)
	}
	if d.Applied > 1 {
		a.effectAt(d.SecondApplied)
	}
	if d.Lost != "" {
		a.anyLost = d.Lost
	}
	if id >= a.o.Last {
		a.o.Last = id
		a.lastLost = d.Lost
		a.handledLast = d.Handled
		state, where, t := l.stateOfRec(id, r)
		a.o.Where, a.o.State = where, state
		if d.LastSeen > t {
			t = d.LastSeen
		}
		if t > a.o.Tick {
			a.o.Tick = t
		}
	}
}

// effectAt notes an effect at tick t, keeping the two earliest effects
// over the copies (a copy's third and later effects come after its second,
// so they never count among them).
func (a *agg) effectAt(t Tick) {
	switch {
	case !a.hasApplied:
		a.firstApplied, a.hasApplied = t, true
	case t < a.firstApplied:
		a.firstApplied, a.again, a.hasAgain = t, a.firstApplied, true
	case !a.hasAgain || t < a.again:
		a.again, a.hasAgain = t, true
	}
}

// finish returns a's outcome with its verdict settled.
func (a *agg) finish() Outcome {
	o := a.o
	a.settle(&o)
	return o
}

// settle sets the verdict of o, a's outcome or a copy of it, from what a
// accumulated. Settling a.o in place spares a walk over many outcomes a
// copy of the outcome (a large struct with strings) per origin.
func (a *agg) settle(o *Outcome) {
	switch {
	case o.Effects > 0:
		o.Verdict, o.Tick = VerdictApplied, a.firstApplied
		if o.Effects > 1 {
			o.Again = a.again
		}
	case o.Skipped > 0:
		o.Verdict = VerdictAbsorbed
	case a.missed:
		o.Verdict = VerdictMissed
	case a.lastLost != "":
		o.Verdict, o.Cause = VerdictLost, a.lastLost
	case o.State == StatePending || o.State == StateCreated || o.State == StateDelivered && !a.handledLast:
		o.Verdict = VerdictPending
	case o.State == StateDeadLettered:
		o.Verdict = VerdictParked
	case a.anyLost != "":
		o.Verdict, o.Cause = VerdictLost, a.anyLost
	default:
		o.Verdict = VerdictUnsettled
	}
}

// Outcomes returns the verdict of every origin routed to the consumer
// called name ("" for every consumer), ordered by consumer (first-use
// order) and then by origin. It costs O(copies) per consumer the first
// time; the result is kept until the next event is folded, so the checks of
// one report share one pass. Callers must not modify the slice.
func (l *Ledger) Outcomes(name string) []Outcome {
	if l == nil {
		return nil
	}
	all := l.cache
	if !l.cached || l.cacheAt != l.events {
		all = nil
		for _, b := range l.consumers {
			if name == "" || b.name == name || len(l.consumers) == 1 {
				if all == nil {
					all = l.bookOutcomes(b)
				} else {
					all = append(all, l.bookOutcomes(b)...)
				}
			}
		}
		l.cache, l.cached = nil, false
		if len(all) <= maxCachedOutcomes && (name == "" || len(l.consumers) == 1) {
			// Small results are kept for the next caller of this event
			// count; large ones are not, so a ledger of millions of
			// copies does not hold them twice.
			l.cache, l.cached, l.cacheAt = all, true, l.events
		}
	}
	if name == "" || len(l.consumers) == 1 && len(all) > 0 && all[0].Consumer == name {
		return slices.Clip(all)
	}
	var out []Outcome
	for _, o := range all {
		if o.Consumer == name {
			out = append(out, o)
		}
	}
	return out
}

// eachOutcomeOf calls f for every outcome of Outcomes(name), in its order,
// without keeping them (see eachOutcome), and returns how many there were.
// The checkers judge through it, so a check allocates no outcome slice.
func (l *Ledger) eachOutcomeOf(name string, f func(o *Outcome)) int {
	n := 0
	count := func(o *Outcome) { n++; f(o) }
	if name == "" {
		l.eachOutcome(count)
		return n
	}
	for _, b := range l.consumers {
		if b.name == name {
			l.eachBookOutcome(b, count)
		}
	}
	return n
}

// bookOutcomes folds consumer b's deliveries by origin, as a slice.
func (l *Ledger) bookOutcomes(b *consumerBook) []Outcome {
	out := make([]Outcome, 0, min(b.entries.len(), 1<<12))
	l.eachBookOutcome(b, func(o *Outcome) { out = append(out, *o) })
	return out
}

// eachBookOutcome calls f for every outcome of consumer b, in origin
// order, without keeping them: an unlinked copy (the common case) is its
// own origin and is folded and handed over as the table is walked; the
// lineages (copies with an origin or copies made from them, listed in
// Ledger.lineage) are folded first, and each is handed over where its
// origin falls in the order. It costs O(copies) time and O(lineages of b)
// memory, never O(copies). The Outcome f gets is reused for the next
// call.
func (l *Ledger) eachBookOutcome(b *consumerBook, f func(o *Outcome)) {
	l.walkBook(b, false, f)
}

// walkBook is eachBookOutcome, and with lossOnly eachBookLoss: with
// lossOnly it leaves out, and counts in fine, the outcomes of the unlinked
// copies whose delivery shows them applied, absorbed (Effects or Skipped
// above 0) or missed, which settle judges no loss. The linked copies
// (Ledger.lineage, in ID order) are passed over as the table is walked,
// so a copy left out costs no record lookup. It costs O(copies + linked
// copies) time, a record lookup for each outcome it hands over, and
// O(lineages of b) memory.
func (l *Ledger) walkBook(b *consumerBook, lossOnly bool, f func(o *Outcome)) (fine int) {
	lineage, roots := l.lineages(b)
	slices.Sort(roots)
	next := 0
	flush := func(upTo ID) {
		for next < len(roots) && roots[next] < upTo {
			x := lineage[roots[next]]
			x.settle(&x.o)
			x.o.Key = l.lineageKey(&x.o)
			f(&x.o)
			next++
		}
	}
	linked, k := l.linkedIDs(), 0
	var a agg // reused for every copy without a lineage
	for i, e := range b.entries.all() {
		if e.bits&delExpected == 0 {
			continue
		}
		id := ID(i)
		for k < len(linked) && linked[k] < id {
			k++
		}
		if k < len(linked) && linked[k] == id {
			continue
		}
		if lossOnly && (e.settledBy() || e.bits&delMissed != 0) {
			fine++
			continue
		}
		r, _ := l.recs.get(uint64(id)) // looked up once for the state and key
		flush(id)
		d := l.exportDelivery(id, b.ref, e)
		a = agg{o: Outcome{Origin: id, Consumer: b.name}}
		a.addRec(l, id, &d, &r)
		a.settle(&a.o)
		a.o.Key = ""
		if r.flags&recRegistered != 0 {
			a.o.Key = l.keyString(id, &r)
		}
		f(&a.o)
	}
	flush(math.MaxUint64)
	return fine
}

// lineages folds consumer b's copies that belong to a lineage (copies
// with an origin or copies made from them) by their origin, as Outcomes
// does: one agg per origin, and the origins in the order first met; nil
// and nil when b has none. It costs O(linked copies), and one map when
// some copy of b is linked.
func (l *Ledger) lineages(b *consumerBook) (map[ID]*agg, []ID) {
	var aggs map[ID]*agg
	var roots []ID
	for _, id := range l.linkedIDs() {
		e, ok := b.entries.get(uint64(id))
		if !ok || e.bits&delExpected == 0 {
			continue
		}
		root := l.Root(id)
		a, ok := aggs[root]
		if !ok {
			if aggs == nil {
				aggs = map[ID]*agg{}
			}
			a = &agg{o: Outcome{Origin: root, Consumer: b.name}}
			aggs[root] = a
			roots = append(roots, root)
		}
		d := l.exportDelivery(id, b.ref, &e)
		a.add(l, id, &d)
	}
	return aggs, roots
}

// lineageKey returns the key of a lineage's outcome o: its origin's, or,
// when the origin has none, its last copy's.
func (l *Ledger) lineageKey(o *Outcome) string {
	if k := l.keyOf(o.Origin); k != "" {
		return k
	}
	return l.keyOf(o.Last)
}
