package eventlog_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// rig is a world with one topic, its fault injector and a trace recorder.
type rig struct {
	tb    testing.TB
	w     *sim.World
	env   *sim.Env
	in    *faults.Injector
	topic *eventlog.Topic
	rec   *sim.Recorder
}

func newRig(tb testing.TB, seed uint64, cfg eventlog.Config, rules ...faults.Rule) *rig {
	tb.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		tb.Fatal(err)
	}
	env := w.Env()
	rec := &sim.Recorder{}
	env.Trace.Attach(rec)
	in, err := faults.New(faults.Config{Plan: faults.Plan{Rules: rules}, Env: env})
	if err != nil {
		tb.Fatal(err)
	}
	if cfg.Name == "" {
		cfg.Name = "orders"
	}
	cfg.Env, cfg.Faults = env, in
	t, err := eventlog.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Add(sim.PhaseBroker, "log:"+cfg.Name, t); err != nil {
		tb.Fatal(err)
	}
	return &rig{tb: tb, w: w, env: env, in: in, topic: t, rec: rec}
}

func (r *rig) group(cfg eventlog.GroupConfig) *eventlog.Group {
	r.tb.Helper()
	g, err := r.topic.NewGroup(cfg)
	if err != nil {
		r.tb.Fatal(err)
	}
	return g
}

// member joins g and registers the member as a consumer-phase actor.
func (r *rig) member(g *eventlog.Group, cfg eventlog.MemberConfig) *eventlog.Member {
	r.tb.Helper()
	m, err := g.Join(cfg)
	if err != nil {
		r.tb.Fatal(err)
	}
	if err := r.w.Add(sim.PhaseConsumer, g.Name()+"/"+cfg.Name, m); err != nil {
		r.tb.Fatal(err)
	}
	return m
}

// producer produces perTick records per tick until tick until (exclusive),
// with keys drawn from keys by the producer's own stream.
func (r *rig) producer(name string, keys []string, perTick int, until sim.Tick) {
	r.tb.Helper()
	s := r.env.Stream("producer/" + name)
	n := 0
	err := r.w.Add(sim.PhaseProducer, name, sim.ActorFunc(func(now sim.Tick) {
		if now >= until {
			return
		}
		for i := 0; i < perTick; i++ {
			n++
			k := keys[s.IntN(len(keys))]
			m := r.env.NewMessage(k, []byte(name+"-"+strconv.Itoa(n)), sim.Headers{Type: "order.event", Source: name})
			if err := r.topic.Publish(m); err != nil && !errors.Is(err, eventlog.ErrUnavailable) {
				r.tb.Fatal(err)
			}
		}
	}))
	if err != nil {
		r.tb.Fatal(err)
	}
}

// drain runs until g has no lag and at least one active member, at most
// max ticks.
func (r *rig) drain(g *eventlog.Group, max sim.Tick) {
	r.tb.Helper()
	ok, err := r.w.RunUntil(func() bool {
		return r.w.Pending() == 0 && g.Metrics().Lag == 0 && len(g.Members()) > 0
	}, max)
	if err != nil {
		r.tb.Fatal(err)
	}
	if !ok {
		r.tb.Fatalf("group %s not drained after %d ticks: %+v", g.Name(), max, g.Metrics())
	}
}

// events returns the recorded events of kind k.
func (r *rig) events(k sim.Kind) []sim.Event {
	var out []sim.Event
	for _, e := range r.rec.Events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// traceText renders the recorded trace.
func (r *rig) traceText() string {
	var b strings.Builder
	for _, e := range r.rec.Events() {
		b.Write(sim.AppendText(nil, &e))
		b.WriteByte('\n')
	}
	return b.String()
}

var keys5 = []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D", "kunde-E"}

func violations(err error) []sim.Violation {
	var ce *sim.CheckError
	if errors.As(err, &ce) {
		return ce.Violations
	}
	return nil
}
