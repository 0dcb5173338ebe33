package core

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/sweep"
)

// Shrunk is what Sweep found and shrank.
type Shrunk struct {
	Seed uint64
	// Violations of the failing seed's Check.
	Violations []sim.Violation
	// Fired is every fault decision of the failing run.
	Fired faults.Schedule
	// Minimal is the 1-minimal schedule that still fails, as fired when
	// replayed alone (its ticks are those of the shorter run); empty when
	// the seed fails with no fault at all.
	Minimal faults.Schedule
	// MinimalViolations are the violations of the minimal run.
	MinimalViolations []sim.Violation
	// Plan fires exactly Minimal when run normally; it was checked to fail
	// with the same checker. It is empty when Minimal is.
	Plan faults.Plan
	// Steps counts the reruns shrinking took.
	Steps int
	// Files are the paths of the faults section (TEST-seedN.faults.yaml)
	// and the Go snippet (TEST-seedN.faults.go.txt); none when Minimal is
	// empty.
	Files []string
}

// Sweep runs f for seeds 1..n (or -brokerlab.seeds of them, or only
// -brokerlab.seed) in parallel across GOMAXPROCS goroutines (sweep.Run),
// each with its own World; every seed is deterministic. A passing seed
// costs what the Go API costs: its World records no trace and gets no
// subtest, and f is handed t itself. A failing seed is run again as a
// subtest named seed=N with its trace recorded, which reports the
// failure with the trace lines that concern it and a reproduction that
// reruns that subtest alone. A -run or -skip pattern that reaches below
// the test, and -brokerlab.seed, make every seed a subtest again, so the
// pattern picks the seeds. When seeds fail, Sweep shrinks the lowest one
// (sweep.Shrink): it reruns it recording the fault decisions that fired,
// then reruns subsets of them (faults.Minimize, replaying each subset
// exactly) until a 1-minimal schedule still fails with the same checker.
// It prints that schedule in words, and writes it as the faults: section
// of a scenario file (YAML, rules with tick windows and nth, to paste into
// a scenario file with the same topology; TEST-seedN.faults.yaml) and as a
// Go snippet (TEST-seedN.faults.go.txt), to t.Log and to files in
// -brokerlab.out or t.TempDir. Each rerun is a subtest of shrink/ whose
// expected failures are reported as skips. A seed that still fails with
// no fault firing is reported as such, and no plan is written. A checker
// misuse (a sim.Violation marked Misuse: an unknown consumer name, no
// checkers, a consumer routed nothing) is a test configuration error:
// Sweep reports it with what the ledger knows and shrinks nothing. Sweep
// returns what it shrank, nil when every seed passed, the failure was
// outside Check or the checks were misused.
//
// f must judge the run with w.Check and may stop with w's methods. A
// failure it reports straight on t (t.Error, t.Fatal) fails the sweep's
// test, and its seed is the first one that notices; t.Skip skips the
// whole sweep; t.Cleanup and t.TempDir belong to the sweep's test and end
// with it. f must not call t.Parallel: Sweep runs the seeds in parallel
// itself. A World that is asked for its trace (Events, Recorder,
// TraceText, Violations with violations) after its run began makes the
// sweep record every later seed's trace, and reruns that seed with it. A
// sweep costs one run per seed up to the first failure, one more for the
// failing seed's report; shrinking costs a few reruns, O(log n) for one
// culprit among n fired decisions, O(n²) at worst.
func Sweep(t *testing.T, n int, f func(t *testing.T, w *World)) *Shrunk {
	t.Helper()
	switch {
	case f == nil:
		t.Fatalf("simtest: Sweep needs a test function, got nil")
		return nil
	case n <= 0:
		t.Fatalf("simtest: Sweep needs a positive number of seeds, got %d", n)
		return nil
	}
	if s := flagSeeds(); s > 0 {
		n = s
	}
	space := sweep.Seeds{From: 1, Count: uint64(n)}
	if s := flagSeed(); s != 0 {
		space = sweep.Seeds{From: s, Count: 1}
	}
	subtests := flagSeed() != 0 || filtered(t.Name())
	var (
		entered   atomic.Int64 // seeds whose subtest ran (a -run filter skips some)
		wantTrace atomic.Bool  // f reads the trace: record it from the start
	)
	probe := func(rn *runner, seed uint64) (*run, bool, error) {
		r := &run{}
		if subtests {
			ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				entered.Add(1)
				f(t, newWorld(t, seed, r))
			})
			return r, !ok, nil
		}
		before := t.Failed()
		r = quiet(rn, t, seed, wantTrace.Load(), f)
		if r.needTrace {
			wantTrace.Store(true)
			r = quiet(rn, t, seed, true, f)
		}
		if !before && t.Failed() && r.ok() {
			r.outside = "the test failed on t itself"
		}
		return r, !r.ok(), nil
	}
	// Each of sweep.Run's workers runs its quiet seeds on a runner of its
	// own; they all end when the sweep does.
	var (
		mu      sync.Mutex
		runners []*runner
	)
	defer func() {
		for _, rn := range runners {
			rn.close()
		}
	}()
	newProbe := func() (sweep.Probe[*run], error) {
		rn := newRunner()
		mu.Lock()
		runners = append(runners, rn)
		mu.Unlock()
		return func(seed uint64) (*run, bool, error) { return probe(rn, seed) }, nil
	}
	rep, err := sweep.Run(sweep.Config{Seeds: space, StopAtFirst: true}, newProbe)
	if err != nil {
		t.Fatalf("simtest: %v", err)
		return nil
	}
	ran := int64(rep.Ran)
	if subtests {
		ran = entered.Load()
	}
	rate := fmt.Sprintf("in %v (%.0f seeds/s on %d goroutines", rep.Wall.Round(time.Millisecond), float64(ran)/max(rep.Wall.Seconds(), 1e-9), rep.Jobs)
	if rep.CPU > 0 {
		rate += fmt.Sprintf(", %.0f per CPU-second", float64(ran)/rep.CPU.Seconds())
	}
	rate += ")"
	if len(rep.Failures) == 0 {
		t.Logf("simtest: %d seeds passed %s", ran, rate)
		return nil
	}
	failed := make([]uint64, len(rep.Failures))
	for i, x := range rep.Failures {
		failed[i] = x.Seed
	}
	t.Logf("simtest: %d of the %d seeds that ran failed: %v; the sweep stops at the first failure (%d seeds asked) %s", len(failed), ran, short(failed), n, rate)
	seed, r := failed[0], rep.Failures[0].Value
	if !subtests {
		// The sweep ran the seed quietly: run it again as its own
		// subtest, with its trace, to report it.
		quietly := r
		r = &run{}
		entered := false
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			entered = true
			f(t, newWorld(t, seed, r))
		})
		switch {
		case !entered:
			t.Errorf("simtest: seed %d failed (%s), and the -skip pattern excludes its subtest seed=%d, which reports it", seed, describe(quietly), seed)
			return nil
		case ok:
			t.Errorf("simtest: seed %d failed in the sweep (%s) but passed when rerun as seed=%d: the test is not deterministic for its seed", seed, describe(quietly), seed)
			return nil
		}
	}
	if misused(r.failed) {
		t.Errorf("%s", configError(seed, r))
		return nil
	}
	if len(r.failed) == 0 {
		t.Logf("simtest: seed %d failed outside Check, so it is not shrunk", seed)
		return nil
	}
	return shrink(t, seed, r.failed, f)
}

