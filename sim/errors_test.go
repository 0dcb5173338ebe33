package sim_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// TestPublishUnavailable publishes to every sim.Publisher the models provide
// while the broker is down, and tests for the shared meaning once: the
// caller does not need to know which model it talks to.
func TestPublishUnavailable(t *testing.T) {
	models := []struct {
		name string
		make func(w *sim.World, in *faults.Injector) (sim.Publisher, error)
		own  error // the model's own sentinel, which must show in the text
	}{
		{"queue", func(w *sim.World, in *faults.Injector) (sim.Publisher, error) {
			return queue.New(w, queue.Config{Name: "orders", Faults: in})
		}, queue.ErrUnavailable},
		{"pubsub", func(w *sim.World, in *faults.Injector) (sim.Publisher, error) {
			return pubsub.New(w, pubsub.Config{Name: "bus", Faults: in})
		}, pubsub.ErrUnavailable},
		{"eventlog", func(w *sim.World, in *faults.Injector) (sim.Publisher, error) {
			return eventlog.New(w, eventlog.Config{Name: "orders", Faults: in})
		}, eventlog.ErrUnavailable},
	}
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			w, err := sim.New(sim.Config{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
				{Name: "down", Point: faults.BrokerUnavailable},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.make(w, in)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Publish(w.Env().NewMessage("k", []byte("x"), sim.Headers{Type: "orders"}))
			if !errors.Is(err, sim.ErrUnavailable) {
				t.Fatalf("Publish with the broker down = %v, want an error wrapping sim.ErrUnavailable", err)
			}
			if !errors.Is(err, m.own) || !strings.HasPrefix(err.Error(), m.own.Error()) {
				t.Errorf("Publish = %q, want it to start with the model's own %q", err, m.own)
			}
			if strings.Contains(err.Error(), sim.ErrUnavailable.Error()) {
				t.Errorf("Publish = %q: the shared sentinel's text must not show", err)
			}
		})
	}
}

// TestValidateInvalidConfig gives every Config of the models an invalid
// value and tests for the shared meaning once.
func TestValidateInvalidConfig(t *testing.T) {
	configs := []struct {
		name string
		cfg  interface{ Validate() error }
		own  error // the package's own sentinel, whose text the error starts with
	}{
		{"sim.Config", sim.Config{MaxTicks: -1}, sim.ErrInvalidConfig},
		{"sim.Script", &sim.Script{Failures: -1}, sim.ErrInvalidConfig},
		{"queue.Config", queue.Config{}, queue.ErrInvalidConfig},
		{"queue.ConsumerConfig", queue.ConsumerConfig{}, queue.ErrInvalidConfig},
		{"queue.RetryPolicy", queue.RetryPolicy{Kind: queue.RetryExponential}, queue.ErrInvalidConfig},
		{"pubsub.Config", pubsub.Config{}, pubsub.ErrInvalidConfig},
		{"pubsub.SubscriberConfig", pubsub.SubscriberConfig{}, pubsub.ErrInvalidConfig},
		{"pubsub.ForwardRetry", pubsub.ForwardRetry{Immediate: -1}, pubsub.ErrInvalidConfig},
		{"pubsub.FanOutConfig", pubsub.FanOutConfig{}, pubsub.ErrInvalidConfig},
		{"pubsub.SyncConfig", pubsub.SyncConfig{}, pubsub.ErrInvalidConfig},
		{"pubsub.StormConfig", pubsub.StormConfig{}, pubsub.ErrInvalidConfig},
		// A bad subject or pattern in a Config keeps its own text and sentinel.
		{"pubsub.SubscriberConfig pattern", pubsub.SubscriberConfig{Name: "s", Pattern: "a..b"}, pubsub.ErrInvalidSubject},
		{"pubsub.SubscriberConfig emit", pubsub.SubscriberConfig{Name: "s", Pattern: "a", Emits: []pubsub.Emit{{Subject: ""}}}, pubsub.ErrInvalidSubject},
		{"pubsub.FanOutConfig pattern", pubsub.FanOutConfig{Name: "f", Target: &queue.Queue{}, Pattern: "a..b"}, pubsub.ErrInvalidSubject},
		{"pubsub.SyncConfig subject", pubsub.SyncConfig{Systems: [2]string{"a", "b"}, Subject: ""}, pubsub.ErrInvalidSubject},
		{"pubsub.StormConfig subject", pubsub.StormConfig{Subscribers: 1, Subject: ""}, pubsub.ErrInvalidSubject},
		{"eventlog.Config", eventlog.Config{}, eventlog.ErrInvalidConfig},
		{"eventlog.GroupConfig", eventlog.GroupConfig{}, eventlog.ErrInvalidConfig},
		{"eventlog.MemberConfig", eventlog.MemberConfig{}, eventlog.ErrInvalidConfig},
		{"producer.Config", producer.Config{}, producer.ErrInvalidConfig},
		{"outbox.Config", outbox.Config{}, outbox.ErrInvalidConfig},
		{"outbox.WriterConfig", outbox.WriterConfig{}, outbox.ErrInvalidConfig},
		{"outbox.RelayConfig", outbox.RelayConfig{}, outbox.ErrInvalidConfig},
		{"outbox.CDCConfig", outbox.CDCConfig{}, outbox.ErrInvalidConfig},
		{"faults.Config", faults.Config{Plan: faults.Plan{Rules: []faults.Rule{{}}}}, faults.ErrInvalidRule},
		{"outbox.CommanderConfig", outbox.CommanderConfig{}, outbox.ErrInvalidConfig},
		{"outbox.ConsumerConfig", outbox.ConsumerConfig{}, outbox.ErrInvalidConfig},
	}
	for _, c := range configs {
		err := c.cfg.Validate()
		switch {
		case !errors.Is(err, sim.ErrInvalidConfig):
			t.Errorf("%s.Validate() = %v, want an error wrapping sim.ErrInvalidConfig", c.name, err)
		case !errors.Is(err, c.own) || !strings.Contains(err.Error(), c.own.Error()):
			t.Errorf("%s.Validate() = %q, want it to wrap and show %q", c.name, err, c.own)
		case c.own != sim.ErrInvalidConfig && strings.Contains(err.Error(), sim.ErrInvalidConfig.Error()):
			t.Errorf("%s.Validate() = %q: the shared sentinel's text must not show", c.name, err)
		}
	}
}

func TestAlso(t *testing.T) {
	if sim.Also(nil, sim.ErrInvalidConfig) != nil {
		t.Error("Also(nil, ...) is not nil")
	}
	bad := errors.New("pubsub: invalid subject")
	err := sim.Also(fmt.Errorf("subscriber %q: %w", "s", bad), sim.ErrInvalidConfig)
	if got, want := err.Error(), `subscriber "s": pubsub: invalid subject`; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if !errors.Is(err, bad) || !errors.Is(err, sim.ErrInvalidConfig) || errors.Is(err, sim.ErrUnavailable) {
		t.Errorf("errors.Is on %v: want bad and sim.ErrInvalidConfig only", err)
	}
}

// A model declares its own sentinel for a shared meaning: users read the
// model's text, and callers test for the meaning once.
func ExampleSentinel() {
	errInvalidConfig := sim.Sentinel("queue: invalid config", sim.ErrInvalidConfig)
	err := fmt.Errorf("%w: a queue needs a name", errInvalidConfig)
	fmt.Println(err)
	fmt.Println(errors.Is(err, errInvalidConfig), errors.Is(err, sim.ErrInvalidConfig))
	// Output:
	// queue: invalid config: a queue needs a name
	// true true
}
