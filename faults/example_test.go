package faults_test

import (
	"fmt"
	"os"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// A plan fires deterministically; every firing is traced with its rule.
func ExampleInjector() {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	env.Trace.Attach(sim.NewTextWriter(os.Stdout))
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "outage", Point: faults.BrokerUnavailable, From: 2, Until: 4},
		{Name: "poison", Point: faults.HandlerPoison, Match: faults.Match{Key: "kunde-B"}},
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for tick := sim.Tick(1); tick <= 4; tick++ {
		env.Clock.Set(tick)
		_, down := in.Check(faults.BrokerUnavailable, faults.Context{Where: "queue:orders"})
		fmt.Printf("tick %d: broker down=%v\n", tick, down)
	}
	_, poison := in.Check(faults.HandlerPoison, faults.Context{Where: "queue:orders", Consumer: "worker", Key: "kunde-B", Msg: 7})
	fmt.Println("kunde-B poison:", poison)
	// Output:
	// tick 1: broker down=false
	// t=2 fault queue:orders - rule=outage "broker.unavailable"
	// tick 2: broker down=true
	// t=3 fault queue:orders - rule=outage "broker.unavailable"
	// tick 3: broker down=true
	// tick 4: broker down=false
	// t=4 fault queue:orders m7 key=kunde-B by=worker rule=poison "handler.poison"
	// kunde-B poison: true
}
