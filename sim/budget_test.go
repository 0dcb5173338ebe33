package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The event cap stops a run that makes no new message but keeps working
// (a poison message received again and again): a model that checks
// Exceeded in its loop stops within one event of the cap, and the world
// steps no component after it.
func TestBudgetEventsStopsWorkWithoutMessages(t *testing.T) {
	w, _ := New(Config{})
	w.SetBudget(Budget{Events: 1000})
	env := w.Env()
	after := 0
	_ = w.AddFunc("poison", PhaseConsumer, func(Tick) {
		for range 300 {
			if env.Exceeded() != nil {
				return
			}
			env.Emit(Event{Kind: KindFailed, Where: "queue:q", Msg: 1})
		}
	})
	_ = w.AddFunc("after", PhaseConsumer, func(Tick) { after++ })
	err := w.Run(1_000_000)
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "more than 1000 events by tick 4 (cap events)") {
		t.Fatalf("err %v", err)
	}
	if n := env.Trace.Len(); n != 1001 {
		t.Errorf("%d events traced, want the cap and one more", n)
	}
	if w.Now() != 4 || after != 3 {
		t.Errorf("stopped at t=%d after %d steps of the next component, want t=4 and 3", w.Now(), after)
	}
}

// The step cap stops a run whose components do nothing at all: idle
// consumers polling an empty queue for a million ticks.
func TestBudgetStepsStopsIdleWork(t *testing.T) {
	w, _ := New(Config{})
	w.SetBudget(Budget{Steps: 10_000})
	for i := range 100 {
		_ = w.AddFunc("idle-"+string(rune('a'+i%26))+string(rune('a'+i/26)), PhaseConsumer, func(Tick) {})
	}
	err := w.Run(1_000_000)
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "more than 10000 component steps by tick 101 (cap steps)") {
		t.Fatalf("err %v at t=%d", err, w.Now())
	}
	if s := w.Env().Steps(); s != 10_001 {
		t.Errorf("%d steps, want the cap and one more", s)
	}
	if w.Env().Trace.Len() != 0 {
		t.Errorf("idle components traced %d events", w.Env().Trace.Len())
	}
}

// Without a cap nothing is counted against the run.
func TestBudgetZeroMeansNoCap(t *testing.T) {
	w, _ := New(Config{})
	env := w.Env()
	_ = w.AddFunc("busy", PhaseConsumer, func(Tick) { env.Emit(Event{Kind: KindFailed, Where: "queue:q", Msg: 1}) })
	if err := w.Run(5000); err != nil || env.Trace.Len() != 5000 || env.Steps() != 5000 {
		t.Fatalf("err %v, %d events, %d steps", err, env.Trace.Len(), env.Steps())
	}
}

// pool is a component that stands for n instances.
type pool struct{ n, steps int }

func (p *pool) Phase() Phase { return PhaseConsumer }
func (p *pool) Step(Tick)    { p.steps++ }
func (p *pool) Weight() int  { return p.n }

// A Weighted component counts its weight per step: 64 idle instances in
// one consumer cost what 64 consumers do.
func TestBudgetStepsCountsWeight(t *testing.T) {
	w, _ := New(Config{})
	w.SetBudget(Budget{Steps: 6400})
	p := &pool{n: 64}
	if err := w.Add("pool", p); err != nil {
		t.Fatal(err)
	}
	err := w.Run(1_000_000)
	if !errors.Is(err, ErrBudget) || p.steps != 101 || w.Env().Steps() != 6464 {
		t.Fatalf("err %v after %d steps (%d counted)", err, p.steps, w.Env().Steps())
	}
}

// The send cap stops a run that re-sends the same message again and
// again (CDC relays publishing every row): no new ID is allocated, so the
// message cap never sees it, but every copy handed to a broker counts.
func TestBudgetSendsCountsResends(t *testing.T) {
	w, _ := New(Config{})
	w.SetBudget(Budget{Sends: 500, Messages: 10})
	env := w.Env()
	_ = w.AddFunc("relay", PhaseProducer, func(Tick) {
		for range 100 {
			if env.Exceeded() != nil {
				return
			}
			env.Emit(Event{Kind: KindSent, Where: "queue:in", Msg: 1})
			env.Emit(Event{Kind: KindReceived, Where: "queue:in", Msg: 1, Consumer: "c"})
		}
	})
	err := w.Run(1000)
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "more than 500 copies handed to brokers by tick 6 (cap sends), at queue:in") {
		t.Fatalf("err %v at t=%d", err, w.Now())
	}
	if w.Now() != 6 {
		t.Errorf("stopped at t=%d, want 6", w.Now())
	}
}

