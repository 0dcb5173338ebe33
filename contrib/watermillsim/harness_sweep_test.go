package watermillsim_test

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// sweepConfig is a work queue whose broker sometimes delivers a message
// twice; dup is the probability.
func sweepConfig(dup float64) watermillsim.HarnessConfig {
	cfg := watermillsim.HarnessConfig{Config: watermillsim.Config{Kind: watermillsim.KindQueue, VisibilityTimeout: 40}, Topics: []string{"orders"}}
	if dup > 0 {
		cfg.Faults = []faults.Rule{{Name: "dup", Point: faults.BrokerDuplicate, Probability: dup}}
	}
	return cfg
}

// chargeOrders runs a Router whose handler charges every order it gets,
// with no check for a charge already made, publishes ten orders, and
// fails t unless each was charged exactly once.
func chargeOrders(t *testing.T, h *watermillsim.Harness) {
	r, err := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	r.AddNoPublisherHandler("billing", "orders", h.Subscriber("billing"), func(*message.Message) error { return nil })
	h.Run(r)
	for i := 1; i <= 10; i++ {
		if err := h.Publisher().Publish("orders", h.NewMessage([]byte(strconv.Itoa(i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.RunUntil(h.Settled, 5000); err != nil {
		t.Fatal(err)
	}
	if err := h.Check(sim.NoLoss(), sim.ExactlyOnce("orders")); err != nil {
		t.Error(err)
	}
}

// Every seed of a sweep without faults passes.
func TestSweepPasses(t *testing.T) {
	if seed := watermillsim.Sweep(t, sweepConfig(0), 4, chargeOrders); seed != 0 {
		t.Fatalf("seed %d failed", seed)
	}
}

// TestSweepChild is the sweep meant to fail that TestSweepStopsAtTheLowestFailingSeed
// runs in a child process.
func TestSweepChild(t *testing.T) {
	if os.Getenv("WATERMILLSIM_SWEEP_CHILD") == "" {
		t.Skip("meant to fail: TestSweepStopsAtTheLowestFailingSeed runs it in a child process")
	}
	watermillsim.Sweep(t, sweepConfig(0.04), 40, chargeOrders)
}

// A sweep under seeded duplicates stops at the same lowest failing seed
// on one processor and on two, every seed below it passed, and the
// rerun it prints runs that seed alone, failing the same way.
func TestSweepStopsAtTheLowestFailingSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	run := func(procs, pattern string) string {
		cmd := exec.Command(os.Args[0], "-test.run="+pattern, "-test.v")
		cmd.Env = append(os.Environ(), "WATERMILLSIM_SWEEP_CHILD=1", "GOMAXPROCS="+procs)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("GOMAXPROCS=%s -run %s passed:\n%s", procs, pattern, out)
		}
		return string(out)
	}
	lowest := regexp.MustCompile(`seed (\d+) is the lowest failing seed .* rerun it alone with go test -run '(.*)'`)
	var seed string
	for _, procs := range []string{"1", "2"} {
		out := run(procs, "^TestSweepChild$")
		m := lowest.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("GOMAXPROCS=%s: no lowest failing seed in:\n%s", procs, out)
		}
		if seed == "" {
			seed = m[1]
		} else if m[1] != seed {
			t.Fatalf("GOMAXPROCS=%s: lowest failing seed %s, with one processor %s", procs, m[1], seed)
		}
		n, _ := strconv.Atoi(seed)
		for s := 1; s < n; s++ {
			if !strings.Contains(out, "--- PASS: TestSweepChild/seed="+strconv.Itoa(s)+" ") {
				t.Errorf("GOMAXPROCS=%s: seed %d, below the lowest failing seed %d, did not pass", procs, s, n)
			}
		}
		if !strings.Contains(out, "--- FAIL: TestSweepChild/seed="+seed+" ") || !strings.Contains(out, "effect applied 2 times") {
			t.Fatalf("GOMAXPROCS=%s: seed %s did not fail on exactly-once:\n%s", procs, seed, out)
		}
		if procs == "1" {
			alone := run(procs, m[2])
			if strings.Count(alone, "=== RUN   TestSweepChild/seed=") != 1 || !strings.Contains(alone, "--- FAIL: TestSweepChild/seed="+seed+" ") {
				t.Fatalf("the rerun did not run seed %s alone:\n%s", seed, alone)
			}
		}
	}
}
