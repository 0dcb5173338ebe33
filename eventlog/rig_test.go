package eventlog_test

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// rig is a world with one topic, its fault injector, a trace recorder and
// a JSON Lines copy of the trace.
type rig struct {
	tb    testing.TB
	w     *sim.World
	env   *sim.Env
	in    *faults.Injector
	topic *eventlog.Topic
	rec   *sim.Recorder
	jsonl bytes.Buffer
}

func newRig(tb testing.TB, seed uint64, cfg eventlog.Config, rules ...faults.Rule) *rig {
	tb.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		tb.Fatal(err)
	}
	r := &rig{tb: tb, w: w, env: w.Env(), rec: &sim.Recorder{}}
	w.Trace().Attach(r.rec)
	w.Trace().Attach(sim.NewJSONWriter(&r.jsonl))
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: rules}})
	if err != nil {
		tb.Fatal(err)
	}
	r.in = in
	if cfg.Name == "" {
		cfg.Name = "orders"
	}
	cfg.Faults = in
	if r.topic, err = eventlog.New(w, cfg); err != nil {
		tb.Fatal(err)
	}
	return r
}

func (r *rig) group(cfg eventlog.GroupConfig) *eventlog.Group {
	r.tb.Helper()
	g, err := eventlog.NewGroup(r.w, r.topic, cfg)
	if err != nil {
		r.tb.Fatal(err)
	}
	return g
}

// member creates a member of g; the world steps it.
func (r *rig) member(g *eventlog.Group, cfg eventlog.MemberConfig) *eventlog.Member {
	r.tb.Helper()
	m, err := eventlog.NewMember(r.w, g, cfg)
	if err != nil {
		r.tb.Fatal(err)
	}
	return m
}

// producer produces perTick records per tick until tick until (exclusive),
// with keys drawn from keys by the producer's own stream. A refused record
// is dropped, so tests that make the broker unavailable must not expect it.
func (r *rig) producer(name string, keys []string, perTick int, until sim.Tick) {
	r.tb.Helper()
	s := r.env.Stream("producer/" + name)
	n := 0
	err := r.w.AddFunc(name, sim.PhaseProducer, func(now sim.Tick) {
		if now >= until {
			return
		}
		for i := 0; i < perTick; i++ {
			n++
			k := keys[s.IntN(len(keys))]
			m := r.env.NewMessage(k, []byte(name+"-"+strconv.Itoa(n)), sim.Headers{Type: "order.event", Source: name})
			if err := r.topic.Publish(m); err != nil && !errors.Is(err, sim.ErrUnavailable) {
				r.tb.Fatal(err)
			}
		}
	})
	if err != nil {
		r.tb.Fatal(err)
	}
}

// publish produces n records with the given keys in turn, now.
func (r *rig) publish(n int, keys ...string) {
	r.tb.Helper()
	for i := 0; i < n; i++ {
		if err := r.topic.Publish(r.env.NewMessage(keys[i%len(keys)], []byte("v"+strconv.Itoa(i)), sim.Headers{Type: "order.event"})); err != nil {
			r.tb.Fatal(err)
		}
	}
}

// drain runs until the timeline is empty and g has caught up (every
// partition owned and read to its end, nothing outstanding) with at least
// one active member, at most max ticks.
func (r *rig) drain(g *eventlog.Group, max sim.Tick) {
	r.tb.Helper()
	err := r.w.RunUntil(func() bool { return r.w.Pending() == 0 && g.CaughtUp() && len(g.Members()) > 0 }, max)
	if err != nil {
		r.tb.Fatalf("group %s not drained: %v: %+v", g.Name(), err, g.Metrics())
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

// refold folds the JSON Lines trace into a fresh ledger and fails the test
// unless it equals the live one.
func (r *rig) refold() {
	r.tb.Helper()
	l2 := sim.NewLedger()
	if err := sim.ReadJSONL(bytes.NewReader(r.jsonl.Bytes()), l2); err != nil {
		r.tb.Fatal(err)
	}
	if a, b := r.w.Ledger().Dump(), l2.Dump(); a != b {
		r.tb.Fatalf("the ledger folded from the JSON Lines trace differs from the live one:\nlive:\n%s\nfolded:\n%s", a, b)
	}
}

// outcomes returns the verdicts for group by origin.
func (r *rig) outcomes(group string) map[sim.ID]sim.Outcome {
	out := map[sim.ID]sim.Outcome{}
	for _, o := range r.w.Ledger().Outcomes(group) {
		out[o.Origin] = o
	}
	return out
}

// lossCauses counts group's lost verdicts by cause and checks that every
// origin routed to the group was applied or lost, never neither.
func lossCauses(t *testing.T, r *rig, group string) map[sim.Cause]int {
	t.Helper()
	out := map[sim.Cause]int{}
	for _, o := range r.w.Ledger().Outcomes(group) {
		switch o.Verdict {
		case sim.VerdictApplied:
		case sim.VerdictLost:
			out[o.Cause]++
		default:
			t.Errorf("%v: verdict %s", o.Origin, o.Verdict)
		}
	}
	return out
}

var keys5 = []string{"kunde-A", "kunde-B", "kunde-C", "kunde-D", "kunde-E"}

func violations(err error) []sim.Violation {
	var ce *sim.CheckError
	if errors.As(err, &ce) {
		return ce.Violations
	}
	return nil
}

// failOn returns a handler that fails on the messages in ids while *on is
// true and applies the others.
func failOn(on *bool, ids ...sim.ID) sim.Handler {
	return sim.HandlerFunc(func(d *sim.Delivery) error {
		for _, id := range ids {
			if *on && d.Msg.ID == id {
				return errors.New("bug")
			}
		}
		d.Apply("")
		return nil
	})
}
