package producer_test

import (
	"fmt"
	"os"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// A producer sends two orders per tick to a queue that is down at tick 2:
// the refused order is kept and sent first at tick 3, so nothing is lost
// and the order of each customer's messages holds.
func Example() {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "outage", Point: faults.BrokerUnavailable, From: 2, Until: 3},
	}}})
	q, _ := queue.New(w, queue.Config{Name: "orders", Faults: in})
	p, _ := producer.New(w, producer.Config{Name: "shop", Target: q, Count: 5, Rate: 2,
		KeyPattern: "kunde-%d", KeyCount: 2, Type: "order.placed"})
	w.Trace().Attach(sim.NewTextWriter(os.Stdout))
	_ = w.RunUntil(p.Done, 10)
	fmt.Printf("produced=%d refused=%d queued=%d\n", p.Produced(), p.Refused(), q.Len())
	// Output:
	// t=1 sent queue:orders m1 key=kunde-1 by=shop
	// t=1 sent queue:orders m2 key=kunde-2 by=shop
	// t=2 fault queue:orders m3 key=kunde-1 rule=outage "broker.unavailable"
	// t=2 rejected queue:orders m3 "queue: broker unavailable: queue:orders (rule outage): queue: connection refused"
	// t=3 sent queue:orders m3 key=kunde-1 by=shop
	// t=3 sent queue:orders m4 key=kunde-2 by=shop
	// t=3 sent queue:orders m5 key=kunde-1 by=shop
	// produced=5 refused=1 queued=5
}

// With OnRefusedDrop a refused message is given up: the producer traces
// the loss, with its cause, where it happens.
func Example_drop() {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "outage", Point: faults.BrokerUnavailable, From: 2, Until: 3},
	}}})
	q, _ := queue.New(w, queue.Config{Name: "orders", Faults: in})
	p, _ := producer.New(w, producer.Config{Name: "sensor", Target: q, Count: 3, OnRefused: producer.OnRefusedDrop})
	_, _ = queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "archive"})
	_ = w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 10)
	for _, l := range w.Ledger().Losses() {
		fmt.Printf("%v lost at t=%d: %s\n", l.ID, l.Tick, l.Cause)
	}
	fmt.Println(sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("orders")))
	// Output:
	// m2 lost at t=2: broker unavailable
	// 1 delivery violation(s):
	// 	no-loss: m2 t=2: lost before any consumer (broker unavailable)
}
