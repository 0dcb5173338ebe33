package lab

import (
	"bufio"
	"io"
	"strconv"

	"github.com/brokerlab/brokerlab/printable"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// MaxReportViolations is the most violations WriteText prints per
// expectation; Outcome.Violations keeps them all.
const MaxReportViolations = 10

// Report is the result of a run: one outcome per expectation, in file
// order, the ledger summary and the runtime errors.
type Report struct {
	Title, File string
	Seed        uint64
	// Ticks is the tick the run ended at.
	Ticks sim.Tick
	// Drained is set when a run until drained stopped because it drained.
	Drained bool
	// Undrained is set when a run until drained stopped at max_ticks
	// before it drained: its expectations were checked on a system that
	// still had work to do. It does not clear Pass; brokerlab run --strict
	// makes such a run fail.
	Undrained bool
	Outcomes  []Outcome
	Stats     sim.Stats
	// Errors are the runtime errors of the file (failed actions), each at
	// the position of its action.
	Errors []scenario.Error
	// Pass is set when every expectation holds and no action failed.
	Pass bool
}

// Outcome is one evaluated expectation.
type Outcome struct {
	// Text is the expectation as written, e.g. "queue.orders-dlq.depth == 0".
	Text string
	// Check is the checker's name for a check ("exactly_once"), "" for a
	// metric.
	Check     string
	Line, Col int
	Pass      bool
	// Measured is the metric's value, "N violations" for a check, or
	// "N duplicates" for max_duplicates; for a check with violated: true
	// the first MaxViolationExamples violations follow (": m3 t=12, ...").
	Measured   string
	Violations []sim.Violation
}

// String returns the outcome as the report writes it, without the file
// name: "PASS 12:5 exactly_once(worker) (measured 0 violations)".
func (o Outcome) String() string {
	v := "FAIL"
	if o.Pass {
		v = "PASS"
	}
	return v + " " + strconv.Itoa(o.Line) + ":" + strconv.Itoa(o.Col) + " " + o.Text + " (measured " + o.Measured + ")"
}

// evaluate evaluates every expectation on the ledger and the models, tracing
// each as a "checked" event. The report's Stats are Finish's to fill in.
// The ledger is brought to the tick the run ended at first (Reach), which
// may be later than its last event: what is still pending is pending as
// of then, as a ledger folded from the trace finds it, since the trace's
// "checked" events carry that tick.
func (r *Run) evaluate() *Report {
	r.env.Ledger.Reach(r.w.Now())
	rep := &Report{Title: r.s.Title, File: r.s.File, Seed: r.seed, Ticks: r.w.Now(), Drained: r.drained,
		Undrained: r.s.Run.Until == scenario.UntilDrained && !r.Drained()}
	hold := r.checksHold(r.summed)
	for i := range r.s.Expect {
		if i < len(r.judged) && r.judged[i] != nil {
			rep.Outcomes = append(rep.Outcomes, *r.judged[i])
			continue
		}
		rep.Outcomes = append(rep.Outcomes, r.outcomeOf(&r.s.Expect[i], hold))
	}
	rep.Errors = append([]scenario.Error(nil), r.errs...)
	rep.Pass = len(rep.Errors) == 0
	for _, o := range rep.Outcomes {
		rep.Pass = rep.Pass && o.Pass
	}
	return rep
}

// judgeDue judges, at the end of the current tick, every expectation
// whose by: tick it is, and keeps the outcome for the live verdict and the
// report; each is traced as a "checked" event at that tick. It costs
// O(expectations with a by: tick) a tick, nothing for a file without one.
func (r *Run) judgeDue() {
	now := r.w.Now()
	for _, i := range r.byTick {
		e := &r.s.Expect[i]
		if e.By != now {
			continue
		}
		if r.judged == nil {
			r.judged = make([]*Outcome, len(r.s.Expect))
		}
		o := r.outcome(e)
		r.judged[i] = &o
	}
}

// checksHold reports whether the checker of every check expectation still
// to be judged at the end finds no violation, by one sim.Check: the
// checkers that judge outcomes share one walk over them there, where
// each checker's Violations walks them again. It returns false when
// there is no such expectation, or when any checker finds a violation
// (then each outcome runs its own checker, to tell whose they are).
//
// When kept is true the checkers the ledger keeps counts for are read
// from those counts (sim.Ledger.Tally, equal to len(Violations) by the
// ledger's equivalence tests); only the others walk the outcomes. Tally
// brings the counts up to date itself, at the cost of refolding the
// chunks touched since the last Stats or Tally, so it pays only when the
// summary was just taken, as Finish takes it before the verdict: then
// each read costs O(chunks + linked copies).
func (r *Run) checksHold(kept bool) bool {
	var cs []sim.Checker
	counted := false
	for i := range r.s.Expect {
		e := &r.s.Expect[i]
		if e.Check == "" || (i < len(r.judged) && r.judged[i] != nil) {
			continue
		}
		c := r.s.Checker(*e)
		if c == nil {
			continue
		}
		if kept {
			if t, ok := r.env.Ledger.Tally(c.Name(), r.s.LedgerConsumer(e.Consumer), e.Max); ok {
				if t.Count > 0 {
					return false
				}
				counted = true
				continue
			}
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return counted
	}
	return sim.Check(r.env.Ledger, cs...) == nil
}

// outcome evaluates expectation e on the ledger and the models as they
// are now, tracing it as a "checked" event; the event's words ("PASS
// no_loss (measured 0 violations) at 12:5") are built only when a sink
// shows Detail (sim.Trace.Detailed), as the models build theirs.
func (r *Run) outcome(e *scenario.Expectation) Outcome { return r.outcomeOf(e, false) }

// outcomeOf is outcome; hold says that e's checker, if it has one, is
// known to find no violation (checksHold), so it is not run again.
func (r *Run) outcomeOf(e *scenario.Expectation, hold bool) Outcome {
	o := Outcome{Text: e.String(), Check: e.Check, Line: e.Pos.Line, Col: e.Pos.Col}
	if c := r.s.Checker(*e); c != nil {
		if !hold {
			o.Violations = c.Violations(r.env.Ledger)
		}
		o.Pass = len(o.Violations) == 0
		o.Measured = strconv.Itoa(len(o.Violations)) + " violations"
		if len(o.Violations) == 1 {
			o.Measured = "1 violation"
		}
		if e.Check == scenario.CheckMaxDuplicates {
			o.Measured = strconv.Itoa(r.env.Ledger.Duplicates(r.s.LedgerConsumer(e.Consumer))) + " duplicates"
		}
		if e.Violated {
			o.Pass = !o.Pass
			o.Measured += firstViolations(o.Violations)
		}
	} else {
		v, err := r.Measure(e.Metric)
		if err != nil {
			o.Measured = err.Error()
		} else {
			o.Measured = strconv.FormatFloat(v, 'g', -1, 64)
			o.Pass = e.Holds(v)
		}
	}
	ev := sim.Event{Kind: sim.KindChecked, Where: "expect"}
	if r.env.Trace.Detailed() { // the words only a sink that shows them needs
		verdict := "FAIL"
		if o.Pass {
			verdict = "PASS"
		}
		ev.Detail = verdict + " " + o.Text + " (measured " + o.Measured + ") at " + scenario.Pos{Line: o.Line, Col: o.Col}.String()
	}
	r.env.Emit(ev)
	return o
}

// MaxViolationExamples is how many violations the measured value of a
// "violated: true" expectation names.
const MaxViolationExamples = 3

// firstViolations names the first MaxViolationExamples violations by
// message and tick, e.g. ": m3 t=12, m7 t=15 and 4 more"; "" for none.
func firstViolations(vs []sim.Violation) string { return namedViolations(vs, len(vs)) }

// Failures returns the outcomes that failed, in file order (nil when every
// expectation holds).
func (rep *Report) Failures() []Outcome {
	var out []Outcome
	for _, o := range rep.Outcomes {
		if !o.Pass {
			out = append(out, o)
		}
	}
	return out
}

// Violations returns the violations of every failing check, in file order
// of the expectations and, within one, in the checker's order (by message
// and tick): each names its check, message ID, key, consumer and tick. A
// check that holds contributes none, and neither does one written with
// violated: true (its violations are what makes it hold); a failing
// metric has no violations, so a report can fail with none here: test
// Pass or Failures for the verdict.
func (rep *Report) Violations() []sim.Violation {
	var out []sim.Violation
	for _, o := range rep.Outcomes {
		if !o.Pass {
			out = append(out, o.Violations...)
		}
	}
	return out
}

// Failed returns how many expectations failed.
func (rep *Report) Failed() int {
	n := 0
	for _, o := range rep.Outcomes {
		if !o.Pass {
			n++
		}
	}
	return n
}

// WriteText writes the human report: a header line, one line per
// expectation (PASS or FAIL, file:line:col, the expectation and the
// measured value, then up to MaxReportViolations violations, or
// MaxViolationExamples for a check that holds because it is violated), the runtime
// errors, a note when the run stopped at max_ticks before it drained, a
// ledger summary and the verdict. The summary counts copies (messages) and
// their lineage roots (origins); duplicates and duplicate effects are
// counted per origin and consumer, so a redriven or re-published copy of
// a message a consumer already had counts as a repeat, and absorbed counts
// the deliveries an idempotent handler recognised and skipped.
func (rep *Report) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	b.WriteString(rep.Title)
	b.WriteString("\n")
	b.WriteString(printable.String(rep.File) + ": seed " + strconv.FormatUint(rep.Seed, 10) + ", " + strconv.FormatInt(int64(rep.Ticks), 10) + " ticks")
	if rep.Drained {
		b.WriteString(", drained")
	}
	b.WriteString("\n\n")
	for _, o := range rep.Outcomes {
		v := "FAIL"
		if o.Pass {
			v = "PASS"
		}
		b.WriteString(v + "  " + printable.String(rep.File) + ":" + strconv.Itoa(o.Line) + ":" + strconv.Itoa(o.Col) + "  " + o.Text + "  (measured " + o.Measured + ")\n")
		limit := MaxReportViolations
		if o.Pass {
			limit = MaxViolationExamples // a check expected to be violated
		}
		for i, x := range o.Violations {
			if i == limit {
				b.WriteString("        ... and " + strconv.Itoa(len(o.Violations)-i) + " more\n")
				break
			}
			b.WriteString("        " + x.String() + "\n")
		}
	}
	for _, e := range rep.Errors {
		b.WriteString("ERROR " + e.Error() + "\n")
	}
	if rep.Undrained {
		b.WriteString("NOTE: stopped at max_ticks " + strconv.FormatInt(int64(rep.Ticks), 10) +
			" before draining: the expectations were checked on a run that had not finished; raise max_ticks to let it drain\n")
	}
	s := rep.Stats
	b.WriteString("\nledger: " + LedgerLine(s) + "\n")
	if len(s.LostBy) > 0 {
		b.WriteString("lost by cause:")
		for i, c := range s.LostBy {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" " + string(c.Cause) + " " + strconv.Itoa(c.Count))
		}
		b.WriteString("\n")
	}
	verdict := "PASS"
	if !rep.Pass {
		verdict = "FAIL"
	}
	b.WriteString(verdict + ": " + strconv.Itoa(len(rep.Outcomes)-rep.Failed()) + " of " + strconv.Itoa(len(rep.Outcomes)) + " expectations hold")
	if n := len(rep.Errors); n > 0 {
		b.WriteString(", " + strconv.Itoa(n) + " runtime error(s)")
	}
	if rep.Undrained {
		b.WriteString(", not drained")
	}
	b.WriteString("\n")
	return b.Flush()
}

