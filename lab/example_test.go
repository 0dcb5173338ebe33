package lab_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

func ExampleExecute() {
	src := `title: Ack before processing loses a message
seed: 7
run: {until: drained, max_ticks: 50}
topology:
  queues: [{name: orders}]
actors:
  producers: [{name: shop, to: {queue: orders}, count: 5}]
  consumers: [{name: worker, queue: orders, ack: before}]
faults:
  - {name: crash, point: consumer.crash_before_process, nth: 2}
expect:
  - {check: no_loss}
  - {metric: queue.orders.acks, op: "==", value: 5}
`
	s, err := scenario.Load("lesson.yaml", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := lab.Execute(s, lab.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = rep.WriteText(os.Stdout)
	// Output:
	// Ack before processing loses a message
	// lesson.yaml: seed 7, 5 ticks, drained
	//
	// FAIL  lesson.yaml:12:5  no_loss  (measured 1 violation)
	//         no-loss: m2 consumer=orders t=2: lost (ack before processing)
	// PASS  lesson.yaml:13:5  queue.orders.acks == 5  (measured 5)
	//
	// ledger: 5 messages (5 origins), 5 delivered, 0 duplicates, 0 duplicate effects, 0 absorbed, 0 in a DLQ, 0 missed, 1 lost, 0 phantoms
	// lost by cause: ack before processing 1
	// FAIL: 1 of 2 expectations hold
}

func ExampleRun_Step() {
	src := `title: Steps
run: {ticks: 3}
topology:
  queues: [{name: orders}]
actors:
  producers: [{name: shop, to: {queue: orders}, count: 3}]
narration:
  - {at: 2, text: "Two orders are in."}
`
	s, _ := scenario.Load("steps.yaml", []byte(src))
	var b strings.Builder
	r, err := lab.New(s, lab.Options{Sinks: []sim.Sink{sim.NewTextWriter(&b)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for r.Step() {
		i, n, text := r.Narration()
		fmt.Printf("tick %d: step %d/%d %q\n", r.Now(), i, n, text)
	}
	fmt.Print(b.String())
	// Output:
	// tick 1: step 0/1 ""
	// tick 2: step 1/1 "Two orders are in."
	// tick 3: step 1/1 "Two orders are in."
	// t=1 sent queue:orders m1 by=shop
	// t=2 narration lesson - "1/1 Two orders are in."
	// t=2 sent queue:orders m2 by=shop
	// t=3 sent queue:orders m3 by=shop
}

// ExampleExecute_violated states the same loss as expectations that hold:
// the guarantee broken on purpose, the loss by cause and per consumer.
func ExampleExecute_violated() {
	src := `title: Ack before processing loses a message
seed: 7
run: {until: drained, max_ticks: 50}
topology:
  queues: [{name: orders}]
actors:
  producers: [{name: shop, to: {queue: orders}, count: 5}]
  consumers: [{name: worker, queue: orders, ack: before}]
faults:
  - {name: crash, point: consumer.crash_before_process, nth: 2}
expect:
  - {check: no_loss, violated: true}
  - {metric: ledger.lost_ack_before_processing, op: "==", value: 1}
  - {metric: consumer.worker.applied, op: "==", value: 4}
`
	s, err := scenario.Load("lesson.yaml", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := lab.Execute(s, lab.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range rep.Outcomes {
		fmt.Println(o.Pass, o.Text, "=", o.Measured)
	}
	// Output:
	// true no_loss violated = 1 violation: m2 t=2
	// true ledger.lost_ack_before_processing == 1 = 1
	// true consumer.worker.applied == 4 = 4
}

// ExampleRun_Do gives a run, by hand, the action the file's timeline could
// have given: a redrive of the dead-letter queue once the handler is fixed.
func ExampleRun_Do() {
	src := `title: Poison
run: {ticks: 8}
topology:
  queues:
    - {name: orders, dead_letter: {queue: orders-dlq, max_receive_count: 1}}
    - {name: orders-dlq}
actors:
  producers: [{name: shop, to: {queue: orders}, count: 2, keys: "order-%d", key_count: 2}]
  consumers: [{name: worker, queue: orders, handler: {kind: poison, keys: order-1}}]
timeline:
  - {at: 4, action: fix_handler, consumer: worker}
`
	s, err := scenario.Load("poison.yaml", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := lab.New(s, lab.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for r.Now() < 5 && r.Step() {
	}
	depth := func() int { return r.Queues()[1].Queue.Len() }
	fmt.Println("dead letters at t=5:", depth())
	if err := r.Do(lab.Redrive("orders-dlq")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("after the redrive:", depth())
	fmt.Println(r.Do(lab.Redrive("payments-dlq")))
	rep := r.Finish()
	fmt.Println("messages redriven, by the ledger:", rep.Stats.Redriven)
	// Output:
	// dead letters at t=5: 1
	// after the redrive: 0
	// lab: runtime error: queue "payments-dlq" is not defined
	// messages redriven, by the ledger: 1
}
