package lab

import (
	"strconv"

	"github.com/brokerlab/brokerlab/scenario"
)

// judgeKept judges the check expectation e as judge does, final saying
// whether the run is over, from the counts the ledger keeps as it folds
// events (sim.Ledger.Tally) instead of the checker's walk over every
// outcome. Before the end a violation is settled exactly when settledBy
// says so (an effect applied more than once, an inversion of order, more
// duplicates than allowed), which are the violations the tally counts as
// fixed. At the end it judges a check with no violation; one with
// violations needs them listed, so ok is false and judge walks, as it
// does when there is no ledger to keep the counts.
//
// It costs O(chunks of 128 IDs touched since the last judgement x 128 x
// consumers + linked copies x consumers + chunks), so a player can judge
// a run of millions of messages on every tick.
func (r *Run) judgeKept(e *scenario.Expectation, final bool) (Judgement, bool) {
	l := r.env.Ledger
	c := r.s.Checker(*e)
	if l == nil || c == nil {
		return Judgement{}, false
	}
	t, ok := l.Tally(c.Name(), r.s.LedgerConsumer(e.Consumer), e.Max)
	if !ok || final && t.Count > 0 {
		return Judgement{}, false
	}
	j := Judgement{Text: e.String(), Line: e.Pos.Line, Col: e.Pos.Col}
	j.Measured = strconv.Itoa(t.Count) + " violations"
	if t.Count == 1 {
		j.Measured = "1 violation"
	}
	if e.Check == scenario.CheckMaxDuplicates {
		j.Measured = strconv.Itoa(t.Duplicates) + " duplicates"
	}
	if final {
		j.Standing = pick(e.Violated, Broken, Holds)
		return j, true
	}
	if t.Fixed > 0 {
		j.Measured += ": " + t.First.Msg.String() + " " + t.First.Detail
		j.Standing = pick(e.Violated, Holds, Broken)
	}
	return j, true
}
