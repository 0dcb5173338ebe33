package outbox

import (
	"bytes"
	"errors"
	"flag"
	"sync"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/simtest/core"
)

var update = flag.Bool("update", false, "rewrite golden files")

var errScripted = errors.New("sink: connection refused")

// sink is a scripted sim.Publisher that behaves as a tiny broker with one
// logical consumer "sink": it traces every accepted message as sent to
// "sink", received, applied (through Delivery.Apply) and acked, in publish
// order, and fails the publishes the script names.
type sink struct {
	env      *sim.Env
	attempts int
	failNth  map[int]bool              // 1-based publish attempts that fail
	reject   func(m sim.Message) error // fails matching messages
	got      []sim.Message
}

func newSink(w *sim.World) *sink {
	return &sink{env: w.Env(), failNth: map[int]bool{}}
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
	env := p.env
	env.Emit(sim.Event{Kind: sim.KindSent, Where: "sink", Consumer: "sink", Msg: m.ID, Origin: m.Origin, Key: m.Key, Type: m.Headers.Type})
	env.Emit(sim.Event{Kind: sim.KindReceived, Where: "sink", Actor: "sink", Consumer: "sink", Msg: m.ID, Key: m.Key})
	sim.NewDelivery(env, m, "sink", "sink", "", 1).Apply("")
	env.Emit(sim.Event{Kind: sim.KindAcked, Where: "sink", Actor: "sink", Consumer: "sink", Msg: m.ID, Key: m.Key})
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

// worlds maps the *sim.World of each test's simtest world (the helpers and
// the tests pass the *sim.World) to the world itself, until the test ends.
var worlds sync.Map

// mustWorld returns the sim.World of a new simtest world for seed: its
// trace is recorded, and the helpers below fail the test with the seed
// and a reproduction.
func mustWorld(t testing.TB, seed uint64) *sim.World {
	t.Helper()
	cw := core.New(t, seed)
	worlds.Store(cw.World, cw)
	t.Cleanup(func() { worlds.Delete(cw.World) })
	return cw.World
}

// bound returns the simtest world of w.
func bound(t testing.TB, w *sim.World) *core.World {
	t.Helper()
	cw, ok := worlds.Load(w)
	if !ok {
		t.Fatal("outbox tests: the world was not made by mustWorld")
	}
	return cw.(*core.World)
}

func mustService(t testing.TB, w *sim.World, changeLog bool) *Service {
	t.Helper()
	s, err := New(w, Config{Name: "shop", ChangeLog: changeLog})
	bound(t, w).Must(err)
	return s
}

// mustFaults adds rules to the world's injector and returns it.
func mustFaults(t testing.TB, w *sim.World, rules ...faults.Rule) *faults.Injector {
	t.Helper()
	cw := bound(t, w)
	cw.FaultRules(rules...)
	return cw.Faults()
}

func mustRelay(t testing.TB, w *sim.World, cfg RelayConfig) *Relay {
	t.Helper()
	r, err := NewRelay(w, cfg)
	bound(t, w).Must(err)
	return r
}

func mustWriter(t testing.TB, w *sim.World, cfg WriterConfig) *Writer {
	t.Helper()
	wr, err := NewWriter(w, cfg)
	bound(t, w).Must(err)
	return wr
}

func mustCommander(t testing.TB, w *sim.World, cfg CommanderConfig) *Commander {
	t.Helper()
	c, err := NewCommander(w, cfg)
	bound(t, w).Must(err)
	return c
}

func rowStates(s *Service) []State {
	var out []State
	for _, r := range s.Rows() {
		out = append(out, r.State)
	}
	return out
}

// foldsAgain closes the trace of w and checks that the ledger folded
// from the JSON Lines trace in jsonl equals the live ledger of w.
func foldsAgain(t testing.TB, w *sim.World, jsonl *bytes.Buffer) {
	t.Helper()
	if err := w.Trace().Close(); err != nil {
		t.Fatal(err)
	}
	l2 := sim.NewLedger()
	if err := sim.ReadJSONL(bytes.NewReader(jsonl.Bytes()), l2); err != nil {
		t.Fatal(err)
	}
	if a, b := w.Ledger().Dump(), l2.Dump(); a != b {
		t.Fatalf("the ledger folded from the JSON Lines trace differs from the live one:\nlive:\n%s\nfolded:\n%s", a, b)
	}
}
