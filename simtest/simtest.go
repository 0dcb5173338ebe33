// Package simtest binds brokerlab's simulated worlds to Go tests.
//
// New(t, seed) returns a World whose constructors take a component's name
// once, hand every model the world's fault injector, add the component in
// the phase its type fixes and fail the test (naming the caller's line)
// on a bad configuration. w.Fault adds a fault rule and returns its
// handle. w.Check judges the run; when a guarantee breaks it prints the
// seed, a one-line reproduction and only the trace lines of the violating
// messages and their copies. Sweep runs many seeds in parallel (package
// sweep), at the cost of the Go API per passing seed: no trace recorded,
// no subtest, until a seed fails and is run again as its own subtest
// seed=N to report it. It shrinks the first failure to its minimal fault
// schedule, written out as Go and as TEST-seedN.faults.yaml: not a
// scenario by itself but the faults: section to paste into a scenario
// file with the same topology. A failure
// that needs no fault, and a check set up wrong (a consumer name the
// ledger does not know), are reported as such and not shrunk.
//
// The flags -brokerlab.seed (one seed), -brokerlab.seeds (how many) and
// -brokerlab.out (where Sweep writes) override what a test says.
//
// Everything is deterministic for a seed; a World is driven by the
// goroutine of its test. The models' own in-package tests use
// simtest/core, the same harness without the model constructors.
package simtest

import (
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/simtest/core"
)

// World is a simulated world bound to a test, with constructors for the
// models. It embeds *core.World (and through it *sim.World).
type World struct {
	*core.World
}

// Shrunk is what Sweep found and shrank; see core.Shrunk.
type Shrunk = core.Shrunk

// New returns a world for seed bound to t (-brokerlab.seed overrides
// seed).
func New(t testing.TB, seed uint64) *World {
	t.Helper()
	return &World{core.New(t, seed)}
}

// Sweep runs f for seeds 1..n as parallel subtests named seed=N and
// shrinks the lowest failing seed; see core.Sweep.
func Sweep(t *testing.T, n int, f func(t *testing.T, w *World)) *Shrunk {
	t.Helper()
	if f == nil {
		t.Fatalf("simtest: Sweep needs a test function, got nil")
		return nil
	}
	return core.Sweep(t, n, func(t *testing.T, w *core.World) { f(t, &World{w}) })
}

// Probe runs f for seed the way Sweep runs a seed it expects to pass: no
// trace recorded, nothing reported, no subtest; it returns nil when the
// seed passed. See core.Probe.
func Probe[T testing.TB](t T, seed uint64, f func(t T, w *World)) error {
	t.Helper()
	if f == nil {
		return fmt.Errorf("simtest: Probe needs a test function, got nil")
	}
	return core.Probe(t, seed, func(t T, w *core.World) { f(t, &World{w}) })
}

// named puts name into a config's Name field, failing when the config
// names the component otherwise.
func (w *World) named(what, name string, field *string) {
	w.T().Helper()
	switch {
	case name == "":
		w.Must(fmt.Errorf("simtest: %s: a name is required", what))
	case *field != "" && *field != name:
		w.Must(fmt.Errorf("simtest: %s %q: the config names it %q; give the name once", what, name, *field))
	}
	*field = name
}

// handler fails the test when a component is given no handler: the
// models would apply a default effect, which a test of one's own code
// rarely means.
func (w *World) handler(what, name string, missing bool) {
	w.T().Helper()
	if missing {
		w.Must(fmt.Errorf("simtest: %s %q: no handler: put the code under test in the config's Handler (sim.Effect(\"\") applies one effect per delivery)", what, name))
	}
}

// Queue makes a work queue called name, consulting the world's injector.
func (w *World) Queue(name string, cfg queue.Config) *queue.Queue {
	w.T().Helper()
	w.named("queue", name, &cfg.Name)
	if cfg.Faults == nil {
		cfg.Faults = w.Faults()
	}
	q, err := queue.New(w.World.World, cfg)
	w.Must(err)
	return q
}

