package lab

import (
	"strconv"

	"github.com/brokerlab/brokerlab/scenario"
)

// judgeKept judges the check expectation e before the end of the run, as
// judge does, from the counts the ledger keeps as it folds events
// (sim.Ledger.Tally) instead of the checker's walk over every outcome: a
// violation is settled exactly when settledBy says so (an effect applied
// more than once, an inversion of order, more duplicates than allowed),
// which are the violations the tally counts as fixed. ok is false when
// there is no ledger to keep them; judge then walks.
//
// It costs O(chunks of 128 IDs touched since the last judgement x 128 x
// consumers + linked copies x consumers + chunks), so a player can judge
// a run of millions of messages on every tick.
func (r *Run) judgeKept(e *scenario.Expectation) (Judgement, bool) {
	l := r.env.Ledger
	c := r.s.Checker(*e)
	if l == nil || c == nil {
		return Judgement{}, false
	}
	t, ok := l.Tally(c.Name(), r.s.LedgerConsumer(e.Consumer), e.Max)
	if !ok {
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
	if t.Fixed > 0 {
		j.Measured += ": " + t.First.Msg.String() + " " + t.First.Detail
		j.Standing = pick(e.Violated, Holds, Broken)
	}
	return j, true
}
