package pubsub

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// newQueue makes a queue on r's world, with r's fault injector.
func (r *rig) newQueue(cfg queue.Config) *queue.Queue {
	r.t.Helper()
	if cfg.Faults == nil {
		cfg.Faults = r.in
	}
	q, err := queue.New(r.w, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return q
}

// newConsumer makes a queue consumer on r's world.
func (r *rig) newConsumer(cfg queue.ConsumerConfig) *queue.Consumer {
	r.t.Helper()
	c, err := queue.NewConsumer(r.w, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// originRecorder records the origin of every copy it applies, and when.
type originRecorder struct {
	got []sim.ID
	at  map[sim.ID]sim.Tick
}

func (h *originRecorder) Handle(d *sim.Delivery) error {
	if h.at == nil {
		h.at = map[sim.ID]sim.Tick{}
	}
	h.got = append(h.got, d.Msg.Origin)
	h.at[d.Msg.Origin] = d.Now()
	d.Apply("")
	return nil
}

// TestEphemeralVersusDurable sends the same publishes to an ephemeral
// subscriber and, through a fan-out, to a durable queue, while both
// consumers are disconnected for ticks [5, 10). The ephemeral subscriber
// misses the publishes of the outage for good; the queue keeps its copies
// and its consumer gets them after reconnecting.
func TestEphemeralVersusDurable(t *testing.T) {
	r := newRig(t, 1, 0)
	q := r.newQueue(queue.Config{Name: "mail"})
	if err := r.b.FanOut("mail", "orders.>", q); err != nil {
		t.Fatal(err)
	}
	var eph recorder
	sub := r.sub(SubscriberConfig{Name: "mailer", Pattern: "orders.>", Handler: &eph})
	var durable originRecorder
	dc := r.newConsumer(queue.ConsumerConfig{Queue: q, Name: "durable-mailer", Batch: 10, Handler: &durable})
	r.w.At(5, "both consumers disconnect", func() {
		sub.Disconnect()
		dc.Pause()
	})
	r.w.At(10, "both consumers reconnect", func() {
		if err := sub.Connect(); err != nil {
			t.Error(err)
		}
		dc.Resume()
	})
	var all, inside, outside []sim.ID
	r.producer(func(now sim.Tick) {
		if now > 15 {
			return
		}
		id := r.mustPublish("orders.placed", "order").ID
		all = append(all, id)
		if now >= 5 && now < 10 {
			inside = append(inside, id)
		} else {
			outside = append(outside, id)
		}
	})
	r.run(16)

	if !slices.Equal(eph.got, outside) {
		t.Errorf("ephemeral got %v, want only the publishes outside the outage %v", eph.got, outside)
	}
	if got := ids(r.events(sim.KindMissed, "mailer")); !slices.Equal(got, inside) {
		t.Errorf("ephemeral missed %v, want %v", got, inside)
	}
	if !slices.Equal(durable.got, all) {
		t.Errorf("durable got copies of %v, want every publish %v", durable.got, all)
	}
	for _, id := range inside {
		if durable.at[id] < 10 {
			t.Errorf("durable applied %v at %v, during the outage", id, durable.at[id])
		}
	}
	// Both consumers keep their guarantee: the ephemeral one by design
	// (missed is not lost), the durable one exactly once, judged by the
	// publish its copy was made from.
	led := r.w.Ledger()
	if err := sim.Check(led, sim.NoLoss(), sim.AtLeastOnce("mailer"), sim.ExactlyOnce("mail")); err != nil {
		t.Error(err)
	}
	for _, o := range led.Outcomes("mail") {
		if !slices.Contains(all, o.Origin) || o.Copies != 1 {
			t.Errorf("queue outcome %+v is not judged by its publish", o)
		}
	}
	if m := r.b.Metrics(); m.Forwarded != 15 || m.Missed != len(inside) {
		t.Errorf("metrics %+v", m)
	}
	r.refold()
}

// failing is a durable target that refuses every message.
type failing struct{}

func (failing) Publish(sim.Message) error { return errors.New("queue: broker unavailable") }

// TestFanOutFailureIsALoss checks that a fan-out without retries
// (NoForwardRetry) loses a refused copy at once, booked as forward failed
// before any consumer; TestIssue13FanOutRetriesWithBackoff covers the
// default policy.
func TestFanOutFailureIsALoss(t *testing.T) {
	r := newRig(t, 1, 0)
	if err := r.b.FanOutWith(FanOutConfig{Name: "archive", Pattern: ">", Target: failing{}, Retry: &NoForwardRetry}); err != nil {
		t.Fatal(err)
	}
	if err := r.b.FanOut("archive", ">", failing{}); !errors.Is(err, ErrDuplicateName) {
		t.Errorf("second fan-out with the same name: %v", err)
	}
	if err := r.b.FanOut("x", "a..b", failing{}); !errors.Is(err, ErrInvalidSubject) {
		t.Errorf("bad pattern: %v", err)
	}
	if err := r.b.FanOut("y", "a", nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("nil target: %v", err)
	}
	for _, bad := range []ForwardRetry{{Immediate: -1}, {Backoff: 2}, {Backoff: 1, Delay: 4, MaxDelay: 2}, {Delay: -1},
		{Backoff: MaxForwardRetries + 1, Delay: 1}} {
		if err := r.b.FanOutWith(FanOutConfig{Name: "z", Pattern: "a", Target: failing{}, Retry: &bad}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("retry %+v: %v, want ErrInvalidConfig", bad, err)
		}
	}
	m := r.mustPublish("a", "k")
	led := r.w.Ledger()
	losses := led.Losses()
	if len(losses) != 1 || losses[0].ID == m.ID || losses[0].Cause != sim.CauseForwardFailed || losses[0].Consumer != "" {
		t.Fatalf("losses %+v", losses)
	}
	rec, _ := led.Record(losses[0].ID)
	if rec.Origin != m.ID || rec.Key != "k" || rec.Type != "a" || rec.State != sim.StateLost || led.Root(rec.ID) != m.ID {
		t.Errorf("the lost copy %+v is not a copy of %v", rec, m.ID)
	}
	err := sim.Check(led, sim.NoLoss())
	if err == nil || !strings.Contains(err.Error(), "forward failed") {
		t.Errorf("no-loss: %v", err)
	}
	if r.b.Metrics().ForwardFailed != 1 {
		t.Errorf("metrics %+v", r.b.Metrics())
	}
	r.refold()
}

// TestFanOutWithQueueFaults checks that a queue refusing one forward (its
// broker.unavailable fires once) does not lose the copy: the default
// policy retries it at once, as SNS's immediate-retry phase does for SQS
// endpoints, so all three copies reach the queue; and the ephemeral side
// is unaffected.
func TestFanOutWithQueueFaults(t *testing.T) {
	r := newRig(t, 3, 0, faults.Rule{Name: "queue-down", Point: faults.BrokerUnavailable, Nth: 2, Match: faults.Match{Where: "queue:*"}})
	q := r.newQueue(queue.Config{Name: "audit"})
	if err := r.b.FanOut("audit", "x", q); err != nil {
		t.Fatal(err)
	}
	var h recorder
	r.sub(SubscriberConfig{Name: "live", Pattern: "x", Handler: &h})
	var sent []sim.ID
	r.w.At(1, "publish", func() {
		for range 3 {
			sent = append(sent, r.mustPublish("x", "k").ID)
		}
	})
	r.run(1)
	if !slices.Equal(h.got, sent) {
		t.Errorf("ephemeral handled %v", h.got)
	}
	led := r.w.Ledger()
	if losses := led.Losses(); len(losses) != 0 {
		t.Errorf("losses %+v, want none", losses)
	}
	refused := r.events(sim.KindRejected, "audit")
	if len(refused) != 1 || refused[0].Origin != sent[1] || refused[0].Attempt != 1 {
		t.Errorf("refusals %+v, want one, of the second publish's copy", refused)
	}
	if q.Len() != 3 {
		t.Errorf("queue holds %d, want 3", q.Len())
	}
	if m := r.b.Metrics(); m.Forwarded != 3 || m.ForwardRetries != 1 || m.ForwardFailed != 0 {
		t.Errorf("metrics %+v", m)
	}
	r.refold()
}

// fanOutPair is a topic fanned out to two durable queues a and b, each
// with an optional consumer: the setup of issue 12, case 1.
type fanOutPair struct {
	r          *rig
	qa, qb     *queue.Queue
	dlq        *queue.Queue
	ca, cb     *queue.Consumer
	published  []sim.ID
	subscribed bool
}

func newFanOutPair(t *testing.T, seed uint64, ha, hb sim.Handler, rules ...faults.Rule) *fanOutPair {
	r := newRig(t, seed, 0, rules...)
	p := &fanOutPair{r: r}
	p.dlq = r.newQueue(queue.Config{Name: "a-dlq"})
	p.qa = r.newQueue(queue.Config{Name: "a", DeadLetter: p.dlq})
	p.qb = r.newQueue(queue.Config{Name: "b"})
	for _, q := range []*queue.Queue{p.qa, p.qb} {
		if err := r.b.FanOut(q.Name(), "orders.>", q); err != nil {
			t.Fatal(err)
		}
	}
	if ha != nil {
		p.ca = r.newConsumer(queue.ConsumerConfig{Queue: p.qa, Name: "a-worker", Handler: ha})
	}
	if hb != nil {
		p.cb = r.newConsumer(queue.ConsumerConfig{Queue: p.qb, Name: "b-worker", Handler: hb})
	}
	return p
}

// TestIssue12FanOutCopies is issue 12, case 1: a topic fanned out to two
// queues a and b, one publish. With only a consumed, b's copy is still
// pending in b, and the checkers say exactly that; when a dead-letters its
// copy and b acks its own, a's verdict is parked and b's applied.
func TestIssue12FanOutCopies(t *testing.T) {
	t.Run("only-a-consumed", func(t *testing.T) {
		p := newFanOutPair(t, 1, sim.Effect("charged"), nil)
		r := p.r
		m := r.mustPublish("orders.placed", "order-1")
		r.run(5)
		if p.qa.Len() != 0 || p.qb.Len() != 1 {
			t.Fatalf("depths a=%d b=%d, want 0 and 1", p.qa.Len(), p.qb.Len())
		}
		led := r.w.Ledger()
		if err := sim.Check(led, sim.AtLeastOnce("a"), sim.ExactlyOnce("a")); err != nil {
			t.Errorf("a applied its copy: %v", err)
		}
		for _, c := range []sim.Checker{sim.NoLoss(), sim.AtLeastOnce("b")} {
			var ce *sim.CheckError
			err := sim.Check(led, c)
			if !errors.As(err, &ce) || len(ce.Violations) != 1 {
				t.Fatalf("%s: want one violation, got %v", c.Name(), err)
			}
			v := ce.Violations[0]
			// Nothing reads b: the violation names the queue the copy
			// waits in, not a consumer.
			if v.Msg != m.ID || v.Consumer != "" || !strings.Contains(v.Detail, "still pending in queue:b") || strings.Contains(v.Detail, "left the broker") {
				t.Errorf("%s: %s", c.Name(), v)
			}
		}
		oa, _ := r.verdict(m.ID, "a")
		ob, _ := r.verdict(m.ID, "b")
		if oa.Verdict != sim.VerdictApplied || ob.Verdict != sim.VerdictPending || ob.Where != "queue:b" {
			t.Errorf("verdicts a=%+v b=%+v", oa, ob)
		}
		r.refold()
	})
	t.Run("a-dead-letters-b-acks", func(t *testing.T) {
		p := newFanOutPair(t, 1, &sim.Script{Behaviour: sim.Permanent}, sim.Effect("charged"))
		r := p.r
		m := r.mustPublish("orders.placed", "order-1")
		r.run(5)
		if p.dlq.Len() != 1 || p.qa.Len() != 0 || p.qb.Len() != 0 {
			t.Fatalf("depths a=%d dlq=%d b=%d", p.qa.Len(), p.dlq.Len(), p.qb.Len())
		}
		oa, _ := r.verdict(m.ID, "a")
		ob, _ := r.verdict(m.ID, "b")
		if oa.Verdict != sim.VerdictParked || ob.Verdict != sim.VerdictApplied || ob.Effects != 1 {
			t.Errorf("verdicts a=%+v b=%+v, want parked and applied", oa, ob)
		}
		if err := sim.Check(r.w.Ledger(), sim.AtLeastOnce("a"), sim.AtLeastOnce("b"), sim.ExactlyOnce("b"), sim.NoLoss()); err != nil {
			t.Error(err)
		}
		r.refold()
	})
}

// TestIssue12SecondQueueSeeds is the shape of issue 12's "1000 random seeds
// with a second subscribed queue": a topic with an ephemeral subscriber,
// fanned out to two consumed queues, random publishes, processing times,
// consumer pauses and subscriber outages. A correct system must pass every
// checker on every seed; the same system whose b consumer never runs must
// be flagged for exactly b's copies, each still pending in b.
func TestIssue12SecondQueueSeeds(t *testing.T) {
	n := uint64(1000)
	if testing.Short() {
		n = 100
	}
	falseVerdicts := 0
	for seed := uint64(1); seed <= n; seed++ {
		st := sim.NewStream(seed, "second-queue")
		for _, bRuns := range []bool{true, false} {
			ta := &sim.Script{Ticks: sim.Tick(st.IntN(3)), Note: "a"}
			tb := &sim.Script{Ticks: sim.Tick(st.IntN(3)), Note: "b"}
			p := newFanOutPair(t, seed, ta, tb)
			r := p.r
			if !bRuns {
				p.cb.Pause()
			}
			sub := r.sub(SubscriberConfig{Name: "live", Pattern: "orders.*", Buffer: 2 + st.IntN(8)})
			off := sim.Tick(1 + st.IntN(10))
			r.w.At(off, "live goes away", sub.Disconnect)
			r.w.At(off+sim.Tick(st.IntN(5)), "live comes back", func() { _ = sub.Connect() })
			pause := sim.Tick(1 + st.IntN(10))
			r.w.At(pause, "a pauses", p.ca.Pause)
			r.w.At(pause+sim.Tick(st.IntN(8)), "a resumes", p.ca.Resume)
			count := 1 + st.IntN(12)
			r.producer(func(now sim.Tick) {
				for range st.IntN(3) {
					if len(p.published) < count {
						p.published = append(p.published, r.mustPublish("orders.placed", fmt.Sprintf("order-%d", st.IntN(4))).ID)
					}
				}
			})
			done := func() bool {
				return len(p.published) == count && r.w.Pending() == 0 && r.b.Idle() && p.qa.Len() == 0 && (!bRuns || p.qb.Len() == 0)
			}
			if err := r.w.RunUntil(done, 500); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			led := r.w.Ledger()
			good := sim.Check(led, sim.NoLoss(), sim.ExactlyOnce("a"), sim.AtLeastOnce("live"), sim.AtMostOnce("live"))
			errB := sim.Check(led, sim.ExactlyOnce("b"))
			if bRuns {
				if err := errors.Join(good, errB); err != nil {
					falseVerdicts++
					t.Errorf("seed %d: a correct system is flagged: %v", seed, err)
				}
				continue
			}
			var ce *sim.CheckError
			if !errors.As(errB, &ce) || len(ce.Violations) != count || p.qb.Len() != count {
				falseVerdicts++
				t.Errorf("seed %d: b never ran, %d copies in b, yet exactly-once(b) says %v", seed, p.qb.Len(), errB)
				continue
			}
			for i, v := range ce.Violations {
				if v.Msg != p.published[i] || !strings.Contains(v.Detail, "still pending") {
					falseVerdicts++
					t.Errorf("seed %d: %s", seed, v)
				}
			}
			if err := sim.Check(led, sim.ExactlyOnce("a")); err != nil {
				falseVerdicts++
				t.Errorf("seed %d: a is flagged for b's backlog: %v", seed, err)
			}
			if seed%50 == 0 {
				r.refold()
			}
		}
	}
	t.Logf("%d seeds x 2 systems: %d false verdicts", n, falseVerdicts)
}
