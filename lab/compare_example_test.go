package lab_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
)

// ExampleNewPair plays two variants of a lesson in lockstep and prints
// each side's ledger numbers at the end.
func ExampleNewPair() {
	side := func(variant string) lab.Side {
		s, err := scenario.LoadLesson("idempotent-consumer")
		if err != nil {
			panic(err)
		}
		if s, err = s.Variant(variant); err != nil {
			panic(err)
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			panic(err)
		}
		return lab.Side{Label: variant, Session: d}
	}
	p, err := lab.NewPair(side("naive"), side("idempotent"))
	if err != nil {
		panic(err)
	}
	var last lab.Snapshot
	for !p.Done() {
		last = p.Step()
	}
	for _, sf := range p.Frame(last).Sides {
		fmt.Printf("%-10s t=%d %s\n", sf.Label, sf.Snap.Header.Tick, sf.Tally.Text())
	}
	// Output:
	// naive      t=30 sent 20 applied 52 dup 12 (12 applied) lost 0 pending 0
	// idempotent t=30 sent 20 applied 40 dup 12 (0 applied) lost 0 pending 0
}
