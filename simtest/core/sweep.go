package core

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
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
// -brokerlab.seed) as subtests named seed=N, in parallel across
// GOMAXPROCS goroutines, each with its own World; every seed is
// deterministic. When seeds fail, it shrinks the lowest one: it reruns it
// recording the fault decisions that fired, then reruns subsets of them
// (faults.Minimize, replaying each subset exactly) until a 1-minimal
// schedule still fails with the same checker. It prints that schedule in
// words, and writes it as the faults: section of a scenario file (YAML,
// rules with tick windows and nth, to paste into a scenario file with the
// same topology; TEST-seedN.faults.yaml) and as a Go snippet
// (TEST-seedN.faults.go.txt), to t.Log and to files in -brokerlab.out or
// t.TempDir. Each rerun is a subtest of shrink/ whose expected failures
// are reported as skips. A seed that still fails with no fault firing is
// reported as such, and no plan is written. A checker misuse (a
// sim.Violation marked Misuse: an unknown consumer name, no checkers, a
// consumer routed nothing) is a test configuration error: Sweep reports it
// with what the ledger knows and shrinks nothing. Sweep returns what it
// shrank, nil when every seed passed, the failure was outside Check or
// the checks were misused.
//
// f must judge the run with w.Check and may stop with w's methods; a
// failure it reports straight on t (t.Fatal), or one outside Check (a run
// that did not drain), fails its seed but is not shrunk. f must not call
// t.Parallel: Sweep runs the seeds in parallel itself. A sweep costs one
// run per seed up to the first failure; shrinking costs a few reruns,
// O(log n) for one culprit among n fired decisions, O(n²) at worst.
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
	// Seed i of the sweep (from 0) is i+1, or the one -brokerlab.seed
	// names; seeds are made as they start, so a huge n costs no memory.
	seedAt := func(i int) uint64 { return uint64(i) + 1 }
	if s := flagSeed(); s != 0 {
		n, seedAt = 1, func(int) uint64 { return s }
	}
	var (
		mu     sync.Mutex
		failed []uint64
		runs   = map[uint64]*run{}
		next   = 0
		wg     sync.WaitGroup
		ran    atomic.Int64 // seeds whose subtest ran (a -run filter skips some)
	)
	start := time.Now()
	workers := min(runtime.GOMAXPROCS(0), n)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == n || len(failed) > 0 {
					// After a failure no seed starts: the ones below it
					// have all started, so the lowest failing seed is the
					// same on every run, whatever the scheduling.
					mu.Unlock()
					return
				}
				seed := seedAt(next)
				next++
				mu.Unlock()
				r := &run{}
				ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					ran.Add(1)
					f(t, newWorld(t, seed, r))
				})
				if !ok {
					mu.Lock()
					failed = append(failed, seed)
					runs[seed] = r
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	rate := fmt.Sprintf("in %v (%.0f seeds/s on %d goroutines)", elapsed.Round(time.Millisecond), float64(ran.Load())/elapsed.Seconds(), workers)
	if len(failed) == 0 {
		t.Logf("simtest: %d seeds passed %s", ran.Load(), rate)
		return nil
	}
	slices.Sort(failed)
	t.Logf("simtest: %d of the %d seeds that ran failed: %v; the sweep stops at the first failure (%d seeds asked) %s", len(failed), ran.Load(), short(failed), n, rate)
	seed := failed[0]
	if r := runs[seed]; misused(r.failed) {
		t.Errorf("%s", configError(seed, r))
		return nil
	}
	if len(runs[seed].failed) == 0 {
		t.Logf("simtest: seed %d failed outside Check, so it is not shrunk", seed)
		return nil
	}
	return shrink(t, seed, runs[seed].failed, f)
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
	rec, rw := probe("record", &run{mode: modeRecord})
	if rec.outside == skipped {
		return nil, fmt.Sprintf("simtest: seed %d is not shrunk: %s", seed, skipped)
	}
	if !same(rec.failed, want) {
		t.Errorf("simtest: seed %d did not fail the same way when rerun (%s): the test is not deterministic for its seed", seed, describe(rec))
		return nil, ""
	}
	fired := rw.in.Fired()
	res := &Shrunk{Seed: seed, Violations: failing, Fired: fired}
	if fired.Omitted > 0 {
		t.Errorf("simtest: seed %d fired more than %d faults; not shrunk", seed, faults.MaxDecisions)
		return nil, ""
	}
	if fired.Len() == 0 {
		return res, faultless(res, rec, want, steps)
	}
	if r, _ := probe("replay-all", &run{mode: modeReplay, schedule: &fired}); !same(r.failed, want) {
		t.Errorf("simtest: seed %d did not fail when its %d fault decisions were replayed (%s); not shrunk", seed, fired.Len(), describe(r))
		return nil, ""
	}
	// A failure that needs no fault has no fault schedule to shrink: say
	// so, and write no plan.
	if r, _ := probe("no-faults", &run{mode: modeReplay, schedule: &faults.Schedule{}}); same(r.failed, want) {
		return res, faultless(res, r, want, steps)
	}
	k := 0
	min := faults.Minimize(fired, func(s faults.Schedule) bool {
		k++
		r, _ := probe(fmt.Sprintf("step=%d", k), &run{mode: modeReplay, schedule: &s})
		return same(r.failed, want)
	})
	// Replay the minimal schedule once more to learn its own ticks and
	// opportunities, then check that the explicit plan fails alone.
	mr, mw := probe("minimal", &run{mode: modeReplay, schedule: &min})
	res.Minimal = mw.in.Fired()
	res.MinimalViolations = mr.failed
	res.Plan = res.Minimal.Plan()
	pr, pw := probe("plan", &run{mode: modePlan, plan: res.Plan})
	res.Steps = steps
	if got := pw.in.Fired(); !same(pr.failed, want) || !sameDecisions(got, res.Minimal) {
		t.Errorf("simtest: the fault plan of the minimal schedule did not reproduce it: fired %s (%s)", got.Words(), describe(pr))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "simtest: seed %d failed (%s); shrunk %d fault decisions to %d in %d reruns:\n", seed, strings.Join(want, ", "), fired.Len(), res.Minimal.Len(), steps)
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
	switch {
	case r.outside != "":
		return "it stopped: " + r.outside
	case len(r.failed) > 0:
		return "it broke " + strings.Join(checks(r.failed), ", ")
	}
	return "it passed"
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
