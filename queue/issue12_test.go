package queue_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// rig is a world with a queue "orders" (and, when dlq is set, a dead-letter
// queue), an injector and a recorder.
type rig struct {
	w   *sim.World
	in  *faults.Injector
	rec *sim.Recorder
	q   *queue.Queue
	dlq *queue.Queue
}

func newRig(t *testing.T, rules []faults.Rule, qc queue.Config, dlq bool) *rig {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 12})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{w: w, rec: &sim.Recorder{}}
	w.Trace().Attach(r.rec)
	if r.in, err = faults.New(w, faults.Config{Plan: faults.Plan{Rules: rules}}); err != nil {
		t.Fatal(err)
	}
	if dlq {
		if r.dlq, err = queue.New(w, queue.Config{Name: "orders-dlq"}); err != nil {
			t.Fatal(err)
		}
		qc.DeadLetter = r.dlq
	}
	qc.Name, qc.Faults = "orders", r.in
	if r.q, err = queue.New(w, qc); err != nil {
		t.Fatal(err)
	}
	return r
}

// violations returns the text of every violation of the checks, one per
// line, or "" when they hold.
func violations(l *sim.Ledger, checks ...sim.Checker) string {
	var ce *sim.CheckError
	if err := sim.Check(l, checks...); errors.As(err, &ce) {
		var b []string
		for _, v := range ce.Violations {
			b = append(b, v.String())
		}
		return strings.Join(b, "\n")
	}
	return ""
}

// TestIssue12RedriveLineage is case 2 of issue 12: the effect is applied,
// the worker crashes before the ack, the redelivery fails permanently into
// the DLQ, and the DLQ is redriven (a new message ID). The ledger follows
// the lineage: a naive handler applied the order twice, which exactly-once
// reports; an idempotent handler keyed by the business key applied it
// once, and passes.
func TestIssue12RedriveLineage(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    sim.Handler
	}{
		{"naive", sim.Effect("charged")},
		{"business-key", sim.Idempotent(sim.Effect("charged"), sim.ByKey)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, []faults.Rule{
				{Name: "crash-before-ack", Point: faults.ConsumerCrashAfterEffect, Nth: 1},
				{Name: "rejected-on-redelivery", Point: faults.HandlerPermanent, Nth: 2},
			}, queue.Config{VisibilityTimeout: 3}, true)
			if _, err := queue.NewConsumer(r.w, queue.ConsumerConfig{Queue: r.q, Name: "billing", Handler: tc.h}); err != nil {
				t.Fatal(err)
			}
			p, err := producer.New(r.w, producer.Config{Name: "shop", Target: r.q, Count: 1, KeyPattern: "order-%d"})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.w.RunUntil(func() bool { return p.Done() && r.q.Len() == 0 && r.dlq.Len() == 1 }, 50); err != nil {
				t.Fatal(err)
			}
			if n, err := r.dlq.Redrive(10); n != 1 || err != nil {
				t.Fatalf("redrive %d, %v", n, err)
			}
			if err := r.w.RunUntil(func() bool { return r.q.Len() == 0 }, 50); err != nil {
				t.Fatal(err)
			}
			l := r.w.Ledger()
			if root := l.Root(2); root != 1 {
				t.Fatalf("the redriven copy m2 has origin %v, want m1", root)
			}
			if got := violations(l, sim.NoLoss()); got != "" {
				t.Fatalf("no-loss: %s", got)
			}
			got := violations(l, sim.ExactlyOnce("orders"))
			if tc.name == "naive" {
				if !strings.Contains(got, "exactly-once: m1 key=order-1 consumer=orders") || !strings.Contains(got, "effect applied 2 times") {
					t.Fatalf("exactly-once: %q", got)
				}
				if d := l.DuplicateEffects("orders"); d != 1 {
					t.Fatalf("duplicate effects %d, want 1", d)
				}
				return
			}
			if got != "" {
				t.Fatalf("exactly-once: %s", got)
			}
			if o := l.Outcomes("orders"); len(o) != 1 || o[0].Effects != 1 || o[0].Skipped != 1 || o[0].Copies != 2 || o[0].Verdict != sim.VerdictApplied {
				t.Fatalf("outcomes %+v", o)
			}
		})
	}
}

// TestIssue12AckBeforeProcessCrashLosesAll is case 4 of issue 12: with
// acks before processing and a crash before every handler call, every
// message is lost, and all three delivery checkers say so, with the cause.
func TestIssue12AckBeforeProcessCrashLosesAll(t *testing.T) {
	r := newRig(t, []faults.Rule{{Name: "crash", Point: faults.ConsumerCrashBeforeProcess}}, queue.Config{}, false)
	c, err := queue.NewConsumer(r.w, queue.ConsumerConfig{Queue: r.q, Name: "w", AckMode: queue.AckBeforeProcess})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := producer.New(r.w, producer.Config{Name: "shop", Target: r.q, Count: 4, KeyPattern: "order-%d"})
	if err := r.w.RunUntil(func() bool { return p.Done() && r.q.Len() == 0 && c.Busy() == 0 }, 50); err != nil {
		t.Fatal(err)
	}
	l := r.w.Ledger()
	for _, ck := range []sim.Checker{sim.NoLoss(), sim.AtLeastOnce("orders"), sim.ExactlyOnce("orders")} {
		got := violations(l, ck)
		if strings.Count(got, "lost (ack before processing)") != 4 || strings.Count(got, "\n") != 3 {
			t.Errorf("%s:\n%s", ck.Name(), got)
		}
	}
	if st := l.Stats(); st.Applied != 0 || st.Lost != 4 || len(st.LostBy) != 1 || st.LostBy[0].Cause != sim.CauseAckBeforeProcess {
		t.Fatalf("stats %+v", st)
	}
	if s := c.Stats(); s.Lost != 4 || s.Crashes != 4 {
		t.Fatalf("consumer stats %+v", s)
	}
}

