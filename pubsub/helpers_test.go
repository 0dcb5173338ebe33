package pubsub

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// rig is a world with one broker and a trace recorder.
type rig struct {
	t   testing.TB
	w   *sim.World
	env *sim.Env
	b   *Broker
	rec *sim.Recorder
	in  *faults.Injector
}

func newRig(t testing.TB, seed uint64, maxDepth int, rules ...faults.Rule) *rig {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	rec := &sim.Recorder{}
	env.Trace.Attach(rec)
	var in *faults.Injector
	if len(rules) > 0 {
		in, err = faults.New(faults.Config{Plan: faults.Plan{Rules: rules}, Env: env})
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := New(Config{Name: "bus", Env: env, Faults: in, MaxDepth: maxDepth})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Attach(w); err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, w: w, env: env, b: b, rec: rec, in: in}
}

func (r *rig) sub(cfg SubscriberConfig) *Subscriber {
	r.t.Helper()
	s, err := r.b.Subscribe(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
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
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *rig) run(n sim.Tick) {
	r.t.Helper()
	if err := r.w.Run(n); err != nil {
		r.t.Fatal(err)
	}
}

// events returns the recorded events of kind k (any kind when "") for actor
// (any actor when "").
func (r *rig) events(k sim.Kind, actor string) []sim.Event {
	return sim.Filter(r.rec.Events(), func(e *sim.Event) bool {
		return (k == "" || e.Kind == k) && (actor == "" || e.Actor == actor)
	})
}

func ids(evs []sim.Event) []sim.ID {
	out := make([]sim.ID, len(evs))
	for i, e := range evs {
		out[i] = e.Msg
	}
	return out
}

func (r *rig) dump() string {
	var b strings.Builder
	for _, e := range r.rec.Events() {
		b.Write(sim.AppendText(nil, &e))
		b.WriteByte('\n')
	}
	return b.String()
}

// recorder is a handler that remembers what it handled.
type recorder struct{ got []sim.ID }

func (h *recorder) handle(_ *Context, m sim.Message) error {
	h.got = append(h.got, m.ID)
	return nil
}
