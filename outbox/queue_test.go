package outbox

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

type queueRun struct {
	env     *sim.Env
	orders  int
	charges int
	stats   ConsumerStats
	relay   RelayStats
}

// runWithQueue wires writer -> outbox -> relay -> queue -> consumer in one
// world, with relay crashes, queue outages and consumer crashes.
func runWithQueue(t *testing.T, seed uint64, dedup Dedup) queueRun {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	in := mustFaults(t, env,
		faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Probability: 0.1, Until: 100},
		faults.Rule{Name: "queue-down", Point: faults.BrokerUnavailable, Match: faults.Match{Where: "queue:*"}, Probability: 0.1, Until: 100},
		faults.Rule{Name: "consumer-crash", Point: faults.ConsumerCrashAfterEffect, Probability: 0.1, Until: 100},
	)
	q, err := queue.New(queue.Config{Name: "billing", Env: env, Faults: in, VisibilityTimeout: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := mustService(t, env, false)
	wr, err := NewWriter(WriterConfig{Service: s, Mode: Outbox, PerTick: 2, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	relay := mustRelay(t, RelayConfig{Service: s, Target: q, Faults: in, Batch: 5, Lease: 3, MaxAttempts: 100, Backoff: 1, MaxBackoff: 4})
	b := newBank(t)
	c := mustConsumer(t, ConsumerConfig{Name: "billing", Env: env, DB: b.db, Effect: b.charge, Dedup: dedup, Faults: in})
	worker := sim.ActorFunc(func(now sim.Tick) {
		ds, err := q.Receive("worker", 10)
		if err != nil {
			return // the queue is down; try again next tick
		}
		for _, d := range ds {
			if _, err := c.Handle(d.Message); err != nil {
				continue // crashed: no ack, the visibility timeout brings it back
			}
			if err := q.Ack(d.Receipt); err != nil && !errors.Is(err, queue.ErrUnavailable) {
				t.Errorf("ack: %v", err)
			}
		}
	})
	for _, a := range []struct {
		p    sim.Phase
		name string
		a    sim.Actor
	}{{sim.PhaseBroker, "queue", q}, {sim.PhaseProducer, "writer", wr}, {sim.PhaseRelay, "relay", relay}, {sim.PhaseConsumer, "worker", worker}} {
		if err := w.Add(a.p, a.name, a.a); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Run(300); err != nil {
		t.Fatal(err)
	}
	if m := s.Metrics(); m.Pending != 0 || m.Sent != 100 {
		t.Errorf("outbox metrics %+v", m)
	}
	if q.Len() != 0 {
		t.Errorf("%d messages left in the queue", q.Len())
	}
	return queueRun{env: env, orders: len(s.Orders()), charges: len(b.charges(t)), stats: c.Stats(), relay: relay.Stats()}
}

func TestEndToEndWithQueue(t *testing.T) {
	idem := runWithQueue(t, 11, DedupEventID)
	naive := runWithQueue(t, 11, DedupNone)
	t.Logf("idempotent: %d orders, %d charges, %+v, relay %+v", idem.orders, idem.charges, idem.stats, idem.relay)
	t.Logf("naive:      %d orders, %d charges, %+v", naive.orders, naive.charges, naive.stats)
	if idem.relay.Crashes == 0 || idem.relay.Failed == 0 || idem.stats.Crashes == 0 || idem.stats.Duplicates == 0 {
		t.Fatalf("the fault mix did not bite: relay %+v, consumer %+v", idem.relay, idem.stats)
	}
	if idem.charges != idem.orders {
		t.Errorf("idempotent consumer: %d charges for %d orders", idem.charges, idem.orders)
	}
	if err := sim.Check(idem.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("billing")); err != nil {
		t.Error(err)
	}
	if naive.charges <= naive.orders {
		t.Errorf("naive consumer: %d charges for %d orders, want double charges", naive.charges, naive.orders)
	}
	if err := sim.Check(naive.env.Ledger, sim.ExactlyOnce("billing")); err == nil {
		t.Error("exactly-once holds for the naive consumer")
	}
	if err := sim.Check(naive.env.Ledger, sim.NoLoss(), sim.AtLeastOnce("billing")); err != nil {
		t.Error(err)
	}
}