// Consumer makes a worker pool called name on cfg.Queue.
func (w *World) Consumer(name string, cfg queue.ConsumerConfig) *queue.Consumer {
	w.T().Helper()
	w.named("consumer", name, &cfg.Name)
	w.handler("consumer", name, cfg.Handler == nil)
	c, err := queue.NewConsumer(w.World.World, cfg)
	w.Must(err)
	return c
}

// Producer makes a producer called name sending to cfg.Target.
func (w *World) Producer(name string, cfg producer.Config) *producer.Producer {
	w.T().Helper()
	w.named("producer", name, &cfg.Name)
	p, err := producer.New(w.World.World, cfg)
	w.Must(err)
	return p
}

// Log makes a partitioned log (a topic) called name, consulting the
// world's injector.
func (w *World) Log(name string, cfg eventlog.Config) *eventlog.Log {
	w.T().Helper()
	w.named("log", name, &cfg.Name)
	if cfg.Faults == nil {
		cfg.Faults = w.Faults()
	}
	l, err := eventlog.New(w.World.World, cfg)
	w.Must(err)
	return l
}

// Group makes a consumer group called name on log l.
func (w *World) Group(name string, l *eventlog.Log, cfg eventlog.GroupConfig) *eventlog.Group {
	w.T().Helper()
	w.named("group", name, &cfg.Name)
	g, err := eventlog.NewGroup(w.World.World, l, cfg)
	w.Must(err)
	return g
}

// Member makes a member called name of group g.
func (w *World) Member(name string, g *eventlog.Group, cfg eventlog.MemberConfig) *eventlog.Member {
	w.T().Helper()
	w.named("member", name, &cfg.Name)
	w.handler("member", name, cfg.Handler == nil && !cfg.Pull)
	m, err := eventlog.NewMember(w.World.World, g, cfg)
	w.Must(err)
	return m
}

// Bus makes a pub/sub broker called name, consulting the world's
// injector.
func (w *World) Bus(name string, cfg pubsub.Config) *pubsub.Broker {
	w.T().Helper()
	w.named("bus", name, &cfg.Name)
	if cfg.Faults == nil {
		cfg.Faults = w.Faults()
	}
	b, err := pubsub.New(w.World.World, cfg)
	w.Must(err)
	return b
}

// Subscriber subscribes a subscriber called name to broker b.
func (w *World) Subscriber(name string, b *pubsub.Broker, cfg pubsub.SubscriberConfig) *pubsub.Subscriber {
	w.T().Helper()
	w.named("subscriber", name, &cfg.Name)
	if b == nil {
		w.Must(fmt.Errorf("simtest: subscriber %q: no broker", name))
	}
	w.handler("subscriber", name, cfg.Handler == nil)
	s, err := b.Subscribe(cfg)
	w.Must(err)
	return s
}

// Service makes a service with an outbox table called name.
func (w *World) Service(name string, cfg outbox.Config) *outbox.Service {
	w.T().Helper()
	w.named("service", name, &cfg.Name)
	s, err := outbox.New(w.World.World, cfg)
	w.Must(err)
	return s
}

// Relay makes an outbox relay called name, consulting the world's
// injector.
func (w *World) Relay(name string, cfg outbox.RelayConfig) *outbox.Relay {
	w.T().Helper()
	w.named("relay", name, &cfg.Name)
	if cfg.Faults == nil {
		cfg.Faults = w.Faults()
	}
	r, err := outbox.NewRelay(w.World.World, cfg)
	w.Must(err)
	return r
}

// Writer makes a writer called name (outbox or dual write), consulting the
// world's injector.
func (w *World) Writer(name string, cfg outbox.WriterConfig) *outbox.Writer {
	w.T().Helper()
	w.named("writer", name, &cfg.Name)
	if cfg.Faults == nil {
		cfg.Faults = w.Faults()
	}
	x, err := outbox.NewWriter(w.World.World, cfg)
	w.Must(err)
	return x
}

// NewPlanned returns a world for seed bound to t that runs fault plan p
// instead of the rules the test adds with Fault; see core.NewPlanned.
func NewPlanned(t testing.TB, seed uint64, p faults.Plan) *World {
	t.Helper()
	return &World{core.NewPlanned(t, seed, p)}
}
