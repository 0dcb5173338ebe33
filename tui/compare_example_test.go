package tui_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/tui"
)

// ExampleNewPair plays two variants of a lesson in lockstep and prints
// each side's ledger numbers at the end.
func ExampleNewPair() {
	side := func(variant string) tui.Side {
		s, err := scenario.LoadLesson("idempotent-consumer")
		if err != nil {
			panic(err)
		}
		if s, err = s.Variant(variant); err != nil {
			panic(err)
		}
		d, err := tui.NewScenarioDriver(s, nil)
		if err != nil {
			panic(err)
		}
		return tui.Side{Label: variant, Driver: d}
	}
	p, err := tui.NewPair(side("naive"), side("idempotent"))
	if err != nil {
		panic(err)
	}
	c := tui.NewController(p)
	for !p.Done() {
		c.Handle(tui.Command{Kind: tui.CmdStep})
	}
	for _, sf := range p.Frame(c.Snapshot()).Sides {
		fmt.Printf("%-10s t=%d %s\n", sf.Label, sf.Snap.Header.Tick, sf.Tally.Text())
	}
	// Output:
	// naive      t=30 sent 20 applied 52 dup 12 (12 applied) lost 0 pending 0
	// idempotent t=30 sent 20 applied 40 dup 12 (0 applied) lost 0 pending 0
}
