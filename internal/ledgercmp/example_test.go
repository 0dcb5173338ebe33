package ledgercmp_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/internal/ledgercmp"
	"github.com/brokerlab/brokerlab/sim"
)

// Two runs of the same world agree; a run that folded one more event does
// not.
func Example() {
	run := func(extra bool) (*sim.Ledger, *sim.Trace) {
		w, _ := sim.New(sim.Config{Seed: 1})
		tr := w.Trace()
		tr.Emit(sim.Event{Kind: sim.KindSent, Where: "queue:orders", Msg: 1, Key: "kunde-1"})
		if extra {
			tr.Emit(sim.Event{Kind: sim.KindReceived, Where: "queue:orders", Consumer: "billing", Msg: 1, Key: "kunde-1"})
		}
		return w.Ledger(), tr
	}
	a, at := run(false)
	b, bt := run(false)
	c, ct := run(true)
	fmt.Printf("%q\n", ledgercmp.Diff(a, at, b, bt))
	fmt.Println(ledgercmp.Diff(c, ct, a, at))
	// Output:
	// ""
	// 2 events to tick 0, want 1 to tick 0
}
