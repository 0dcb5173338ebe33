package sim_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/sim"
)

// A Tally counts what a checker's Violations would return, from counts
// the ledger keeps as it folds events, so a player can judge a run of
// millions of messages on every tick. Here m1 was applied twice, which
// nothing later can undo (it is fixed), and m2 is still pending, which a
// later delivery may still settle.
func ExampleLedger_Tally() {
	l := sim.NewLedger()
	for _, e := range []sim.Event{
		{Tick: 1, Kind: sim.KindSent, Where: "inbox", Consumer: "billing", Msg: 1, Key: "kunde-A"},
		{Tick: 1, Kind: sim.KindSent, Where: "inbox", Consumer: "billing", Msg: 2, Key: "kunde-B"},
		{Tick: 2, Kind: sim.KindReceived, Where: "inbox", Consumer: "billing", Msg: 1},
		{Tick: 2, Kind: sim.KindProcessed, Where: "inbox", Consumer: "billing", Msg: 1},
		{Tick: 3, Kind: sim.KindRedelivered, Where: "inbox", Consumer: "billing", Msg: 1},
		{Tick: 3, Kind: sim.KindProcessed, Where: "inbox", Consumer: "billing", Msg: 1},
	} {
		l.Emit(&e)
	}
	t, _ := l.Tally("exactly-once", "billing", 0)
	fmt.Println(t.Count, "violations,", t.Fixed, "fixed:", t.First)
	fmt.Println(len(sim.ExactlyOnce("billing").Violations(l)), "violations from the walk")
	// Output:
	// 2 violations, 1 fixed: exactly-once: m1 key=kunde-A consumer=billing t=3: effect applied 2 times
	// 2 violations from the walk
}
