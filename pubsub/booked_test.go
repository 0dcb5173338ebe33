package pubsub

import (
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/internal/ledgercmp"
	"github.com/brokerlab/brokerlab/sim"
)

// bookedRun runs one random seed's pub/sub world (bookedWorld, without a
// budget) for 60 ticks and returns the ledger and the trace.
func bookedRun(t *testing.T, seed uint64, listen bool) (*sim.Ledger, *sim.Trace) {
	t.Helper()
	w := bookedWorld(t, seed, listen, sim.Budget{})
	if err := w.Run(60); err != nil {
		t.Fatal(err)
	}
	return w.Ledger(), w.Trace()
}

// bookedWorld builds one random seed's pub/sub world under a random fault
// plan and budget b, with the ledger as the trace's only sink (listen
// false: the broker and the handlers' deliveries book their delivered and
// processed events through the typed entry points, and the ledger keeps
// its Stats from the start) or with a sink listening too (listen true:
// every event is built and folded by Ledger.Emit). Subscribers disconnect
// and reconnect, and a producer publishes until t=30; by t=60 the world
// has drained.
func bookedWorld(t *testing.T, seed uint64, listen bool, b sim.Budget) *sim.World {
	t.Helper()
	st := sim.NewStream(seed, "booked")
	w := ledgercmp.BudgetWorld(t, seed, listen, b)
	var err error
	nsubs := 2 + st.IntN(5)
	names := make([]string, nsubs)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	var in *faults.Injector
	if plan := randomPlan(st, names, names); len(plan) > 0 && st.Chance(0.8) {
		if in, err = faults.New(w, faults.Config{Plan: faults.Plan{Rules: plan}}); err != nil {
			t.Fatal(err)
		}
	}
	bus, err := New(w, Config{Name: "bus", Faults: in, MaxDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		var h sim.Handler
		switch st.IntN(4) {
		case 1:
			h = sim.Idempotent(sim.Effect("once per key"), sim.ByKey)
		case 2:
			h = &sim.Script{Ticks: sim.Tick(1 + st.IntN(3)), Note: "slow"}
		case 3:
			h = sim.HandlerFunc(func(d *sim.Delivery) error { d.Apply("a"); d.Apply("b"); return nil })
		}
		consumer := ""
		if st.Chance(0.3) {
			consumer = "shared" // two subscribers may book under one logical consumer
		}
		s, err := bus.Subscribe(SubscriberConfig{Name: name, Consumer: consumer, Pattern: propPatterns[st.IntN(len(propPatterns))],
			Buffer: 1 + st.IntN(6), Policy: Policy(st.IntN(3)), Rate: st.IntN(4), Handler: h, Offline: st.Chance(0.2)})
		if err != nil {
			t.Fatal(err)
		}
		reconnectAtRandom(w, s, st)
	}
	publishAtRandom(t, w, bus, st, false)
	return w
}

// TestBookedEqualsEmitted runs random pub/sub worlds twice, once with the
// typed booking of delivered and processed events and once with every
// event built and emitted, and requires the same ledger: event count,
// last tick, dump (records, deliveries, losses, outcomes), outcomes,
// losses, stats and consumers.
func TestBookedEqualsEmitted(t *testing.T) {
	delivered := 0
	for _, o := range ledgercmp.Seeds(t, 60, func(seed uint64, listen bool) (*sim.Ledger, *sim.Trace) { return bookedRun(t, seed, listen) }) {
		delivered += o.Deliveries
	}
	if delivered < 1000 {
		t.Fatalf("only %d deliveries in all: the typed booking was hardly compared", delivered)
	}
}

// smallBudget draws a budget for seed whose caps a bookedWorld often
// meets: mostly a cap on deliveries per tick, which the typed bookings of
// deliveries and fan-outs check before they book, sometimes with a cap on
// messages, events or component steps, which stop the run between
// bookings.
func smallBudget(seed uint64) sim.Budget {
	st := sim.NewStream(seed, "budget")
	var b sim.Budget
	if st.Chance(0.7) {
		b.DeliveriesPerTick = 2 + st.IntN(12)
	}
	switch st.IntN(4) {
	case 0:
		b.Messages = uint64(20 + st.IntN(100))
	case 1:
		b.Events = uint64(60 + st.IntN(400))
	case 2:
		b.Steps = uint64(40 + st.IntN(200))
	}
	if b == (sim.Budget{}) {
		b.DeliveriesPerTick = 2 + st.IntN(12)
	}
	return b
}

// TestBookedEqualsEmittedUnderBudget runs random pub/sub worlds under a
// small budget twice, booked and emitted, side by side, and requires the
// same ledger after every tick and the same budget error at the same
// tick: a typed booking must charge the budget as the event it stands for
// and leave to Emit the one that breaches a cap, so that the error names
// the same place. Runs that meet a cap stop early and compare less, so
// the bar of 1000 deliveries is over 80 seeds, not TestBookedEqualsEmitted's
// 60; and at least half the seeds must meet a cap, and a quarter of those
// the cap on deliveries per tick, the one the typed bookings check.
func TestBookedEqualsEmittedUnderBudget(t *testing.T) {
	delivered := 0
	outcomes, errs := ledgercmp.Lockstep(t, 80, 60, func(seed uint64, listen bool) *sim.World {
		return bookedWorld(t, seed, listen, smallBudget(seed))
	})
	for _, o := range outcomes {
		delivered += o.Deliveries
	}
	capped, by := ledgercmp.Caps(errs)
	perTick := by["deliveries_per_tick"]
	t.Logf("%d deliveries; %d of %d seeds met a cap, %d of them the cap on deliveries per tick", delivered, capped, len(errs), perTick)
	if delivered < 1000 || capped < len(errs)/2 || perTick < capped/4 {
		t.Fatalf("%d deliveries; %d of %d seeds met a cap, %d of them the cap on deliveries per tick: the budget was hardly compared",
			delivered, capped, len(errs), perTick)
	}
}

// reconnectAtRandom schedules subscriber s to disconnect and connect again
// at random ticks drawn from st, and to connect at t=40 in any case.
func reconnectAtRandom(w *sim.World, s *Subscriber, st *sim.Stream) {
	name := s.Name()
	w.At(sim.Tick(1+st.IntN(30)), "disconnect "+name, s.Disconnect)
	w.At(sim.Tick(1+st.IntN(35)), "connect "+name, func() { _ = s.Connect() })
	w.At(40, "connect "+name, func() { _ = s.Connect() })
}

// publishAtRandom adds a producer to w that, at every tick up to t=30,
// publishes up to 7 messages to b with subjects and keys drawn from st;
// with source, about a third of them name "src" as their source.
func publishAtRandom(t *testing.T, w *sim.World, b *Broker, st *sim.Stream, source bool) {
	t.Helper()
	if err := w.AddFunc("producer", sim.PhaseProducer, func(now sim.Tick) {
		if now > 30 {
			return
		}
		for range st.IntN(8) {
			h := sim.Headers{Type: propSubjects[st.IntN(len(propSubjects))]}
			if source && st.Chance(0.3) {
				h.Source = "src"
			}
			_ = b.Publish(w.Env().NewMessage(fmt.Sprintf("k%d", st.IntN(3)), nil, h))
		}
	}); err != nil {
		t.Fatal(err)
	}
}
