package sim_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
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
			l := finishedLedger(t, s)
			checks := []sim.Checker{sim.NoLoss(), sim.MaxDuplicates("", 0), sim.MaxDuplicates("", -1)}
			for _, c := range append(l.Consumers(), "", "nobody") {
				checks = append(checks, sim.AtLeastOnce(c), sim.AtMostOnce(c), sim.ExactlyOnce(c),
					sim.OrderedPerKey(c), sim.MaxDuplicates(c, 1), sim.NoLoss())
			}
			want := checkAgreesWithEach(t, l, checks)
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

// A Check whose checkers judge only losses (NoLoss, AtLeastOnce) leaves
// out the outcomes it can tell are no loss without folding them; what it
// reports must be exactly what the checkers report one by one, which fold
// every outcome, and what it reports from the ledger's outcome cache, on
// every lesson, variant and testdata scenario.
func TestCheckOfLossesEqualsEachChecker(t *testing.T) {
	total := 0
	for name, s := range ledgerScenarios(t) {
		t.Run(name, func(t *testing.T) {
			l := finishedLedger(t, s)
			sets := [][]sim.Checker{{sim.NoLoss()}, {sim.AtLeastOnce("")}}
			for _, c := range l.Consumers() {
				sets = append(sets, []sim.Checker{sim.NoLoss(), sim.AtLeastOnce(c)}, []sim.Checker{sim.AtLeastOnce(c), sim.AtLeastOnce("")})
			}
			for _, checks := range sets {
				total += len(checkAgreesWithEach(t, l, checks))
			}
		})
	}
	if total == 0 {
		t.Fatal("no violation in any scenario: nothing was compared")
	}
}

// A clean run's loss checks pass through Check: the outcomes left out
// as no loss still count as judged, so a consumer whose every origin was
// applied is not mistaken for one routed nothing.
func TestCheckOfLossesCountsWhatItLeavesOut(t *testing.T) {
	l := sim.NewLedger()
	for _, e := range []sim.Event{
		{Tick: 1, Kind: sim.KindSent, Where: "q", Consumer: "c", Msg: 1, Key: "A"},
		{Tick: 1, Kind: sim.KindSent, Where: "q", Consumer: "c", Msg: 2, Key: "B"},
		{Tick: 2, Kind: sim.KindReceived, Where: "q", Consumer: "c", Msg: 1},
		{Tick: 2, Kind: sim.KindProcessed, Where: "q", Consumer: "c", Msg: 1},
		{Tick: 2, Kind: sim.KindAcked, Where: "q", Consumer: "c", Msg: 1},
		{Tick: 3, Kind: sim.KindReceived, Where: "q", Consumer: "c", Msg: 2},
		{Tick: 3, Kind: sim.KindProcessed, Where: "q", Consumer: "c", Msg: 2},
		{Tick: 3, Kind: sim.KindAcked, Where: "q", Consumer: "c", Msg: 2},
	} {
		l.Emit(&e)
	}
	for _, checks := range [][]sim.Checker{{sim.AtLeastOnce("c")}, {sim.NoLoss(), sim.AtLeastOnce("c")}, {sim.AtLeastOnce("")}} {
		if err := sim.Check(l, checks...); err != nil {
			t.Errorf("%d checkers: %v", len(checks), err)
		}
	}
}

// checkAgreesWithEach fails t unless Check(l, checks...) reports exactly
// what the checkers report one by one, in their order, both before and
// after the ledger's outcome cache is filled; it returns those violations.
func checkAgreesWithEach(t *testing.T, l *sim.Ledger, checks []sim.Checker) []sim.Violation {
	t.Helper()
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
	return want
}

// finishedLedger runs s to its end at its own seed and returns the run's
// ledger.
func finishedLedger(t *testing.T, s *scenario.Scenario) *sim.Ledger {
	t.Helper()
	r, err := lab.New(s, lab.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Finish()
	return r.World().Ledger()
}
