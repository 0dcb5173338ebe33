package queue_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// chargeRun feeds 20 payments to a billing handler while workers crash
// after the effect and before the ack, so some payments are redelivered.
// It returns what the checkers say and the total charged.
func chargeRun(seed uint64, idempotent bool) (error, int) {
	w, _ := sim.New(sim.Config{Seed: seed})
	in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash-before-ack", Point: faults.ConsumerCrashAfterEffect, Probability: 0.2},
	}}})
	q, _ := queue.New(w, queue.Config{Name: "payments", Faults: in, VisibilityTimeout: 3})
	p, _ := producer.New(w, producer.Config{Name: "shop", Target: q, Count: 20, KeyPattern: "order-%d"})

	// The code under test: charge the customer once per payment, and tell
	// the ledger about the effect with d.Apply. The idempotent version
	// remembers the orders it charged and skips a repeat with d.Skip.
	charged, done := 0, map[string]bool{}
	handler := sim.HandlerFunc(func(d *sim.Delivery) error {
		if idempotent && done[d.Msg.Key] {
			d.Skip("already charged")
			return nil
		}
		done[d.Msg.Key] = true
		charged++
		d.Apply("charged " + d.Msg.Key)
		return nil
	})
	_, _ = queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "billing", Handler: handler})
	if err := w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 500); err != nil {
		return err, charged
	}
	return sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("payments")), charged
}

// Prove a handler survives redelivery: run it under seeded crashes between
// effect and ack, and let the ledger judge the effects the handler
// recorded. A failing seed reproduces exactly.
func Example_testYourHandler() {
	err, charged := chargeRun(7, false)
	fmt.Printf("naive: charged %d for 20 payments\n%v\n", charged, err)
	err, charged = chargeRun(7, true)
	fmt.Printf("idempotent: charged %d for 20 payments, err=%v\n", charged, err)
	// Output:
	// naive: charged 26 for 20 payments
	// 5 delivery violation(s):
	// 	exactly-once: m3 key=order-3 consumer=payments t=6: effect applied 2 times
	// 	exactly-once: m4 key=order-4 consumer=payments t=8: effect applied 2 times
	// 	exactly-once: m7 key=order-7 consumer=payments t=14: effect applied 2 times
	// 	exactly-once: m8 key=order-8 consumer=payments t=16: effect applied 3 times
	// 	exactly-once: m18 key=order-18 consumer=payments t=26: effect applied 2 times
	// idempotent: charged 20 for 20 payments, err=<nil>
}
