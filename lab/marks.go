package lab

import (
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// MarkKind says what a Mark tells about a trace event.
type MarkKind uint8

// The marks of trace events.
const (
	MarkNone     MarkKind = iota
	MarkRepeat            // a delivery of an origin the consumer had been delivered before
	MarkEffect            // a repeated effect: the handler applied an origin it had applied before
	MarkAbsorbed          // a handler recognised a duplicate and applied nothing
	MarkRead              // a retention expiry of a record every consumer had already applied: no loss
)

// Mark is what the player adds to one trace event from the ledger: whether
// the event is the repeat of something the consumer has seen, counted over
// the origin's whole lineage (a re-published copy with the same ID, a
// redriven copy, a broker duplicate), so that every duplicate is visible
// on its own line.
type Mark struct {
	Kind MarkKind
	// Nth is the delivery (MarkRepeat, MarkAbsorbed) or the effect
	// (MarkEffect) number of the origin for the event's consumer: 2 for
	// the second.
	Nth int
}

// Text returns the words the trace shows for the mark, e.g. "2nd delivery",
// "effect 2×", "absorbed duplicate", or "" for none.
func (m Mark) Text() string {
	switch m.Kind {
	case MarkRepeat:
		return ordinal(m.Nth) + " delivery"
	case MarkEffect:
		return "effect " + strconv.Itoa(m.Nth) + "×"
	case MarkAbsorbed:
		return "absorbed duplicate"
	case MarkRead:
		return "already read, no loss"
	}
	return ""
}

// ordinal returns "2nd", "3rd", "4th", ...
func ordinal(n int) string {
	s := strconv.Itoa(n)
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return s + "th"
	case n%10 == 1:
		return s + "st"
	case n%10 == 2:
		return s + "nd"
	case n%10 == 3:
		return s + "rd"
	}
	return s + "th"
}

// lineageKey names one lineage root and one logical consumer.
type lineageKey struct {
	root     sim.ID
	consumer sim.ConsumerRef
}

// lineageCount counts what a consumer got of one lineage.
type lineageCount struct {
	deliveries, effects uint32
}

// markRecorder is the trace sink of the Session: it keeps the newest
// max events, each with its Mark. It runs after the ledger (a Trace hands
// every event to its ledger first), so the ledger already holds the event
// when the mark is computed. Copies without lineage are counted by the
// ledger's own per-copy entry, in O(1); only lineages with more than one
// copy get an entry in a map, so the memory is O(linked copies).
type markRecorder struct {
	max     int
	ledger  *sim.Ledger
	events  []sim.Event
	marks   []Mark
	lineage map[lineageKey]*lineageCount
}

// newMarkRecorder returns a recorder of the newest max events.
func newMarkRecorder(max int, l *sim.Ledger) *markRecorder {
	return &markRecorder{max: max, ledger: l, lineage: map[lineageKey]*lineageCount{}}
}

// Emit stores a copy of e with its mark. The buffers grow to twice max
// before the newest max-1 are moved to the front, so an event costs O(1)
// amortized (moving max events on every event made a burst of 100,000
// events cost 100,000 x max copies).
func (r *markRecorder) Emit(e *sim.Event) {
	m := r.mark(e)
	if len(r.events) >= 2*r.max {
		n := copy(r.events, r.events[len(r.events)-r.max+1:])
		copy(r.marks, r.marks[len(r.marks)-r.max+1:])
		r.events, r.marks = r.events[:n], r.marks[:n]
	}
	r.events = append(r.events, *e)
	r.marks = append(r.marks, m)
}

// newest returns the newest max events and their marks (shared with the
// recorder: copy them before the next Emit).
func (r *markRecorder) newest() ([]sim.Event, []Mark) {
	if k := len(r.events) - r.max; k > 0 {
		return r.events[k:], r.marks[k:]
	}
	return r.events, r.marks
}

// count returns the lineage counter of e's copy and consumer, creating it
// when the copy has a lineage; nil for a copy without one.
func (r *markRecorder) count(e *sim.Event, c sim.ConsumerRef) *lineageCount {
	root := r.ledger.Root(e.Msg)
	key := lineageKey{root, c}
	lc := r.lineage[key]
	if lc == nil && root != e.Msg {
		// The first copy of the lineage seen by this consumer was counted
		// by the ledger's entry of the root copy.
		en := r.ledger.Entry(root, c)
		lc = &lineageCount{deliveries: en.Delivered, effects: en.Applied}
		r.lineage[key] = lc
	}
	return lc
}

// mark computes the mark of e from the ledger (which has folded e).
func (r *markRecorder) mark(e *sim.Event) Mark {
	if r.ledger == nil || e.Msg == 0 {
		return Mark{}
	}
	switch e.Kind {
	case sim.KindReceived, sim.KindRedelivered, sim.KindPolled, sim.KindDelivered:
		c := r.ledger.Consumer(e.Consumer)
		if c == sim.NoConsumer {
			return Mark{}
		}
		n := int(r.ledger.Entry(e.Msg, c).Delivered)
		if lc := r.count(e, c); lc != nil {
			lc.deliveries++
			n = int(lc.deliveries)
		}
		if n > 1 {
			return Mark{Kind: MarkRepeat, Nth: n}
		}
	case sim.KindProcessed:
		c := r.ledger.Consumer(e.Consumer)
		if c == sim.NoConsumer {
			return Mark{}
		}
		n := int(r.ledger.Entry(e.Msg, c).Applied)
		if lc := r.count(e, c); lc != nil {
			lc.effects++
			n = int(lc.effects)
		}
		if n > 1 {
			return Mark{Kind: MarkEffect, Nth: n}
		}
	case sim.KindSkipped:
		c := r.ledger.Consumer(e.Consumer)
		if c == sim.NoConsumer {
			return Mark{}
		}
		n := int(r.ledger.Entry(e.Msg, c).Delivered)
		if lc := r.lineage[lineageKey{r.ledger.Root(e.Msg), c}]; lc != nil {
			n = int(lc.deliveries)
		}
		return Mark{Kind: MarkAbsorbed, Nth: n}
	case sim.KindExpired:
		if e.Cause != "" && e.Cause != sim.CauseRetention {
			return Mark{}
		}
		for _, name := range r.ledger.Consumers() {
			en := r.ledger.Entry(e.Msg, r.ledger.Consumer(name))
			if en.Lost != "" || en.Expected && en.Applied == 0 {
				return Mark{}
			}
		}
		return Mark{Kind: MarkRead}
	}
	return Mark{}
}

// deliveries returns how many times the logical consumer called name has
// been delivered the origin of copy id, over the origin's lineage. A chip
// whose copy has been received fewer times than that is a copy the
// consumer has seen before. O(1).
func (r *markRecorder) deliveries(id sim.ID, name string) int {
	if r.ledger == nil {
		return 0
	}
	c := r.ledger.Consumer(name)
	if c == sim.NoConsumer {
		return 0
	}
	root := r.ledger.Root(id)
	if lc := r.lineage[lineageKey{root, c}]; lc != nil {
		return int(lc.deliveries)
	}
	n := int(r.ledger.Entry(id, c).Delivered)
	if root != id {
		n += int(r.ledger.Entry(root, c).Delivered)
	}
	return n
}
