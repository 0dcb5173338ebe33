package lab

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// ErrNotRederived is wrapped by the error Rederive returns when some of
// the expectations read a metric the trace does not carry (see Folded).
var ErrNotRederived = errors.New("lab: not re-derivable from the trace")

// ErrOtherScenario is wrapped by the error Rederive returns for a trace
// that is not of the scenario it was asked to judge (see MismatchError).
var ErrOtherScenario = errors.New("lab: the trace is not of this scenario")

// MaxMismatches is how many differences a MismatchError lists; the rest
// are only counted.
const MaxMismatches = 5

// Mismatch is one difference between a trace and the scenario it was
// judged as.
type Mismatch struct {
	// Seq is the trace event that shows the difference (in a trace as
	// written, one event a line, it is the event's line); 0 when the
	// difference is something the trace lacks.
	Seq uint64
	// Pos is the position in the scenario's file of what the trace
	// lacks; zero when Seq is set.
	Pos scenario.Pos
	// Text says what differs, without the position.
	Text string
}

// MismatchError is the error Rederive returns for the trace of another
// scenario, another variant or another version of the file: the
// expectations its run judged ("checked" events) are not exactly the
// scenario's, by text and file position, or a re-derived verdict is not
// the one the run traced, or its narration differs. It wraps
// ErrOtherScenario.
type MismatchError struct {
	// Diffs are the first MaxMismatches differences: those the trace
	// shows, in trace order, then those it lacks, in file order.
	Diffs []Mismatch
	// Total counts every difference found.
	Total int
}

// Error names the first difference and counts the others.
func (e *MismatchError) Error() string {
	msg := ErrOtherScenario.Error()
	if len(e.Diffs) > 0 {
		msg += ": " + e.Diffs[0].Text
	}
	if e.Total > 1 {
		msg += fmt.Sprintf(" (and %d more %s)", e.Total-1, plural(e.Total-1, "difference", "differences"))
	}
	return msg
}

// Unwrap returns ErrOtherScenario.
func (e *MismatchError) Unwrap() error { return ErrOtherScenario }

// add records one difference.
func (e *MismatchError) add(d Mismatch) {
	e.Total++
	if len(e.Diffs) < MaxMismatches {
		e.Diffs = append(e.Diffs, d)
	}
}

