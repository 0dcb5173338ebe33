package simtest_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest"
)

// naiveRules are testdata/naive-billing.yaml's five probabilistic faults.
var naiveRules = []faults.Rule{
	{Name: "crash-after-charge", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02},
	{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.02},
	{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.05},
	{Name: "late", Point: faults.BrokerDelay, Probability: 0.05, Param: 2},
	{Name: "slow", Point: faults.HandlerSlow, Probability: 0.05},
}

// billing is the code under test: it charges on every delivery, with no
// check for a charge already made.
var billing = sim.HandlerFunc(func(d *sim.Delivery) error {
	d.Apply("charged " + d.Msg.Key)
	return nil
})

// naiveBilling builds testdata/naive-billing.yaml's topology and faults in
// w and runs it until the queue drained (the README shows it).
func naiveBilling(w *simtest.World) {
	w.T().Helper()
	w.Fault(faults.Rule{Name: "crash-after-charge", Point: faults.ConsumerCrashAfterEffect, Probability: 0.02})
	w.Fault(faults.Rule{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.02})
	w.Fault(faults.Rule{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.05})
	w.Fault(faults.Rule{Name: "late", Point: faults.BrokerDelay, Probability: 0.05, Param: 2})
	w.Fault(faults.Rule{Name: "slow", Point: faults.HandlerSlow, Probability: 0.05})
	q := w.Queue("payments", queue.Config{VisibilityTimeout: 3})
	p := w.Producer("shop", producer.Config{Target: q, Count: 20, KeyPattern: "order-%d"})
	w.Consumer("billing", queue.ConsumerConfig{Queue: q, Handler: billing})
	w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 500)
}

