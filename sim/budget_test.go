package sim

import (
	"errors"
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
