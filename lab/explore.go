package lab

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/printable"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/sweep"
)

// This file holds the deterministic parts of a seed sweep (brokerlab
// explore): running one seed and naming its failure, shrinking a failing
// seed's fault schedule and writing the reproducer. Running many seeds at
// once is the driver's business (the command line spreads them over
// goroutines, each with its own Scenario and World).

// ErrShrink is wrapped by the errors of Shrink: a seed that does not fail,
// or whose recorded schedule does not reproduce its failure on replay.
var ErrShrink = errors.New("lab: cannot shrink")

// MaxShrinkRuns caps the runs one Shrink spends. Delta debugging needs
// O(log n) runs for one culprit among n firings and O(n²) at worst; when
// the cap is reached, the smallest failing schedule found so far is kept
// (Shrunk.Capped is set) and it may not be 1-minimal.
const MaxShrinkRuns = 2000

// Failure names what made a run fail: the first expectation, in file
// order, that did not hold, or a runtime error of the file.
type Failure struct {
	// Expect is the index of the expectation in scenario.Scenario.Expect; -1 for a
	// runtime error (a failed action, a run over its budget).
	Expect int `json:"expect"`
	// Text is the expectation as written ("exactly_once(billing)"), or
	// "runtime error".
	Text string `json:"text"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	// Detail is the first violation, the measured value of a metric or
	// the first runtime error.
	Detail string `json:"detail"`
}

// Same reports whether f and g are the same failure: the same
// expectation (by index and text, so a reproducer whose lines moved still
// counts), or runtime errors of the same words (their numbers, such as
// ticks and message IDs, may move when firings are removed).
func (f Failure) Same(g Failure) bool {
	if f.Expect != g.Expect || f.Text != g.Text {
		return false
	}
	return f.Expect >= 0 || withoutDigits(f.Detail) == withoutDigits(g.Detail)
}

// withoutDigits returns s without its decimal digits.
func withoutDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

// String formats f as "TEXT at LINE:COL: DETAIL".
func (f Failure) String() string { return f.In("") }

// In formats f as "TEXT at FILE:LINE:COL: DETAIL", the expectation's
// place in file (as String when file is "").
func (f Failure) In(file string) string {
	s := f.Text
	if f.Line > 0 {
		s += " at "
		if file != "" {
			s += file + ":"
		}
		s += strconv.Itoa(f.Line) + ":" + strconv.Itoa(f.Col)
	}
	if f.Detail != "" {
		s += ": " + f.Detail
	}
	return printable.String(s)
}

// FailureOf returns the failure of a run that ended with rep and err (as
// Execute returns them), and false when the run passed.
func FailureOf(rep *Report, err error) (Failure, bool) {
	if err != nil {
		msg := err.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return Failure{Expect: -1, Text: "runtime error", Detail: msg}, true
	}
	if rep == nil {
		return Failure{Expect: -1, Text: "runtime error", Detail: "no report"}, true
	}
	for i, o := range rep.Outcomes {
		if o.Pass {
			continue
		}
		f := Failure{Expect: i, Text: o.Text, Line: o.Line, Col: o.Col, Detail: "measured " + o.Measured}
		if len(o.Violations) > 0 {
			f.Detail = o.Violations[0].String()
		}
		return f, true
	}
	if len(rep.Errors) > 0 {
		return Failure{Expect: -1, Text: "runtime error", Detail: rep.Errors[0].Error()}, true
	}
	return Failure{}, false
}

// failureLike returns how the run that ended with rep and err (as Execute
// returns them) fails the way want names, and false when it does not.
// For an expectation, that expectation (the same index and text) fails in
// the run, whatever else fails too: an expectation earlier in the file
// that fails as well does not hide it. For a runtime error, one of the
// run's runtime errors has the words of want's (Failure.Same). The
// failure returned is want's as this run measured it.
func failureLike(rep *Report, err error, want Failure) (Failure, bool) {
	if want.Expect >= 0 {
		if rep == nil || want.Expect >= len(rep.Outcomes) {
			return Failure{}, false
		}
		o := rep.Outcomes[want.Expect]
		if o.Pass || o.Text != want.Text {
			return Failure{}, false
		}
		f := Failure{Expect: want.Expect, Text: o.Text, Line: o.Line, Col: o.Col, Detail: "measured " + o.Measured}
		if len(o.Violations) > 0 {
			f.Detail = o.Violations[0].String()
		}
		return f, true
	}
	var msgs []string
	if rep != nil {
		for _, e := range rep.Errors {
			msgs = append(msgs, e.Error())
		}
	}
	if err != nil {
		msgs = append(msgs, strings.Split(err.Error(), "\n")...)
	}
	if rep == nil && err == nil {
		msgs = append(msgs, "no report")
	}
	for _, m := range msgs {
		if f := (Failure{Expect: -1, Text: "runtime error", Detail: m}); f.Same(want) {
			return f, true
		}
	}
	return Failure{}, false
}

// Probe runs s at seed with opts (whose Seed it overrides) and returns
// the failure and whether the run failed. The error is non-nil only when
// the run could not be built (a bad handler binding); a runtime error of
// the file is a failure.
func Probe(s *scenario.Scenario, seed uint64, opts Options) (Failure, bool, error) {
	opts.Seed = &seed
	r, err := New(s, opts)
	if err != nil {
		return Failure{}, false, err
	}
	rep := r.verdictOnly()
	f, failed := FailureOf(rep, r.Err())
	return f, failed, nil
}

// Shrunk is the result of Shrink: a failing seed, its failure, the
// firings of its run and the minimal schedule that still fails the same
// way.
type Shrunk struct {
	Seed uint64
	// Failure is the seed's first failure, the one the schedule was shrunk
	// for, as the run of Minimal measured it. That run may fail other
	// expectations too, earlier ones included.
	Failure Failure
	// Fired is every firing of the seed's own run (recorded).
	Fired faults.Schedule
	// Minimal is the smallest subset of Fired found that still makes the
	// same failure, as a replay of it recorded it (its ticks and
	// opportunity numbers are those of that run, so Minimal.Plan() is
	// exact).
	Minimal faults.Schedule
	// Runs is how many runs the shrink spent, the first included.
	Runs int
	// Capped is set when MaxShrinkRuns stopped the search early.
	Capped bool
}

// Shrink re-runs seed of s recording its fault decisions and shrinks them
// with sweep.Shrink (faults.Minimize), re-running the seed with
// Options.Replay set to subsets. The failure shrunk for is the seed's
// first (FailureOf), and a subset reproduces it when that expectation
// (the same index and text) still fails, whatever else fails too; for a
// runtime error, when a runtime error of the same words (Failure.Same)
// still occurs. So removing any single firing of the result makes that
// expectation hold, even where an earlier expectation of the file fails
// without it. Shrunk.Failure is that failure as the minimal schedule's
// run measured it.
// handlers, when non-nil, returns fresh handlers to bind for every run.
// It is deterministic: the same scenario, seed and handlers give the same
// result. Cost: at most MaxShrinkRuns runs of the scenario.
func Shrink(s *scenario.Scenario, seed uint64, handlers func() map[string]sim.Handler) (*Shrunk, error) {
	var (
		want, last Failure
		minimal    faults.Schedule
		buildErr   error // the seed's own run could not be built
	)
	replay := func(step sweep.Step, sched *faults.Schedule) (faults.Schedule, bool, error) {
		o := Options{Seed: &seed, Record: true, Replay: sched}
		if handlers != nil {
			o.Handlers = handlers()
		}
		r, err := New(s, o)
		if err != nil {
			if step.Phase == sweep.PhaseRecord {
				buildErr = err
			}
			return faults.Schedule{}, false, err
		}
		rep := r.verdictOnly()
		if step.Phase == sweep.PhaseRecord {
			// The target is the seed's own first failure; every later
			// run is judged by that one failure alone.
			f, failed := FailureOf(rep, r.Err())
			want = f
			return r.Faults().Fired(), failed, nil
		}
		if step.Phase == sweep.PhaseMinimal {
			minimal = *sched
		}
		f, same := failureLike(rep, r.Err(), want)
		last = f
		return r.Faults().Fired(), same, nil
	}
	res, err := sweep.Shrink(sweep.ShrinkConfig{MaxRuns: MaxShrinkRuns}, replay)
	switch {
	case buildErr != nil:
		return nil, buildErr
	case errors.Is(err, sweep.ErrPasses):
		return nil, fmt.Errorf("%w: seed %d of %s passes", ErrShrink, seed, s.File)
	case errors.Is(err, sweep.ErrTooMany):
		return nil, fmt.Errorf("%w: seed %d fired more than %d faults", ErrShrink, seed, faults.MaxDecisions)
	case errors.Is(err, sweep.ErrReplay):
		return nil, fmt.Errorf("%w: seed %d: replaying its %d firings does not fail %s again", ErrShrink, seed, res.Fired.Len(), want.Text)
	case errors.Is(err, sweep.ErrMinimal):
		return nil, fmt.Errorf("%w: seed %d: the minimal schedule (%s) no longer fails %s", ErrShrink, seed, minimal.Words(), want.Text)
	case err != nil:
		return nil, fmt.Errorf("%w: seed %d: replay: %w", ErrShrink, seed, errors.Unwrap(err))
	}
	return &Shrunk{Seed: seed, Failure: last, Fired: res.Fired, Minimal: res.Minimal, Runs: res.Runs, Capped: res.Capped}, nil
}

// FilePlan returns the explicit plan of sh.Minimal in the scenario file's
// vocabulary (scenario.FilePlan).
func (sh *Shrunk) FilePlan() faults.Plan { return scenario.FilePlan(sh.Minimal) }

// Repro returns what the reproducer file of sh is written from.
func (sh *Shrunk) Repro() scenario.Repro {
	return scenario.Repro{Seed: sh.Seed, Failure: sh.Failure.Text, Detail: sh.Failure.Detail, Minimal: sh.Minimal,
		Fired: sh.Fired.Len(), Runs: sh.Runs}
}

// MinFile returns the reproducer of sh as a scenario document, written by
// s.MinFile from src (the text s was loaded from) and out (the name the
// file will be written as). The result is loaded and run before it is
// returned: it is an error (wrapping ErrShrink) unless it fails with the
// same failure (whatever else fails too, as Shrink judges a run) and, for
// an expectation, the same first violation. The
// check runs the file as it is, without Go handlers: a scenario whose
// failure needs handlers bound from Go has no file reproducer (use
// sh.Minimal with Options.Replay instead). Cost: one load and one run of
// the reproducer.
func MinFile(s *scenario.Scenario, sh *Shrunk, src []byte, out string) ([]byte, error) {
	data, err := s.MinFile(sh.Repro(), src, out)
	if err != nil {
		return nil, err
	}
	m, err := scenario.Load(out, data)
	if err != nil {
		return nil, fmt.Errorf("%w: the reproducer does not load: %w", ErrShrink, err)
	}
	// A runtime error's words start with the file it happened in, and the
	// reproducer runs as out.
	want := sh.Failure
	if rest, ok := strings.CutPrefix(want.Detail, printable.String(s.File)+":"); ok && want.Expect < 0 {
		want.Detail = printable.String(out) + ":" + rest
	}
	rep, err := Execute(m, Options{})
	if f, same := failureLike(rep, err, want); !same || f.Expect >= 0 && f.Detail != sh.Failure.Detail {
		var got string
		switch first, failed := FailureOf(rep, err); {
		case same:
			got = "it fails " + f.String()
		case !failed:
			got = "it passes"
		default:
			got = "it fails only " + first.String()
		}
		return data, fmt.Errorf("%w: the reproducer does not fail %s: %s", ErrShrink, sh.Failure.Text, got)
	}
	return data, nil
}
