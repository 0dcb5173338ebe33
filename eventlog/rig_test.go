package eventlog_test

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest"
)

// rig is a simtest world with one topic (its injector, trace recorder and
// JSON Lines copy of the trace are the world's), under the short names
// the tests use.
type rig struct {
	*simtest.World
	tb    testing.TB
	w     *sim.World
	env   *sim.Env
	in    *faults.Injector
	topic *eventlog.Log
	rec   *sim.Recorder
	jsonl *bytes.Buffer
}

func newRig(tb testing.TB, seed uint64, cfg eventlog.Config, rules ...faults.Rule) *rig {
	tb.Helper()
	sw := simtest.New(tb, seed)
	sw.FaultRules(rules...)
	r := &rig{World: sw, tb: tb, w: sw.World.World, env: sw.Env(), in: sw.Faults(), rec: sw.Recorder(), jsonl: sw.JSONL()}
	if cfg.Name == "" {
		cfg.Name = "orders"
	}
	r.topic = sw.Log(cfg.Name, cfg)
	return r
}

func (r *rig) group(cfg eventlog.GroupConfig) *eventlog.Group {
	r.tb.Helper()
	return r.Group(cfg.Name, r.topic, cfg)
}

// member creates a member of g; the world steps it. A member without a
// handler applies one effect per record.
func (r *rig) member(g *eventlog.Group, cfg eventlog.MemberConfig) *eventlog.Member {
	r.tb.Helper()
	m, err := eventlog.NewMember(r.w, g, cfg)
	r.Must(err)
	return m
}

// producer produces perTick records per tick until tick until (exclusive),
// with keys drawn from keys by the producer's own stream. A refused record
// is dropped, so tests that make the broker unavailable must not expect it.
func (r *rig) producer(name string, keys []string, perTick int, until sim.Tick) {
	r.tb.Helper()
	s := r.env.Stream("producer/" + name)
	n := 0
	r.Actor(name, sim.PhaseProducer, func(now sim.Tick) {
		for i := 0; i < perTick && now < until; i++ {
			n++
			m := r.env.NewMessage(keys[s.IntN(len(keys))], []byte(name+"-"+strconv.Itoa(n)), sim.Headers{Type: "order.event", Source: name})
			if err := r.topic.Publish(m); !errors.Is(err, sim.ErrUnavailable) {
				r.Must(err)
			}
		}
	})
}

// publish produces n records with the given keys in turn, now.
func (r *rig) publish(n int, keys ...string) {
	r.tb.Helper()
	for i := 0; i < n; i++ {
		r.Must(r.topic.Publish(r.env.NewMessage(keys[i%len(keys)], []byte("v"+strconv.Itoa(i)), sim.Headers{Type: "order.event"})))
	}
}

// drain runs until the timeline is empty and g has caught up (every
// partition owned and read to its end, nothing outstanding) with at least
// one active member, at most max ticks.
func (r *rig) drain(g *eventlog.Group, max sim.Tick) {
	r.tb.Helper()
	if err := r.w.RunUntil(func() bool { return r.w.Pending() == 0 && g.CaughtUp() && len(g.Members()) > 0 }, max); err != nil {
		r.tb.Fatalf("group %s not drained: %v: %+v", g.Name(), err, g.Metrics())
	}
}

// events returns the recorded events of kind k.
func (r *rig) events(k sim.Kind) []sim.Event { return r.Events(k) }

// traceText renders the recorded trace.
func (r *rig) traceText() string { return r.TraceText() }

// refold fails the test unless the ledger folded from the JSON Lines
// trace equals the live one.
func (r *rig) refold() {
	r.tb.Helper()
	r.Refold()
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
