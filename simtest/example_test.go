package simtest_test

import (
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest"
)

// exampleT stands in for the *testing.T of a test function, which an
// example does not have: it prints what the test would report.
type exampleT struct{ testing.TB }

func (exampleT) Helper()      {}
func (exampleT) Name() string { return "TestBilling" }
func (exampleT) Errorf(format string, a ...any) {
	fmt.Printf(format+"\n", a...)
}
func (exampleT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

// A handler that charges on every delivery, a crash after its third
// charge: the check names the seed, the command that reruns it and only
// the trace lines of the message charged twice.
func Example() {
	var t testing.TB = exampleT{} // in a test function: its t
	w := simtest.New(t, 7)
	w.Fault(faults.Rule{Name: "crash", Point: faults.ConsumerCrashAfterEffect, Nth: 3})
	q := w.Queue("payments", queue.Config{VisibilityTimeout: 3})
	p := w.Producer("shop", producer.Config{Target: q, Count: 5, KeyPattern: "order-%d"})
	w.Consumer("billing", queue.ConsumerConfig{Queue: q, Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
		d.Apply("charged " + d.Msg.Key) // not idempotent
		return nil
	})})
	w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 100)
	w.Check(sim.NoLoss(), sim.ExactlyOnce("payments"))
	// Output:
	// 1 delivery violation(s) with seed 7:
	// 	exactly-once: m3 key=order-3 consumer=payments t=6: effect applied 2 times
	// reproduce: go test -run '^TestBilling$' -brokerlab.seed=7
	// trace of the violating messages and their copies (9 of 25 events):
	// 	t=3 sent queue:payments m3 key=order-3 by=shop
	// 	t=3 received queue:payments m3 key=order-3 by=billing try=1
	// 	t=3 processed queue:payments m3 key=order-3 by=billing try=1 "charged order-3"
	// 	t=3 fault queue:payments m3 key=order-3 by=billing rule=crash "consumer.crash_after_effect"
	// 	t=3 crashed queue:payments m3 key=order-3 by=billing "after effect, before ack"
	// 	t=6 visibility_expired queue:payments m3 key=order-3 by=billing try=1
	// 	t=6 redelivered queue:payments m3 key=order-3 by=billing try=2
	// 	t=6 processed queue:payments m3 key=order-3 by=billing try=2 "charged order-3"
	// 	t=6 acked queue:payments m3 key=order-3 by=billing try=2
}