// TestIssue12StoppedEarlyIsPending is case 4 of issue 12: a run that ends
// before anything is delivered does not pass at-least-once; every message
// is still pending in the queue nothing took from yet (as of the last
// event, t=3), and RunUntil says the run did not finish.
func TestIssue12StoppedEarlyIsPending(t *testing.T) {
	r := newRig(t, nil, queue.Config{}, false)
	if _, err := queue.NewConsumer(r.w, queue.ConsumerConfig{Queue: r.q, Name: "w", Start: 100}); err != nil {
		t.Fatal(err)
	}
	p, _ := producer.New(r.w, producer.Config{Name: "shop", Target: r.q, Count: 3})
	if err := r.w.RunUntil(func() bool { return p.Done() && r.q.Len() == 0 }, 5); !errors.Is(err, sim.ErrNotDone) {
		t.Fatalf("RunUntil: %v", err)
	}
	got := violations(r.w.Ledger(), sim.AtLeastOnce("orders"))
	if strings.Count(got, "still pending in queue:orders at t=3, and no consumer took anything from it") != 3 {
		t.Fatalf("at-least-once:\n%s", got)
	}
}

// TestIssue12RetentionOfInFlightReconciled is case 4 of issue 12:
// retention deletes a message while its slow handler works on it; the
// handler then applies it. The loss retention booked is contradicted by
// the effect and reconciled: no-loss and exactly-once both pass.
func TestIssue12RetentionOfInFlightReconciled(t *testing.T) {
	r := newRig(t, nil, queue.Config{Retention: 4, VisibilityTimeout: 20}, false)
	c, err := queue.NewConsumer(r.w, queue.ConsumerConfig{Queue: r.q, Name: "w", Handler: &sim.Script{Ticks: 8}})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := producer.New(r.w, producer.Config{Name: "shop", Target: r.q, Count: 1})
	if err := r.w.RunUntil(func() bool { return p.Done() && r.q.Len() == 0 && c.Busy() == 0 }, 50); err != nil {
		t.Fatal(err)
	}
	var expired, processed sim.Tick
	for _, e := range r.rec.Events() {
		switch e.Kind {
		case sim.KindExpired:
			expired = e.Tick
		case sim.KindProcessed:
			processed = e.Tick
		}
	}
	if expired == 0 || processed <= expired {
		t.Fatalf("expired at %d, processed at %d: the effect must land after the deletion", expired, processed)
	}
	l := r.w.Ledger()
	if got := violations(l, sim.NoLoss(), sim.ExactlyOnce("orders")); got != "" {
		t.Fatal(got)
	}
	if ls := l.Losses(); len(ls) != 0 {
		t.Fatalf("losses that stand: %+v", ls)
	}
	if c.Stats().StaleAcks != 1 {
		t.Fatalf("the late ack of a deleted message must be refused: %+v", c.Stats())
	}
}

// TestIssue12ObservedEffects is case 5 of issue 12: a correct idempotent
// handler written as a plain sim.HandlerFunc, which records its effect with
// d.Apply and a duplicate with d.Skip, passes exactly-once under broker
// duplicates; the same handler without the check fails it.
func TestIssue12ObservedEffects(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		r := newRig(t, []faults.Rule{{Name: "twice", Point: faults.BrokerDuplicate, Probability: 0.5}}, queue.Config{}, false)
		seen := map[sim.ID]bool{}
		h := sim.HandlerFunc(func(d *sim.Delivery) error {
			if idempotent && seen[d.Msg.ID] {
				d.Skip("seen " + d.Msg.ID.String())
				return nil
			}
			seen[d.Msg.ID] = true
			d.Apply("stored")
			return nil
		})
		c, _ := queue.NewConsumer(r.w, queue.ConsumerConfig{Queue: r.q, Name: "w", Instances: 2, Handler: h})
		p, _ := producer.New(r.w, producer.Config{Name: "shop", Target: r.q, Count: 10})
		if err := r.w.RunUntil(func() bool { return p.Done() && r.q.Len() == 0 && c.Busy() == 0 }, 100); err != nil {
			t.Fatal(err)
		}
		l := r.w.Ledger()
		if l.Duplicates("orders") == 0 {
			t.Fatal("no duplicate was delivered")
		}
		got := violations(l, sim.NoLoss(), sim.ExactlyOnce("orders"))
		if idempotent {
			if got != "" || c.Stats().Skipped != l.Duplicates("orders") {
				t.Fatalf("idempotent: %s (stats %+v, duplicates %d)", got, c.Stats(), l.Duplicates("orders"))
			}
		} else if !strings.Contains(got, "effect applied 2 times") {
			t.Fatalf("naive: %q", got)
		}
	}
}
