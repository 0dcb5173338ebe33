package pubsub

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// rig is a world with one broker, a trace recorder and a JSON Lines copy
// of the trace.
type rig struct {
	t     testing.TB
	w     *sim.World
	env   *sim.Env
	b     *Broker
	rec   *sim.Recorder
	jsonl *bytes.Buffer
	in    *faults.Injector
}

func newRig(t testing.TB, seed uint64, maxDepth int, rules ...faults.Rule) *rig {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rec := &sim.Recorder{}
	w.Trace().Attach(rec)
	jsonl := &bytes.Buffer{}
	w.Trace().Attach(sim.NewJSONWriter(jsonl))
	var in *faults.Injector
	if len(rules) > 0 {
		in, err = faults.New(w, faults.Config{Plan: faults.Plan{Rules: rules}})
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := New(w, Config{Name: "bus", Faults: in, MaxDepth: maxDepth})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, w: w, env: w.Env(), b: b, rec: rec, jsonl: jsonl, in: in}
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

// producer registers a producer actor.
func (r *rig) producer(f func(now sim.Tick)) {
	r.t.Helper()
	if err := r.w.AddFunc("producer", sim.PhaseProducer, f); err != nil {
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

// refold checks that the ledger folded from the JSON Lines trace equals the
// live one.
func (r *rig) refold() {
	r.t.Helper()
	l := sim.NewLedger()
	if err := sim.ReadJSONL(bytes.NewReader(r.jsonl.Bytes()), l); err != nil {
		r.t.Fatal(err)
	}
	if live, folded := r.w.Ledger().Dump(), l.Dump(); live != folded {
		r.t.Errorf("the ledger folded from the JSON Lines trace differs from the live one:\nlive:\n%s\nfolded:\n%s", live, folded)
	}
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

// recorder is a handler that remembers what it handled and applies one
// effect per delivery.
type recorder struct{ got []sim.ID }

func (h *recorder) Handle(d *sim.Delivery) error {
	h.got = append(h.got, d.Msg.ID)
	d.Apply("")
	return nil
}
