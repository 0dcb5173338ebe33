package outbox

import (
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

type modeRun struct {
	env      *sim.Env
	s        *Service
	p        *sink
	w        *Writer
	lost     int // committed orders whose event was never published
	phantoms int // published events whose order does not exist
}

// runMode drives one writer mode through a world with a fixed workload and
// crash plan; in Outbox mode a relay drains the outbox.
func runMode(t *testing.T, seed uint64, mode Mode, plan []faults.Rule) modeRun {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	s := mustService(t, env, false)
	p := newSink(env)
	in := mustFaults(t, env, plan...)
	wr, err := NewWriter(WriterConfig{Service: s, Mode: mode, Target: p, Faults: in, Limit: 40, PerTick: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(sim.PhaseProducer, "writer", wr); err != nil {
		t.Fatal(err)
	}
	if mode == Outbox {
		if err := w.Add(sim.PhaseRelay, "relay", mustRelay(t, RelayConfig{Service: s, Target: p, Faults: in})); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Run(40); err != nil {
		t.Fatal(err)
	}
	r := modeRun{env: env, s: s, p: p, w: wr}
	published := map[uint64]bool{}
	for _, m := range p.got {
		ev, err := DecodeOrderPlaced(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		published[ev.OrderID] = true
		if _, ok := s.Order(ev.OrderID); !ok {
			r.phantoms++
		}
	}
	for _, o := range s.Orders() {
		if !published[o.ID] {
			r.lost++
		}
	}
	return r
}

func TestWriterModesSideBySide(t *testing.T) {
	plan := []faults.Rule{
		{Name: "crash-after-commit", Point: faults.WriterCrashAfterCommit, Probability: 0.1},
		{Name: "crash-before-commit", Point: faults.WriterCrashAfterPublish, Probability: 0.1},
	}
	const seed = 42
	ctp := runMode(t, seed, CommitThenPublish, plan)
	ptc := runMode(t, seed, PublishThenCommit, plan)
	ob := runMode(t, seed, Outbox, plan)
	for _, r := range []modeRun{ctp, ptc, ob} {
		st := r.env.Ledger.Stats()
		t.Logf("%-20s orders=%d crashes=%d published=%d lost=%d (ledger %v) phantoms=%d (ledger %d)",
			r.w.Mode(), len(r.s.Orders()), r.w.Stats().Crashes, len(r.p.got), r.lost, st.LostBy, r.phantoms, st.Phantoms)
		if r.w.Stats().Attempts != 40 {
			t.Fatalf("%s: %d attempts, want 40", r.w.Mode(), r.w.Stats().Attempts)
		}
	}
	// The same plan hits the same orders in every mode.
	if a, b, c := ctp.w.Stats().Crashes, ptc.w.Stats().Crashes, ob.w.Stats().Crashes; a != b || b != c || a == 0 {
		t.Fatalf("crashes %d, %d, %d: want equal and positive", a, b, c)
	}

	// Commit-then-publish loses events, each recorded as a dual write.
	st := ctp.env.Ledger.Stats()
	if ctp.lost == 0 || st.Lost != ctp.lost || len(st.LostBy) != 1 || st.LostBy[0].Cause != sim.CauseDualWrite || ctp.phantoms != 0 || st.Phantoms != 0 {
		t.Errorf("commit-then-publish: lost %d, phantoms %d, ledger %+v", ctp.lost, ctp.phantoms, st)
	}
	for _, l := range ctp.env.Ledger.Losses() {
		if rec, _ := ctp.env.Ledger.Record(l.ID); rec.State != sim.StateLost || rec.Sends != 0 {
			t.Errorf("lost %s: record %+v", l.ID, rec)
		}
	}
	if err := sim.Check(ctp.env.Ledger, sim.NoLoss()); err == nil {
		t.Error("no-loss holds for commit-then-publish, want the dual-write losses")
	}

	// Publish-then-commit invents events for orders that never existed.
	st = ptc.env.Ledger.Stats()
	if ptc.phantoms == 0 || st.Phantoms != ptc.phantoms || ptc.lost != 0 || st.Lost != 0 {
		t.Errorf("publish-then-commit: lost %d, phantoms %d, ledger %+v", ptc.lost, ptc.phantoms, st)
	}
	for _, m := range ptc.p.got {
		ev, _ := DecodeOrderPlaced(m.Body)
		_, exists := ptc.s.Order(ev.OrderID)
		if rec, _ := ptc.env.Ledger.Record(m.ID); rec.Phantom == exists {
			t.Errorf("%s for order %d: phantom=%v but order exists=%v", m.ID, ev.OrderID, rec.Phantom, exists)
		}
	}

	// The outbox loses nothing and invents nothing.
	st = ob.env.Ledger.Stats()
	if ob.lost != 0 || ob.phantoms != 0 || st.Lost != 0 || st.Phantoms != 0 {
		t.Errorf("outbox: lost %d, phantoms %d, ledger %+v", ob.lost, ob.phantoms, st)
	}
	if len(ob.p.got) != len(ob.s.Orders()) {
		t.Errorf("outbox: %d events for %d orders", len(ob.p.got), len(ob.s.Orders()))
	}
	if err := sim.Check(ob.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("sink"), sim.OrderedPerKey("sink")); err != nil {
		t.Error(err)
	}
}

func TestWriterBrokerUnavailable(t *testing.T) {
	for _, mode := range []Mode{CommitThenPublish, PublishThenCommit} {
		env := sim.NewEnv(1)
		s := mustService(t, env, false)
		p := newSink(env)
		in := mustFaults(t, env, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, Nth: 1})
		w, err := NewWriter(WriterConfig{Service: s, Mode: mode, Target: p, Faults: in})
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.PlaceOrder("kunde-A", 1)
		if err == nil {
			t.Fatalf("%s: no error while the broker is down", mode)
		}
		switch mode {
		case CommitThenPublish: // stored, event lost for good
			if len(s.Orders()) != 1 || env.Ledger.Stats().Lost != 1 || env.Ledger.Losses()[0].Cause != sim.CauseBrokerUnavailable {
				t.Errorf("%s: orders %d, ledger %+v", mode, len(s.Orders()), env.Ledger.Stats())
			}
		case PublishThenCommit: // refused cleanly
			if len(s.Orders()) != 0 || env.Ledger.Stats().Lost != 0 || w.Stats().Failed != 1 {
				t.Errorf("%s: orders %d, ledger %+v", mode, len(s.Orders()), env.Ledger.Stats())
			}
		}
	}
}

func TestWriterConfigValidate(t *testing.T) {
	s := mustService(t, nil, false)
	bad := []WriterConfig{
		{},
		{Service: s, Mode: CommitThenPublish},
		{Service: s, Mode: 9},
		{Service: s, Mode: Outbox, PerTick: -1},
		{Service: s, Mode: Outbox, Customers: []string{""}},
	}
	for i, c := range bad {
		if _, err := NewWriter(c); err == nil {
			t.Errorf("config %d accepted", i)
		}
	}
}
