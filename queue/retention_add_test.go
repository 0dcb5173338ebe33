package queue

import (
	"testing"
)

// TestDeadLetterAfterManyGoneStillExpires: a standard dead-letter queue
// keeps its dead letters' enqueue times for retention, and drops the
// records of copies that are gone once they outnumber the live ones. The
// dead letter being added when that happens is not gone: it must keep
// its record, and expire on time.
func TestDeadLetterAfterManyGoneStillExpires(t *testing.T) {
	r := newRig(t)
	dlq := r.queue(Config{Name: "orders-dlq", Retention: 50})
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 1, DeadLetter: dlq, MaxReceiveCount: 1})
	deadLetter := func(n int) {
		for range n {
			r.send(q, "kunde-1", 0)
		}
		if got := len(r.recv(q, n)); got != n {
			t.Fatalf("received %d of %d", got, n)
		}
		r.to(r.w.Now() + 2) // the visibility timeout expires, the receive count is spent
		r.recv(q, n)        // moves them to the dead-letter queue
	}
	deadLetter(100)
	if dlq.Len() != 100 {
		t.Fatalf("%d dead letters, want 100", dlq.Len())
	}
	ds, err := dlq.Receive("fixer", 100)
	if err != nil || len(ds) != 100 {
		t.Fatalf("received %d dead letters: %v", len(ds), err)
	}
	for _, d := range ds {
		if err := dlq.Ack(d.Receipt); err != nil {
			t.Fatal(err)
		}
	}
	deadLetter(1)
	if len(dlq.old) != 1 {
		t.Errorf("%d retention records kept for 1 live dead letter", len(dlq.old))
	}
	if dlq.Len() != 1 {
		t.Fatalf("%d dead letters, want 1", dlq.Len())
	}
	r.to(r.w.Now() + 60)
	if dlq.Len() != 0 {
		t.Errorf("the last dead letter is still held %d ticks after it was sent; retention is 50", 60)
	}
}
