package outbox

import (
	"bytes"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

type queueRun struct {
	w       *sim.World
	orders  int
	charges int
	stats   ConsumerStats
	relay   RelayStats
}

// runWithQueue wires commander -> writer -> outbox -> relay -> queue ->
// queue consumer -> idempotent (or naive) consumer in one world, with
// relay crashes, queue outages and consumer crashes after the effect.
func runWithQueue(t *testing.T, seed uint64, dedup Dedup) queueRun {
	t.Helper()
	w := mustWorld(t, seed)
	var jsonl bytes.Buffer
	w.Trace().Attach(sim.NewJSONWriter(&jsonl))
	in := mustFaults(t, w,
		faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Probability: 0.1, Until: 100},
		faults.Rule{Name: "queue-down", Point: faults.BrokerUnavailable, Match: faults.Match{Where: "queue:*"}, Probability: 0.1, Until: 100},
		faults.Rule{Name: "consumer-crash", Point: faults.ConsumerCrashAfterEffect, Probability: 0.1, Until: 100},
	)
	q, err := queue.New(w, queue.Config{Name: "billing", Faults: in, VisibilityTimeout: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := mustService(t, w, false)
	wr := mustWriter(t, w, WriterConfig{Service: s, Mode: Outbox})
	mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Rate: 2, Count: 100, Keys: []string{"kunde-A", "kunde-B", "kunde-C"}, RandomKeys: true})
	relay := mustRelay(t, w, RelayConfig{Service: s, Target: q, Faults: in, Batch: 5, Lease: 3, MaxAttempts: 100, Backoff: 1, MaxBackoff: 4})
	b := newBank(t)
	c := mustConsumer(t, w, ConsumerConfig{Name: "billing", DB: b.db, Effect: b.charge, Dedup: dedup})
	if _, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "worker", Batch: 10, Handler: c, Faults: in}); err != nil {
		t.Fatal(err)
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
	foldsAgain(t, w, &jsonl)
	return queueRun{w: w, orders: len(s.Orders()), charges: len(b.charges(t)), stats: c.Stats(), relay: relay.Stats()}
}

func TestEndToEndWithQueue(t *testing.T) {
	idem := runWithQueue(t, 11, ByMessageID)
	naive := runWithQueue(t, 11, NoDedup)
	t.Logf("idempotent: %d orders, %d charges, %+v, relay %+v", idem.orders, idem.charges, idem.stats, idem.relay)
	t.Logf("naive:      %d orders, %d charges, %+v", naive.orders, naive.charges, naive.stats)
	if idem.relay.Crashes == 0 || idem.relay.Failed == 0 || idem.stats.Duplicates == 0 {
		t.Fatalf("the fault mix did not bite: relay %+v, consumer %+v", idem.relay, idem.stats)
	}
	if idem.charges != idem.orders {
		t.Errorf("idempotent consumer: %d charges for %d orders", idem.charges, idem.orders)
	}
	if err := sim.Check(idem.w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("billing")); err != nil {
		t.Error(err)
	}
	if naive.charges <= naive.orders {
		t.Errorf("naive consumer: %d charges for %d orders, want double charges", naive.charges, naive.orders)
	}
	if err := sim.Check(naive.w.Ledger(), sim.ExactlyOnce("billing")); err == nil {
		t.Error("exactly-once holds for the naive consumer")
	}
	if err := sim.Check(naive.w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("billing")); err != nil {
		t.Error(err)
	}
}