// LedgerLine words a ledger's summary on one line, as the report and
// verify print it: "13 messages (9 origins), 16 delivered, 7 duplicates,
// 0 duplicate effects, 0 absorbed, 0 in a DLQ, 4 redriven, 0 missed,
// 0 lost, 0 phantoms".
func LedgerLine(s sim.Stats) string {
	return strconv.Itoa(s.Messages) + " messages (" + strconv.Itoa(s.Origins) + " origins), " +
		strconv.Itoa(s.Delivered) + " delivered, " + strconv.Itoa(s.Duplicates) + " duplicates, " +
		strconv.Itoa(s.DuplicateEffects) + " duplicate effects, " + strconv.Itoa(s.Absorbed) + " absorbed, " +
		DLQWords(s.DeadLettered, s.Redriven) + ", " + strconv.Itoa(s.Missed) + " missed, " +
		strconv.Itoa(s.Lost) + " lost, " + strconv.Itoa(s.Phantoms) + " phantoms"
}

// DLQWords words the copies in dead-letter queues, parked (the copies in
// a DLQ now, sim.Stats.DeadLettered) and redriven (moved back out):
// "3 in a DLQ", and after a redrive "0 in a DLQ, 4 redriven". The parked
// count is not every copy ever dead-lettered, so a lesson whose DLQ a
// redrive emptied must not read "0 dead-lettered".
func DLQWords(parked, redriven int) string {
	out := strconv.Itoa(parked) + " in a DLQ"
	if redriven > 0 {
		out += ", " + strconv.Itoa(redriven) + " redriven"
	}
	return out
}
