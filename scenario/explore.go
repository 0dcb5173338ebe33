package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/printable"
	"github.com/brokerlab/brokerlab/sim"
)

// This file holds the deterministic parts of a seed sweep (brokerlab
// explore): running one seed and naming its failure, shrinking a failing
// seed's fault schedule and writing the reproducer. Running many seeds at
// once is the driver's business (the command line spreads them over
// goroutines, each with its own Scenario and World).

// ErrShrink is wrapped by the errors of Shrink: a seed that does not fail,
// or whose recorded schedule does not reproduce its failure on replay.
var ErrShrink = errors.New("scenario: cannot shrink")

// MaxShrinkRuns caps the runs one Shrink spends. Delta debugging needs
// O(log n) runs for one culprit among n firings and O(n²) at worst; when
// the cap is reached, the smallest failing schedule found so far is kept
// (Shrunk.Capped is set) and it may not be 1-minimal.
const MaxShrinkRuns = 2000

// Failure names what made a run fail: the first expectation, in file
// order, that did not hold, or a runtime error of the file.
type Failure struct {
	// Expect is the index of the expectation in Scenario.Expect; -1 for a
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

// Probe runs s at seed with opts (whose Seed it overrides) and returns
// the failure and whether the run failed. The error is non-nil only when
// the run could not be built (a bad handler binding); a runtime error of
// the file is a failure.
func (s *Scenario) Probe(seed uint64, opts Options) (Failure, bool, error) {
	opts.Seed = &seed
	r, err := s.NewRun(opts)
	if err != nil {
		return Failure{}, false, err
	}
	rep := r.Finish()
	f, failed := FailureOf(rep, r.Err())
	return f, failed, nil
}

// Shrunk is the result of Shrink: a failing seed, its failure, the
// firings of its run and the minimal schedule that still fails the same
// way.
type Shrunk struct {
	Seed    uint64
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
// with faults.Minimize, re-running the seed with Options.Replay set to
// subsets: a subset fails when the run fails the same way (Failure.Same).
// handlers, when non-nil, returns fresh handlers to bind for every run.
// It is deterministic: the same scenario, seed and handlers give the same
// result. Cost: at most MaxShrinkRuns runs of the scenario.
func (s *Scenario) Shrink(seed uint64, handlers func() map[string]sim.Handler) (*Shrunk, error) {
	run := func(replay *faults.Schedule) (Failure, bool, faults.Schedule, error) {
		o := Options{Seed: &seed, Record: true, Replay: replay}
		if handlers != nil {
			o.Handlers = handlers()
		}
		r, err := s.NewRun(o)
		if err != nil {
			return Failure{}, false, faults.Schedule{}, err
		}
		rep := r.Finish()
		f, failed := FailureOf(rep, r.Err())
		return f, failed, r.Faults().Fired(), nil
	}
	want, failed, fired, err := run(nil)
	if err != nil {
		return nil, err
	}
	if !failed {
		return nil, fmt.Errorf("%w: seed %d of %s passes", ErrShrink, seed, s.File)
	}
	sh := &Shrunk{Seed: seed, Failure: want, Fired: fired, Runs: 1}
	if fired.Omitted > 0 {
		return nil, fmt.Errorf("%w: seed %d fired more than %d faults", ErrShrink, seed, faults.MaxDecisions)
	}
	var runErr error
	fails := func(sub faults.Schedule) bool {
		if sh.Runs >= MaxShrinkRuns {
			sh.Capped = true
			return false
		}
		sh.Runs++
		f, failed, _, err := run(&sub)
		if err != nil {
			runErr = err
			return false
		}
		return failed && f.Same(want)
	}
	if !fails(fired) {
		if runErr != nil {
			return nil, fmt.Errorf("%w: seed %d: replay: %w", ErrShrink, seed, runErr)
		}
		return nil, fmt.Errorf("%w: seed %d: replaying its %d firings does not fail %s again", ErrShrink, seed, fired.Len(), want.Text)
	}
	min := faults.Minimize(fired, fails)
	if runErr != nil {
		return nil, fmt.Errorf("%w: seed %d: replay: %w", ErrShrink, seed, runErr)
	}
	// Re-record the minimal schedule in its own run: its ticks and
	// opportunity numbers are the ones an explicit plan must name.
	f, failed, again, err := run(&min)
	sh.Runs++
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: seed %d: replay: %w", ErrShrink, seed, err)
	case !failed || !f.Same(want):
		return nil, fmt.Errorf("%w: seed %d: the minimal schedule (%s) no longer fails %s", ErrShrink, seed, min.Words(), want.Text)
	}
	sh.Minimal, sh.Failure = again, f
	return sh, nil
}

// FilePlan returns the explicit plan of sh.Minimal in the scenario file's
// vocabulary: a match.where the models name "outbox:S" is the file's
// "service:S", and an instance NAME#i of a consumer with instances, which
// is not a name of the file, is the pattern NAME#[i] that matches it
// alone. Every rule fires once, in the one-tick window of its decision.
func (sh *Shrunk) FilePlan() faults.Plan {
	p := sh.Minimal.Plan()
	for i := range p.Rules {
		m := &p.Rules[i].Match
		if name, ok := strings.CutPrefix(m.Where, "outbox:"); ok {
			m.Where = "service:" + name
		}
		if c := m.Consumer; literal(c) && isInstance(c) {
			m.Consumer = c[:len(c)-1] + "[" + c[len(c)-1:] + "]"
		}
	}
	return p
}

// isInstance reports whether name has the form NAME#i of an instance.
func isInstance(name string) bool {
	i := strings.LastIndexByte(name, '#')
	if i <= 0 || i == len(name)-1 {
		return false
	}
	for _, r := range name[i+1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// MinFile returns the reproducer of sh as a scenario document: src (the
// text s was loaded from) with its faults: section replaced by
// sh.FilePlan(), its seed fixed to sh.Seed and its variants: section
// removed (their overrides may name rules that are gone), headed by
// comment lines that give the schedule in words and the command that
// reproduces it. A fault that a disable_fault action of the timeline
// names and the plan no longer has is kept as a rule that is never
// active, so the file still loads. The result is loaded and run before
// it is returned: it is an error (wrapping ErrShrink) unless it fails
// with the same failure and, for an expectation, the same first
// violation. out is the name the file will be written as. The check runs
// the file as it is, without Go handlers: a scenario whose failure needs
// handlers bound from Go has no file reproducer (use sh.Minimal with
// Options.Replay instead).
func (s *Scenario) MinFile(sh *Shrunk, src []byte, out string) ([]byte, error) {
	plan := sh.FilePlan()
	// Plan names a rule's second firing "dup-2": when the file has a rule
	// of that name of its own (which a disable_fault action may switch
	// off), the generated rule takes a name the file does not use.
	taken := map[string]bool{}
	for _, f := range s.Faults {
		taken[f.Name] = true
	}
	for _, r := range plan.Rules {
		taken[r.Name] = true
	}
	for i := range plan.Rules {
		r := &plan.Rules[i]
		base := ""
		if i < len(sh.Minimal.Decisions) {
			base = sh.Minimal.Decisions[i].Rule
		}
		if base == "" || r.Name == base || !s.hasFault(r.Name) {
			continue
		}
		name := r.Name
		for k := 2; taken[name]; k++ {
			name = base + "-shrunk-" + strconv.Itoa(k)
		}
		taken[name] = true
		r.Name = name
	}
	have := map[string]bool{}
	for _, r := range plan.Rules {
		have[r.Name] = true
	}
	for _, a := range s.Timeline {
		if a.Action != ActionDisableFault || have[a.Fault] {
			continue
		}
		for _, f := range s.Faults {
			if f.Name == a.Fault {
				// Active only after the run's last tick: it never fires
				// (MinFile's own run checks that the failure stays).
				end := min(s.Run.Cap()+1, MaxTicks-1)
				plan.Rules = append(plan.Rules, faults.Rule{Name: f.Name, Point: f.Point, From: end, Until: end + 1})
				have[f.Name] = true
			}
		}
	}
	var hdr strings.Builder
	fmt.Fprintf(&hdr, "Reproducer written by brokerlab explore from %s, seed %d.\n", s.File, sh.Seed)
	fmt.Fprintf(&hdr, "It fails %s: %s\n", sh.Failure.Text, sh.Failure.Detail)
	n := sh.Minimal.Len()
	fmt.Fprintf(&hdr, "Fault schedule (%d of the %d firings of the seed's run, shrunk in %d runs):\n", n, sh.Fired.Len(), sh.Runs)
	for _, d := range sh.Minimal.Decisions {
		hdr.WriteString("  " + d.Words() + "\n")
	}
	if n == 0 {
		hdr.WriteString("  none: the seed fails without any fault\n")
	}
	hdr.WriteString("The faults section below fires exactly that schedule, and the seed is fixed.\n")
	hdr.WriteString("Reproduce: brokerlab run " + out + "\n\n")
	seed := sh.Seed
	data, err := Rewrite{Header: hdr.String(), Seed: &seed,
		Sections: map[string]string{"faults": plan.YAML(), "variants": ""}}.Apply(src)
	if err != nil {
		return nil, err
	}
	m, err := Load(out, data)
	if err != nil {
		return nil, fmt.Errorf("%w: the reproducer does not load: %w", ErrShrink, err)
	}
	rep, err := Execute(m, Options{})
	if f, failed := FailureOf(rep, err); !failed || !f.Same(sh.Failure) || f.Expect >= 0 && f.Detail != sh.Failure.Detail {
		got := "it passes"
		if failed {
			got = "it fails " + f.String()
		}
		return data, fmt.Errorf("%w: the reproducer does not fail %s: %s", ErrShrink, sh.Failure.Text, got)
	}
	return data, nil
}

// hasFault reports whether the file has a fault rule named name.
func (s *Scenario) hasFault(name string) bool {
	for _, f := range s.Faults {
		if f.Name == name {
			return true
		}
	}
	return false
}