// The Go test and the scenario file have the same faults.
func TestNaiveBillingMatchesItsScenarioFile(t *testing.T) {
	s, err := scenario.LoadFile(filepath.Join("testdata", "naive-billing.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.FaultPlan().Rules; !reflect.DeepEqual(got, naiveRules) {
		t.Fatalf("the file's faults\n%#v\ndiffer from the test's\n%#v", got, naiveRules)
	}
	w := simtest.New(t, 1)
	naiveBilling(w)
	var rules []faults.Rule
	for _, r := range naiveRules {
		h, ok := w.Faults().Handle(r.Name)
		if !ok {
			t.Fatalf("naiveBilling has no rule %s", r.Name)
		}
		rules = append(rules, h.Rule())
	}
	if !reflect.DeepEqual(rules, naiveRules) {
		t.Fatalf("naiveBilling's rules differ from naiveRules")
	}
	// Seed for seed, the file run by the scenario runner breaks the same
	// guarantees on the same messages as the Go test.
	failing := 0
	for seed := uint64(1); seed <= 30; seed++ {
		rep, err := lab.Execute(s, lab.Options{Seed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		w := simtest.New(t, seed)
		naiveBilling(w)
		got, want := fmt.Sprint(w.Violations(sim.NoLoss(), sim.ExactlyOnce("payments"))), fmt.Sprint(rep.Violations())
		if got != want {
			t.Fatalf("seed %d: the Go test found\n%s\nthe scenario file\n%s", seed, got, want)
		}
		if len(rep.Violations()) > 0 {
			failing++
		}
	}
	if failing == 0 {
		t.Fatal("no seed failed: the comparison judged nothing")
	}
}

// TestNaiveHandlerSweep is meant to fail; TestSweepShrinksANaiveHandler
// runs it in a child process and judges its output.
func TestNaiveHandlerSweep(t *testing.T) {
	if os.Getenv("BROKERLAB_SIMTEST_CHILD") != "naive" {
		t.Skip("meant to fail: TestSweepShrinksANaiveHandler runs it in a child process")
	}
	simtest.Sweep(t, 200, func(t *testing.T, w *simtest.World) {
		naiveBilling(w)
		w.Check(sim.NoLoss(), sim.ExactlyOnce("payments"))
	})
}

// The acceptance test of the harness: a naive handler under five
// probabilistic faults fails within 200 seeds, the failure shrinks to at
// most two firings, and the fault plan written for the scenario file,
// loaded back through the scenario loader, fails the same way from Go.
func TestSweepShrinksANaiveHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep of 200 seeds in a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNaiveHandlerSweep$", "-brokerlab.out="+dir)
	cmd.Env = append(os.Environ(), "BROKERLAB_SIMTEST_CHILD=naive")
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err == nil {
		t.Fatalf("the naive sweep passed:\n%s", out)
	}
	m := regexp.MustCompile(`simtest: seed (\d+) failed \(([a-z, -]+)\); shrunk (\d+) fault decisions to (\d+) in (\d+) reruns:\n\s+(.*)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no shrink report in:\n%s", out)
	}
	seed, _ := strconv.ParseUint(m[1], 10, 64)
	from, _ := strconv.Atoi(m[3])
	to, _ := strconv.Atoi(m[4])
	t.Logf("seed %d (%s): %d decisions shrunk to %d in %s reruns: %s", seed, m[2], from, to, m[5], m[6])
	if seed > 200 || to < 1 || to > 2 || to > from {
		t.Fatalf("seed %d shrunk %d to %d firings:\n%s", seed, from, to, out)
	}
	if strings.Contains(out, "did not reproduce") || strings.Contains(out, "not deterministic") {
		t.Fatalf("shrinking reported a problem:\n%s", out)
	}
	// The child's first violations, to compare with the reproducer's.
	want := regexp.MustCompile(`(?m)^\s+(exactly-once: m\d+ key=\S+ consumer=payments) t=\d+: (.*)$`).FindStringSubmatch(out[strings.Index(out, m[0]):])
	if want == nil {
		t.Fatalf("no exactly-once violation after the shrink report:\n%s", out)
	}
	// The README shows this sweep's violations and its shrink word for
	// word (its TestNaiveHandlerSweep is this one).
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range regexp.MustCompile(`(?m)^\s+(exactly-once: .*|broker\.duplicate of .*)$`).FindAllStringSubmatch(out, -1) {
		if !strings.Contains(string(readme), v[1]) {
			t.Errorf("README.md does not show %q, a line of the naive sweep's output", v[1])
		}
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	base := filepath.Join(dir, "TestNaiveHandlerSweep-seed"+m[1])
	if len(files) != 2 || files[0] != base+".faults.go.txt" || files[1] != base+".faults.yaml" {
		t.Fatalf("written: %v, want %s.faults.yaml and .faults.go.txt", files, base)
	}
	minimal, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	// The file is a faults: section, not a scenario, and says so.
	if !strings.HasPrefix(string(minimal), "# The faults section that makes TestNaiveHandlerSweep fail with seed "+m[1]+" (") ||
		!strings.Contains(string(minimal), "paste it in place of the faults: section of\n# a scenario file with the same topology") {
		t.Fatalf("the written plan does not say what it is:\n%s", minimal)
	}
	if snippet, err := os.ReadFile(files[0]); err != nil || !strings.HasPrefix(string(snippet), "// The fault rules that make TestNaiveHandlerSweep fail") || !strings.Contains(string(snippet), "w.Fault(faults.Rule{") {
		t.Fatalf("the Go snippet (%v):\n%s", err, snippet)
	}
	for _, bad := range []string{"probability"} {
		if strings.Contains(string(minimal), bad) {
			t.Fatalf("the written plan has %s:\n%s", bad, minimal)
		}
	}
	if !strings.Contains(string(minimal), "nth:") || !strings.Contains(string(minimal), "until:") {
		t.Fatalf("the written plan is not explicit:\n%s", minimal)
	}
	// Splice the plan into the scenario file in place of its faults, load
	// it with the scenario loader, and run its plan against the Go
	// topology.
	file, err := os.ReadFile(filepath.Join("testdata", "naive-billing.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(file)
	i, j := strings.Index(text, "\nfaults:\n"), strings.Index(text, "\nexpect:\n")
	spliced := text[:i+1] + string(minimal) + text[j+1:]
	s, err := scenario.Load("naive-billing.min.yaml", []byte(spliced))
	if err != nil {
		t.Fatalf("the written plan does not load as a scenario's faults:\n%v\n%s", err, spliced)
	}
	plan := s.FaultPlan()
	for _, r := range plan.Rules {
		if r.Probability != 0 || r.Until == 0 || r.Nth == 0 && r.Count == 0 {
			t.Fatalf("rule %#v is not deterministic and explicit", r)
		}
	}
	w := simtest.NewPlanned(t, seed, plan)
	naiveBilling(w)
	vs := w.Violations(sim.NoLoss(), sim.ExactlyOnce("payments"))
	found := false
	for _, v := range vs {
		if strings.HasPrefix(v.String(), want[1]) && strings.HasSuffix(v.String(), want[2]) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the reproducer from Go gave %v, want %s ... %s\nplan:\n%s", vs, want[1], want[2], minimal)
	}
	if got := w.Faults().Fired(); got.Len() != to {
		t.Fatalf("the reproducer fired %s, want %d firings", got.Words(), to)
	}
	// The same file, run by the scenario runner (what brokerlab run does),
	// fails the same way.
	rep, err := lab.Execute(s, lab.Options{Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	found = false
	for _, v := range rep.Violations() {
		if strings.HasPrefix(v.String(), want[1]) && strings.HasSuffix(v.String(), want[2]) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the scenario runner gave %v, want %s ... %s", rep.Violations(), want[1], want[2])
	}
	t.Logf("reproducer:\n%s", minimal)
}

// child runs this test binary's tests matching run with the naive child
// enabled and returns its output and whether it failed.
func child(t *testing.T, run string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=" + run, "-test.v"}, args...)...)
	cmd.Env = append(os.Environ(), "BROKERLAB_SIMTEST_CHILD=naive")
	out, err := cmd.CombinedOutput()
	return string(out), err != nil
}

// failing is child for a run that must fail.
func failing(t *testing.T, run string, args ...string) string {
	t.Helper()
	out, failed := child(t, run, args...)
	if !failed {
		t.Fatalf("%s %v passed:\n%s", run, args, out)
	}
	return out
}

// The printed reproduction reruns the failing seed alone; the flags pick
// the seeds; the shrink report is the same on every run.
func TestReproductionAndFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	full := failing(t, "^TestNaiveHandlerSweep$", "-brokerlab.out="+t.TempDir())
	m := regexp.MustCompile(`reproduce: go test -run '(\^TestNaiveHandlerSweep\$/\^seed=(\d+)\$)'`).FindStringSubmatch(full)
	if m == nil {
		t.Fatalf("no reproduction line:\n%s", full)
	}
	report := func(out string) string {
		i := strings.Index(out, "simtest: seed ")
		j := strings.Index(out, "written: ")
		if i < 0 || j < i {
			t.Fatalf("no shrink report:\n%s", out)
		}
		return out[i:j]
	}
	if again := failing(t, "^TestNaiveHandlerSweep$", "-brokerlab.out="+t.TempDir()); report(again) != report(full) {
		t.Fatalf("two sweeps shrank differently:\n%s\n%s", report(full), report(again))
	}
	alone := failing(t, m[1])
	if n := strings.Count(alone, "=== RUN   TestNaiveHandlerSweep/seed="); n != 1 || !strings.Contains(alone, "--- FAIL: TestNaiveHandlerSweep/seed="+m[2]+" ") {
		t.Fatalf("the reproduction ran %d seeds:\n%s", n, alone)
	}
	if !strings.Contains(alone, "is not shrunk: the -run filter excludes shrink/") {
		t.Fatalf("the reproduction did not say why it did not shrink:\n%s", alone)
	}
	one := failing(t, "^TestNaiveHandlerSweep$", "-brokerlab.seed="+m[2])
	if n := strings.Count(one, "=== RUN   TestNaiveHandlerSweep/seed="); n != 1 || !strings.Contains(one, "simtest: seed "+m[2]+" failed") {
		t.Fatalf("-brokerlab.seed ran %d seeds:\n%s", n, one)
	}
	few, failed := child(t, "^TestNaiveHandlerSweep$", "-brokerlab.seeds=3")
	if failed || strings.Contains(few, "seed=4") || !strings.Contains(few, "simtest: 3 seeds passed") {
		t.Fatalf("-brokerlab.seeds=3 (seeds 1 to 3 pass):\n%s", few)
	}
}
