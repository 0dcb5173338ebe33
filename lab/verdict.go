package lab

import (
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// Standing is where one expectation stands on the state of a run so far.
type Standing uint8

// The standings of an expectation. Before the end of a run an expectation
// is Broken only when one of its violations is settled, that is, nothing the
// run does later can undo it (see Run.settledBy for the rule per check
// kind: an effect applied twice, too many duplicates, an inversion of
// order, a loss no later event can undo). Everything that may still change
// reads NotYet: a message not yet delivered, a loss that a seek back, a
// re-publish or a redrive may still contradict, a
// consumer that has not been routed anything yet, a metric comparison that
// does not hold yet, a check the lesson expects to be violated that has not
// been violated yet, and a check with no violation so far (a message
// published later may yet break it). A metric expectation holds or is
// broken before the end only when its metric is a counter that has
// already settled the comparison (see settledMetric); on any
// other metric it reads NotYet until the end, so a gauge that is right for
// a moment (a queue that is empty between bursts) is not counted as
// holding. An expectation with a by: tick is judged at the end of that
// tick, once, as the run would judge it at its end, and keeps that
// standing (see scenario.Expectation.By); before it, the rules above apply, and
// whatever they settle early the judgement at the by: tick confirms. So a
// Broken before the end stays Broken at the end, and a Holds
// before the end stays Holds: "so far" only ever counts up. At the end
// every expectation holds or is broken, exactly as the report says.
const (
	NotYet Standing = iota // undecided: the run may still make it hold or break it
	Holds                  // it holds, and going on cannot undo it (at the end: it passed)
	Broken                 // it is broken, and going on cannot mend it (at the end: it failed)
)

// String returns "not yet", "holds" or "broken".
func (s Standing) String() string {
	switch s {
	case Holds:
		return "holds"
	case Broken:
		return "broken"
	}
	return "not yet"
}

// Judgement is one expectation judged on the current state of a run.
type Judgement struct {
	// Text is the expectation as written, e.g. "exactly_once(worker)".
	Text      string
	Line, Col int
	Standing  Standing
	// Measured is what the judgement rests on, as in Outcome.Measured:
	// "2 violations", "4", or the first violation's words; before the end,
	// a metric that is not a counter reads e.g. "3 now, judged at the end".
	Measured string
}

// Verdict is every expectation of a scenario judged on the current state
// of a run, in file order. Final is set once the run is over; then each
// judgement is Holds or Broken and agrees with the report of Run.Finish.
type Verdict struct {
	Final     bool
	Judgments []Judgement
	// Errors counts the run's runtime errors (failed actions) so far; any
	// makes a final verdict FAIL, as in the report.
	Errors int
}

// checkedJudgement is a ledger check's judgement and what it was judged
// on: the trace's length and whether the run was over.
type checkedJudgement struct {
	ok     bool
	events uint64
	final  bool
	j      Judgement
}

// Verdict judges every expectation on the current state without changing
// the run: it emits no event and does not end the run. A ledger check is
// judged from the counts the ledger keeps as it folds events (see
// judgeKept), at a cost that follows what changed since the last
// judgement, not the size of the run, so a player can call it on every
// tick; at the end the violations it names are read from the chunks that
// hold them (sim.Ledger.FirstViolations). The checker's walk over every
// outcome, O(messages x consumers), judges only what the ledger keeps no
// counts for: a run without a ledger, or a check the tally does not know.
// A ledger check reads the ledger alone, which changes only by traced
// events: its judgement is kept and given again, at no cost, until an
// event is traced or the run ends.
func (r *Run) Verdict() Verdict {
	v := Verdict{Final: r.over, Errors: len(r.errs)}
	for i := range r.s.Expect {
		if i < len(r.judged) && r.judged[i] != nil {
			o := r.judged[i]
			v.Judgments = append(v.Judgments, Judgement{Text: o.Text, Line: o.Line, Col: o.Col,
				Standing: pick(o.Pass, Holds, Broken), Measured: o.Measured})
			continue
		}
		e := &r.s.Expect[i]
		if e.Check == "" {
			v.Judgments = append(v.Judgments, r.judge(e, v.Final))
			continue
		}
		if r.checked == nil {
			r.checked = make([]checkedJudgement, len(r.s.Expect))
		}
		events, c := r.env.Trace.Len(), &r.checked[i]
		if !c.ok || c.events != events || c.final != v.Final {
			j, ok := r.judgeKept(e, v.Final)
			if !ok {
				j = r.judge(e, v.Final)
			}
			*c = checkedJudgement{ok: true, events: events, final: v.Final, j: j}
		}
		v.Judgments = append(v.Judgments, c.j)
	}
	return v
}

// judge judges one expectation; final says whether the run is over.
func (r *Run) judge(e *scenario.Expectation, final bool) Judgement {
	j := Judgement{Text: e.String(), Line: e.Pos.Line, Col: e.Pos.Col}
	c := r.s.Checker(*e)
	if c == nil {
		m, err := r.Measure(e.Metric)
		switch {
		case err != nil:
			j.Measured, j.Standing = err.Error(), Broken
		case final:
			j.Measured, j.Standing = strconv.FormatFloat(m, 'g', -1, 64), pick(e.Holds(m), Holds, Broken)
		default:
			j.Measured, j.Standing = strconv.FormatFloat(m, 'g', -1, 64), settledMetric(*e, m)
			if j.Standing == NotYet && e.Judged() {
				j.Measured += " now, judged at t=" + strconv.FormatInt(int64(e.By), 10)
			} else if j.Standing == NotYet && !isCounter(e.Metric) {
				j.Measured += " now, judged at the end"
			}
		}
		return j
	}
	vs := c.Violations(r.env.Ledger)
	decided := 0 // violations that going on cannot undo
	first := ""
	if !final {
		settled := r.settledBy(e)
		for _, x := range vs {
			if !settled(x) {
				continue
			}
			if decided == 0 {
				first = x.Msg.String() + " " + x.Detail
			}
			decided++
		}
	} else if len(vs) > 0 {
		first = vs[0].Msg.String() + " " + vs[0].Detail
	}
	count := func(n int) string {
		if n == 1 {
			return "1 violation"
		}
		return strconv.Itoa(n) + " violations"
	}
	j.Measured = count(len(vs))
	if e.Check == scenario.CheckMaxDuplicates {
		j.Measured = strconv.Itoa(r.env.Ledger.Duplicates(r.s.LedgerConsumer(e.Consumer))) + " duplicates"
	}
	switch {
	case final && e.Violated:
		j.Standing = pick(len(vs) > 0, Holds, Broken)
		j.Measured += firstViolations(vs)
	case final:
		j.Standing = pick(len(vs) == 0, Holds, Broken)
		if first != "" {
			j.Measured += ": " + first
		}
	case e.Violated:
		j.Standing = pick(decided > 0, Holds, NotYet)
		if decided > 0 {
			j.Measured += ": " + first
		}
	case decided > 0:
		j.Standing = Broken
		j.Measured += ": " + first
	}
	// A check with no violation so far still reads NotYet: a message
	// published later may yet break it.
	return j
}

// settledBy returns the rule that says, before the end of a run, whether
// a violation of the check expectation e is settled: nothing the run does
// later can undo it. The rule per check kind:
//
//   - at_most_once, exactly_once: an effect applied more than once is
//     settled, since effects are only ever added; anything else (a message
//     still pending, not yet delivered, lost but possibly re-sent, no
//     message routed yet) is not.
//   - max_duplicates: more duplicates than allowed is settled, since the
//     count only grows; a consumer not yet known or routed nothing is not.
//   - ordered_per_key: an inversion is settled, since the order of first
//     applications is fixed; "no keyed effect yet" is not.
//   - no_loss, at_least_once: a loss no later event can undo is settled
//     (sim.Ledger.LostForGood: a final cause, such as an ephemeral
//     delivery that failed or a copy retention deleted, of a copy that
//     left every broker with no way back). Any other loss can be
//     contradicted later (a seek back re-reads it, a relay re-publishes, a
//     DLQ is redriven, a consumer applies the message after all), and a
//     pending message may still arrive: they are not settled, and neither
//     is a loss before any consumer.
//
// A consumer the ledger does not know yet is never settled either: the
// ledger learns consumers from their first event. The rule costs O(1) per
// violation it is asked about (O(linked copies) for the origin of a
// lineage, see sim.Ledger.Effects), so judging costs O(violations) on top
// of the checker's own walk, and builds no outcome.
func (r *Run) settledBy(e *scenario.Expectation) func(sim.Violation) bool {
	l := r.env.Ledger
	name := r.s.LedgerConsumer(e.Consumer)
	never := func(sim.Violation) bool { return false }
	switch e.Check {
	case scenario.CheckAtMostOnce, scenario.CheckExactlyOnce:
		if l == nil {
			return never
		}
		return func(v sim.Violation) bool { return v.Msg != 0 && l.Effects(v.Msg, v.Consumer) > 1 }
	case scenario.CheckNoLoss, scenario.CheckAtLeastOnce:
		if l == nil {
			return never
		}
		return func(v sim.Violation) bool { return v.Msg != 0 && v.Consumer != "" && l.LostForGood(v.Msg, v.Consumer) }
	case scenario.CheckMaxDuplicates:
		over := l != nil && e.Max >= 0 && (name == "" || l.Consumer(name) != sim.NoConsumer) && l.Duplicates(name) > e.Max
		return func(sim.Violation) bool { return over }
	case scenario.CheckOrderedPerKey:
		// Inversions name the message applied out of order; the
		// "nothing to judge" and unknown-consumer violations name none.
		return func(v sim.Violation) bool { return v.Msg != 0 }
	}
	return never
}

// settledMetric returns the standing, before the end of a run, of the
// metric expectation e whose metric reads v now. Only a counter (see
// isCounter), which never decreases, can settle early: ">" and ">="
// once satisfied hold for good, as does "!=" once the counter has passed
// the value; "<", "<=" and "==" once the counter has gone past the bound
// are broken for good. Everything else, a gauge such as a queue's depth
// above all, reads NotYet: it is judged at the end.
func settledMetric(e scenario.Expectation, v float64) Standing {
	if !isCounter(e.Metric) {
		return NotYet
	}
	switch e.Op {
	case ">", ">=":
		return pick(e.Holds(v), Holds, NotYet)
	case "!=":
		return pick(v > e.Value, Holds, NotYet)
	case "<", "<=", "==":
		return pick(v > e.Value || (e.Op == "<" && v >= e.Value), Broken, NotYet)
	}
	return NotYet
}

// metricCounters lists, per metric kind, the fields that are counters: they only
// ever grow during a run (deliveries, acks, publishes, rebalances,
// registered messages), as opposed to gauges such as a depth, a lag or a
// count of messages in some state, which rise and fall: ledger.dead_lettered
// counts the copies in a DLQ now, which a redrive lowers. ledger.redriven
// counts the copies ever redriven, so a later ack of a duplicate of the
// same ID does not lower it: it is a counter.
// It sits beside scenario.MetricFields, of which it is a subset (TestMetricCountersAreFields);
// TestCountersNeverDecrease plays every lesson to keep it honest.
var metricCounters = map[string][]string{
	"queue":    {"receives", "acks", "redeliveries"},
	"topic":    {"published", "delivered", "missed", "dropped"},
	"log":      {"end"},
	"group":    {"rebalances", "generation", "reads", "stale_reads"},
	"outbox":   {"published", "failed"},
	"saga":     scenario.MetricFields["saga"][:7],
	"consumer": {"delivered", "duplicates", "applied", "duplicate_effects", "absorbed"},
	"ledger":   {"messages", "origins", "redriven", "delivered", "duplicates", "applied", "duplicate_effects", "absorbed"},
}

// isCounter reports whether m is a counter: a value that never decreases
// during a run, so a comparison it has settled stays settled. Every other
// metric is a gauge, which may rise and fall until the end.
func isCounter(m scenario.Metric) bool {
	for _, f := range metricCounters[m.Kind] {
		if f == m.Field {
			return true
		}
	}
	return false
}

// pick returns a when ok, else b.
func pick(ok bool, a, b Standing) Standing {
	if ok {
		return a
	}
	return b
}

// Count returns how many judgements have standing s.
func (v Verdict) Count(s Standing) int {
	n := 0
	for _, j := range v.Judgments {
		if j.Standing == s {
			n++
		}
	}
	return n
}

// Pass reports whether the run passes on the state so far: every
// expectation holds and no action failed.
func (v Verdict) Pass() bool {
	return v.Errors == 0 && v.Count(Holds) == len(v.Judgments)
}

// Line is the verdict in one line, e.g. "PASS 6 of 6 expectations hold",
// "FAIL 4 of 6 expectations hold; broken: exactly_once(worker),
// queue.orders.depth == 0", or before the end "so far 3 of 6 hold, 3 not
// yet". A scenario without expectations says so.
func (v Verdict) Line() string {
	total := len(v.Judgments)
	holds := v.Count(Holds)
	if total == 0 {
		return "no expectations to judge"
	}
	var b strings.Builder
	if v.Final {
		if v.Pass() {
			b.WriteString("PASS ")
		} else {
			b.WriteString("FAIL ")
		}
		b.WriteString(strconv.Itoa(holds) + " of " + strconv.Itoa(total) + " expectations hold")
	} else {
		b.WriteString("so far " + strconv.Itoa(holds) + " of " + strconv.Itoa(total) + " hold")
		if n := v.Count(NotYet); n > 0 {
			b.WriteString(", " + strconv.Itoa(n) + " not yet")
		}
	}
	sep := "; broken: "
	for _, j := range v.Judgments {
		if j.Standing == Broken {
			b.WriteString(sep + j.Text)
			sep = ", "
		}
	}
	if v.Errors > 0 {
		b.WriteString("; " + strconv.Itoa(v.Errors) + " runtime error(s)")
	}
	return b.String()
}
