package core_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest/core"
)

// Repro is the command a failing check prints: a Sweep subtest reruns by
// its name, any other test with -brokerlab.seed.
func ExampleRepro() {
	fmt.Println(core.Repro("TestBilling/seed=17", 17))
	fmt.Println(core.Repro("TestBilling", 17))
	fmt.Println(core.Repro("TestBilling/eu (north)", 3))
	// Output:
	// go test -run '^TestBilling$/^seed=17$'
	// go test -run '^TestBilling$' -brokerlab.seed=17
	// go test -run '^TestBilling$/^eu \(north\)$' -brokerlab.seed=3
}

// Concerning keeps the events of the violating messages and of the copies
// made from them (a redrive is a new message whose origin is the dead
// letter).
func ExampleConcerning() {
	evs := []sim.Event{
		{Tick: 1, Kind: sim.KindSent, Where: "queue:orders", Msg: 1},
		{Tick: 1, Kind: sim.KindSent, Where: "queue:orders", Msg: 2},
		{Tick: 5, Kind: sim.KindSent, Where: "queue:orders", Msg: 3, Origin: 2},
		{Tick: 6, Kind: sim.KindProcessed, Where: "queue:orders", Msg: 3, Origin: 2},
	}
	for _, e := range core.Concerning(evs, []sim.Violation{{Check: "exactly-once", Msg: 2}}) {
		fmt.Printf("%s\n", sim.AppendText(nil, &e))
	}
	// Output:
	// t=1 sent queue:orders m2
	// t=5 sent queue:orders m3 from=m2
	// t=6 processed queue:orders m3 from=m2
}
