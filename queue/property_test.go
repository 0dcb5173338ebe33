package queue

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// scenario is one randomly drawn run of the property test.
type scenario struct {
	seed       uint64
	atMostOnce bool
	qc         Config
	rules      []faults.Rule
	consumers  []ConsumerConfig
	pc         ProducerConfig
	purgeAt    sim.Tick
	republish  float64 // chance that the producer's publish is repeated (a relay retry)
}

func (s scenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d at-most-once=%v vt=%d fifo=%v dedup=%d republish=%v mrc=%d retention=%d purge=%d count=%d rate=%d keys=%d",
		s.seed, s.atMostOnce, s.qc.VisibilityTimeout, s.qc.FIFO, s.qc.DedupWindow, s.republish, s.qc.MaxReceiveCount, s.qc.Retention, s.purgeAt, s.pc.Count, s.pc.Rate, s.pc.Keys)
	for _, r := range s.rules {
		fmt.Fprintf(&b, "\n\trule %s p=%.2f [%d,%d) param=%d key=%q", r.Point, r.Probability, r.From, r.Until, r.Param, r.Match.Key)
	}
	for _, c := range s.consumers {
		fmt.Fprintf(&b, "\n\tconsumer %s batch=%d retry=%+v max=%d", c.Name, c.Batch, c.Retry, c.MaxAttempts)
	}
	return b.String()
}

// drawScenario draws a fault mix and a topology from the seed.
func drawScenario(seed uint64) scenario {
	r := sim.NewStream(seed, "property")
	s := scenario{seed: seed, atMostOnce: r.Chance(0.3)}
	s.qc = Config{Name: "orders", VisibilityTimeout: sim.Tick(2 + r.IntN(7)), FIFO: r.Chance(0.25)}
	if r.Chance(0.5) {
		s.qc.MaxReceiveCount = 2 + r.IntN(4)
	}
	if s.qc.FIFO && r.Chance(0.5) {
		s.qc.DedupWindow = sim.Tick(1 + r.IntN(10))
	}
	if r.Chance(0.15) {
		s.qc.Retention = sim.Tick(20 + r.IntN(60))
	}
	if r.Chance(0.08) {
		s.purgeAt = sim.Tick(5 + r.IntN(30))
	}
	prob := func() float64 { return float64(1+r.IntN(20)) / 100 }
	add := func(name string, p faults.Point, f func(*faults.Rule)) {
		rule := faults.Rule{Name: name, Point: p, Probability: prob()}
		if f != nil {
			f(&rule)
		}
		s.rules = append(s.rules, rule)
	}
	if r.Chance(0.4) {
		add("crash-before", faults.ConsumerCrashBeforeProcess, nil)
	}
	if r.Chance(0.4) {
		add("crash-after", faults.ConsumerCrashAfterEffect, nil)
	}
	if r.Chance(0.5) {
		add("transient", faults.HandlerTransient, func(x *faults.Rule) { x.Param = int64(1 + r.IntN(3)) })
	}
	if r.Chance(0.3) {
		add("permanent", faults.HandlerPermanent, func(x *faults.Rule) { x.Probability /= 2 })
	}
	if r.Chance(0.3) {
		add("poison", faults.HandlerPoison, func(x *faults.Rule) { x.Probability = 1; x.Match.Key = "k-0" })
	}
	if r.Chance(0.4) {
		add("slow", faults.HandlerSlow, func(x *faults.Rule) { x.Param = int64(1 + r.IntN(10)) })
	}
	if r.Chance(0.3) {
		add("down", faults.BrokerUnavailable, func(x *faults.Rule) {
			x.Probability = 1
			x.From = sim.Tick(1 + r.IntN(20))
			x.Until = x.From + sim.Tick(1+r.IntN(8))
		})
	}
	if !s.atMostOnce && r.Chance(0.4) {
		add("dup", faults.BrokerDuplicate, nil)
	}
	if r.Chance(0.3) {
		add("delay", faults.BrokerDelay, func(x *faults.Rule) { x.Param = int64(1 + r.IntN(5)) })
	}
	if r.Chance(0.3) {
		add("reorder", faults.BrokerReorder, nil)
	}
	n := 1 + r.IntN(3)
	for i := 0; i < n; i++ {
		cc := ConsumerConfig{Name: "w" + strconv.Itoa(i+1), Batch: 1 + r.IntN(3)}
		if s.atMostOnce {
			cc.AckMode = AckBeforeProcess
		}
		switch r.IntN(3) {
		case 1:
			cc.Retry = FixedRetry(sim.Tick(1 + r.IntN(3)))
		case 2:
			cc.Retry = ExponentialRetry(1, sim.Tick(2+r.IntN(8)), float64(r.IntN(3))/2)
		}
		if r.Chance(0.5) {
			cc.MaxAttempts = 2 + r.IntN(4)
		}
		s.consumers = append(s.consumers, cc)
	}
	if (!s.atMostOnce || s.qc.DedupWindow > 0) && r.Chance(0.3) {
		s.republish = 0.2
	}
	s.pc = ProducerConfig{Name: "p", Count: 15 + r.IntN(26), Rate: 1 + r.IntN(3), KeyPattern: "k-%d", Keys: 1 + r.IntN(5)}
	return s
}

