package watermillsim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
	"github.com/brokerlab/brokerlab/sim"
)

// recT is a *testing.T whose Error, Fatal and Log calls are recorded
// instead of failing the test; Fatal panics with errFatal after
// recording, which the test recovers.
type recT struct {
	*testing.T
	mu   sync.Mutex
	errs []string
	logs []string
}

var errFatal = errors.New("fatal")

func (r *recT) Error(a ...any) { r.mu.Lock(); r.errs = append(r.errs, fmt.Sprint(a...)); r.mu.Unlock() }
func (r *recT) Errorf(f string, a ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(f, a...))
	r.mu.Unlock()
}
func (r *recT) Fatal(a ...any)            { r.Error(a...); panic(errFatal) }
func (r *recT) Fatalf(f string, a ...any) { r.Errorf(f, a...); panic(errFatal) }
func (r *recT) Log(a ...any)              { r.mu.Lock(); r.logs = append(r.logs, fmt.Sprint(a...)); r.mu.Unlock() }
func (r *recT) Logf(f string, a ...any) {
	r.mu.Lock()
	r.logs = append(r.logs, fmt.Sprintf(f, a...))
	r.mu.Unlock()
}

func (r *recT) errors() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

func queueConfig() watermillsim.HarnessConfig {
	return watermillsim.HarnessConfig{Config: watermillsim.Config{Kind: watermillsim.KindQueue, Seed: 1}, Topics: []string{"jobs"}}
}

// stuckRouter runs a Router whose handler blocks until release is closed,
// and publishes one job.
func stuckRouter(t *testing.T, h *watermillsim.Harness, release <-chan struct{}) {
	r, err := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	r.AddNoPublisherHandler("worker", "jobs", h.Subscriber("worker"), func(*message.Message) error {
		<-release
		return nil
	})
	h.Run(r)
	if err := h.Publisher().Publish("jobs", h.NewMessage([]byte("j1"))); err != nil {
		t.Fatal(err)
	}
}

// A handler that never returns would keep the ticker going forever and
// hide the deadlock from synctest: RunUntil stops at its cap and names
// the cap and what is still waiting.
func TestRunUntilTickCapNamesWhatWaits(t *testing.T) {
	watermillsim.Test(t, queueConfig(), func(t *testing.T, h *watermillsim.Harness) {
		release := make(chan struct{})
		defer close(release)
		stuckRouter(t, h, release)
		err := h.RunUntil(h.Settled, 50)
		if !errors.Is(err, watermillsim.ErrTickCap) {
			t.Fatalf("RunUntil: %v, want ErrTickCap", err)
		}
		for _, want := range []string{"cap of 50 ticks", "worker#1@jobs: handed m1 (delivery 1) to the handler at t=0; no Ack or Nack yet", "queue jobs: "} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
		t.Log(err)
	})
}

// HarnessConfig.MaxTicks caps the whole run: past it the driver ticks no
// more and reports ErrTickCap through t, and a RunUntil waiting ends.
func TestMaxTicksCapsTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &recT{T: t}
		cfg := queueConfig()
		cfg.MaxTicks = 30
		h := watermillsim.NewHarness(rt, cfg)
		release := make(chan struct{})
		stuckRouter(t, h, release)
		err := h.RunUntil(h.Settled, 1000)
		close(release)
		if !errors.Is(err, watermillsim.ErrTickCap) {
			t.Fatalf("RunUntil: %v, want ErrTickCap", err)
		}
		if got := rt.errors(); !strings.Contains(got, "HarnessConfig.MaxTicks 30 ticks ran out at t=30") || !strings.Contains(got, "worker#1@jobs: handed m1") {
			t.Errorf("reported: %q", got)
		}
		if err := h.Close(); !errors.Is(err, watermillsim.ErrTickCap) {
			t.Errorf("Close: %v, want the cap error again", err)
		}
	})
}