// Probe runs f for seed the way Sweep runs every seed before it knows
// the seed fails: on a World bound to t that records no trace (unless f
// asks for it) and reports nothing, with no subtest. It returns nil when
// the seed passed, and otherwise an error that says how it failed,
// without the trace: run the seed with New (or Sweep's seed=N subtest) to
// see the report. f gets t itself, and a failure it reports straight on t
// fails t. What a Probe costs is what a sweep pays per passing seed, but
// for the two goroutine handoffs a sweep worker makes per seed: a
// benchmark or a loop of one's own can call it; -brokerlab.seed does not
// apply. f runs on the caller's goroutine, so a seed costs no goroutine
// switch: when the World finds the seed failed it ends f by a panic that
// Probe recovers (f's deferred calls run, as they would on any stop),
// while a t.FailNow or t.SkipNow of f's own ends the caller's goroutine,
// as it does anywhere else in a test. f must let that panic pass: a
// deferred recover in f that takes it is reported, as a failure of the
// seed that says so.
func Probe[T testing.TB](t T, seed uint64, f func(t T, w *World)) error {
	t.Helper()
	if f == nil {
		return errors.New("simtest: Probe needs a test function, got nil")
	}
	r := quiet(nil, t, seed, false, f)
	if r.needTrace {
		r = quiet(nil, t, seed, true, f)
	}
	if r.ok() {
		return nil
	}
	return fmt.Errorf("simtest: seed %d failed: %s", seed, describe(r))
}

