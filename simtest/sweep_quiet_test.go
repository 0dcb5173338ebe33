package simtest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest"
)

// TestSweepQuietChild holds the sweeps TestSweepPassingSeedsHaveNoSubtest
// judges; BROKERLAB_SIMTEST_CHILD picks one.
func TestSweepQuietChild(t *testing.T) {
	topology := func(w *simtest.World, h sim.Handler) {
		q := w.Queue("payments", queue.Config{VisibilityTimeout: 3})
		p := w.Producer("shop", producer.Config{Target: q, Count: 10, KeyPattern: "order-%d"})
		w.Consumer("billing", queue.ConsumerConfig{Queue: q, Handler: h})
		w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 500)
	}
	switch os.Getenv("BROKERLAB_SIMTEST_CHILD") {
	case "quiet-pass":
		simtest.Sweep(t, 50, func(t *testing.T, w *simtest.World) {
			topology(w, billing)
			w.Check(sim.NoLoss(), sim.ExactlyOnce("payments"))
		})
	case "quiet-events":
		// The test reads the trace after the run: the sweep must record it.
		simtest.Sweep(t, 20, func(t *testing.T, w *simtest.World) {
			topology(w, billing)
			if n := len(w.Events(sim.KindSent)); n != 10 {
				t.Errorf("seed %d: %d sent events, want 10", w.Seed(), n)
			}
			w.Check(sim.NoLoss())
		})
	case "quiet-fail":
		simtest.Sweep(t, 50, func(t *testing.T, w *simtest.World) {
			topology(w, twice)
			w.Check(sim.ExactlyOnce("payments"))
		})
	default:
		t.Skip("TestSweepPassingSeedsHaveNoSubtest runs it in a child process")
	}
}

// A sweep gives a passing seed no subtest and records no trace for it; a
// failing seed gets its seed=N subtest, with the trace lines of the
// violation; a test that reads the trace after the run still sees it.
func TestSweepPassingSeedsHaveNoSubtest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	run := func(which string) (string, bool) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSweepQuietChild$", "-test.v", "-brokerlab.out="+t.TempDir())
		cmd.Env = append(os.Environ(), "BROKERLAB_SIMTEST_CHILD="+which)
		out, err := cmd.CombinedOutput()
		return string(out), err != nil
	}
	for _, which := range []string{"quiet-pass", "quiet-events"} {
		out, failed := run(which)
		if failed || strings.Contains(out, "TestSweepQuietChild/seed=") || !strings.Contains(out, " seeds passed in ") {
			t.Errorf("%s: a passing sweep failed or made subtests:\n%s", which, out)
		}
	}
	out, failed := run("quiet-fail")
	if !failed || strings.Count(out, "=== RUN   TestSweepQuietChild/seed=") != 1 || !strings.Contains(out, "=== RUN   TestSweepQuietChild/seed=1\n") {
		t.Fatalf("a failing sweep did not run its first failing seed, alone, as a subtest:\n%s", out)
	}
	for _, want := range []string{
		"reproduce: go test -run '^TestSweepQuietChild$/^seed=1$'",
		"trace of the violating messages and their copies",
		"seed 1 fails with no fault at all",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}
