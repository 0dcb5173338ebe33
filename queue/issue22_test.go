package queue

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestNackedMessageStaysInFlight: a copy returned with a delay counts
// toward MaxInFlight until it is visible again, so a nack cannot be used
// to receive past the cap.
//
// SQS (developer guide, "Amazon SQS visibility timeout"): a message is
// in flight after a consumer receives it and before it is deleted or its
// visibility timeout expires; ChangeMessageVisibility with a timeout
// (what Nack models) keeps it invisible, and so in flight, until then.
func TestNackedMessageStaysInFlight(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		r := newRig(t)
		name := "orders"
		if fifo {
			name += ".fifo"
		}
		q := r.queue(Config{Name: name, FIFO: fifo, MaxInFlight: 1})
		r.send(q, "A", 0)
		r.send(q, "B", 0)
		ds := r.recv(q, 1)
		if len(ds) != 1 {
			t.Fatalf("fifo=%v: took %d", fifo, len(ds))
		}
		if err := q.Nack(ds[0].Receipt, 5); err != nil {
			t.Fatal(err)
		}
		if got, err := q.Receive("w1", 1); len(got) != 0 || (!fifo && !errors.Is(err, ErrOverLimit)) {
			t.Fatalf("fifo=%v: a receive while the nacked copy waits got %d messages, err %v", fifo, len(got), err)
		}
		r.to(5)
		if got, _ := q.Receive("w1", 1); len(got) != 1 {
			t.Fatalf("fifo=%v: after the nack delay a receive got %d", fifo, len(got))
		}
		if m := q.Metrics(); m.InFlight != 1 {
			t.Fatalf("fifo=%v: %+v", fifo, m)
		}
	}
	// A nacked copy that is purged frees its place.
	r := newRig(t)
	q := r.queue(Config{Name: "orders", MaxInFlight: 1})
	r.send(q, "A", 0)
	ds := r.recv(q, 1)
	_ = q.Nack(ds[0].Receipt, 5)
	q.Purge()
	r.send(q, "B", 0)
	if got := r.recv(q, 1); len(got) != 1 {
		t.Fatalf("after a purge: %d", len(got))
	}
}

// TestStrictInFlightLimitIsOneLimit: a strict queue refuses a cap above
// SQS's in-flight quota in Go, as scenario files do.
//
// SQS (developer guide, "Amazon SQS standard queue quotas"): the number
// of in-flight messages per standard queue is about 120,000.
func TestStrictInFlightLimitIsOneLimit(t *testing.T) {
	r := newRig(t)
	if _, err := New(r.w, Config{Name: "q", Strict: true, MaxInFlight: StrictInFlightLimit + 1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("strict with %d in flight: %v", StrictInFlightLimit+1, err)
	}
	if _, err := New(r.w, Config{Name: "q", Strict: true, MaxInFlight: StrictInFlightLimit}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(r.w, Config{Name: "loose", MaxInFlight: 200_000}); err != nil {
		t.Fatal(err)
	}
}

// TestDeadLetterPastRetentionExpiresAtOnce: a standard dead letter keeps
// its enqueue time, so one already older than the dead-letter queue's
// retention is deleted when it arrives, not a tick later.
//
// SQS (developer guide, "Using dead-letter queues"): for standard queues
// the expiration of a message is always based on its original enqueue
// timestamp; moving it to a dead-letter queue does not change it.
func TestDeadLetterPastRetentionExpiresAtOnce(t *testing.T) {
	r := newRig(t)
	dlq := r.queue(Config{Name: "orders-dlq", Retention: 5})
	q := r.queue(Config{Name: "orders", DeadLetter: dlq, VisibilityTimeout: 100})
	r.send(q, "A", 0)
	r.to(10)
	ds := r.recv(q, 1)
	if err := q.DeadLetter(ds[0].Receipt, "poison"); err != nil {
		t.Fatal(err)
	}
	if dlq.Len() != 0 || dlq.Metrics().Expired != 1 {
		t.Fatalf("at t=10 the DLQ holds %d, expired %d\n%s", dlq.Len(), dlq.Metrics().Expired, r.text())
	}
	exp := r.events(sim.KindExpired)
	if len(exp) != 1 || exp[0].Tick != 10 || exp[0].Where != "queue:orders-dlq" {
		t.Fatalf("expired events %+v", exp)
	}
}