// repeater publishes some messages twice, as an outbox relay that crashed
// after publishing does.
type repeater struct {
	q *Queue
	r *sim.Stream
	p float64
}

func (x *repeater) Publish(m sim.Message) error {
	if err := x.q.Publish(m); err != nil {
		return err
	}
	if x.r.Chance(x.p) {
		_ = x.q.Publish(m)
	}
	return nil
}

type outcome struct {
	trace []byte
	w     *world
	err   error
}

// play runs s to the end (drained or 600 ticks) and returns the text trace.
func play(t *testing.T, s scenario) outcome {
	var buf bytes.Buffer
	w := newWorld(t, s.seed, s.rules, s.qc)
	w.env.Trace.Attach(sim.NewTextWriter(&buf))
	for _, cc := range s.consumers {
		w.consumer(cc)
	}
	w.producer(s.pc)
	if s.republish > 0 {
		w.p.cfg.Target = &repeater{q: w.q, r: w.env.Stream("repeater"), p: s.republish}
	}
	if s.purgeAt > 0 {
		w.w.At(s.purgeAt, "purge", func() { w.q.Purge() })
	}
	_, err := w.w.RunUntil(w.drained, 600)
	return outcome{trace: buf.Bytes(), w: w, err: err}
}

// checkInternals verifies the queue's own bookkeeping against its slab.
func checkInternals(q *Queue) error {
	var vis, fl, del, live int
	for i := uint32(0); i < q.s.n; i++ {
		e := q.s.at(i)
		switch e.state {
		case stFree:
			continue
		case stReady:
			vis++
		case stInFlight:
			fl++
			if int(e.hidx) >= q.flight.len() || q.flight.a[e.hidx].slot != i || q.flight.a[e.hidx].due != e.due {
				return fmt.Errorf("slot %d: in-flight heap index %d is wrong", i, e.hidx)
			}
		case stDelayed, stHeld:
			del++
			if int(e.hidx) >= q.delay.len() || q.delay.a[e.hidx].slot != i || q.delay.a[e.hidx].due != e.due {
				return fmt.Errorf("slot %d: delay heap index %d is wrong", i, e.hidx)
			}
		}
		live++
	}
	m := q.Metrics()
	if vis != m.Visible || fl != m.InFlight || del != m.Delayed || live != q.Len() || q.Len() != m.Visible+m.InFlight+m.Delayed ||
		fl != q.flight.len() || del != q.delay.len() {
		return fmt.Errorf("counts: slab visible %d in flight %d delayed %d live %d; metrics %+v len %d heaps %d/%d",
			vis, fl, del, live, m, q.Len(), q.flight.len(), q.delay.len())
	}
	return nil
}

func residentIDs(q *Queue) map[sim.ID]bool {
	out := map[sim.ID]bool{}
	for i := uint32(0); i < q.s.n; i++ {
		if e := q.s.at(i); e.state != stFree {
			out[e.msg.ID] = true
		}
	}
	return out
}