// quiet runs f for seed on a World that records no trace (unless record
// is set) and reports nothing: a failure the World finds ends f (see
// World.stop) and is kept in the run returned. f gets t itself. It runs f
// on rn's goroutine, or on the caller's when rn is nil; a Goexit in f
// (t.FailNow) ends that goroutine.
func quiet[T testing.TB](rn *runner, t T, seed uint64, record bool, f func(T, *World)) *run {
	r := &run{quiet: true, record: record}
	job := func() {
		defer r.recoverStop()
		f(t, newWorld(quietT{t}, seed, r))
		r.returned = true
		// A deferred recover in f took the stop, and f went on as if the
		// seed had not failed: the failure stands, and describe says so.
		r.swallowed = r.stopping
	}
	if rn == nil {
		job()
	} else {
		rn.do(job)
	}
	return r
}

// recoverStop, deferred around f, recovers the panic of this run's
// World's stop and lets any other panic go on. It recovers only while a
// stop is under way, so a panic of f's own is never touched: it crashes
// the test exactly as it would without Probe. The one exception is a
// panic of f's deferred calls while f is being stopped, which is
// recovered and raised again (its stack then starts here).
func (r *run) recoverStop() {
	if !r.stopping {
		return
	}
	// nil when a deferred call of f's recovered the stop; another value
	// when one panicked while f was being stopped.
	if x := recover(); x != nil {
		if st, ok := x.(stopped); !ok || st.r != r {
			panic(x)
		}
	}
}

// quietT is the test a quiet World is bound to: t, without Helper, whose
// lock every worker would otherwise take on every call.
type quietT struct{ testing.TB }

func (quietT) Helper() {}

// filtered reports whether a -run or -skip pattern reaches below the
// test called name: then its seeds must be subtests for the pattern to
// pick them.
func filtered(name string) bool {
	depth := strings.Count(name, "/") + 1
	for _, fl := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(fl); f != nil && f.Value.String() != "" && len(splitPattern(f.Value.String())) > depth {
			return true
		}
	}
	return false
}

// splitPattern splits a -run pattern at its slashes that are not inside
// brackets or parentheses, as the testing package does. Alternatives
// (a|b) are not told apart: a pattern any of whose alternatives reaches
// below the test keeps the subtests, as a sweep had them before.
func splitPattern(p string) []string {
	var out []string
	cs, cp, start := 0, 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '[':
			cs++
		case ']':
			if cs > 0 {
				cs--
			}
		case '(':
			if cs == 0 {
				cp++
			}
		case ')':
			if cs == 0 {
				cp--
			}
		case '\\':
			i++
		case '/':
			if cs == 0 && cp == 0 {
				out = append(out, p[start:i])
				start = i + 1
			}
		}
	}
	return append(out, p[start:])
}

// misused reports whether vs has a violation about how the check was
// asked (sim.Violation.Misuse).
func misused(vs []sim.Violation) bool {
	return slices.ContainsFunc(vs, func(v sim.Violation) bool { return v.Misuse })
}

// configError reports a checker misuse of seed's run r: a test
// configuration error, which no fault schedule explains.
func configError(seed uint64, r *run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "simtest: test configuration error: seed %d's Check is set up wrong, so the sweep stops at it and shrinks nothing (no fault schedule explains it):\n", seed)
	for _, v := range r.failed {
		if v.Misuse {
			fmt.Fprintf(&b, "  %s\n", v.String())
		}
	}
	known := "no logical consumer"
	if len(r.known) > 0 {
		q := make([]string, len(r.known))
		for i, k := range r.known {
			q[i] = fmt.Sprintf("%q", k)
		}
		known = "the logical consumers " + strings.Join(q, ", ")
	}
	fmt.Fprintf(&b, "the ledger knows %s; checks name those (a queue's workers under the queue's name, a group member under its group)", known)
	return b.String()
}

func short(s []uint64) string {
	if len(s) > 20 {
		return fmt.Sprint(s[:20]) + fmt.Sprintf(" and %d more", len(s)-20)
	}
	return fmt.Sprint(s)
}

