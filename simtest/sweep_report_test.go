package simtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest"
)

// twice applies every delivery's effect two times: it breaks exactly-once
// with no fault at all.
var twice = sim.HandlerFunc(func(d *sim.Delivery) error {
	d.Apply("charged " + d.Msg.Key)
	d.Apply("charged " + d.Msg.Key + " again")
	return nil
})

// TestSweepReportChild holds the sweeps meant to fail that
// TestSweepReports judges; BROKERLAB_SIMTEST_CHILD picks one.
func TestSweepReportChild(t *testing.T) {
	which := os.Getenv("BROKERLAB_SIMTEST_CHILD")
	run := func(rules []faults.Rule, h sim.Handler, check func(w *simtest.World)) {
		simtest.Sweep(t, 8, func(t *testing.T, w *simtest.World) {
			w.FaultRules(rules...)
			q := w.Queue("payments", queue.Config{VisibilityTimeout: 3})
			p := w.Producer("shop", producer.Config{Target: q, Count: 5, KeyPattern: "order-%d"})
			w.Consumer("billing", queue.ConsumerConfig{Queue: q, Handler: h, Instances: 2})
			w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 500)
			check(w)
		})
	}
	slow := []faults.Rule{{Name: "slow", Point: faults.HandlerSlow, Probability: 0.5}}
	switch which {
	case "worker-name":
		run(slow, billing, func(w *simtest.World) { w.Check(sim.NoLoss(), sim.ExactlyOnce("billing")) })
	case "no-checkers":
		run(slow, billing, func(w *simtest.World) { w.Check() })
	case "no-fault-needed":
		run(slow, twice, func(w *simtest.World) { w.Check(sim.ExactlyOnce("payments")) })
	case "no-rules":
		run(nil, twice, func(w *simtest.World) { w.Check(sim.ExactlyOnce("payments")) })
	default:
		t.Skip("meant to fail: TestSweepReports runs it in a child process")
	}
}

// A checker misuse stops the sweep as a configuration error, naming what
// the ledger knows, and shrinks nothing; a failure that needs no fault is
// said to, and no plan is written for it.
func TestSweepReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	cases := []struct {
		child string
		want  []string
	}{
		{"worker-name", []string{
			"simtest: test configuration error: seed 1's Check is set up wrong, so the sweep stops at it and shrinks nothing",
			`the ledger knows no consumer "billing"; it knows: "payments"; "billing" is a worker of queue "payments": checks name the queue (sim.ExactlyOnce("payments"))`,
			`the ledger knows the logical consumers "payments"`,
			"1 violation(s) with seed 1; a test configuration error (the check is set up wrong) is among them:",
		}},
		{"no-checkers", []string{
			"simtest: test configuration error: seed 1's Check is set up wrong",
			"Check needs at least one checker",
			`the ledger knows the logical consumers "payments"`,
		}},
		{"no-fault-needed", []string{
			"seed 1 fails with no fault at all: the failure does not depend on the fault schedule",
			"exactly-once: m1 key=order-1 consumer=payments",
		}},
		{"no-rules", []string{
			"simtest: seed 1 failed (exactly-once); seed 1 fails with no fault at all: the failure does not depend on the fault schedule (0 fault decisions fired; none is needed)",
		}},
	}
	for _, c := range cases {
		t.Run(c.child, func(t *testing.T) {
			t.Setenv("BROKERLAB_SIMTEST_CHILD", c.child)
			dir := t.TempDir()
			out := failingChild(t, "^TestSweepReportChild$", "-test.v", "-brokerlab.out="+dir)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
			for _, bad := range []string{"shrunk ", "faults section", "Go, replacing", "written: "} {
				if strings.Contains(out, bad) {
					t.Errorf("%q in:\n%s", bad, out)
				}
			}
			if bad := "/shrink/step="; strings.Contains(out, bad) || (c.child == "worker-name" || c.child == "no-checkers") && strings.Contains(out, "/shrink") {
				t.Errorf("it shrank:\n%s", out)
			}
			if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) > 0 {
				t.Errorf("files written: %v", files)
			}
		})
	}
}

// failingChild runs this test binary's tests matching run, with the
// environment of the test, and returns the output of its failure.
func failingChild(t *testing.T, run string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=" + run}, args...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%s %v passed:\n%s", run, args, out)
	}
	return string(out)
}