// typedRun is a world under budget b for a test of the typed entry
// points: its trace the ledger alone listens to (listen false), so that
// they book, or a sink too (listen true), so that they refuse and the
// caller emits. at is the trace's length when the world first stopped on
// its budget (0 while it has not), typed how many events were booked.
type typedRun struct {
	w     *World
	tr    *Trace
	at    uint64
	typed int
}

func newTypedRun(t *testing.T, listen bool, b Budget) *typedRun {
	t.Helper()
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if listen {
		w.Trace().Attach(SinkFunc(func(*Event) {}))
	}
	w.SetBudget(b)
	return &typedRun{w: w, tr: w.Trace()}
}

// event counts n events booked when booked, else emits e (n of them for
// a fan-out: es), then notes where the world stopped.
func (r *typedRun) event(booked bool, n int, es ...Event) {
	if booked {
		r.typed += n
	} else {
		for _, e := range es {
			r.tr.Emit(e)
		}
	}
	if r.at == 0 && r.w.Err() != nil {
		r.at = r.tr.Len()
	}
}

// sameAsEmitted fails t unless the typed run booked some events and the
// emitted one none, both stopped at the same event with the same error
// (a budget error exactly when b has a cap), and their traces and
// ledgers agree.
func sameAsEmitted(t *testing.T, b Budget, typed, emitted *typedRun) {
	t.Helper()
	if typed.typed == 0 || emitted.typed != 0 {
		t.Fatalf("%+v: %d events booked by the typed run, %d by the listening one; want some and none", b, typed.typed, emitted.typed)
	}
	bw, ew := typed.w, emitted.w
	if fmt.Sprint(bw.Err()) != fmt.Sprint(ew.Err()) || typed.at != emitted.at || (bw.Err() == nil) != (b == Budget{}) {
		t.Fatalf("%+v: typed run stopped at event %d with %v, emitted at %d with %v", b, typed.at, bw.Err(), emitted.at, ew.Err())
	}
	if bw.Trace().Len() != ew.Trace().Len() || bw.Ledger().Dump() != ew.Ledger().Dump() {
		t.Fatalf("%+v: the ledgers differ:\n%s\n%s", b, bw.Ledger().Dump(), ew.Ledger().Dump())
	}
}

// The typed entry points charge a run's budget exactly as the events they
// stand for: a world that books produced events and deliveries through
// them (the ledger its only sink) and one that emits the same events (a
// listening sink) must stop at the same event with the same error, and
// fold the same ledger, for a sends cap and a per-tick delivery cap. The
// typed world must have booked some of them, or nothing was compared.
func TestBudgetCountsTypedBookings(t *testing.T) {
	for _, b := range []Budget{{Sends: 7}, {DeliveriesPerTick: 4}, {DeliveriesPerTick: 2, Sends: 9}, {DeliveriesPerTick: 5, Sends: 11}} {
		run := func(listen bool) *typedRun {
			r := newTypedRun(t, listen, b)
			tr := r.tr
			fan := NewLedgerFanout([]string{"x", "y"})
			var lc LedgerConsumer
			for tick := Tick(1); tick <= 4; tick++ {
				for i := range 3 {
					id := ID(tick)*10 + ID(i)
					r.event(tr.BookProduced(tick, id, id, "log:t", "k", ""), 1,
						Event{Tick: tick, Kind: KindProduced, Where: "log:t", Msg: id, Origin: id, Key: "k"})
				}
				for i := range 3 {
					id := ID(tick)*10 + ID(i)
					r.event(tr.BookDelivery(tick, id, "g", &lc), 1,
						Event{Tick: tick, Kind: KindPolled, Where: "log:t", Consumer: "g", Msg: id})
				}
				id := ID(tick) * 10
				r.event(tr.BookDeliveries(tick, id, &fan), 2,
					Event{Tick: tick, Kind: KindDelivered, Where: "log:t", Consumer: "x", Msg: id},
					Event{Tick: tick, Kind: KindDelivered, Where: "log:t", Consumer: "y", Msg: id})
			}
			return r
		}
		sameAsEmitted(t, b, run(false), run(true))
	}
}
