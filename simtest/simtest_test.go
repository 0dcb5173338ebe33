package simtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest"
)

// fakeT records what a test would report; Fatal and SkipNow end the
// goroutine, as they do in a test.
type fakeT struct {
	testing.TB
	mu     sync.Mutex
	name   string
	errors []string
	fatal  bool
}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Errorf(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, a...))
}
func (f *fakeT) Fatalf(format string, a ...any) {
	f.Errorf(format, a...)
	f.fatal = true
	runtime.Goexit()
}
func (f *fakeT) SkipNow() { runtime.Goexit() }

// try runs body with a fake test in its own goroutine and returns what it
// reported; it fails when body hangs.
func try(t *testing.T, body func(ft *fakeT)) *fakeT {
	t.Helper()
	ft := &fakeT{name: "TestFake"}
	done := make(chan struct{})
	go func() { defer close(done); body(ft) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("hung")
	}
	return ft
}

func charge(idempotent bool) sim.Handler {
	done := map[string]bool{}
	return sim.HandlerFunc(func(d *sim.Delivery) error {
		if idempotent && done[d.Msg.Key] {
			d.Skip("already charged")
			return nil
		}
		done[d.Msg.Key] = true
		d.Apply("charged " + d.Msg.Key)
		return nil
	})
}

func TestBadUseFailsClearly(t *testing.T) {
	cases := []struct {
		name string
		body func(w *simtest.World)
		want string
	}{
		{"check without checkers", func(w *simtest.World) { w.Check() }, "Check needs at least one checker"},
		{"nil checker", func(w *simtest.World) { w.Check(sim.NoLoss(), nil) }, "checker 2 is nil"},
		{"nil handler", func(w *simtest.World) {
			w.Consumer("billing", queue.ConsumerConfig{Queue: w.Queue("payments", queue.Config{})})
		}, "handler"},
		{"name given twice", func(w *simtest.World) { w.Queue("payments", queue.Config{Name: "orders"}) }, `the config names it "orders"; give the name once`},
		{"no name", func(w *simtest.World) { w.Queue("", queue.Config{}) }, "a name is required"},
		{"duplicate name", func(w *simtest.World) { w.Queue("a", queue.Config{}); w.Queue("a", queue.Config{}) }, "duplicate"},
		{"bad rule", func(w *simtest.World) { w.Fault(faults.Rule{Name: "x", Point: "no.such"}) }, "unknown fault point"},
		{"nil done", func(w *simtest.World) { w.RunUntil(nil, 10) }, "RunUntil needs a done condition"},
		{"not drained", func(w *simtest.World) {
			q := w.Queue("payments", queue.Config{})
			w.Producer("shop", producer.Config{Target: q, Count: 3})
			w.RunUntil(func() bool { return false }, 20)
		}, "not done"},
		{"subscriber without broker", func(w *simtest.World) { w.Subscriber("s", nil, pubsub.SubscriberConfig{}) }, "no broker"},
		{"refold without JSONL", func(w *simtest.World) { w.Refold() }, "call JSONL before the run"},
	}
	for _, c := range cases {
		ft := try(t, func(ft *fakeT) { c.body(simtest.New(ft, 3)) })
		msg := strings.Join(ft.errors, "\n")
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "seed 3") || !strings.Contains(msg, "reproduce: go test -run '^TestFake$' -brokerlab.seed=3") {
			t.Errorf("%s: reported %q, want %q with the seed and a reproduction", c.name, msg, c.want)
		}
	}
}

