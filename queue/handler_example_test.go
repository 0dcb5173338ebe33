package queue_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// chargeRun feeds 20 payments to a handler while workers crash after the
// effect and before the ack, so some payments are redelivered. It returns
// what the exactly-once checker says and the total charged.
func chargeRun(seed uint64, idempotent bool) (error, int) {
	w, _ := sim.New(sim.Config{Seed: seed})
	env := w.Env()
	in, _ := faults.New(faults.Config{Env: env, Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash-before-ack", Point: faults.ConsumerCrashAfterEffect, Probability: 0.2},
	}}})
	q, _ := queue.New(queue.Config{Name: "payments", Env: env, Faults: in, VisibilityTimeout: 3})
	p, _ := queue.NewProducer(queue.ProducerConfig{Name: "shop", Target: q, Count: 20, KeyPattern: "order-%d", Keys: 20})

	// The code under test: charge the customer once per payment. The
	// idempotent version remembers processed payment IDs and reports a
	// duplicate instead of charging again.
	charged, processed := 0, map[sim.ID]bool{}
	handler := queue.OutcomeFunc(func(d queue.Delivery) queue.Outcome {
		if idempotent && processed[d.Message.ID] {
			return queue.Outcome{Duplicate: true}
		}
		processed[d.Message.ID] = true
		charged++
		return queue.Outcome{}
	})
	c, _ := queue.NewConsumer(queue.ConsumerConfig{Queue: q, Name: "billing", Handler: handler, Faults: in})
	_ = w.Add(sim.PhaseBroker, "payments", q)
	_ = w.Add(sim.PhaseProducer, "shop", p)
	_ = w.Add(sim.PhaseConsumer, "billing", c)
	_, _ = w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 500)
	return sim.Check(env.Ledger, sim.NoLoss(), sim.ExactlyOnce("payments")), charged
}

// Prove a handler survives redelivery: run it under seeded crashes between
// effect and ack, and let the ledger judge. A failing seed reproduces
// exactly.
func Example_testYourHandler() {
	err, charged := chargeRun(7, false)
	fmt.Printf("naive: charged %d for 20 payments\n%v\n", charged, err)
	err, charged = chargeRun(7, true)
	fmt.Printf("idempotent: charged %d for 20 payments, err=%v\n", charged, err)
	// Output:
	// naive: charged 26 for 20 payments
	// 5 delivery violation(s):
	// 	exactly-once: m3 key=order-2 consumer=payments t=6: effect applied 2 times
	// 	exactly-once: m4 key=order-3 consumer=payments t=8: effect applied 2 times
	// 	exactly-once: m7 key=order-6 consumer=payments t=14: effect applied 2 times
	// 	exactly-once: m8 key=order-7 consumer=payments t=23: effect applied 3 times
	// 	exactly-once: m18 key=order-17 consumer=payments t=26: effect applied 2 times
	// idempotent: charged 20 for 20 payments, err=<nil>
}
