package lab

import (
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// judgeKept judges the check expectation e as judge does, final saying
// whether the run is over, from the counts the ledger keeps as it folds
// events (sim.Ledger.Tally) instead of the checker's walk over every
// outcome. Before the end a violation is settled exactly when settledBy
// says so (an effect applied more than once, an inversion of order, more
// duplicates than allowed), which are the violations the tally counts as
// fixed. At the end the violations it names are the first ones the
// checker would list (sim.Ledger.FirstViolations), found by reading only
// the chunks that hold them. ok is false when there is no ledger to keep
// the counts; judge then walks.
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
	if final {
		j.Standing = pick(e.Violated == (t.Count > 0), Holds, Broken)
		if t.Count == 0 {
			return j, true
		}
		first := l.FirstViolations(c, r.s.LedgerConsumer(e.Consumer), e.Max, MaxViolationExamples)
		if len(first) == 0 {
			// The kept counts and the chunks disagree, which the
			// equivalence tests rule out: let the walk judge rather
			// than name nothing.
			return Judgement{}, false
		}
		if e.Violated {
			j.Measured += namedViolations(first, t.Count)
		} else {
			j.Measured += ": " + first[0].Msg.String() + " " + first[0].Detail
		}
		return j, true
	}
	if t.Fixed > 0 {
		j.Measured += ": " + t.First.Msg.String() + " " + t.First.Detail
		j.Standing = pick(e.Violated, Holds, Broken)
	}
	return j, true
}

// namedViolations names the first MaxViolationExamples of the violations
// first begins, total in all, by message and tick, e.g. ": m3 t=12, m7
// t=15 and 4 more"; "" for none.
func namedViolations(first []sim.Violation, total int) string {
	if total == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(": ")
	for i, v := range first[:min(len(first), MaxViolationExamples)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.Msg.String() + " t=" + strconv.FormatInt(int64(v.Tick), 10))
	}
	if total > MaxViolationExamples {
		b.WriteString(" and " + strconv.Itoa(total-MaxViolationExamples) + " more")
	}
	return b.String()
}
