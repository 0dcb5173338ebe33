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
	deadLetter(1) // stays, and keeps the records behind it from being popped as they go
	deadLetter(100)
	ds, err := dlq.Receive("fixer", 101)
	if err != nil || len(ds) != 101 {
		t.Fatalf("received %d dead letters: %v", len(ds), err)
	}
	for _, d := range ds[1:] {
		if err := dlq.Ack(d.Receipt); err != nil {
			t.Fatal(err)
		}
	}
	sent := r.w.Now()
	deadLetter(1) // 101 records, 2 live: the gone ones are pruned as it is added
	if len(dlq.old) != 2 {
		t.Errorf("%d retention records kept for 2 live dead letters", len(dlq.old))
	}
	r.to(sent + 50)
	if dlq.Len() != 0 {
		t.Errorf("%d dead letters still held at t=%d, 50 ticks after the last was sent at t=%d; retention is 50", dlq.Len(), r.w.Now(), sent)
	}
}
