package scenario_test

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
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
	rep, err := scenario.Execute(s, scenario.Options{})
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
	// ledger: 5 messages (5 origins), 5 delivered, 0 duplicates, 0 duplicate effects, 0 absorbed, 0 dead-lettered, 0 missed, 1 lost, 0 phantoms
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
	r, err := s.NewRun(scenario.Options{Sinks: []sim.Sink{sim.NewTextWriter(&b)}})
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
	rep, err := scenario.Execute(s, scenario.Options{})
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
