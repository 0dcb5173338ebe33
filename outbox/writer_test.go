package outbox

import (
	"bytes"
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

type modeRun struct {
	w        *sim.World
	s        *Service
	p        *sink
	wr       *Writer
	lost     int // committed orders whose event was never published
	phantoms int // published events whose order does not exist
}

// runMode drives one writer mode through a world with a fixed workload and
// crash plan; in Outbox mode a relay drains the outbox.
func runMode(t *testing.T, seed uint64, mode Mode, plan []faults.Rule) modeRun {
	t.Helper()
	w := mustWorld(t, seed)
	var jsonl bytes.Buffer
	w.Trace().Attach(sim.NewJSONWriter(&jsonl))
	s := mustService(t, w, false)
	p := newSink(w)
	in := mustFaults(t, w, plan...)
	wr := mustWriter(t, w, WriterConfig{Service: s, Mode: mode, Target: p, Faults: in})
	mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Count: 40, Rate: 2,
		Keys: []string{"kunde-A", "kunde-B", "kunde-C"}, RandomKeys: true})
	if mode == Outbox {
		mustRelay(t, w, RelayConfig{Service: s, Target: p, Faults: in})
	}
	if err := w.Run(40); err != nil {
		t.Fatal(err)
	}
	foldsAgain(t, w, &jsonl)
	r := modeRun{w: w, s: s, p: p, wr: wr}
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
		st := r.w.Ledger().Stats()
		t.Logf("%-20s orders=%d crashes=%d published=%d lost=%d (ledger %v) phantoms=%d (ledger %d)",
			r.wr.Mode(), len(r.s.Orders()), r.wr.Stats().Crashes, len(r.p.got), r.lost, st.LostBy, r.phantoms, st.Phantoms)
		if r.wr.Stats().Attempts != 40 {
			t.Fatalf("%s: %d attempts, want 40", r.wr.Mode(), r.wr.Stats().Attempts)
		}
	}
	// The same plan hits the same orders in every mode.
	if a, b, c := ctp.wr.Stats().Crashes, ptc.wr.Stats().Crashes, ob.wr.Stats().Crashes; a != b || b != c || a == 0 {
		t.Fatalf("crashes %d, %d, %d: want equal and positive", a, b, c)
	}

	// Commit-then-publish loses events, each recorded as a dual write lost
	// before any consumer.
	l := ctp.w.Ledger()
	st := l.Stats()
	if ctp.lost == 0 || st.Lost != ctp.lost || len(st.LostBy) != 1 || st.LostBy[0].Cause != sim.CauseDualWrite || ctp.phantoms != 0 || st.Phantoms != 0 {
		t.Errorf("commit-then-publish: lost %d, phantoms %d, ledger %+v", ctp.lost, ctp.phantoms, st)
	}
	for _, x := range l.Losses() {
		if rec, _ := l.Record(x.ID); rec.State != sim.StateLost || rec.Sends != 0 || x.Consumer != "" || rec.Type != EventOrderPlaced {
			t.Errorf("lost %s: record %+v, loss %+v", x.ID, rec, x)
		}
	}
	if err := sim.Check(l, sim.NoLoss()); err == nil {
		t.Error("no-loss holds for commit-then-publish, want the dual-write losses")
	}
	if err := sim.Check(l, sim.ExactlyOnce("sink")); err != nil {
		t.Errorf("commit-then-publish: what was published is applied once: %v", err)
	}

	// Publish-then-commit invents events for orders that never existed.
	l = ptc.w.Ledger()
	st = l.Stats()
	if ptc.phantoms == 0 || st.Phantoms != ptc.phantoms || ptc.lost != 0 || st.Lost != 0 {
		t.Errorf("publish-then-commit: lost %d, phantoms %d, ledger %+v", ptc.lost, ptc.phantoms, st)
	}
	for _, m := range ptc.p.got {
		ev, _ := DecodeOrderPlaced(m.Body)
		_, exists := ptc.s.Order(ev.OrderID)
		if rec, _ := l.Record(m.ID); rec.Phantom == exists {
			t.Errorf("%s for order %d: phantom=%v but order exists=%v", m.ID, ev.OrderID, rec.Phantom, exists)
		}
	}
	if err := sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("sink")); err != nil {
		t.Errorf("publish-then-commit loses nothing (it invents): %v", err)
	}

	// The outbox loses nothing and invents nothing.
	l = ob.w.Ledger()
	st = l.Stats()
	if ob.lost != 0 || ob.phantoms != 0 || st.Lost != 0 || st.Phantoms != 0 {
		t.Errorf("outbox: lost %d, phantoms %d, ledger %+v", ob.lost, ob.phantoms, st)
	}
	if len(ob.p.got) != len(ob.s.Orders()) {
		t.Errorf("outbox: %d events for %d orders", len(ob.p.got), len(ob.s.Orders()))
	}
	if err := sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("sink"), sim.OrderedPerKey("sink")); err != nil {
		t.Error(err)
	}
}

