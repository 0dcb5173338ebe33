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

// A recorded run's firings can be shrunk to the few that matter, told in
// words and written as explicit rules that fire exactly them.
func ExampleMinimize() {
	w, _ := sim.New(sim.Config{Seed: 4})
	env := w.Env()
	in, _ := faults.New(w, faults.Config{Record: true, Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.5},
	}}})
	for id := sim.ID(1); id <= 8; id++ {
		env.Clock.Set(sim.Tick(id))
		in.Check(faults.BrokerDuplicate, faults.Context{Where: "queue:orders", Msg: id})
	}
	fired := in.Fired()
	fmt.Println("fired:", fired.Words())
	// The "bug": it needs the duplicate of m4.
	fails := func(s faults.Schedule) bool {
		for _, d := range s.Decisions {
			if d.Msg == 4 {
				return true
			}
		}
		return false
	}
	min := faults.Minimize(fired, fails)
	fmt.Println("minimal:", min.Words())
	fmt.Print(min.Plan().YAML())
	fmt.Print(min.Go())
	// Output:
	// fired: broker.duplicate of m2 at t=2, then broker.duplicate of m4 at t=4
	// minimal: broker.duplicate of m4 at t=4
	// faults:
	//   - name: dup
	//     point: broker.duplicate
	//     match:
	//       where: "queue:orders"
	//     from: 4
	//     until: 5
	//     nth: 1
	// in.Add(faults.Rule{Name: "dup", Point: faults.BrokerDuplicate, From: 4, Until: 5, Nth: 1, Match: faults.Match{Where: "queue:orders"}})
}

// Add returns a handle to the rule: it counts the rule's firings and
// switches it off, with no name passed around.
func ExampleInjector_Add() {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, _ := faults.New(w, faults.Config{})
	h, err := in.Add(faults.Rule{Name: "dup", Point: faults.BrokerDuplicate})
	if err != nil {
		fmt.Println(err)
		return
	}
	for id := sim.ID(1); id <= 3; id++ {
		if id == 3 {
			h.Disable() // the fix is deployed
		}
		_, dup := in.Check(faults.BrokerDuplicate, faults.Context{Msg: id})
		fmt.Printf("m%d duplicated: %v\n", id, dup)
	}
	fmt.Println(h.Name(), "fired", h.Fired(), "times")
	// Output:
	// m1 duplicated: true
	// m2 duplicated: true
	// m3 duplicated: false
	// dup fired 2 times
}

// A model resolves the points it consults once, when it is made; a rule
// added later is seen through the Site, and a point no rule targets costs
// almost nothing to ask.
func ExampleInjector_Site() {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, _ := faults.New(w, faults.Config{})
	dup := in.Site(faults.BrokerDuplicate)
	fmt.Println("armed:", dup.Armed())
	if _, err := in.Add(faults.Rule{Name: "always-twice", Point: faults.BrokerDuplicate}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("armed:", dup.Armed())
	if f := dup.Check(&faults.Context{Where: "queue:orders", Msg: 1}); f != nil {
		fmt.Println("fired:", f.Rule)
	}
	// Output:
	// armed: false
	// armed: true
	// fired: always-twice
}
