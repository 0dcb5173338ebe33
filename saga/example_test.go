package saga_test

import (
	"fmt"
	"os"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/saga"
	"github.com/brokerlab/brokerlab/sim"
)

// Two orders: the first goes through, the payment of the second is
// declined and the saga releases its reservation, once even though the
// release is delivered twice.
func Example() {
	w, _ := sim.New(sim.Config{Seed: 1})
	w.Trace().Attach(sim.NewTextWriter(os.Stdout))
	in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "declined", Point: faults.SagaStepFailed, Match: faults.Match{Key: "order-2", Type: "charge"}},
		{Name: "twice", Point: faults.SagaCompensationDuplicate},
	}}})
	q, _ := queue.New(w, queue.Config{Name: "orders", VisibilityTimeout: 3})
	o, _ := saga.New(w, saga.Config{Name: "checkout", Queue: q, Compensate: true, Faults: in, Steps: []saga.Step{
		{Name: "reserve", Compensation: "release"}, {Name: "charge", Compensation: "refund"}, {Name: "confirm"},
	}})
	_ = q.Send(w.Env().NewMessage("order-1", nil, sim.Headers{}), 0)
	_ = q.Send(w.Env().NewMessage("order-2", nil, sim.Headers{}), 0)
	_ = w.Run(6)
	for _, s := range o.Sagas() {
		fmt.Println(s.Key, s.State, "held:", s.Held)
	}
	fmt.Printf("%+v\n", o.Metrics())
	// Output:
	// t=0 sent queue:orders m1 key=order-1 for=orders
	// t=0 sent queue:orders m2 key=order-2 for=orders
	// t=1 received queue:orders m1 key=order-1 by=checkout try=1
	// t=1 received queue:orders m2 key=order-2 by=checkout try=1
	// t=1 processed saga:checkout m1 key=order-1 by=checkout corr=m1 "saga started"
	// t=1 acked queue:orders m1 key=order-1 by=checkout try=1
	// t=1 processed saga:checkout m2 key=order-2 by=checkout corr=m2 "saga started"
	// t=1 acked queue:orders m2 key=order-2 by=checkout try=1
	// t=2 step_done saga:checkout m1 key=order-1 by=checkout corr=m1 "reserve"
	// t=2 step_done saga:checkout m2 key=order-2 by=checkout corr=m2 "reserve"
	// t=3 step_done saga:checkout m1 key=order-1 by=checkout corr=m1 "charge"
	// t=3 fault saga:checkout m2 key=order-2 by=checkout rule=declined "saga.step_failed"
	// t=3 step_failed saga:checkout m2 key=order-2 by=checkout corr=m2 rule=declined "charge: declined"
	// t=4 step_done saga:checkout m1 key=order-1 by=checkout corr=m1 "confirm"
	// t=4 saga_ended saga:checkout m1 key=order-1 by=checkout corr=m1 "completed"
	// t=4 compensated saga:checkout m2 key=order-2 by=checkout corr=m2 "release reserve"
	// t=4 fault saga:checkout m2 key=order-2 by=checkout rule=twice "saga.compensation_duplicate"
	// t=4 compensated saga:checkout m2 key=order-2 by=checkout corr=m2 rule=twice "release reserve (duplicate, applied once)"
	// t=4 saga_ended saga:checkout m2 key=order-2 by=checkout corr=m2 "compensated"
	// order-1 completed held: []
	// order-2 compensated held: []
	// {Started:2 Completed:1 Compensated:1 Failed:0 Parked:0 Compensations:1 Duplicates:1 Held:0}
}