// Close from a handler while RunUntil runs fails with ErrBusy at once
// instead of waiting for the run it is part of.
func TestCloseWhileRunningFails(t *testing.T) {
	watermillsim.Test(t, queueConfig(), func(t *testing.T, h *watermillsim.Harness) {
		r, _ := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
		var closeErr, secondErr error
		r.AddNoPublisherHandler("worker", "jobs", h.Subscriber("worker"), func(*message.Message) error {
			closeErr = h.Close()
			secondErr = h.RunUntil(h.Settled, 10)
			return nil
		})
		h.Run(r)
		_ = h.Publisher().Publish("jobs", h.NewMessage(nil))
		if err := h.RunUntil(h.Settled, 100); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(closeErr, watermillsim.ErrBusy) || !strings.Contains(closeErr.Error(), "Close called while RunUntil runs") {
			t.Errorf("Close from a handler: %v, want ErrBusy", closeErr)
		}
		if !errors.Is(secondErr, watermillsim.ErrBusy) || !strings.Contains(secondErr.Error(), "another RunUntil runs") {
			t.Errorf("a second RunUntil: %v, want ErrBusy", secondErr)
		}
	})
}

// Router.Close, called by the test itself while lockstep runs, does not
// hang: the subscriptions' contexts end and switch lockstep off before
// the Router waits, holding its mutex, for its handlers.
func TestRouterCloseWhileLockstepDoesNotHang(t *testing.T) {
	watermillsim.Test(t, queueConfig(), func(t *testing.T, h *watermillsim.Harness) {
		r, _ := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
		for _, name := range []string{"a", "b", "c"} {
			r.AddNoPublisherHandler(name, "jobs", h.Subscriber(name), func(*message.Message) error { return nil })
		}
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background()) }()
		<-r.Running()
		for range 5 {
			_ = h.Publisher().Publish("jobs", h.NewMessage(nil))
		}
		if err := h.RunUntil(h.Settled, 100); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := h.Check(sim.ExactlyOnce("jobs")); err != nil {
			t.Fatal(err)
		}
	})
}

// Topics must be declared: a Subscribe or Publish to another fails and
// names the declared ones.
func TestUndeclaredTopicFails(t *testing.T) {
	watermillsim.Test(t, queueConfig(), func(t *testing.T, h *watermillsim.Harness) {
		_, err := h.Subscriber("s").Subscribe(context.Background(), "orders")
		if !errors.Is(err, watermillsim.ErrInvalidTopic) || !strings.Contains(err.Error(), `"orders" was not declared in HarnessConfig.Topics (declared: jobs)`) {
			t.Errorf("Subscribe: %v", err)
		}
		err = h.Publisher().Publish("orders", h.NewMessage(nil))
		if !errors.Is(err, watermillsim.ErrInvalidTopic) {
			t.Errorf("Publish: %v", err)
		}
	})
}

// Middleware that draws from math/rand fails the test, or is logged with
// AllowRandom; deterministic middleware passes.
func TestMiddlewareRandomnessIsReported(t *testing.T) {
	for _, allow := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			rt := &recT{T: t}
			cfg := queueConfig()
			cfg.AllowRandom = allow
			h := watermillsim.NewHarness(rt, cfg)
			ms := h.Middleware(
				middleware.Retry{MaxRetries: 3, InitialInterval: time.Millisecond}, // fine
				middleware.Recoverer, // fine
				middleware.RandomFail(0.1),
				middleware.RandomPanic(0.1),
				middleware.Retry{MaxRetries: 3, RandomizationFactor: 0.5},
			)
			if len(ms) != 5 {
				t.Fatalf("%d middleware back", len(ms))
			}
			got := rt.errors()
			if allow {
				got = strings.Join(rt.logs, "\n")
				if rt.errors() != "" {
					t.Errorf("AllowRandom still failed: %s", rt.errors())
				}
			}
			for _, want := range []string{"argument 2: middleware.RandomFail draws from math/rand", "argument 3: middleware.RandomPanic", "argument 4: middleware.Retry has RandomizationFactor 0.5"} {
				if !strings.Contains(got, want) {
					t.Errorf("AllowRandom=%v: no %q in:\n%s", allow, want, got)
				}
			}
			if strings.Contains(got, "argument 0") || strings.Contains(got, "argument 1") {
				t.Errorf("deterministic middleware reported:\n%s", got)
			}
		})
	}
}

