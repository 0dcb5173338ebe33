package outbox

import (
	"bytes"
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

type styleRun struct {
	m    Metrics
	dups int
	rows int
}

// runStyle runs the same workload and crash plan with a polling relay (poll
// every 3 ticks, batch marking) or a CDC relay.
func runStyle(t *testing.T, seed uint64, cdc bool, crashP float64) styleRun {
	t.Helper()
	w := mustWorld(t, seed)
	var jsonl bytes.Buffer
	w.Trace().Attach(sim.NewJSONWriter(&jsonl))
	s := mustService(t, w, cdc)
	p := newSink(w)
	var in *faults.Injector
	if crashP > 0 {
		in = mustFaults(t, w, faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Probability: crashP, Until: 100})
	}
	wr := mustWriter(t, w, WriterConfig{Service: s, Mode: Outbox})
	mustCommander(t, w, CommanderConfig{Name: "client", Writer: wr, Rate: 2, Count: 120,
		Keys: []string{"kunde-A", "kunde-B", "kunde-C"}, RandomKeys: true})
	var err error
	if cdc {
		_, err = NewCDCRelay(w, CDCConfig{Service: s, Target: p, Faults: in, RestartAfter: 2})
	} else {
		_, err = NewRelay(w, RelayConfig{Service: s, Target: p, Faults: in, PollEvery: 3, Batch: 20, Lease: 2, RestartAfter: 2})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(200); err != nil {
		t.Fatal(err)
	}
	if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("sink"), sim.OrderedPerKey("sink")); err != nil {
		t.Errorf("cdc=%v: %v", cdc, err)
	}
	foldsAgain(t, w, &jsonl)
	for _, r := range s.Rows() {
		if r.State != StateSent || p.count(r.Msg) == 0 {
			t.Errorf("cdc=%v: row %d %s, published %d times", cdc, r.ID, r.State, p.count(r.Msg))
		}
	}
	if cdc && len(s.log) != 0 {
		t.Errorf("change log keeps %d committed entries", len(s.log))
	}
	return styleRun{m: s.Metrics(), dups: w.Ledger().Duplicates("sink"), rows: len(s.Rows())}
}

func TestPollingVersusCDC(t *testing.T) {
	for _, crashP := range []float64{0, 0.05} {
		poll := runStyle(t, 9, false, crashP)
		cdc := runStyle(t, 9, true, crashP)
		t.Logf("crash p=%.2f polling: mean lag %.2f max %d, duplicates %d, crashes %d", crashP, poll.m.MeanLag(), poll.m.MaxLag, poll.dups, poll.m.RelayCrash)
		t.Logf("crash p=%.2f CDC:     mean lag %.2f max %d, duplicates %d, crashes %d", crashP, cdc.m.MeanLag(), cdc.m.MaxLag, cdc.dups, cdc.m.RelayCrash)
		if poll.rows != 120 || cdc.rows != 120 {
			t.Fatalf("rows %d and %d, want 120", poll.rows, cdc.rows)
		}
		if !(cdc.m.MeanLag() < poll.m.MeanLag()) {
			t.Errorf("CDC mean lag %.2f not below polling %.2f", cdc.m.MeanLag(), poll.m.MeanLag())
		}
		if crashP == 0 {
			if cdc.m.MaxLag != 0 || poll.m.MaxLag != 2 || cdc.dups != 0 || poll.dups != 0 {
				t.Errorf("without faults: CDC max lag %d dups %d, polling max lag %d dups %d", cdc.m.MaxLag, cdc.dups, poll.m.MaxLag, poll.dups)
			}
			continue
		}
		if cdc.m.RelayCrash == 0 || poll.m.RelayCrash == 0 || cdc.dups == 0 || poll.dups == 0 {
			t.Errorf("with crashes: want crashes and duplicates in both styles")
		}
		if poll.m.Duplicates() != poll.dups || cdc.m.Duplicates() != cdc.dups {
			t.Errorf("metrics duplicates %d/%d, ledger %d/%d", poll.m.Duplicates(), cdc.m.Duplicates(), poll.dups, cdc.dups)
		}
	}
}

func TestCDCCommitEveryAndFailure(t *testing.T) {
	w := mustWorld(t, 1)
	s := mustService(t, w, true)
	p := newSink(w)
	p.failNth[3] = true
	r, err := NewCDCRelay(w, CDCConfig{Service: s, Target: p, CommitEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, _, err := s.PlaceOrder("kunde-A", 1); err != nil {
			t.Fatal(err)
		}
	}
	r.Step(1)
	if pub, com := r.Position(); pub != 2 || com != 2 || len(p.got) != 2 {
		t.Fatalf("position %d/%d, %d published; want 2/2 and 2", pub, com, len(p.got))
	}
	r.Step(2)
	if pub, com := r.Position(); pub != 4 || com != 4 || len(p.got) != 4 || len(s.log) != 0 {
		t.Fatalf("position %d/%d, %d published, log %d", pub, com, len(p.got), len(s.log))
	}
	if got := rowStates(s); len(got) != 4 || got[3] != StateSent {
		t.Errorf("states %v", got)
	}
	if _, err := NewCDCRelay(w, CDCConfig{Service: mustService(t, w, false), Target: p}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("CDC relay on a service without change log: %v", err)
	}
	if _, err := NewCDCRelay(w, CDCConfig{Service: s, Target: p, Interval: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("negative interval: %v", err)
	}
	if err := sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("sink")); err != nil {
		t.Error(err)
	}
}
