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
	// replayed alone (its ticks are those of the shorter run).
	Minimal faults.Schedule
	// MinimalViolations are the violations of the minimal run.
	MinimalViolations []sim.Violation
	// Plan fires exactly Minimal when run normally; it was checked to fail
	// with the same checker.
	Plan faults.Plan
	// Steps counts the reruns shrinking took.
	Steps int
	// Files are the paths of the fault plan (YAML) and the Go snippet.
	Files []string
}

// Sweep runs f for seeds 1..n (or -brokerlab.seeds of them, or only
// -brokerlab.seed) as subtests named seed=N, in parallel across
// GOMAXPROCS goroutines, each with its own World; every seed is
// deterministic. When seeds fail, it shrinks the lowest one: it reruns it
// recording the fault decisions that fired, then reruns subsets of them
// (faults.Minimize, replaying each subset exactly) until a 1-minimal
// schedule still fails with the same checker. It prints that schedule in
// words, and writes it as a scenario-ready fault plan (YAML, rules with
// tick windows and nth) and as a Go snippet, to t.Log and to files in
// -brokerlab.out or t.TempDir. Each rerun is a subtest of shrink/ whose
// expected failures are reported as skips. Sweep returns what it shrank,
// nil when every seed passed or the failure was outside Check.
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
	if len(runs[seed].failed) == 0 {
		t.Logf("simtest: seed %d failed outside Check, so it is not shrunk", seed)
		return nil
	}
	return shrink(t, seed, runs[seed].failed, f)
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

// errSkipped says a probe did not run: a -run filter excluded it.
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
	if r, _ := probe("replay-all", &run{mode: modeReplay, schedule: &fired}); !same(r.failed, want) {
		t.Errorf("simtest: seed %d did not fail when its %d fault decisions were replayed (%s); not shrunk", seed, fired.Len(), describe(r))
		return nil, ""
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
	fmt.Fprintf(&b, "fault plan for the scenario file:\n%s", indent(res.Plan.YAML()))
	snippet := goSnippet(res.Plan)
	fmt.Fprintf(&b, "Go, replacing the test's own fault rules:\n%s", indent(snippet))
	dir := flagOut()
	if dir == "" {
		dir = t.TempDir()
	}
	base := filepath.Join(dir, fileName(t.Name())+fmt.Sprintf("-seed%d", seed))
	for _, x := range []struct{ ext, body string }{{".min.yaml", "# " + res.Minimal.Words() + "\n" + res.Plan.YAML()}, {".min.go.txt", snippet}} {
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