func TestCheckPrintsOnlyTheViolatingMessages(t *testing.T) {
	ft := try(t, func(ft *fakeT) {
		w := simtest.New(ft, 7)
		w.Fault(faults.Rule{Name: "dup", Point: faults.BrokerDuplicate, Nth: 4})
		q := w.Queue("payments", queue.Config{VisibilityTimeout: 3})
		p := w.Producer("shop", producer.Config{Target: q, Count: 10, KeyPattern: "order-%d"})
		w.Consumer("billing", queue.ConsumerConfig{Queue: q, Handler: charge(false)})
		w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 200)
		w.Check(sim.NoLoss(), sim.ExactlyOnce("payments"))
	})
	if len(ft.errors) != 1 || ft.fatal {
		t.Fatalf("reported %q", ft.errors)
	}
	got := ft.errors[0]
	for _, want := range []string{"1 delivery violation(s) with seed 7", "exactly-once: m4 key=order-4", "reproduce: go test -run '^TestFake$' -brokerlab.seed=7", `rule=dup "broker.duplicate"`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "t=") && !strings.Contains(l, " m4 ") {
			t.Errorf("a trace line about another message: %s", l)
		}
	}
}

func TestIdempotentHandlerPassesASweep(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40
	}
	res := simtest.Sweep(t, n, func(t *testing.T, w *simtest.World) {
		w.FaultRules(naiveRules...)
		q := w.Queue("payments", queue.Config{VisibilityTimeout: 3})
		p := w.Producer("shop", producer.Config{Target: q, Count: 20, KeyPattern: "order-%d"})
		w.Consumer("billing", queue.ConsumerConfig{Queue: q, Handler: charge(true)})
		w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 500)
		w.Check(sim.NoLoss(), sim.ExactlyOnce("payments"))
	})
	if res != nil {
		t.Fatal("a passing sweep shrank something")
	}
}

// Sweep subtests are deterministic per seed: the same seed gives the same
// trace in the sweep and alone.
func TestSweepIsDeterministicPerSeed(t *testing.T) {
	var mu sync.Mutex
	traces := map[uint64]string{}
	body := func(w *simtest.World) string {
		w.FaultRules(naiveRules...)
		q := w.Queue("payments", queue.Config{VisibilityTimeout: 3})
		p := w.Producer("shop", producer.Config{Target: q, Count: 20, KeyPattern: "order-%d"})
		w.Consumer("billing", queue.ConsumerConfig{Queue: q, Handler: charge(true)})
		w.RunUntil(func() bool { return p.Done() && q.Len() == 0 }, 500)
		return w.TraceText()
	}
	simtest.Sweep(t, 16, func(t *testing.T, w *simtest.World) {
		tr := body(w)
		mu.Lock()
		traces[w.Seed()] = tr
		mu.Unlock()
	})
	if len(traces) != 16 {
		t.Fatalf("%d seeds ran", len(traces))
	}
	for seed, tr := range traces {
		if again := body(simtest.New(t, seed)); again != tr {
			t.Fatalf("seed %d: the sweep's trace differs from a run alone", seed)
		}
	}
	if traces[1] == traces[2] {
		t.Fatal("seeds 1 and 2 ran the same")
	}
}

// Sweep's bad uses fail the test at once, in a child process.
func TestSweepBadUseFailsClearly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for _, c := range []struct{ child, want string }{
		{"zero", "simtest: Sweep needs a positive number of seeds, got 0"},
		{"negative", "simtest: Sweep needs a positive number of seeds, got -3"},
		{"nil", "simtest: Sweep needs a test function, got nil"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSweepBadUseChild$")
		cmd.Env = append(os.Environ(), "BROKERLAB_SIMTEST_CHILD="+c.child)
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: err %v, output:\n%s", c.child, err, out)
		}
	}
}

func TestSweepBadUseChild(t *testing.T) {
	switch os.Getenv("BROKERLAB_SIMTEST_CHILD") {
	case "zero":
		simtest.Sweep(t, 0, func(*testing.T, *simtest.World) {})
	case "negative":
		simtest.Sweep(t, -3, func(*testing.T, *simtest.World) {})
	case "nil":
		simtest.Sweep(t, 5, nil)
	default:
		t.Skip("run by TestSweepBadUseFailsClearly")
	}
}
