package outbox

import (
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
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	s := mustService(t, env, cdc)
	p := newSink(env)
	var in *faults.Injector
	if crashP > 0 {
		in = mustFaults(t, env, faults.Rule{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Probability: crashP, Until: 100})
	}
	wr, err := NewWriter(WriterConfig{Service: s, Mode: Outbox, PerTick: 2, Limit: 120})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(sim.PhaseProducer, "writer", wr); err != nil {
		t.Fatal(err)
	}
	var relay sim.Actor
	if cdc {
		relay, err = NewCDCRelay(CDCConfig{Service: s, Target: p, Faults: in, RestartAfter: 2})
	} else {
		relay, err = NewRelay(RelayConfig{Service: s, Target: p, Faults: in, PollEvery: 3, Batch: 20, Lease: 2, RestartAfter: 2})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(sim.PhaseRelay, "relay", relay); err != nil {
		t.Fatal(err)
	}
	if err := w.Run(200); err != nil {
		t.Fatal(err)
	}
	if err := sim.Check(env.Ledger, sim.NoLoss(), sim.AtLeastOnce("sink"), sim.OrderedPerKey("sink")); err != nil {
		t.Errorf("cdc=%v: %v", cdc, err)
	}
	for _, r := range s.Rows() {
		if r.State != StateSent || p.count(r.Msg) == 0 {
			t.Errorf("cdc=%v: row %d %s, published %d times", cdc, r.ID, r.State, p.count(r.Msg))
		}
	}
	if cdc && len(s.log) != 0 {
		t.Errorf("change log keeps %d committed entries", len(s.log))
	}
	return styleRun{m: s.Metrics(), dups: env.Ledger.Duplicates("sink"), rows: len(s.Rows())}
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
	env := sim.NewEnv(1)
	s := mustService(t, env, true)
	p := newSink(env)
	p.failNth[3] = true
	r, err := NewCDCRelay(CDCConfig{Service: s, Target: p, CommitEvery: 1})
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
	if _, err := NewCDCRelay(CDCConfig{Service: mustService(t, env, false), Target: p}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("CDC relay on a service without change log: %v", err)
	}
}
