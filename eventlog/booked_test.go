package eventlog_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/internal/ledgercmp"
	"github.com/brokerlab/brokerlab/sim"
)

// bookedRun runs one random seed's log world under a random fault plan,
// with the ledger as the trace's only sink (listen false: the log and the
// members book what they can through the ledger's typed entry points, and
// the ledger keeps its Stats from the start) or with a sink listening too
// (listen true: every event is built and folded by Ledger.Emit). The world
// has 1 to 4 partitions, maybe retention by age or size (which expires
// records a group has not read), 1 to 3 groups with random commit modes,
// resets and strategies, members with random handlers and batches, and
// fault rules for crashes, leaves, handler failures, slow handlers, broker
// outages, lost commits and retention overtaking a group. Some records
// are copies of earlier ones (an origin of their own). It returns the
// ledger and the trace.
func bookedRun(t *testing.T, seed uint64, listen bool) (*sim.Ledger, *sim.Trace) {
	t.Helper()
	w := bookedWorld(t, seed, listen, sim.Budget{})
	if err := w.Run(80); err != nil {
		t.Fatal(err)
	}
	return w.Ledger(), w.Trace()
}

// bookedWorld builds the world bookedRun runs, under budget b (none when
// b is zero), without running it.
func bookedWorld(t *testing.T, seed uint64, listen bool, b sim.Budget) *sim.World {
	t.Helper()
	s := sim.NewStream(seed, "booked")
	p := func(max float64) float64 { return s.Float64() * max }
	w := ledgercmp.BudgetWorld(t, seed, listen, b)
	var err error
	cfg := eventlog.Config{Name: "orders", Partitions: 1 + s.IntN(4)}
	switch s.IntN(4) {
	case 0:
		cfg.RetentionTicks = sim.Tick(4 + s.IntN(20))
	case 1:
		cfg.RetentionRecords = 2 + s.IntN(12)
	}
	if s.Chance(0.8) {
		// The conservation test's mix, and retention overtaking a group.
		rules := append(mixRules(s, p), faults.Rule{Name: "overtake", Point: faults.RetentionOvertake, Probability: p(0.05), Param: int64(1 + s.IntN(3)), Until: 40})
		if cfg.Faults, err = faults.New(w, faults.Config{Plan: faults.Plan{Rules: rules}}); err != nil {
			t.Fatal(err)
		}
	}
	topic, err := eventlog.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for gi, n := 0, 1+s.IntN(3); gi < n; gi++ {
		gc := eventlog.GroupConfig{Name: fmt.Sprintf("g%d", gi), Strategy: eventlog.Strategy(s.IntN(3)), SessionTimeout: sim.Tick(3 + s.IntN(4))}
		if s.IntN(4) == 0 {
			gc.Reset = eventlog.ResetLatest
		}
		g, err := eventlog.NewGroup(w, topic, gc)
		if err != nil {
			t.Fatal(err)
		}
		for mi, k := 0, 1+s.IntN(3); mi < k; mi++ {
			var h sim.Handler
			switch s.IntN(4) {
			case 1:
				h = sim.Idempotent(sim.Effect("charge"), sim.ByMessageID)
			case 2:
				h = sim.HandlerFunc(func(d *sim.Delivery) error { d.Apply("a"); d.Apply("b"); return nil })
			case 3:
				h = sim.HandlerFunc(func(d *sim.Delivery) error { d.Skip("not mine"); return nil })
			}
			if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: fmt.Sprintf("g%d-m%d", gi, mi), Handler: h,
				Commit: eventlog.CommitMode(s.IntN(3)), Batch: 1 + s.IntN(6), Start: sim.Tick(s.IntN(10))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var last sim.ID
	if err := w.AddFunc("producer", sim.PhaseProducer, func(now sim.Tick) {
		if now > 30 {
			return
		}
		for range s.IntN(6) {
			m := w.Env().NewMessage(fmt.Sprintf("k%d", s.IntN(5)), []byte("v"), sim.Headers{Type: fmt.Sprintf("order.%d", s.IntN(3))})
			if last != 0 && s.Chance(0.2) {
				m.Origin = last // a copy of an earlier record, as a relay hands over
			}
			last = m.ID
			if err := topic.Publish(m); err != nil && !errors.Is(err, sim.ErrUnavailable) {
				t.Fatal(err)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestBookedEqualsEmitted runs random log worlds twice, once with the
// typed booking the log and its groups use when the ledger is the only
// sink and once with every event built and emitted, and requires the same
// ledger: event count, last tick, dump (records, deliveries, losses,
// outcomes), outcomes, losses, stats and consumers.
func TestBookedEqualsEmitted(t *testing.T) {
	delivered, lost := 0, 0
	for _, o := range ledgercmp.Seeds(t, 80, func(seed uint64, listen bool) (*sim.Ledger, *sim.Trace) { return bookedRun(t, seed, listen) }) {
		delivered += o.Deliveries
		if o.Verdict == sim.VerdictLost {
			lost++
		}
	}
	t.Logf("%d deliveries, %d lost verdicts", delivered, lost)
	if delivered < 1000 || lost < 20 {
		t.Fatalf("only %d deliveries and %d losses in all: the typed booking was hardly compared", delivered, lost)
	}
}

// logBudget draws a budget for seed whose caps a bookedWorld often meets:
// a cap on sends, which the typed booking of a produced record checks
// before it books, or on deliveries per tick, which the typed booking of
// a polled delivery checks, or both; sometimes with a cap on messages,
// events or component steps, which stop the run between bookings.
func logBudget(seed uint64) sim.Budget {
	st := sim.NewStream(seed, "budget")
	var b sim.Budget
	switch st.IntN(3) {
	case 0:
		b.Sends = uint64(10 + st.IntN(60))
	case 1:
		b.DeliveriesPerTick = 2 + st.IntN(8)
	default:
		b.Sends = uint64(10 + st.IntN(60))
		b.DeliveriesPerTick = 2 + st.IntN(8)
	}
	switch st.IntN(5) {
	case 0:
		b.Messages = uint64(20 + st.IntN(80))
	case 1:
		b.Events = uint64(60 + st.IntN(300))
	case 2:
		b.Steps = uint64(40 + st.IntN(200))
	}
	return b
}

// TestBookedEqualsEmittedUnderBudget runs random log worlds under a small
// budget twice, booked and emitted, side by side, and requires the same
// ledger after every tick and the same budget error at the same tick: a
// typed booking must charge the budget as the event it stands for and
// leave to Emit the one that breaches a cap, so that the error names the
// same place. Runs that meet a cap stop early and compare less, but 80
// seeds must still compare 1000 deliveries; at least half the seeds must
// meet a cap, and at least a quarter of those each of the two caps the
// typed bookings check (sends, deliveries per tick).
func TestBookedEqualsEmittedUnderBudget(t *testing.T) {
	delivered := 0
	outcomes, errs := ledgercmp.Lockstep(t, 80, 80, func(seed uint64, listen bool) *sim.World {
		return bookedWorld(t, seed, listen, logBudget(seed))
	})
	for _, o := range outcomes {
		delivered += o.Deliveries
	}
	capped, by := ledgercmp.Caps(errs)
	sends, perTick := by["sends"], by["deliveries_per_tick"]
	t.Logf("%d deliveries; %d of %d seeds met a cap: %d the cap on sends, %d the cap on deliveries per tick", delivered, capped, len(errs), sends, perTick)
	if delivered < 1000 || capped < len(errs)/2 || sends < capped/4 || perTick < capped/4 {
		t.Fatalf("%d deliveries; %d of %d seeds met a cap, %d the cap on sends, %d the cap on deliveries per tick: the budget was hardly compared",
			delivered, capped, len(errs), sends, perTick)
	}
}
