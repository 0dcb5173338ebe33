package pubsub

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

var (
	propSubjects = []string{"a.b", "a.c", "c.b", "a.b.c"}
	propPatterns = []string{"a.*", "a.>", ">", "a.b", "*.b", "c.*", "a.b.c"}
)

// randomPlan draws a fault mix over every pubsub fault point; every rule
// ends by tick 40 so the run can drain.
func randomPlan(st *sim.Stream, subs []string) []faults.Rule {
	var rules []faults.Rule
	add := func(name string, p faults.Point, prob float64, param int64) {
		if !st.Chance(0.5) {
			return
		}
		from := sim.Tick(st.IntN(30))
		r := faults.Rule{Name: name, Point: p, Probability: prob, From: from, Until: from + 1 + sim.Tick(st.IntN(10)), Param: param}
		if st.Chance(0.5) {
			r.Match.Consumer = subs[st.IntN(len(subs))]
		}
		rules = append(rules, r)
	}
	add("offline", faults.SubscriberOffline, 0.7, 0)
	add("slow", faults.SubscriberSlow, 0.5, int64(1+st.IntN(3)))
	add("dup", faults.BrokerDuplicate, 0.2, 0)
	add("delay", faults.BrokerDelay, 0.2, int64(1+st.IntN(4)))
	add("reorder", faults.BrokerReorder, 0.2, 0)
	add("down", faults.BrokerUnavailable, 0.5, 0)
	return rules
}

type pairKey struct {
	msg sim.ID
	sub string
}

type outcome struct {
	delivered, processed, failed, droppedOld, droppedNew, missed, discarded, suppressed, dup int
}

// runProperty runs one random seed and returns its trace text and the
// broker's metrics.
func runProperty(t *testing.T, seed uint64) ([]byte, Metrics) {
	st := sim.NewStream(seed, "property")
	nsubs := 2 + st.IntN(4)
	names := make([]string, nsubs)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	r := newRig(t, seed, 3, randomPlan(st, names)...)
	var text bytes.Buffer
	r.env.Trace.Attach(sim.NewTextWriter(&text))
	subs := make([]*Subscriber, nsubs)
	for i, name := range names {
		children := st.Chance(0.4)
		muted := st.Chance(0.4)
		hs := sim.NewStream(seed, "handler/"+name)
		var h Handler
		if children {
			h = func(ctx *Context, m sim.Message) error {
				if !hs.Chance(0.4) {
					return nil
				}
				subject := propSubjects[hs.IntN(len(propSubjects))]
				pub := func() error { _, err := ctx.Publish(subject, m.Key, nil); return err }
				if muted && hs.Chance(0.5) {
					return ctx.Muted(pub)
				}
				return pub()
			}
		}
		subs[i] = r.sub(SubscriberConfig{
			Name: name, Pattern: propPatterns[st.IntN(len(propPatterns))],
			Buffer: 1 + st.IntN(6), Policy: Policy(st.IntN(3)), Rate: st.IntN(4), Handler: h,
			Offline: st.Chance(0.2),
		})
		for range st.IntN(3) {
			s := subs[i]
			at := sim.Tick(1 + st.IntN(35))
			if st.Chance(0.5) {
				r.w.At(at, "disconnect "+name, s.Disconnect)
			} else {
				r.w.At(at, "connect "+name, func() { _ = s.Connect() })
			}
		}
		s := subs[i]
		r.w.At(40, "connect "+name, func() { _ = s.Connect() })
	}
	if err := r.w.Add(sim.PhaseProducer, "producer", sim.ActorFunc(func(now sim.Tick) {
		if now > 30 {
			return
		}
		for range st.IntN(4) {
			_, _ = r.publish(propSubjects[st.IntN(len(propSubjects))], fmt.Sprintf("k%d", st.IntN(3)))
		}
	})); err != nil {
		t.Fatal(err)
	}
	r.run(80)
	checkConservation(t, seed, r, subs)
	return text.Bytes(), r.b.Metrics()
}

