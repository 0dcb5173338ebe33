package lab_test

import (
	"fmt"
	"github.com/brokerlab/brokerlab/lab"

	"github.com/brokerlab/brokerlab/scenario"
)

// ExampleRun_Verdict judges a scenario's expectations while it runs, as the
// player's verdict strip does: before the end an expectation holds, is
// broken, or is not decided yet; at the end the verdict is final, names the
// broken expectations and says what the report says. Here the two poison
// messages of kunde-2 end in the dead-letter queue, so only two of the four
// orders are applied.
func ExampleRun_Verdict() {
	src := `
title: A poison message goes to the DLQ
seed: 1
run: {until: drained, max_ticks: 100}
topology:
  queues:
    - {name: orders, visibility_timeout: 2, dead_letter: {queue: orders-dlq, max_receive_count: 2}}
    - {name: orders-dlq}
actors:
  producers:
    - {name: shop, to: {queue: orders}, count: 4, keys: "kunde-%d", key_count: 2}
  consumers:
    - {name: worker, queue: orders, handler: {kind: poison, keys: kunde-2}}
expect:
  - {check: no_loss}
  - {metric: queue.orders-dlq.depth, op: "==", value: 2}
  - {metric: consumer.orders.applied, op: "==", value: 4}
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
	r.Step()
	fmt.Println("t=1:", r.Verdict().Line())
	for r.Step() {
	}
	v := r.Verdict()
	fmt.Printf("t=%d: %s\n", r.Now(), v.Line())
	for _, j := range v.Judgments {
		fmt.Printf("  %s %s (%s) at line %d\n", j.Text, j.Standing, j.Measured, j.Line)
	}
	// Output:
	// t=1: so far 0 of 3 hold, 3 not yet
	// t=4: FAIL 2 of 3 expectations hold; broken: consumer.orders.applied == 4
	//   no_loss holds (0 violations) at line 15
	//   queue.orders-dlq.depth == 2 holds (2) at line 16
	//   consumer.orders.applied == 4 broken (2) at line 17
}
