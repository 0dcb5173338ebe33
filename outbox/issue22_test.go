package outbox

import (
	"testing"

	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// slowSuccess is a target whose first publish takes until tick after and
// then succeeds; meanwhile runs while it hangs.
type slowSuccess struct {
	env       *sim.Env
	next      sim.Publisher
	after     sim.Tick
	meanwhile func()
	calls     int
}

func (p *slowSuccess) Publish(m sim.Message) error {
	p.calls++
	if p.calls == 1 {
		p.env.Clock.Set(p.after)
		p.meanwhile()
	}
	return p.next.Publish(m)
}

// TestSlowPublishPastTheLeaseIsPublishedTwice: leases keep two relays
// from claiming a row at once, not from publishing it twice. Relay A's
// publish outlasts its lease; relay B claims the row meanwhile and
// publishes it, and then A's publish succeeds too. The doc says so.
//
// The FOR UPDATE SKIP LOCKED pattern this models holds a row lock only as
// long as the transaction, and a lease only as long as its timeout: a
// publish that outlives either is not fenced, which is why the outbox
// gives at-least-once delivery and consumers must be idempotent.
func TestSlowPublishPastTheLeaseIsPublishedTwice(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	s := mustService(t, w, false)
	sink := newSink(w)
	slow := &slowSuccess{env: env, next: sink, after: 10}
	a := mustRelay(t, w, RelayConfig{Name: "A", Service: s, Target: slow, Lease: 5})
	b := mustRelay(t, w, RelayConfig{Name: "B", Service: s, Target: slow, Lease: 5})
	slow.meanwhile = func() {
		if err := b.Poll(); err != nil {
			t.Errorf("B's poll: %v", err)
		}
	}
	env.Clock.Set(1)
	_, row, err := s.PlaceOrder("kunde-A", 10)
	if err != nil {
		t.Fatal(err)
	}
	_ = a.Poll()
	if n := sink.count(row.Msg); n != 2 {
		t.Fatalf("published %d times, want twice: A's slow publish and B's", n)
	}
}

// TestBusinessKeyBucketSurvivesALateRedrive: with Bucket 10, an event
// created at t=1, dead-lettered and redriven at t=12, is recognised: the
// redriven copy keeps its origin's creation tick, so its time bucket is
// the origin's, as the doc's "survives redrives" promises.
//
// SQS (developer guide, "Configure a dead-letter queue redrive"): a
// redrive moves the message back with its body and attributes; the event
// it carries was created once, when it was first sent.
func TestBusinessKeyBucketSurvivesALateRedrive(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	b := newBank(t)
	c := mustConsumer(t, w, ConsumerConfig{Name: "billing", DB: b.db, Effect: b.charge, Dedup: ByBusinessKey, Bucket: 10})
	dlq, err := queue.New(w, queue.Config{Name: "billing-dlq"})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(w, queue.Config{Name: "billing", DeadLetter: dlq})
	if err != nil {
		t.Fatal(err)
	}
	env.Clock.Set(1)
	body := encodeOrderPlaced(Order{ID: 1, Customer: "kunde-A", Amount: 10})
	if err := q.Send(env.NewMessage("kunde-A", body, sim.Headers{Type: EventOrderPlaced}), 0); err != nil {
		t.Fatal(err)
	}
	handle := func(ds []queue.Delivery) int {
		if len(ds) != 1 {
			t.Fatalf("%d deliveries", len(ds))
		}
		d := sim.NewDelivery(env, ds[0].Message, "queue:billing", "billing", "w", 1)
		if err := c.Handle(d); err != nil {
			t.Fatal(err)
		}
		return d.Effects()
	}
	ds, _ := q.Receive("w", 1)
	if handle(ds) != 1 {
		t.Fatal("the first delivery was not applied")
	}
	if err := q.DeadLetter(ds[0].Receipt, "ack lost"); err != nil {
		t.Fatal(err)
	}
	env.Clock.Set(12)
	if n, err := dlq.Redrive(10); err != nil || n != 1 {
		t.Fatalf("redrive: %d %v", n, err)
	}
	ds, _ = q.Receive("w", 1)
	if ds[0].Message.Created != 1 || ds[0].Message.Origin == 0 {
		t.Fatalf("the redriven copy: created t=%d, origin %v", ds[0].Message.Created, ds[0].Message.Origin)
	}
	if handle(ds) != 0 {
		t.Fatal("the redriven copy was applied again in a new bucket")
	}
}