// checks returns the names of the checkers in vs, sorted.
func checks(vs []sim.Violation) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v.Check) {
			out = append(out, v.Check)
		}
	}
	slices.Sort(out)
	return out
}

// same reports whether vs breaches one of the checkers named in want.
func same(vs []sim.Violation, want []string) bool {
	for _, v := range vs {
		if slices.Contains(want, v.Check) {
			return true
		}
	}
	return false
}

// shrink minimises the failing seed's fault schedule and writes it out.
func shrink(t *testing.T, seed uint64, failing []sim.Violation, f func(*testing.T, *World)) *Shrunk {
	t.Helper()
	var (
		res    *Shrunk
		report string
	)
	entered := false
	ran := t.Run("shrink", func(st *testing.T) {
		entered = true
		res, report = shrinkIn(t, st, seed, failing, f)
	})
	if !entered {
		report = fmt.Sprintf("simtest: seed %d is not shrunk: %s", seed, skipped)
	}
	if report != "" {
		t.Log(report)
	}
	if !ran && res == nil {
		t.Errorf("simtest: shrinking seed %d failed", seed)
	}
	return res
}

// skipped says a probe did not run: a -run filter excluded it.
const skipped = "the -run filter excludes shrink/; run the whole test to shrink"

// errSkipped stops a shrink whose probe a -run filter excluded.
var errSkipped = errors.New(skipped)

// shrinkIn shrinks as the subtest st of t: each rerun is a subtest of st.
func shrinkIn(t, st *testing.T, seed uint64, failing []sim.Violation, f func(*testing.T, *World)) (*Shrunk, string) {
	want := checks(failing)
	steps := 0
	// probe reruns seed in mode r and returns r and its world once it ran.
	probe := func(name string, r *run) (*run, *World) {
		r.probe = true
		steps++
		var w *World
		st.Run(name, func(t *testing.T) {
			w = newWorld(t, seed, r)
			f(t, w)
		})
		if w == nil {
			r.outside = skipped
			w = newWorld(st, seed, &run{})
		}
		return r, w
	}
	var (
		mr *run   // the last rerun
		mw *World // and its world
	)
	replay := func(step sweep.Step, s *faults.Schedule) (faults.Schedule, bool, error) {
		name, r := step.Phase.String(), &run{mode: modeRecord}
		if step.Phase == sweep.PhaseMinimize {
			name = fmt.Sprintf("step=%d", step.N)
		}
		if s != nil {
			r = &run{mode: modeReplay, schedule: s}
		}
		mr, mw = probe(name, r)
		if mr.outside == skipped {
			return faults.Schedule{}, false, errSkipped
		}
		return mw.in.Fired(), same(mr.failed, want), nil
	}
	sh, err := sweep.Shrink(sweep.ShrinkConfig{}, replay)
	res := &Shrunk{Seed: seed, Violations: failing, Fired: sh.Fired}
	switch {
	case errors.Is(err, errSkipped):
		return nil, fmt.Sprintf("simtest: seed %d is not shrunk: %s", seed, skipped)
	case errors.Is(err, sweep.ErrPasses):
		t.Errorf("simtest: seed %d did not fail the same way when rerun (%s): the test is not deterministic for its seed", seed, describe(mr))
		return nil, ""
	case errors.Is(err, sweep.ErrTooMany):
		t.Errorf("simtest: seed %d fired more than %d faults; not shrunk", seed, faults.MaxDecisions)
		return nil, ""
	case errors.Is(err, sweep.ErrReplay):
		t.Errorf("simtest: seed %d did not fail when its %d fault decisions were replayed (%s); not shrunk", seed, sh.Fired.Len(), describe(mr))
		return nil, ""
	case err != nil:
		t.Errorf("simtest: seed %d: %v (%s); not shrunk", seed, err, describe(mr))
		return nil, ""
	case sh.Faultless:
		// A failure that needs no fault has no fault schedule to shrink:
		// say so, and write no plan.
		return res, faultless(res, mr, want, steps)
	}
	res.Minimal = sh.Minimal
	res.MinimalViolations = mr.failed
	res.Plan = res.Minimal.Plan()
	pr, pw := probe("plan", &run{mode: modePlan, plan: res.Plan})
	res.Steps = steps
	if got := pw.in.Fired(); !same(pr.failed, want) || !sameDecisions(got, res.Minimal) {
		t.Errorf("simtest: the fault plan of the minimal schedule did not reproduce it: fired %s (%s)", got.Words(), describe(pr))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "simtest: seed %d failed (%s); shrunk %d fault decisions to %d in %d reruns:\n", seed, strings.Join(want, ", "), sh.Fired.Len(), res.Minimal.Len(), steps)
	fmt.Fprintf(&b, "  %s\n", res.Minimal.Words())
	for _, v := range mr.failed {
		fmt.Fprintf(&b, "  %s\n", v.String())
	}
	fmt.Fprintf(&b, "faults section, to paste into a scenario file with the same topology:\n%s", indent(res.Plan.YAML()))
	snippet := goSnippet(res.Plan)
	fmt.Fprintf(&b, "Go, replacing the test's own fault rules:\n%s", indent(snippet))
	dir := flagOut()
	if dir == "" {
		dir = t.TempDir()
	}
	base := filepath.Join(dir, fileName(t.Name())+fmt.Sprintf("-seed%d", seed))
	yamlHead := fmt.Sprintf("# The faults section that makes %s fail with seed %d (%s).\n"+
		"# It is not a scenario by itself: paste it in place of the faults: section of\n"+
		"# a scenario file with the same topology, and run that file with seed %d.\n", t.Name(), seed, res.Minimal.Words(), seed)
	goHead := fmt.Sprintf("// The fault rules that make %s fail with seed %d (%s):\n"+
		"// replace the test's own w.Fault calls with them, or run the plan with\n"+
		"// simtest.NewPlanned(t, %d, plan) against the test's topology.\n", t.Name(), seed, res.Minimal.Words(), seed)
	for _, x := range []struct{ ext, body string }{{".faults.yaml", yamlHead + res.Plan.YAML()}, {".faults.go.txt", goHead + snippet}} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Errorf("simtest: %v", err)
			break
		}
		if err := os.WriteFile(base+x.ext, []byte(x.body), 0o644); err != nil {
			t.Errorf("simtest: %v", err)
			continue
		}
		res.Files = append(res.Files, base+x.ext)
	}
	if len(res.Files) > 0 {
		fmt.Fprintf(&b, "written: %s\n", strings.Join(res.Files, ", "))
		if flagOut() == "" {
			b.WriteString("(the test's TempDir is removed when it ends: -brokerlab.out=DIR keeps the files)\n")
		}
	}
	return res, strings.TrimSuffix(b.String(), "\n")
}

