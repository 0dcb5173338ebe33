package scenario

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// ErrNotRederived is wrapped by the error Rederive returns when some of
// the expectations read a metric the trace does not carry (see Folded).
var ErrNotRederived = errors.New("scenario: not re-derivable from the trace")

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
func (s *Scenario) Rederive(trace io.Reader) ([]Outcome, error) {
	l := sim.NewLedger()
	fold := NewMetricFold(s)
	if err := sim.ReadJSONL(trace, sim.SinkFunc(func(e *sim.Event) { l.Emit(e); fold.Emit(e) })); err != nil {
		return nil, err
	}
	var out []Outcome
	var missing []string
	stats := l.Stats()
	for i := range s.Expect {
		e := &s.Expect[i]
		o := Outcome{Text: e.String(), Check: e.Check, Line: e.Pos.Line, Col: e.Pos.Col}
		if c := s.Checker(*e); c != nil {
			o.Violations = c.Violations(l)
			o.Pass = len(o.Violations) == 0
			o.Measured = strconv.Itoa(len(o.Violations)) + " violations"
			if len(o.Violations) == 1 {
				o.Measured = "1 violation"
			}
			if e.Check == CheckMaxDuplicates {
				o.Measured = strconv.Itoa(l.Duplicates(s.LedgerConsumer(e.Consumer))) + " duplicates"
			}
			if e.Violated {
				o.Pass = !o.Pass
				o.Measured += firstViolations(o.Violations)
			}
			out = append(out, o)
			continue
		}
		v, ok := e.Metric.Ledger(stats)
		if !ok && e.Metric.Kind == "consumer" {
			v, ok = consumerMetric(l, s.LedgerConsumer(e.Metric.Name), e.Metric.Field)
		}
		if !ok {
			v, ok = fold.Value(e.Metric)
		}
		if !ok {
			o.Measured = "not re-derivable from the trace (" + e.Metric.String() + " is read from the model's counters)"
			missing = append(missing, e.Metric.String())
			out = append(out, o)
			continue
		}
		o.Measured = strconv.FormatFloat(v, 'g', -1, 64)
		o.Pass = e.Holds(v)
		out = append(out, o)
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("%w: %d expectation(s) read %v", ErrNotRederived, len(missing), missing)
	}
	return out, nil
}