func TestWriterBrokerUnavailable(t *testing.T) {
	for _, mode := range []Mode{CommitThenPublish, PublishThenCommit} {
		w := mustWorld(t, 1)
		s := mustService(t, w, false)
		p := newSink(w)
		in := mustFaults(t, w, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, Nth: 1})
		wr := mustWriter(t, w, WriterConfig{Service: s, Mode: mode, Target: p, Faults: in})
		_, err := wr.PlaceOrder("kunde-A", 1)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, sim.ErrUnavailable) {
			t.Fatalf("%s: %v while the broker is down, want ErrUnavailable", mode, err)
		}
		l := w.Ledger()
		switch mode {
		case CommitThenPublish: // stored, event lost for good
			if len(s.Orders()) != 1 || l.Stats().Lost != 1 || l.Losses()[0].Cause != sim.CauseBrokerUnavailable || l.Losses()[0].Consumer != "" {
				t.Errorf("%s: orders %d, ledger %+v", mode, len(s.Orders()), l.Stats())
			}
		case PublishThenCommit: // refused cleanly: no order, no event
			if len(s.Orders()) != 0 || l.Stats().Lost != 0 || len(l.Records()) != 0 || wr.Stats().Failed != 1 {
				t.Errorf("%s: orders %d, ledger %+v", mode, len(s.Orders()), l.Stats())
			}
		}
	}
}

func TestWriterConfigValidate(t *testing.T) {
	w := mustWorld(t, 1)
	s := mustService(t, w, false)
	bad := []WriterConfig{
		{},
		{Service: s, Mode: CommitThenPublish},
		{Service: s, Mode: 9},
	}
	for i, c := range bad {
		if _, err := NewWriter(w, c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %d: %v", i, err)
		}
	}
	if _, err := NewWriter(mustWorld(t, 2), WriterConfig{Service: s, Mode: Outbox}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a writer of another world: %v", err)
	}
}

// TestCommander places commands at a rate from a start tick, retries a
// refused command first, or drops it.
func TestCommander(t *testing.T) {
	for _, policy := range []producer.OnRefused{producer.OnRefusedRetry, producer.OnRefusedDrop} {
		w := mustWorld(t, 1)
		s := mustService(t, w, false)
		p := newSink(w)
		in := mustFaults(t, w, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, From: 3, Until: 4})
		wr := mustWriter(t, w, WriterConfig{Name: "shop", Service: s, Mode: PublishThenCommit, Target: p, Faults: in})
		c := mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Count: 6, Rate: 2, Start: 2, Keys: []string{"a", "b"}, OnRefused: policy})
		if err := w.RunUntil(c.Done, 20); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, m := range p.got {
			keys = append(keys, m.Key)
		}
		st := c.Stats()
		switch policy {
		case producer.OnRefusedRetry: // t=2: a b; t=3: refused; t=4: a (again) b; t=5: a b
			if got := joined(keys); got != "a b a b a b" || st.Placed != 6 || st.Refused != 1 || st.Dropped != 0 {
				t.Errorf("retry: keys %s, stats %+v", got, st)
			}
		case producer.OnRefusedDrop: // t=3: both refused and dropped
			if got := joined(keys); got != "a b a b" || st.Placed != 4 || st.Refused != 2 || st.Dropped != 2 {
				t.Errorf("drop: keys %s, stats %+v", got, st)
			}
		}
		if first := w.Ledger().Records()[0]; first.Created != 2 {
			t.Errorf("first command at t=%d, want the start tick 2", first.Created)
		}
		if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("sink")); err != nil {
			t.Errorf("%v: %v", policy, err)
		}
	}
	w := mustWorld(t, 1)
	wr := mustWriter(t, w, WriterConfig{Service: mustService(t, w, false), Mode: Outbox})
	for i, cfg := range []CommanderConfig{{Writer: wr, Count: 1}, {Name: "x", Count: 1}, {Name: "x", Writer: wr}, {Name: "x", Writer: wr, Count: 1, Keys: []string{""}}} {
		if _, err := NewCommander(w, cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %d: %v", i, err)
		}
	}
}

func joined(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x)
	}
	return b.String()
}