// faultless completes res for a seed that fails with no fault firing (run
// r) and returns the report.
func faultless(res *Shrunk, r *run, want []string, steps int) string {
	res.MinimalViolations = r.failed
	res.Steps = steps
	var b strings.Builder
	fmt.Fprintf(&b, "simtest: seed %d failed (%s); seed %d fails with no fault at all: the failure does not depend on the fault schedule (%d fault decisions fired; none is needed), so no fault plan is written:\n", res.Seed, strings.Join(want, ", "), res.Seed, res.Fired.Len())
	for _, v := range r.failed {
		fmt.Fprintf(&b, "  %s\n", v.String())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func describe(r *run) string {
	var what string
	switch {
	case r.outside != "":
		what = "it stopped: " + r.outside
	case len(r.failed) > 0:
		what = "it broke " + strings.Join(checks(r.failed), ", ")
	case r.quiet && !r.returned:
		return "it stopped on t itself (t.Fatal, t.Skip)"
	default:
		return "it passed"
	}
	if r.swallowed {
		what += "; then f recovered the World's stop and went on: f must not recover simtest's stop panic"
	}
	return what
}

// sameDecisions compares schedules without their rule names, which a Plan
// renames.
func sameDecisions(a, b faults.Schedule) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Decisions {
		x, y := a.Decisions[i], b.Decisions[i]
		x.Rule, y.Rule = "", ""
		if x != y {
			return false
		}
	}
	return true
}

// goSnippet writes the plan as calls of World.Fault.
func goSnippet(p faults.Plan) string {
	var b strings.Builder
	for _, r := range p.Rules {
		fmt.Fprintf(&b, "w.Fault(%#v)\n", r)
	}
	return b.String()
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("  ")
			b.WriteString(l)
		}
	}
	return b.String()
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func fileName(test string) string { return unsafeName.ReplaceAllString(test, "_") }
