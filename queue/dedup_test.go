package queue_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// slow gives a handler a processing time.
type slow struct {
	sim.Handler
	ticks sim.Tick
}

func (s slow) Duration(*sim.Delivery) sim.Tick { return s.ticks }

// TestConsumerDedupAndCrash checks an idempotent handler shared by two
// worker pools (a crash after the effect redelivers the message, whose
// effect is skipped the second time) and a crash by hand (held work is
// dropped, the message comes back).
func TestConsumerDedupAndCrash(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash", Point: faults.ConsumerCrashAfterEffect, Nth: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(w, queue.Config{Name: "q", Faults: in, VisibilityTimeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := sim.Idempotent(sim.Effect("charged"), sim.ByMessageID) // one table, as in a shared database
	c, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "c", Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "slow", Handler: slow{h, 5}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := q.Send(w.Env().NewMessage("k", nil, sim.Headers{}), 0); err != nil {
			t.Fatal(err)
		}
	}
	w.At(2, "crash slow", func() { sl.Crash("by hand") })
	if err := w.Run(20); err != nil {
		t.Fatal(err)
	}
	a, b := c.Stats(), sl.Stats()
	if a.Skipped+b.Skipped < 1 || a.Crashes != 1 || b.Crashes != 1 || a.Processed+b.Processed != 2 {
		t.Errorf("consumer stats %+v, slow stats %+v", a, b)
	}
	if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("q")); err != nil {
		t.Error(err)
	}
	if q.Len() != 0 {
		t.Errorf("queue holds %d", q.Len())
	}
}
