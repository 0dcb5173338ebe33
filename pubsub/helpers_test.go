package pubsub

import (
	"bytes"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest/core"
)

// rig is a simtest world with one broker "bus" (the world's recorder and
// JSON Lines copy of the trace), under the short names the tests use.
type rig struct {
	*core.World
	t     testing.TB
	w     *sim.World
	env   *sim.Env
	b     *Broker
	rec   *sim.Recorder
	jsonl *bytes.Buffer
	in    *faults.Injector // nil without rules: the broker then runs without an injector
}

func newRig(t testing.TB, seed uint64, maxDepth int, rules ...faults.Rule) *rig {
	t.Helper()
	cw := core.New(t, seed)
	r := &rig{World: cw, t: t, w: cw.World, env: cw.Env(), rec: cw.Recorder(), jsonl: cw.JSONL()}
	if len(rules) > 0 {
		cw.FaultRules(rules...)
		r.in = cw.Faults()
	}
	b, err := New(cw.World, Config{Name: "bus", Faults: r.in, MaxDepth: maxDepth})
	cw.Must(err)
	r.b = b
	return r
}

func (r *rig) sub(cfg SubscriberConfig) *Subscriber {
	r.t.Helper()
	s, err := r.b.Subscribe(cfg)
	r.Must(err)
	return s
}

// publish creates a message of type subject and publishes it now.
func (r *rig) publish(subject, key string) (sim.Message, error) {
	m := r.env.NewMessage(key, []byte(key), sim.Headers{Type: subject})
	return m, r.b.Publish(m)
}

func (r *rig) mustPublish(subject, key string) sim.Message {
	r.t.Helper()
	m, err := r.publish(subject, key)
	r.Must(err)
	return m
}

func (r *rig) run(n sim.Tick) {
	r.t.Helper()
	r.Run(n)
}

// producer registers a producer actor.
func (r *rig) producer(f func(now sim.Tick)) {
	r.t.Helper()
	r.Actor("producer", sim.PhaseProducer, f)
}

// events returns the recorded events of kind k (any kind when "") for actor
// (any actor when "").
func (r *rig) events(k sim.Kind, actor string) []sim.Event {
	return sim.Filter(r.Events(), func(e *sim.Event) bool {
		return (k == "" || e.Kind == k) && (actor == "" || e.Actor == actor)
	})
}

// entry returns what the ledger knows of id for the consumer called name.
func (r *rig) entry(id sim.ID, name string) sim.Entry {
	led := r.w.Ledger()
	return led.Entry(id, led.Consumer(name))
}

// verdict returns the verdict of origin id for the consumer called name.
func (r *rig) verdict(id sim.ID, name string) (sim.Outcome, bool) {
	for _, o := range r.w.Ledger().Outcomes(name) {
		if o.Origin == id {
			return o, true
		}
	}
	return sim.Outcome{}, false
}

// refold fails the test unless the ledger folded from the JSON Lines
// trace equals the live one.
func (r *rig) refold() {
	r.t.Helper()
	r.Refold()
}

func ids(evs []sim.Event) []sim.ID {
	out := make([]sim.ID, len(evs))
	for i, e := range evs {
		out[i] = e.Msg
	}
	return out
}

func (r *rig) dump() string { return r.TraceText() }

// recorder is a handler that remembers what it handled and applies one
// effect per delivery.
type recorder struct{ got []sim.ID }

func (h *recorder) Handle(d *sim.Delivery) error {
	h.got = append(h.got, d.Msg.ID)
	d.Apply("")
	return nil
}