// checkConservation checks that every copy of every accepted publish for
// every matching subscriber ended exactly once: handled (or failed),
// missed, dropped by overflow or suppressed; and that the ledger and the
// metrics agree with the trace.
func checkConservation(t *testing.T, seed uint64, r *rig, subs []*Subscriber) {
	t.Helper()
	out := map[pairKey]*outcome{}
	get := func(e *sim.Event) *outcome {
		k := pairKey{e.Msg, e.Actor}
		o := out[k]
		if o == nil {
			o = &outcome{}
			out[k] = o
		}
		return o
	}
	type pub struct {
		id      sim.ID
		subject string
	}
	var pubs []pub
	for _, e := range r.rec.Events() {
		switch e.Kind {
		case sim.KindPublished:
			pubs = append(pubs, pub{e.Msg, strings.TrimPrefix(e.Where, "topic:")})
		case sim.KindDelivered:
			get(&e).delivered++
		case sim.KindProcessed:
			get(&e).processed++
		case sim.KindFailed:
			get(&e).failed++
		case sim.KindDropped:
			if strings.Contains(e.Detail, "oldest") {
				get(&e).droppedOld++
			} else {
				get(&e).droppedNew++
			}
		case sim.KindMissed:
			if strings.HasPrefix(e.Detail, "discarded") {
				get(&e).discarded++
			} else {
				get(&e).missed++
			}
		case KindSuppressed:
			get(&e).suppressed++
		case sim.KindFault:
			if e.Detail == string(faults.BrokerDuplicate) {
				get(&e).dup++
			}
		}
	}
	led := r.env.Ledger
	m := r.b.Metrics()
	if m.Buffered != 0 || m.InFlight != 0 {
		t.Errorf("seed %d: not drained: %+v", seed, m)
	}
	pairs, missedPairs, dropped := 0, 0, 0
	for _, p := range pubs {
		for _, s := range subs {
			if !s.Pattern().Match(p.subject) {
				continue
			}
			pairs++
			o := out[pairKey{p.id, s.Name()}]
			if o == nil {
				o = &outcome{}
			}
			terminal := o.processed + o.failed + o.droppedOld + o.droppedNew + o.missed + o.discarded + o.suppressed
			if terminal != 1+o.dup || o.delivered != o.processed+o.failed+o.droppedOld+o.discarded {
				t.Errorf("seed %d: %v for %s: unaccounted copy: %+v", seed, p.id, s.Name(), *o)
				continue
			}
			d := led.Delivery(p.id, led.Consumer(s.Name()))
			wantLost := sim.Cause("")
			if o.droppedOld+o.droppedNew > 0 {
				wantLost = sim.CauseOverflow
				dropped++
			}
			if o.missed+o.discarded > 0 {
				missedPairs++
			}
			if int(d.Delivered) != o.delivered || int(d.Applied) != o.processed || d.Missed != (o.missed+o.discarded > 0) || d.Lost != wantLost {
				t.Errorf("seed %d: %v for %s: ledger %+v disagrees with trace %+v", seed, p.id, s.Name(), d, *o)
			}
		}
	}
	if pairs == 0 {
		return
	}
	stats := led.Stats()
	overflow := 0
	for _, c := range stats.LostBy {
		if c.Cause == sim.CauseOverflow {
			overflow = c.Count
		}
	}
	if overflow != m.Dropped || stats.Missed != missedPairs || m.Published != len(pubs) {
		t.Errorf("seed %d: ledger overflow %d missed %d vs metrics %+v (published events %d, missed pairs %d)", seed, overflow, stats.Missed, m, len(pubs), missedPairs)
	}
	if err := sim.Check(led, sim.AtLeastOnce("")); err != nil {
		// Every violation must be an overflow loss or a failed handler.
		for _, v := range err.(*sim.CheckError).Violations {
			if v.Detail != "lost (overflow)" && !strings.Contains(v.Detail, "never applied") {
				t.Errorf("seed %d: %s", seed, v)
			}
		}
	}
}

// TestPropertyConservation runs 500 random seeds (50 with -short) with
// random subscribers, overflow policies, cascades, supervisor switches,
// connects and disconnects and a random mix of every pubsub fault.
func TestPropertyConservation(t *testing.T) {
	n := uint64(500)
	if testing.Short() {
		n = 50
	}
	var sum Metrics
	for seed := uint64(1); seed <= n; seed++ {
		text, m := runProperty(t, seed)
		if seed%100 == 1 {
			if again, _ := runProperty(t, seed); !bytes.Equal(text, again) {
				t.Errorf("seed %d: the same seed produced a different trace", seed)
			}
		}
		sum.Published += m.Published
		sum.Rejected += m.Rejected
		sum.Backpressure += m.Backpressure
		sum.Delivered += m.Delivered
		sum.Missed += m.Missed
		sum.Dropped += m.Dropped
		sum.Suppressed += m.Suppressed
		sum.Handled += m.Handled
		sum.Failed += m.Failed
		sum.Discarded += m.Discarded
		sum.Duplicated += m.Duplicated
		sum.Delayed += m.Delayed
		sum.CascadeLimited += m.CascadeLimited
	}
	// Every outcome must have been exercised, or the property is vacuous.
	t.Logf("%d seeds: %+v", n, sum)
	for _, c := range []struct {
		name string
		v    int
	}{{"rejected", sum.Rejected}, {"back-pressure", sum.Backpressure}, {"missed", sum.Missed}, {"dropped", sum.Dropped},
		{"suppressed", sum.Suppressed}, {"discarded", sum.Discarded}, {"duplicated", sum.Duplicated}, {"delayed", sum.Delayed},
		{"failed", sum.Failed}, {"cascade-limited", sum.CascadeLimited}} {
		if c.v == 0 {
			t.Errorf("no seed exercised %s", c.name)
		}
	}
}