// Bad configuration and a harness outside a bubble fail at once, saying
// what is wrong.
func TestHarnessConstructionFailsClearly(t *testing.T) {
	fatal := func(t *testing.T, f func(rt *recT)) string {
		rt := &recT{T: t}
		func() {
			defer func() {
				if r := recover(); r != nil && r != errFatal {
					panic(r)
				}
			}()
			f(rt)
		}()
		return rt.errors()
	}
	if got := fatal(t, func(rt *recT) { watermillsim.NewHarness(rt, queueConfig()) }); !strings.Contains(got, "must run inside a testing/synctest bubble") {
		t.Errorf("outside a bubble: %q", got)
	}
	synctest.Test(t, func(t *testing.T) {
		for cfg, want := range map[*watermillsim.HarnessConfig]string{
			{Config: watermillsim.Config{Kind: watermillsim.KindQueue}}:                                      "Topics is empty",
			{Config: watermillsim.Config{Kind: watermillsim.KindQueue}, Topics: []string{"a", "a"}}:          `Topics[1] "a" is empty or repeated`,
			{Config: watermillsim.Config{Kind: watermillsim.KindQueue}, Topics: []string{"a"}, MaxTicks: -1}: "MaxTicks -1 is negative",
			{Config: watermillsim.Config{Kind: 9}, Topics: []string{"a"}}:                                    "unknown kind 9",
		} {
			if got := fatal(t, func(rt *recT) { watermillsim.NewHarness(rt, *cfg) }); !strings.Contains(got, want) {
				t.Errorf("%+v: %q, want %q", cfg, got, want)
			}
		}
		if got := fatal(t, func(rt *recT) {
			h := watermillsim.NewHarness(rt, queueConfig())
			h.Subscriber("s")
			h.Subscriber("s")
		}); !strings.Contains(got, `subscriber name "s" is empty or taken`) {
			t.Errorf("a repeated subscriber name: %q", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := watermillsim.NewHarness(t, queueConfig())
		if err := h.RunUntil(h.Settled, 0); !errors.Is(err, watermillsim.ErrInvalidConfig) {
			t.Errorf("RunUntil cap 0: %v", err)
		}
	})
}

// Seeded UUIDs: version 4 form, the same sequence for the same seed, and
// another for another seed.
func TestSeededUUIDs(t *testing.T) {
	seq := func(seed uint64) []string {
		var out []string
		cfg := queueConfig()
		cfg.Seed = seed
		watermillsim.Test(t, cfg, func(t *testing.T, h *watermillsim.Harness) {
			for range 3 {
				out = append(out, h.NewUUID())
			}
		})
		return out
	}
	a, b, c := seq(1), seq(1), seq(2)
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, u := range a {
		if !v4.MatchString(u) {
			t.Errorf("%q is not a version 4 UUID", u)
		}
	}
	if strings.Join(a, " ") != strings.Join(b, " ") || a[0] == c[0] || a[0] == a[1] {
		t.Errorf("seed 1: %v and %v; seed 2: %v", a, b, c)
	}
}

// A synctest.Wait of the test's own while the driver waits fails the test
// with ErrSecondWait, naming the remedy, whichever of the two waits came
// second; it never hangs. It runs in a child process, since the failure
// is the point.
func TestSecondWaitFailsClearly(t *testing.T) {
	if os.Getenv("WATERMILLSIM_SECOND_WAIT") == "1" {
		watermillsim.Test(t, queueConfig(), func(t *testing.T, h *watermillsim.Harness) {
			for range 3 {
				_ = h.Publisher().Publish("jobs", h.NewMessage(nil)) // the driver waits right after serving it
				synctest.Wait()
			}
		})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSecondWaitFailsClearly$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WATERMILLSIM_SECOND_WAIT=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the child hung:\n%s", out)
	}
	if err == nil || !strings.Contains(string(out), "synctest.Wait called while the lockstep driver waits") || !strings.Contains(string(out), "RunUntil") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// A handler that ignores its context and never returns fails the test
// with a message that names the handler, its worker and the message, and
// the test ends instead of hanging: Router.Close would wait for the
// handler forever, holding a mutex that the Router's other goroutines
// then wait for, and synctest does not count those as blocked. The
// handler's goroutine stays blocked, so synctest's deadlock report
// follows the message. A handler that returns when its context ends
// fails only the drain. Each case runs in a child process, since the
// failure is the point.
func TestStuckHandlerFailsClearly(t *testing.T) {
	const stuck = "watermillsim: handler billing (worker billing#1@jobs) did not return after its context ended (message m1, handed at t=0, context ended at t=1050, waited 1000 ticks); " +
		"a handler must return when msg.Context() is done; Router.Close would wait for it forever"
	for _, c := range []struct {
		mode string
		kind watermillsim.Kind
		want []string // in this order
		not  []string
	}{
		// The tester's case: the run fails at its cap, t.Fatal, and the
		// harness closes in t's cleanup.
		{"select", watermillsim.KindQueue, []string{"cap of 50 ticks", stuck, "deadlock: main bubble goroutine has exited but blocked goroutines remain"}, nil},
		{"select-log", watermillsim.KindLog, []string{"cap of 50 ticks", "handler billing (worker billing#1@jobs) did not return after its context ended (message m1, handed at t=0", "deadlock: main bubble goroutine"}, nil},
		{"select-pubsub", watermillsim.KindPubSub, []string{"cap of 50 ticks", "handler billing (worker billing#1@jobs) did not return after its context ended (message m1, handed at t=1,", "deadlock: main bubble goroutine"}, nil},
		// Close called by the test: its error is ErrHandlerStuck.
		{"channel", watermillsim.KindQueue, []string{"Close: is ErrHandlerStuck", stuck, "deadlock: main bubble goroutine"}, nil},
		// A handler that waits for its context returns once Close ends it.
		{"context", watermillsim.KindQueue, []string{"Close: the handlers did not settle their messages", "handed m1 (delivery 1) to the handler at t=0"}, []string{"did not return", "deadlock", "panic"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			if os.Getenv("WATERMILLSIM_STUCK_HANDLER") == c.mode {
				cfg := queueConfig()
				cfg.Kind = c.kind
				watermillsim.Test(t, cfg, func(t *testing.T, h *watermillsim.Harness) {
					r, _ := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
					never := make(chan struct{})
					r.AddNoPublisherHandler("billing", "jobs", h.Subscriber("billing"), func(msg *message.Message) error {
						switch c.mode {
						case "select", "select-log", "select-pubsub":
							select {}
						case "channel":
							<-never
						}
						<-msg.Context().Done()
						return msg.Context().Err()
					})
					h.Run(r)
					if err := h.Publisher().Publish("jobs", h.NewMessage([]byte("j1"))); err != nil {
						t.Fatal(err)
					}
					err := h.RunUntil(h.Settled, 50)
					if c.mode != "channel" {
						t.Fatal(err)
					}
					if err := h.Close(); errors.Is(err, watermillsim.ErrHandlerStuck) {
						t.Errorf("Close: is ErrHandlerStuck: %v", err)
					} else {
						t.Errorf("Close: %v, want ErrHandlerStuck", err)
					}
				})
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStuckHandlerFailsClearly$/^"+c.mode+"$", "-test.count=1", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), "WATERMILLSIM_STUCK_HANDLER="+c.mode)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the child hung:\n%s", out)
			}
			if err == nil {
				t.Fatalf("the child passed:\n%s", out)
			}
			rest := string(out)
			for _, want := range c.want {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("the child's output lacks %q (or has it out of order):\n%s", want, out)
				}
				rest = rest[i+len(want):]
			}
			for _, not := range c.not {
				if strings.Contains(string(out), not) {
					t.Fatalf("the child's output has %q:\n%s", not, out)
				}
			}
		})
	}
}