// Rederive judges s's whole expect list from a recorded JSON Lines trace
// of a run of s (as 'brokerlab trace --format json' writes it), as the
// run judged it: the ledger and a MetricFold are folded from the trace
// (sim.ReadJSONL, which refuses a trace that was edited or cut), and each
// expectation is evaluated on them. The outcomes equal the run's own
// Report.Outcomes for every check and every metric Folded names; an
// expectation on another metric is returned failed, measured "not
// re-derivable ...", and the error wraps ErrNotRederived; so is a metric
// of a component (a queue, topic, log, group, outbox, saga or consumer)
// that no event of the trace names, which the fold would otherwise read
// as zero. A trace that ReadJSONL refuses returns its error and no
// outcomes.
//
// The trace must be of s: its run traced each expectation it judged as a
// "checked" event with the expectation's text and file position, and
// those must be exactly s's, each judged as s re-derives it (for the
// expectations the trace carries), and its narration steps must be s's.
// A trace of another scenario, variant or version of the file returns a
// *MismatchError, which wraps ErrOtherScenario, and no outcomes. Memory
// is that of the ledger and the fold, and O(len(s.Expect) +
// len(s.Narration)) for the comparison.
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
	id := newIdentity(s)
	sink := sim.SinkFunc(func(e *sim.Event) {
		id.emit(e)
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
	}
	if err := id.check(out, notCarried, end); err != nil {
		return nil, err
	}
	for i := range s.Expect {
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

// identity gathers what a trace says about the scenario it is of: the
// expectations its run judged and its narration steps. Its memory is
// bounded by s, whatever the trace holds.
type identity struct {
	s *scenario.Scenario
	// want maps an expectation's text and position to the indexes of
	// s.Expect not yet seen in the trace with them.
	want map[string][]int
	// seq, verdict and measured are what the trace said of each
	// expectation (seq 0: not seen).
	seq      []uint64
	verdict  []string
	measured []string
	// narration are s's steps as the run traces them; narrated counts
	// those the trace holds.
	narration []string
	narrated  int
	// extra are the expectations the trace judged that s does not have,
	// narr the first narration step that differs.
	extra MismatchError
	narr  *Mismatch
}

// expectKey is the key of an expectation in identity.want.
func expectKey(text string, pos string) string { return text + "\x00" + pos }

// newIdentity returns the identity of s to compare a trace with.
func newIdentity(s *scenario.Scenario) *identity {
	id := &identity{s: s, want: make(map[string][]int, len(s.Expect)),
		seq: make([]uint64, len(s.Expect)), verdict: make([]string, len(s.Expect)), measured: make([]string, len(s.Expect))}
	for i := range s.Expect {
		e := &s.Expect[i]
		k := expectKey(e.String(), e.Pos.String())
		id.want[k] = append(id.want[k], i)
	}
	for i, st := range s.Narration {
		d := strconv.Itoa(i+1) + "/" + strconv.Itoa(len(s.Narration)) + " "
		if st.Pause {
			d += "[pause] "
		}
		id.narration = append(id.narration, d+st.Text)
	}
	return id
}

// emit notes what event e says about the scenario of the trace.
func (id *identity) emit(e *sim.Event) {
	switch {
	case e.Kind == sim.KindChecked && e.Where == "expect":
		id.checked(e)
		return
	case e.Kind == sim.KindNarration && e.Where == "lesson":
		switch {
		case id.narr != nil:
		case id.narrated < len(id.narration) && e.Detail != id.narration[id.narrated]:
			id.narr = &Mismatch{Seq: e.Seq, Text: fmt.Sprintf("narration step %d is %s in the trace, %s in %s",
				id.narrated+1, quoteShort(e.Detail), quoteShort(id.narration[id.narrated]), id.s.File)}
		case id.narrated == len(id.narration):
			id.narr = &Mismatch{Seq: e.Seq, Text: fmt.Sprintf("the trace has narration step %s; %s has %d %s",
				quoteShort(e.Detail), id.s.File, len(id.narration), plural(len(id.narration), "step", "steps"))}
		}
		id.narrated++
		return
	}
}

// checked matches a "checked" event, "PASS TEXT (measured M) at L:C", to
// an expectation of s.
func (id *identity) checked(e *sim.Event) {
	verdict, rest, _ := strings.Cut(e.Detail, " ")
	text, rest, ok1 := strings.Cut(rest, " (measured ")
	at := strings.LastIndex(rest, ") at ")
	if verdict != "PASS" && verdict != "FAIL" || !ok1 || at < 0 {
		id.extra.add(Mismatch{Seq: e.Seq, Text: fmt.Sprintf("the trace judged an expectation it does not name (%s)", quoteShort(e.Detail))})
		return
	}
	measured, pos := rest[:at], rest[at+len(") at "):]
	k := expectKey(text, pos)
	is := id.want[k]
	if len(is) == 0 {
		id.extra.add(Mismatch{Seq: e.Seq, Text: fmt.Sprintf("the trace's run judged %q at %s, which is not an expectation of %s there", text, pos, id.s.File)})
		return
	}
	i := is[0]
	id.want[k] = is[1:]
	id.seq[i], id.verdict[i], id.measured[i] = e.Seq, verdict, measured
}

// check returns a *MismatchError when the trace is not of s: an
// expectation of s it never judged, a verdict re-derived (out, where
// notCarried is unset) that is not the one its run traced, or narration
// steps due by the trace's last tick end that it lacks.
func (id *identity) check(out []Outcome, notCarried []bool, end sim.Tick) error {
	var diffs MismatchError
	for i := range id.s.Expect {
		e := &id.s.Expect[i]
		switch {
		case id.seq[i] == 0:
			diffs.add(Mismatch{Pos: e.Pos, Text: fmt.Sprintf("%q is not judged in the trace", e.String())})
		case notCarried[i]:
		case (id.verdict[i] == "PASS") != out[i].Pass || id.measured[i] != out[i].Measured:
			verdict := "FAIL"
			if out[i].Pass {
				verdict = "PASS"
			}
			diffs.add(Mismatch{Seq: id.seq[i], Text: fmt.Sprintf("the trace's run judged %q %s (measured %s), but %s re-derives %s (measured %s) from the trace",
				e.String(), id.verdict[i], id.measured[i], id.s.File, verdict, out[i].Measured)})
		}
	}
	due := 0
	for _, st := range id.s.Narration {
		if st.At <= end {
			due++
		}
	}
	switch {
	case id.narr != nil:
		diffs.add(*id.narr)
	case id.narrated < due:
		st := &id.s.Narration[id.narrated]
		diffs.add(Mismatch{Pos: st.Pos, Text: fmt.Sprintf("narration step %d (at tick %d) is not in the trace, which runs to tick %d", id.narrated+1, st.At, end)})
	}
	if id.extra.Total+diffs.Total == 0 {
		return nil
	}
	// Both sides are shown: the expectations the trace has and s lacks
	// first, then those s has and the trace lacks.
	n := min(len(id.extra.Diffs), max(MaxMismatches/2+1, MaxMismatches-len(diffs.Diffs)))
	all := &MismatchError{Diffs: append(id.extra.Diffs[:n:n], diffs.Diffs...), Total: id.extra.Total + diffs.Total}
	all.Diffs = all.Diffs[:min(len(all.Diffs), MaxMismatches)]
	return all
}

// quoteShort quotes s, cut to its first 60 characters.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 60 {
		return strconv.Quote(string(r[:60])) + "..."
	}
	return strconv.Quote(s)
}
