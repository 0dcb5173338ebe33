package outbox

import (
	"bytes"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/sim"
)

// TestRelayToLogTopic publishes to a partitioned log with two relays that
// crash now and then: every event of an aggregate lands on the
// aggregate's partition, in row order, re-published records are repeats of
// the same message, and a consumer group whose members use the idempotent
// consumer applies every order exactly once.
func TestRelayToLogTopic(t *testing.T) {
	w := mustWorld(t, 21)
	var jsonl bytes.Buffer
	w.Trace().Attach(sim.NewJSONWriter(&jsonl))
	in := mustFaults(t, w, faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Probability: 0.1, Until: 60})
	topic, err := eventlog.New(w, eventlog.Config{Name: "orders", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	g, err := eventlog.NewGroup(w, topic, eventlog.GroupConfig{Name: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	b := newBank(t)
	for _, name := range []string{"m1", "m2"} {
		h := mustConsumer(t, w, ConsumerConfig{Name: "billing", DB: b.db, Effect: b.charge})
		if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: name, Handler: h}); err != nil {
			t.Fatal(err)
		}
	}
	s := mustService(t, w, false)
	wr := mustWriter(t, w, WriterConfig{Service: s, Mode: Outbox})
	mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Rate: 2, Count: 60,
		Keys: []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D"}, RandomKeys: true})
	mustRelay(t, w, RelayConfig{Name: "r1", Service: s, Target: topic, Faults: in, Ordering: PerAggregate, Batch: 4, Lease: 3})
	mustRelay(t, w, RelayConfig{Name: "r2", Service: s, Target: topic, Faults: in, Ordering: PerAggregate, Batch: 4, Lease: 3})
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
	l := w.Ledger()
	if dups == 0 || dups != s.Metrics().Duplicates() || dups != l.Duplicates("billing") {
		t.Errorf("%d duplicate records, metrics say %d, the ledger %d", dups, s.Metrics().Duplicates(), l.Duplicates("billing"))
	}
	if err := sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("billing"), sim.OrderedPerKey("billing")); err != nil {
		t.Error(err)
	}
	if n := len(b.charges(t)); n != 60 {
		t.Errorf("%d charges for 60 orders", n)
	}
	foldsAgain(t, w, &jsonl)
	t.Logf("60 rows, %d records, %d duplicates from %d relay crashes", len(seen)+dups, dups, s.Metrics().RelayCrash)
}

// TestRelayToPubSub publishes to an ephemeral pub/sub broker: the event
// type is the subject, every connected subscriber gets every event, and a
// relay crash re-publishes one: the idempotent subscriber absorbs it, the
// naive one applies it twice.
func TestRelayToPubSub(t *testing.T) {
	w := mustWorld(t, 4)
	var jsonl bytes.Buffer
	w.Trace().Attach(sim.NewJSONWriter(&jsonl))
	b, err := pubsub.New(w, pubsub.Config{Name: "events"})
	if err != nil {
		t.Fatal(err)
	}
	idem, naive := newBank(t), newBank(t)
	for _, sub := range []struct {
		name string
		bank *bank
		mode Dedup
	}{{"mailer", idem, ByMessageID}, {"mailer-naive", naive, NoDedup}} {
		h := mustConsumer(t, w, ConsumerConfig{Name: sub.name, DB: sub.bank.db, Effect: sub.bank.charge, Dedup: sub.mode})
		if _, err := b.Subscribe(pubsub.SubscriberConfig{Name: sub.name, Pattern: "order.*", Handler: h}); err != nil {
			t.Fatal(err)
		}
	}
	in := mustFaults(t, w, faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Nth: 3})
	s := mustService(t, w, false)
	wr := mustWriter(t, w, WriterConfig{Service: s, Mode: Outbox})
	mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Count: 10, Keys: []string{"kunde-A", "kunde-B", "kunde-C"}, RandomKeys: true})
	mustRelay(t, w, RelayConfig{Service: s, Target: b, Faults: in, MarkEach: true})
	if err := w.Run(20); err != nil {
		t.Fatal(err)
	}
	l := w.Ledger()
	if err := sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("mailer"), sim.AtLeastOnce("mailer-naive")); err != nil {
		t.Error(err)
	}
	if err := sim.Check(l, sim.AtMostOnce("mailer-naive")); err == nil {
		t.Error("at-most-once holds for the naive subscriber, want the re-published event applied twice")
	}
	if d := l.Duplicates("mailer"); d != 1 {
		t.Errorf("mailer saw %d duplicates, want 1 (the relay crash)", d)
	}
	if m := s.Metrics(); m.Sent != 10 || m.Duplicates() != 1 {
		t.Errorf("metrics %+v", m)
	}
	if a, b := len(idem.charges(t)), len(naive.charges(t)); a != 10 || b != 11 {
		t.Errorf("charges: idempotent %d, naive %d; want 10 and 11", a, b)
	}
	foldsAgain(t, w, &jsonl)
}
