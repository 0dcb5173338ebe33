package scenario_test

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/scenario"
)

func ExampleLoad() {
	src := `
title: Poison message goes to the DLQ
summary: Three failed receives move a message aside
seed: 42
run: {until: drained, max_ticks: 500}
topology:
  queues:
    - name: orders
      visibility_timeout: 5
      dead_letter: {queue: orders-dlq, max_receive_count: 3}
    - name: orders-dlq
actors:
  producers:
    - {name: shop, to: {queue: orders}, count: 10, keys: "kunde-%d", key_count: 3}
  consumers:
    - {name: worker, queue: orders, handler: {kind: poison, keys: kunde-2}}
faults:
  - {point: broker.duplicate, probability: 0.1}
timeline:
  - {at: 60, action: fix_handler, consumer: worker}
  - {at: 61, action: redrive, queue: orders-dlq}
narration:
  - {at: 0, text: "Ten orders arrive."}
expect:
  - {check: exactly_once, consumer: worker}
  - {metric: queue.orders-dlq.depth, op: "==", value: 0}
`
	s, err := scenario.Load("lesson.yaml", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := &s.Actors.Producers[0]
	fmt.Println(s.Title, "| seed", s.Seed, "| cap", s.Run.Cap())
	fmt.Println("queue", s.Topology.Queues[0].Name, "dead-letters to", s.Topology.Queues[0].DeadLetter.Queue)
	fmt.Println("keys:", p.Key(0), p.Key(1), p.Key(2))
	fmt.Println("fault:", s.FaultPlan().Rules[0].Name, s.FaultPlan().Rules[0].Point)
	for _, a := range s.Timeline {
		fmt.Println("at", int64(a.At), a.Action, "on line", a.Pos.Line)
	}
	for _, e := range s.Expect {
		fmt.Println("expect", e)
	}
	// Output:
	// Poison message goes to the DLQ | seed 42 | cap t=500
	// queue orders dead-letters to orders-dlq
	// keys: kunde-1 kunde-2 kunde-3
	// fault: fault-1 broker.duplicate
	// at 60 fix_handler on line 20
	// at 61 redrive on line 21
	// expect exactly_once(worker)
	// expect queue.orders-dlq.depth == 0
}

func ExampleErrors() {
	src := `title: A typo and a dangling reference
run: {ticks: 1000000000000}
topology:
  queues:
    - name: orders
      visiblity_timeout: 5
actors:
  consumers:
    - {name: worker, queue: ordres}
`
	_, err := scenario.Load("lesson.yaml", []byte(src))
	fmt.Println(err)
	fmt.Println("exit code 2:", errors.Is(err, scenario.ErrInvalid))
	// Output:
	// lesson.yaml:2:14: ticks must be between 1 and 1000000 (ticks are capped at 1000000), got 1000000000000
	// lesson.yaml:6:7: unknown field "visiblity_timeout" in queue (did you mean "visibility_timeout"?); allowed: name, visibility_timeout, retention, dead_letter, fifo, dedup_window, content_based_dedup, delay, receive_wait_time, max_in_flight, strict
	// lesson.yaml:9:29: consumer "worker" reads queue "ordres", which is not defined (did you mean "orders"?); queues: orders
	// exit code 2: true
}
