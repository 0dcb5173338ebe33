package lab

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// ErrNotRederived is wrapped by the error Rederive returns when some of
// the expectations read a metric the trace does not carry (see Folded).
var ErrNotRederived = errors.New("lab: not re-derivable from the trace")

// Rederive judges s's whole expect list from a recorded JSON Lines trace
// of a run of s (as 'brokerlab trace --format json' writes it), as the
// run judged it: the ledger and a MetricFold are folded from the trace
// (sim.ReadJSONL, which refuses a trace that was edited or cut), and each
// expectation is evaluated on them. The outcomes equal the run's own
// Report.Outcomes for every check and every metric Folded names; an
// expectation on another metric is returned failed, measured "not
// re-derivable ...", and the error wraps ErrNotRederived. A trace that
// ReadJSONL refuses returns its error and no outcomes. Memory is that of
// the ledger and the fold.
func Rederive(s *scenario.Scenario, trace io.Reader) ([]Outcome, error) {
	l := sim.NewLedger()
	fold := NewMetricFold(s)
	out := make([]Outcome, len(s.Expect))
	notCarried := make([]bool, len(s.Expect))
	// An expectation with by: T is judged as the run judged it, at the end
	// of tick T: before the first event of a later tick is folded, or at
	// the end of the trace. The rest are judged at the end.
	var due []int
	for i := range s.Expect {
		if s.Expect[i].Judged() {
			due = append(due, i)
		}
	}
	sort.SliceStable(due, func(a, b int) bool { return s.Expect[due[a]].By < s.Expect[due[b]].By })
	judge := func(i int) {
		out[i], notCarried[i] = rederiveOne(s, &s.Expect[i], l, fold)
	}
	sink := sim.SinkFunc(func(e *sim.Event) {
		for len(due) > 0 && s.Expect[due[0]].By < e.Tick {
			fold.SetNow(s.Expect[due[0]].By)
			judge(due[0])
			due = due[1:]
		}
		l.Emit(e)
		fold.Emit(e)
	})
	if err := sim.ReadJSONL(trace, sink); err != nil {
		return nil, err
	}
	// The end expectations are judged at the run's last tick, which the
	// trace's last event carries (each is traced "checked" there); a by:
	// expectation left over is judged at its own tick.
	end := fold.now
	late := make(map[int]bool, len(due))
	for _, i := range due {
		late[i] = true
	}
	var missing []string
	for i := range s.Expect {
		switch {
		case late[i]:
			fold.SetNow(s.Expect[i].By)
			judge(i)
		case !s.Expect[i].Judged():
			fold.SetNow(end)
			judge(i)
		}
		if notCarried[i] {
			missing = append(missing, s.Expect[i].Metric.String())
		}
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("%w: %d expectation(s) read %v", ErrNotRederived, len(missing), missing)
	}
	return out, nil
}

// rederiveOne evaluates expectation e on the ledger and the fold as they
// are now. notCarried reports a metric the trace does not carry.
func rederiveOne(s *scenario.Scenario, e *scenario.Expectation, l *sim.Ledger, fold *MetricFold) (o Outcome, notCarried bool) {
	o = Outcome{Text: e.String(), Check: e.Check, Line: e.Pos.Line, Col: e.Pos.Col}
	if c := s.Checker(*e); c != nil {
		o.Violations = c.Violations(l)
		o.Pass = len(o.Violations) == 0
		o.Measured = strconv.Itoa(len(o.Violations)) + " violations"
		if len(o.Violations) == 1 {
			o.Measured = "1 violation"
		}
		if e.Check == scenario.CheckMaxDuplicates {
			o.Measured = strconv.Itoa(l.Duplicates(s.LedgerConsumer(e.Consumer))) + " duplicates"
		}
		if e.Violated {
			o.Pass = !o.Pass
			o.Measured += firstViolations(o.Violations)
		}
		return o, false
	}
	v, ok := e.Metric.Ledger(l.Stats())
	if !ok && e.Metric.Kind == "consumer" {
		v, ok = consumerMetric(l, s.LedgerConsumer(e.Metric.Name), e.Metric.Field)
	}
	if !ok {
		v, ok = fold.Value(e.Metric)
	}
	if !ok {
		o.Measured = "not re-derivable from the trace (" + e.Metric.String() + " is read from the model's counters)"
		return o, true
	}
	o.Measured = strconv.FormatFloat(v, 'g', -1, 64)
	o.Pass = e.Holds(v)
	return o, false
}
