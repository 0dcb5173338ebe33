package outbox

import (
	"errors"
	"flag"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

var errScripted = errors.New("sink: connection refused")

// sink is a scripted sim.Publisher: it accepts messages into a slice, records
// them in the ledger as sent, delivered and applied by the logical consumer
// "sink" (in publish order), and fails the publishes the script names.
type sink struct {
	env      *sim.Env
	ref      sim.ConsumerRef
	attempts int
	failNth  map[int]bool              // 1-based publish attempts that fail
	reject   func(m sim.Message) error // fails matching messages
	got      []sim.Message
}

func newSink(env *sim.Env) *sink {
	return &sink{env: env, ref: env.Ledger.Consumer("sink"), failNth: map[int]bool{}}
}

func (p *sink) Publish(m sim.Message) error {
	p.attempts++
	if p.failNth[p.attempts] {
		return errScripted
	}
	if p.reject != nil {
		if err := p.reject(m); err != nil {
			return err
		}
	}
	now := p.env.Now()
	p.env.Ledger.Sent(m.ID, now)
	p.env.Ledger.Delivered(m.ID, p.ref, now)
	p.env.Ledger.Applied(m.ID, p.ref, now)
	p.got = append(p.got, m)
	return nil
}

// count returns how often message id was accepted.
func (p *sink) count(id sim.ID) int {
	n := 0
	for _, m := range p.got {
		if m.ID == id {
			n++
		}
	}
	return n
}

func mustService(t testing.TB, env *sim.Env, changeLog bool) *Service {
	t.Helper()
	s, err := New(Config{Name: "shop", Env: env, ChangeLog: changeLog})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustFaults(t testing.TB, env *sim.Env, rules ...faults.Rule) *faults.Injector {
	t.Helper()
	in, err := faults.New(faults.Config{Env: env, Plan: faults.Plan{Rules: rules}})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func mustRelay(t testing.TB, cfg RelayConfig) *Relay {
	t.Helper()
	r, err := NewRelay(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func rowStates(s *Service) []State {
	var out []State
	for _, r := range s.Rows() {
		out = append(out, r.State)
	}
	return out
}
