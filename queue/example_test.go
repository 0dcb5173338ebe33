package queue_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// The lifecycle of one message: sent, received, not acked in time, back
// after the visibility timeout with receive count 2, acked. The old receipt
// is stale by then.
func Example() {
	w, _ := sim.New(sim.Config{Seed: 1})
	w.Trace().Attach(sim.NewTextWriter(os.Stdout))
	q, _ := queue.New(w, queue.Config{Name: "orders", VisibilityTimeout: 3})

	_ = q.Send(w.Env().NewMessage("kunde-A", []byte("bestellt"), sim.Headers{}), 0)
	first, _ := q.Receive("worker-1", 10)
	for i := 0; i < 3; i++ {
		w.Tick()
	}
	second, _ := q.Receive("worker-2", 10)
	fmt.Println(errors.Is(q.Ack(first[0].Receipt), queue.ErrStaleReceipt))
	_ = q.Ack(second[0].Receipt)
	m := q.Metrics()
	fmt.Printf("receives=%d redeliveries=%d acks=%d rejected=%d left=%d\n", m.Receives, m.Redeliveries, m.Acks, m.Rejected, q.Len())
	// Output:
	// t=0 sent queue:orders m1 key=kunde-A for=orders
	// t=0 received queue:orders m1 key=kunde-A by=worker-1 try=1
	// t=3 visibility_expired queue:orders m1 key=kunde-A by=worker-1 try=1
	// t=3 redelivered queue:orders m1 key=kunde-A by=worker-2 try=2
	// t=3 rejected queue:orders m1 "queue: stale receipt: queue:orders: ack with m1#0.2: message received again since (receive count 2)"
	// true
	// t=3 acked queue:orders m1 key=kunde-A by=worker-2 try=2
	// receives=2 redeliveries=1 acks=1 rejected=1 left=0
}

// Exercise 2 of the seed article, written with this library: process
// every message; a failed message is not acked, so it comes back by
// itself once its visibility timeout runs out. On the last allowed attempt
// (the receive count tells which one it is) the body, the attempts and the
// error go into a dead-letter list and the message is acked, so it no
// longer blocks the queue.
func Example_exerciseTwo() {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	q, _ := queue.New(w, queue.Config{Name: "jobs", VisibilityTimeout: 2})
	for _, body := range []string{"job-1", "broken", "job-2"} {
		_ = q.Send(env.NewMessage("", []byte(body), sim.Headers{}), 0)
	}
	handler := func(body []byte) error {
		if string(body) == "broken" {
			return errors.New("cannot parse body")
		}
		fmt.Printf("t=%d processed %s\n", env.Now(), body)
		return nil
	}

	type deadLetter struct {
		Body     string
		Attempts int
		Error    string
	}
	var dlq []deadLetter
	const maxAttempts = 3
	for q.Len() > 0 {
		ds, _ := q.Receive("worker", 1)
		if len(ds) == 0 { // everything left is inside its visibility timeout
			w.Tick()
			continue
		}
		d := ds[0]
		if err := handler(d.Message.Body); err != nil {
			if d.ReceiveCount >= maxAttempts {
				dlq = append(dlq, deadLetter{string(d.Message.Body), d.ReceiveCount, err.Error()})
				_ = q.Ack(d.Receipt)
			}
			continue
		}
		_ = q.Ack(d.Receipt)
	}
	fmt.Printf("done at t=%d, dead letters: %+v\n", env.Now(), dlq)
	// Output:
	// t=0 processed job-1
	// t=0 processed job-2
	// done at t=4, dead letters: [{Body:broken Attempts:3 Error:cannot parse body}]
}

// Competing consumers in a World: a producer, a pool of two workers, a
// poison message that the redrive policy moves to the dead-letter queue
// after three receives, and a worker crash after its effect that causes one
// duplicate effect. The ledger proves nothing was lost.
func Example_consumers() {
	w, _ := sim.New(sim.Config{Seed: 42})
	in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash", Point: faults.ConsumerCrashAfterEffect, Nth: 4},
	}}})
	dlq, _ := queue.New(w, queue.Config{Name: "orders-dlq"})
	q, _ := queue.New(w, queue.Config{Name: "orders", Faults: in, VisibilityTimeout: 4, DeadLetter: dlq, MaxReceiveCount: 3})
	p, _ := producer.New(w, producer.Config{Name: "shop", Target: q, Count: 10, Rate: 2, KeyPattern: "kunde-%d", KeyCount: 3})
	// kunde-2's messages fail with an unclassified (transient) error; the
	// consumers leave retries to the broker. The others are applied.
	h := sim.HandlerFunc(func(d *sim.Delivery) error {
		if d.Msg.Key == "kunde-2" {
			return errors.New("cannot parse body")
		}
		d.Apply("stored")
		return nil
	})
	_, _ = queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "worker", Instances: 2, Batch: 2, Handler: h})
	err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 200)

	m := q.Metrics()
	fmt.Printf("t=%d drained=%v acks=%d redeliveries=%d dead-lettered=%d dlq=%d\n", w.Now(), err == nil, m.Acks, m.Redeliveries, m.DeadLettered, m.DLQDepth)
	fmt.Println("duplicate effects:", w.Ledger().DuplicateEffects("orders"))
	fmt.Println("no loss:", sim.Check(w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("orders")) == nil)
	// Output:
	// t=16 drained=true acks=7 redeliveries=7 dead-lettered=3 dlq=3
	// duplicate effects: 1
	// no loss: true
}
