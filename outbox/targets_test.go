package outbox

import (
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/sim"
)

// TestRelayToLogTopic publishes to a partitioned log: every event of an
// aggregate lands on the aggregate's partition, in row order.
func TestRelayToLogTopic(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 21})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	in := mustFaults(t, env, faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Probability: 0.1, Until: 60})
	topic, err := eventlog.New(eventlog.Config{Name: "orders", Env: env, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := mustService(t, env, false)
	wr, err := NewWriter(WriterConfig{Service: s, Mode: Outbox, PerTick: 2, Limit: 60,
		Customers: []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D"}})
	if err != nil {
		t.Fatal(err)
	}
	relays := []*Relay{
		mustRelay(t, RelayConfig{Name: "r1", Service: s, Target: topic, Faults: in, Ordering: PerAggregate, Batch: 4, Lease: 3}),
		mustRelay(t, RelayConfig{Name: "r2", Service: s, Target: topic, Faults: in, Ordering: PerAggregate, Batch: 4, Lease: 3}),
	}
	if err := w.Add(sim.PhaseBroker, "topic", topic); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(sim.PhaseProducer, "writer", wr); err != nil {
		t.Fatal(err)
	}
	for _, r := range relays {
		if err := w.Add(sim.PhaseRelay, r.Name(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Run(120); err != nil {
		t.Fatal(err)
	}
	seen := map[sim.ID]int{}
	last := map[string]sim.ID{}
	dups := 0
	for p := 0; p < topic.Partitions(); p++ {
		recs, err := topic.Fetch(p, topic.Start(p), 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			m := r.Message
			if want := eventlog.PartitionFor(m.Key, topic.Partitions()); p != want {
				t.Errorf("%s key %s on partition %d, want %d", m.ID, m.Key, p, want)
			}
			seen[m.ID]++
			if seen[m.ID] > 1 {
				dups++
				continue
			}
			if prev, ok := last[m.Key]; ok && prev > m.ID {
				t.Errorf("%s of %s appended after %s", m.ID, m.Key, prev)
			}
			last[m.Key] = m.ID
		}
	}
	for _, row := range s.Rows() {
		if row.State != StateSent || seen[row.Msg] == 0 {
			t.Errorf("row %d (%s) %s, %d records", row.ID, row.Msg, row.State, seen[row.Msg])
		}
	}
	if dups == 0 || dups != s.Metrics().Duplicates() {
		t.Errorf("%d duplicate records, metrics say %d", dups, s.Metrics().Duplicates())
	}
	t.Logf("60 rows, %d records, %d duplicates from %d relay crashes", len(seen)+dups, dups, s.Metrics().RelayCrash)
}

// TestRelayToPubSub publishes to an ephemeral pub/sub broker: the event
// type is the subject, every connected subscriber gets every event.
func TestRelayToPubSub(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	b, err := pubsub.New(pubsub.Config{Name: "events", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Subscribe(pubsub.SubscriberConfig{Name: "mailer", Pattern: "order.*"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Attach(w); err != nil {
		t.Fatal(err)
	}
	in := mustFaults(t, env, faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Nth: 3})
	s := mustService(t, env, false)
	wr, err := NewWriter(WriterConfig{Service: s, Mode: Outbox, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(sim.PhaseProducer, "writer", wr); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(sim.PhaseRelay, "relay", mustRelay(t, RelayConfig{Service: s, Target: b, Faults: in, MarkEach: true})); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(20); err != nil {
		t.Fatal(err)
	}
	if err := sim.Check(env.Ledger, sim.NoLoss(), sim.AtLeastOnce("mailer")); err != nil {
		t.Error(err)
	}
	if d := env.Ledger.Duplicates("mailer"); d != 1 {
		t.Errorf("mailer saw %d duplicates, want 1 (the relay crash)", d)
	}
	if m := s.Metrics(); m.Sent != 10 || m.Duplicates() != 1 {
		t.Errorf("metrics %+v", m)
	}
}
