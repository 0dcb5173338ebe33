package sim_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// Check folds the outcomes once for all its checkers; what it reports
// must be exactly what the checkers report one by one, in their order, on
// every lesson, variant and testdata scenario, with the ledger's outcome
// cache current or not.
func TestCheckOnePassEqualsEachChecker(t *testing.T) {
	total, failing := 0, 0
	for name, s := range ledgerScenarios(t) {
		t.Run(name, func(t *testing.T) {
			r, err := lab.New(s, lab.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r.Finish()
			l := r.World().Ledger()
			checks := []sim.Checker{sim.NoLoss(), sim.MaxDuplicates("", 0), sim.MaxDuplicates("", -1)}
			for _, c := range append(l.Consumers(), "", "nobody") {
				checks = append(checks, sim.AtLeastOnce(c), sim.AtMostOnce(c), sim.ExactlyOnce(c),
					sim.OrderedPerKey(c), sim.MaxDuplicates(c, 1), sim.NoLoss())
			}
			var want []sim.Violation
			for _, c := range checks {
				want = append(want, c.Violations(l)...)
			}
			for _, cached := range []bool{false, true} {
				if cached {
					l.Outcomes("")
				}
				var got []sim.Violation
				var ce *sim.CheckError
				if err := sim.Check(l, checks...); errors.As(err, &ce) {
					got = ce.Violations
				} else if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("cached=%v: Check reported %d violations, the checkers one by one %d:\n%v\n%v", cached, len(got), len(want), got, want)
				}
			}
			total += len(want)
			for _, v := range want {
				if !v.Misuse && v.Msg != 0 {
					failing++
					break
				}
			}
		})
	}
	// Every scenario has misuse violations ("nobody", -1); some must have
	// violations about messages too, or the comparison proved little.
	if total == 0 || failing == 0 {
		t.Fatalf("%d violations, %d scenarios with a violation about a message: nothing was compared", total, failing)
	}
}
