package lab_test

import (
	"fmt"
	"github.com/brokerlab/brokerlab/lab"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// A Go test binds its own handler to a consumer of a scenario file: the
// file keeps the topology, the workload and the fault plan, the Go code
// decides what the consumer does with each delivery. Here the file's
// broker duplicates an order; a naive handler charges it twice, an
// idempotent one absorbs the copy.
func ExampleOptions_handlers() {
	s, err := scenario.Load("orders.yaml", []byte(`
title: billing under a duplicate
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: orders}]
actors:
  producers:
    - {name: checkout, to: {queue: orders}, count: 3, keys: "order-%d", key_count: 3}
  consumers:
    - {name: billing, queue: orders}
faults:
  - {name: dup, point: broker.duplicate, match: {key: order-2}, nth: 1}
expect:
  - {check: exactly_once, consumer: billing}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	charge := sim.HandlerFunc(func(d *sim.Delivery) error {
		d.Apply("charged " + d.Msg.Key)
		return nil
	})
	for _, h := range []struct {
		name    string
		handler sim.Handler
	}{
		{"naive", charge},
		{"idempotent", sim.Idempotent(charge, sim.ByMessageID)},
	} {
		rep, err := lab.Execute(s, lab.Options{Handlers: map[string]sim.Handler{"billing": h.handler}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: pass=%v\n", h.name, rep.Pass)
		for _, v := range rep.Violations() {
			fmt.Println("  ", v)
		}
	}
	_, err = lab.Execute(s, lab.Options{Handlers: map[string]sim.Handler{"biling": charge}})
	fmt.Println(err)
	// Output:
	// naive: pass=false
	//    exactly-once: m2 key=order-2 consumer=orders t=3: effect applied 2 times
	// idempotent: pass=true
	// lab: no consumer "biling" in orders.yaml; it has: billing (did you mean "billing"?)
}
