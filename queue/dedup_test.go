package queue_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// TestConsumerDedupAndCrash checks the idempotency hook (a crash after the
// effect redelivers the message, whose effect is not applied again) and a
// crash by hand (held work is dropped, the message comes back).
func TestConsumerDedupAndCrash(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	in, err := faults.New(faults.Config{Env: env, Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash", Point: faults.ConsumerCrashAfterEffect, Nth: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(queue.Config{Name: "q", Env: env, Faults: in, VisibilityTimeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[sim.ID]bool{}
	dedup := func(m sim.Message) bool {
		dup := seen[m.ID]
		seen[m.ID] = true
		return dup
	}
	c, err := queue.NewConsumer(queue.ConsumerConfig{Queue: q, Name: "c", Dedup: dedup})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := queue.NewConsumer(queue.ConsumerConfig{Queue: q, Name: "slow", Handler: queue.Slow(5), Dedup: dedup})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := q.Send(env.NewMessage("k", nil, sim.Headers{}), 0); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Add(sim.PhaseBroker, "q", q)
	_ = w.Add(sim.PhaseConsumer, "c", c)
	_ = w.Add(sim.PhaseConsumer, "slow", slow)
	w.At(2, "crash slow", func() { slow.Crash("by hand") })
	if err := w.Run(20); err != nil {
		t.Fatal(err)
	}
	a, b := c.Stats(), slow.Stats()
	if a.Deduplicated+b.Deduplicated < 1 || a.Crashes != 1 || b.Crashes != 1 {
		t.Errorf("consumer stats %+v, slow stats %+v", a, b)
	}
	if err := sim.Check(env.Ledger, sim.ExactlyOnce("q")); err != nil {
		t.Error(err)
	}
	if q.Len() != 0 {
		t.Errorf("queue holds %d", q.Len())
	}
}