// account checks that every message is accounted for and that every loss
// has a modelled cause allowed in this scenario.
func account(s scenario, w *world) []string {
	var bad []string
	l := w.env.Ledger
	c := w.q.ConsumerRef()
	inQ, inDLQ := residentIDs(w.q), residentIDs(w.dlq)
	allowed := map[sim.Cause]bool{}
	if s.atMostOnce {
		allowed[sim.CauseAckBeforeProcess] = true
	}
	if s.qc.Retention > 0 {
		allowed[sim.CauseRetention] = true
	}
	if s.purgeAt > 0 {
		allowed[sim.CausePurge] = true
	}
	for _, x := range l.Losses() {
		if !allowed[x.Cause] {
			bad = append(bad, fmt.Sprintf("%v lost with cause %q, not modelled in this scenario", x.ID, x.Cause))
		}
	}
	for _, r := range l.Records() {
		d := l.Delivery(r.ID, c)
		where := ""
		switch r.State {
		case sim.StateDone:
			if !d.Acked {
				where = "done but never acked"
			}
		case sim.StatePending:
			if !inQ[r.ID] {
				where = "pending in the ledger but not resident in the queue"
			}
		case sim.StateDeadLettered:
			if !inDLQ[r.ID] {
				where = "dead-lettered in the ledger but not in the DLQ"
			}
		case sim.StateExpired, sim.StatePurged:
			if d.Applied == 0 && d.Lost == "" {
				where = r.State.String() + " unprocessed without a recorded loss"
			}
		case sim.StateCreated:
			if w.p.Done() {
				where = "created but never accepted although the producer is done"
			}
		default:
			where = "unexpected state " + r.State.String()
		}
		if where != "" {
			bad = append(bad, fmt.Sprintf("%v key=%s: %s (delivery %+v)", r.ID, r.Key, where, d))
		}
		if d.Applied == 0 && d.Lost == "" && r.State != sim.StatePending && r.State != sim.StateDeadLettered && r.State != sim.StateCreated {
			bad = append(bad, fmt.Sprintf("%v: never applied, state %v, and no modelled loss", r.ID, r.State))
		}
	}
	for id := range inQ {
		if r, _ := l.Record(id); r.State != sim.StatePending && r.State != sim.StateDone && r.State != sim.StateDeadLettered {
			bad = append(bad, fmt.Sprintf("%v resident in the queue but in state %v", id, r.State))
		}
	}
	return bad
}

// TestPropertyConservation runs random fault mixes over many seeds: every
// message is accounted for, every loss has a modelled cause, at-least-once
// runs never lose, at-most-once runs never apply an effect twice, and the
// same seed gives a byte-identical trace.
func TestPropertyConservation(t *testing.T) {
	seeds := 1000
	if testing.Short() {
		seeds = 100
	}
	kinds := map[sim.Kind]int{}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		s := drawScenario(seed)
		a := play(t, s)
		if a.err != nil {
			t.Fatalf("%v: %v", s, a.err)
		}
		b := play(t, s)
		if !bytes.Equal(a.trace, b.trace) {
			t.Fatalf("%v: two runs of the same seed differ", s)
		}
		for _, e := range a.w.rec.Events() {
			kinds[e.Kind]++
		}
		var problems []string
		for _, q := range []*Queue{a.w.q, a.w.dlq} {
			if err := checkInternals(q); err != nil {
				problems = append(problems, q.Name()+": "+err.Error())
			}
		}
		problems = append(problems, account(s, a.w)...)
		l := a.w.env.Ledger
		if s.atMostOnce {
			if err := sim.Check(l, sim.AtMostOnce("orders")); err != nil {
				problems = append(problems, err.Error())
			}
		} else if s.qc.Retention == 0 && s.purgeAt == 0 {
			if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
				problems = append(problems, err.Error())
			}
		}
		if len(problems) > 0 {
			t.Fatalf("%v\n%s\ntrace:\n%s", s, strings.Join(problems, "\n"), a.trace)
		}
	}
	// The mix must actually exercise the interesting paths.
	for _, k := range []sim.Kind{sim.KindRedelivered, sim.KindDeadLettered, sim.KindVisibilityExpired, sim.KindCrashed,
		sim.KindRejected, sim.KindNacked, sim.KindFault, sim.KindLost, sim.KindDelayed} {
		if kinds[k] == 0 {
			t.Errorf("no %s event in %d seeds", k, seeds)
		}
	}
	if !testing.Short() {
		for _, k := range []sim.Kind{sim.KindExpired, sim.KindPurged, sim.KindDeduplicated} {
			if kinds[k] == 0 {
				t.Errorf("no %s event in %d seeds", k, seeds)
			}
		}
	}
}
