package watermillsim_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

const payments = "payments"

// paymentsBroker is a work queue whose broker delivers about one payment in
// four twice (seeded), with a visibility timeout long enough that only the
// injected duplicates cause redeliveries.
func paymentsBroker(t *testing.T) *watermillsim.Broker {
	return newBroker(t, watermillsim.Config{
		Kind: watermillsim.KindQueue, Seed: 42, VisibilityTimeout: 100_000,
		Faults: []faults.Rule{{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.25, Match: faults.Match{Where: "queue:" + payments}}},
	})
}

// runPayments publishes n payments of 1..n, runs a Watermill router with
// handler on them until the queue is drained, and returns the queue metrics.
func runPayments(t *testing.T, b *watermillsim.Broker, n int, handler message.NoPublishHandlerFunc) queue.Metrics {
	t.Helper()
	msgs := make([]*message.Message, n)
	for i := range msgs {
		msgs[i] = message.NewMessage("pay-"+strconv.Itoa(i+1), []byte(strconv.Itoa(i+1)))
	}
	if err := b.Publisher().Publish(payments, msgs...); err != nil {
		t.Fatal(err)
	}
	sub, err := b.Subscriber(watermillsim.SubscriberConfig{Name: "billing"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r, err := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	r.AddConsumerHandler("billing", payments, sub, handler)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	defer r.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, _ := b.QueueMetrics(payments)
		if m.Sent == n && m.Visible+m.InFlight+m.Delayed == 0 {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue not drained: %+v", m)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func amount(msg *message.Message) int64 {
	n, _ := strconv.ParseInt(string(msg.Payload), 10, 64)
	return n
}

// TestDuplicatesCatchNonIdempotentHandler feeds a handler that is not
// idempotent through the adapter with seeded duplicate deliveries. The
// handler adds the amount and acks every delivery; the adapter records
// each Ack without a Skip as one applied effect, which is exactly what the
// handler did, so sim.ExactlyOnce reports every payment it applied twice,
// by message ID.
func TestDuplicatesCatchNonIdempotentHandler(t *testing.T) {
	const n = 40
	b := paymentsBroker(t)
	var balance atomic.Int64
	m := runPayments(t, b, n, func(msg *message.Message) error {
		balance.Add(amount(msg)) // the effect, applied once per delivery
		return nil               // the router acks
	})
	if m.Duplicated == 0 {
		t.Fatal("the seeded plan injected no duplicate")
	}
	err := b.Check(sim.ExactlyOnce(payments))
	var ce *sim.CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("ExactlyOnce passed a non-idempotent handler under %d duplicates: %v", m.Duplicated, err)
	}
	for _, v := range ce.Violations {
		if v.Msg == 0 || !strings.HasPrefix(v.Detail, "effect applied ") {
			t.Errorf("unexpected violation %v", v)
		}
	}
	want := int64(n * (n + 1) / 2)
	if got := balance.Load(); got <= want {
		t.Errorf("balance %d, want more than %d (duplicates applied)", got, want)
	}
	// The ledger charges exactly the duplicates the broker made: every
	// extra effect is one duplicate delivery.
	var extra int
	_ = b.Do(func(w *sim.World) { extra = w.Ledger().DuplicateEffects(payments) })
	if extra != m.Duplicated {
		t.Errorf("%d duplicate effects in the ledger, %d duplicate copies made", extra, m.Duplicated)
	}
	if err := b.Check(sim.NoLoss(), sim.AtLeastOnce(payments)); err != nil {
		t.Errorf("every payment was applied at least once: %v", err)
	}
	t.Logf("%d duplicate copies, %d violations, e.g. %v", m.Duplicated, len(ce.Violations), ce.Violations[0])
}

// TestIdempotentConsumerPassesUnderDuplicates runs the same handler, with
// the same seed and thus the same duplicate deliveries, behind an
// idempotent consumer (outbox.Consumer deduplicating by message ID, which
// the adapter keeps stable per Watermill UUID), run on the delivery with
// Broker.Handle: it records the effect or the skip itself, so the Ack adds
// nothing. ExactlyOnce holds and the balance is right.
func TestIdempotentConsumerPassesUnderDuplicates(t *testing.T) {
	const n = 40
	b := paymentsBroker(t)
	db, err := memdb.NewMemDB(outbox.ConsumerSchema())
	if err != nil {
		t.Fatal(err)
	}
	var balance atomic.Int64
	var cons *outbox.Consumer
	if err := b.Do(func(w *sim.World) {
		cons, err = outbox.NewConsumer(w, outbox.ConsumerConfig{
			Name: payments, DB: db, Dedup: outbox.ByMessageID,
			Effect: func(_ *memdb.Txn, d *sim.Delivery) error {
				n, _ := strconv.ParseInt(string(d.Msg.Body), 10, 64)
				balance.Add(n)
				return nil
			},
		})
	}); err != nil || cons == nil {
		t.Fatal(err)
	}
	m := runPayments(t, b, n, func(msg *message.Message) error {
		return b.Handle(msg, cons)
	})
	if m.Duplicated == 0 {
		t.Fatal("the seeded plan injected no duplicate")
	}
	if err := b.Check(sim.ExactlyOnce(payments), sim.NoLoss()); err != nil {
		t.Fatal(err)
	}
	if got, want := balance.Load(), int64(n*(n+1)/2); got != want {
		t.Errorf("balance %d, want %d", got, want)
	}
	var s outbox.ConsumerStats
	_ = b.Do(func(*sim.World) { s = cons.Stats() })
	if s.Duplicates != m.Duplicated {
		t.Errorf("consumer skipped %d duplicates, broker made %d", s.Duplicates, m.Duplicated)
	}
}

// TestHandWrittenIdempotentHandlerPasses is the idempotent handler written
// against Watermill alone: it remembers the UUIDs it applied and reports a
// repeat with Broker.Skip before acking it, so the Ack records no effect.
func TestHandWrittenIdempotentHandlerPasses(t *testing.T) {
	const n = 40
	b := paymentsBroker(t)
	var balance atomic.Int64
	var mu sync.Mutex
	seen := map[string]bool{}
	m := runPayments(t, b, n, func(msg *message.Message) error {
		mu.Lock()
		dup := seen[msg.UUID]
		seen[msg.UUID] = true
		mu.Unlock()
		if dup {
			return b.Skip(msg, "payment "+msg.UUID+" already applied")
		}
		balance.Add(amount(msg))
		return nil
	})
	if m.Duplicated == 0 {
		t.Fatal("the seeded plan injected no duplicate")
	}
	if err := b.Check(sim.ExactlyOnce(payments), sim.NoLoss()); err != nil {
		t.Fatal(err)
	}
	if got, want := balance.Load(), int64(n*(n+1)/2); got != want {
		t.Errorf("balance %d, want %d", got, want)
	}
	var absorbed int
	_ = b.Do(func(w *sim.World) {
		for _, o := range w.Ledger().Outcomes(payments) {
			absorbed += o.Skipped
		}
	})
	if absorbed != m.Duplicated {
		t.Errorf("%d deliveries absorbed as duplicates, broker made %d", absorbed, m.Duplicated)
	}
}

// TestSameSeedSameDuplicates shows the deterministic core behind the live
// driver: the same seed and the same calls inject the same duplicates.
func TestSameSeedSameDuplicates(t *testing.T) {
	run := func() []sim.ID {
		b := paymentsBroker(t)
		var dups []sim.ID
		runPayments(t, b, 30, func(msg *message.Message) error { return nil })
		_ = b.Do(func(w *sim.World) {
			l := w.Ledger()
			for _, r := range l.Records() {
				if l.Entry(r.ID, l.Consumer(payments)).Delivered > 1 {
					dups = append(dups, r.ID)
				}
			}
		})
		return dups
	}
	a, c := run(), run()
	if len(a) == 0 || len(a) != len(c) {
		t.Fatalf("duplicates differ: %v vs %v", a, c)
	}
	for i := range a {
		if a[i] != c[i] {
			t.Fatalf("duplicates differ: %v vs %v", a, c)
		}
	}
}
