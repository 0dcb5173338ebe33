package watermillsim_test

import (
	"crypto/sha256"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

// routerConfig is the run of TestRouterTraceIsReproducible: a work queue
// whose broker duplicates and delays deliveries (seeded), in front of a
// Router with two handlers behind Retry and Recoverer.
func routerConfig(seed uint64) watermillsim.HarnessConfig {
	return watermillsim.HarnessConfig{
		Config: watermillsim.Config{
			Kind: watermillsim.KindQueue, Seed: seed, VisibilityTimeout: 40,
			Faults: []faults.Rule{
				{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.3},
				{Name: "late", Point: faults.BrokerDelay, Probability: 0.3, Param: 3},
			},
		},
		Topics: []string{"orders", "shipments"},
	}
}

// runRouter publishes n orders and runs a Router until everything is
// settled: "billing" turns each order into a shipment, failing every
// third order's first attempt and panicking on every fifth's; "shipping"
// fails every fourth shipment's first two attempts and every seventh's
// first five, which outlasts Retry, so the queue redelivers it. Retry (outermost)
// retries what Recoverer turned into an error. It returns the trace and
// the number of handler attempts.
func runRouter(t *testing.T, h *watermillsim.Harness, n int) (trace []string, attempts int) {
	t.Helper()
	r, err := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
	if err != nil {
		t.Fatal(err)
	}
	r.AddMiddleware(h.Middleware(
		middleware.Retry{MaxRetries: 3, InitialInterval: 2 * time.Millisecond, Multiplier: 2},
		middleware.Recoverer,
	)...)
	var mu sync.Mutex
	tries := map[string]int{} // attempts per handler and payload
	attempt := func(handler string, msg *message.Message) int {
		mu.Lock()
		defer mu.Unlock()
		attempts++
		k := handler + "/" + string(msg.Payload)
		tries[k]++
		return tries[k]
	}
	r.AddHandler("billing", "orders", h.Subscriber("billing"), "shipments", h.Publisher(), func(msg *message.Message) ([]*message.Message, error) {
		i, _ := strconv.Atoi(string(msg.Payload))
		switch a := attempt("billing", msg); {
		case i%5 == 0 && a == 1:
			panic("billing: card service exploded")
		case i%3 == 0 && a == 1:
			return nil, errors.New("billing: card declined, try again")
		}
		return []*message.Message{h.NewMessage(msg.Payload)}, nil
	})
	r.AddNoPublisherHandler("shipping", "shipments", h.Subscriber("shipping"), func(msg *message.Message) error {
		i, _ := strconv.Atoi(string(msg.Payload))
		a := attempt("shipping", msg)
		switch {
		case i%7 == 0 && a <= 5: // outlasts Retry once: the queue redelivers
			return errors.New("shipping: carrier down")
		case i%4 == 0 && a <= 2:
			return errors.New("shipping: carrier busy")
		}
		return nil
	})
	h.Run(r)
	for i := 1; i <= n; i++ {
		if err := h.Publisher().Publish("orders", h.NewMessage([]byte(strconv.Itoa(i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.RunUntil(h.Settled, 5000); err != nil {
		t.Fatal(err)
	}
	if err := h.Check(sim.NoLoss(), sim.AtLeastOnce("orders"), sim.AtLeastOnce("shipments")); err != nil {
		t.Error(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return h.Trace(), attempts
}

// TestRouterTraceIsReproducible is issue 17's acceptance test: a real
// Router with two handlers, Retry and Recoverer, under seeded duplicates
// and delays, gives one trace in 20 runs at GOMAXPROCS 1, 2 and 8 (and
// the same under -race, which CI runs too).
func TestRouterTraceIsReproducible(t *testing.T) {
	const runs, orders = 20, 20
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	traces := map[[32]byte]int{}
	var first []string
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		distinct := map[[32]byte]bool{}
		for range runs {
			watermillsim.Test(t, routerConfig(7), func(t *testing.T, h *watermillsim.Harness) {
				trace, attempts := runRouter(t, h, orders)
				sum := sha256.Sum256([]byte(strings.Join(trace, "\n")))
				distinct[sum] = true
				if traces[sum]++; first == nil {
					first = trace
					// The run must exercise what it claims to.
					text := strings.Join(trace, "\n")
					for _, want := range []string{"rule=dup", "rule=late", " nacked ", "try=2", "queue:shipments"} {
						if !strings.Contains(text, want) {
							t.Errorf("the trace has no %q", want)
						}
					}
					if attempts <= 2*orders {
						t.Errorf("%d handler attempts for %d orders: Retry never retried", attempts, orders)
					}
					t.Logf("%d events, %d handler attempts", len(trace), attempts)
				}
			})
		}
		t.Logf("GOMAXPROCS=%d: %d distinct traces in %d runs", procs, len(distinct), runs)
	}
	if len(traces) != 1 {
		t.Errorf("%d distinct traces in %d runs, want 1", len(traces), 3*runs)
	}
	// The same trace in every process, too: a golden file.
	golden := filepath.Join("testdata", "router_trace.golden")
	got := strings.Join(first, "\n") + "\n"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("the trace differs from %s (run with -update and read the diff):\n%s", golden, got)
	}
}

// Different seeds make different runs: the trace is not constant by
// accident.
func TestRouterTraceDependsOnTheSeed(t *testing.T) {
	var a, b []string
	watermillsim.Test(t, routerConfig(7), func(t *testing.T, h *watermillsim.Harness) { a, _ = runRouter(t, h, 10) })
	watermillsim.Test(t, routerConfig(8), func(t *testing.T, h *watermillsim.Harness) { b, _ = runRouter(t, h, 10) })
	if strings.Join(a, "\n") == strings.Join(b, "\n") {
		t.Fatal("seeds 7 and 8 gave the same trace")
	}
}

// Without lockstep, synctest alone leaves the order of goroutines woken at
// the same instant free: the same run gives several traces (measured: 18
// to 20 distinct in 20 at each GOMAXPROCS). One setting giving one trace
// could be a lucky scheduler, so the test asserts that at least one of the
// three settings gives more than one: if synctest alone became
// reproducible, the lockstep driver would be needless, and this says so.
func TestSynctestAloneIsNotEnough(t *testing.T) {
	if testing.Short() {
		t.Skip("60 router runs")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	most := 0
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		distinct := map[[32]byte]bool{}
		for range 20 {
			watermillsim.Test(t, routerConfig(7), func(t *testing.T, h *watermillsim.Harness) {
				watermillsim.SynctestAlone(h)
				trace, _ := runRouter(t, h, 20)
				distinct[sha256.Sum256([]byte(strings.Join(trace, "\n")))] = true
			})
		}
		t.Logf("GOMAXPROCS=%d without lockstep: %d distinct traces in 20 runs", procs, len(distinct))
		most = max(most, len(distinct))
	}
	if most < 2 {
		t.Errorf("without lockstep every GOMAXPROCS gave one trace in 20 runs: synctest alone reproduces this Router now, so the lockstep driver is no longer what makes the replay exact")
	}
}

// The log and pub/sub kinds run in lockstep too: a Router with two
// handlers on each gives one trace in 10 runs at GOMAXPROCS 8.
func TestEveryKindIsReproducible(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, k := range []watermillsim.Kind{watermillsim.KindLog, watermillsim.KindPubSub} {
		t.Run(k.String(), func(t *testing.T) {
			cfg := routerConfig(3)
			cfg.Kind = k
			cfg.Faults = cfg.Faults[:1] // broker.duplicate; delays are queue-only in pub/sub's model
			distinct := map[string]bool{}
			for range 10 {
				watermillsim.Test(t, cfg, func(t *testing.T, h *watermillsim.Harness) {
					r, _ := message.NewRouter(message.RouterConfig{}, watermill.NopLogger{})
					r.AddMiddleware(h.Middleware(middleware.Retry{MaxRetries: 2, InitialInterval: time.Millisecond}, middleware.Recoverer)...)
					r.AddHandler("billing", "orders", h.Subscriber("billing"), "shipments", h.Publisher(), func(msg *message.Message) ([]*message.Message, error) {
						return []*message.Message{h.NewMessage(msg.Payload)}, nil
					})
					r.AddNoPublisherHandler("shipping", "shipments", h.Subscriber("shipping"), func(msg *message.Message) error { return nil })
					h.Run(r)
					for i := range 10 {
						_ = h.Publisher().Publish("orders", h.NewMessage([]byte(strconv.Itoa(i))))
					}
					if err := h.RunUntil(h.Settled, 2000); err != nil {
						t.Fatal(err)
					}
					trace := h.Trace()
					if n := strings.Count(strings.Join(trace, "\n"), "shipments"); n < 10 {
						t.Errorf("%d shipment events", n)
					}
					distinct[strings.Join(trace, "\n")] = true
				})
			}
			if len(distinct) != 1 {
				t.Errorf("%d distinct traces in 10 runs", len(distinct))
			}
		})
	}
}
