package pubsub

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/internal/ledgercmp"
	"github.com/brokerlab/brokerlab/sim"
)

// The trace modes effectRun runs a world in.
const (
	traceLedger = iota // the ledger is the only listener: the shortcut books
	traceSink          // a sink listens too: the shortcut declines, the handler runs
	traceNone          // no one listens: the shortcut counts
)

// effectRun runs one random seed's pub/sub world without faults, under
// budget b (set once the trace of mode mode is in place), in trace mode
// mode, with each subscriber's handler the default one (plain true:
// the subscriber may book its copies without a delivery) or a handler that does
// the same but that the broker cannot recognise (plain false: every copy
// goes through a prepared delivery and Handle). Subscribers mute and
// unmute, disconnect and reconnect, and some emit or check sources, so
// the shortcut meets every case it must decline. A run that meets a cap of
// b stops there. It returns the world, the broker, and the events a sink
// saw (traceSink only).
func effectRun(t *testing.T, seed uint64, mode int, plain bool, b sim.Budget) (*sim.World, *Broker, []sim.Event) {
	t.Helper()
	st := sim.NewStream(seed, "effect")
	w := ledgercmp.World(t, seed, false)
	var seen []sim.Event
	switch mode {
	case traceSink:
		w.Trace().Attach(sim.SinkFunc(func(e *sim.Event) { seen = append(seen, *e) }))
	case traceNone:
		w.Env().Trace = sim.NewTrace()
	}
	w.SetBudget(b)
	bus, err := New(w, Config{Name: "bus", MaxDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 + st.IntN(5) {
		name := fmt.Sprintf("s%d", i)
		var h sim.Handler = sim.HandlerFunc(func(d *sim.Delivery) error { d.Apply(""); return nil })
		if plain {
			h = nil
		}
		cfg := SubscriberConfig{Name: name, Pattern: propPatterns[st.IntN(len(propPatterns))],
			Buffer: 1 + st.IntN(6), Policy: Policy(st.IntN(3)), Rate: st.IntN(4), Handler: h, Offline: st.Chance(0.2)}
		if st.Chance(0.3) {
			cfg.Consumer = "shared"
		}
		switch st.IntN(5) {
		case 1:
			cfg.Emits = []Emit{{Subject: propSubjects[st.IntN(len(propSubjects))]}}
		case 2:
			cfg.SourceCheck, cfg.Source = true, "src"
		case 3:
			cfg.Supervisor = true
		}
		s, err := bus.Subscribe(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w.At(sim.Tick(1+st.IntN(30)), "mute "+name, s.Mute)
		w.At(sim.Tick(1+st.IntN(30)), "unmute "+name, s.Unmute)
		reconnectAtRandom(w, s, st)
	}
	publishAtRandom(t, w, bus, st, true)
	if err := w.Run(60); err != nil && !errors.Is(err, sim.ErrBudget) {
		t.Fatal(err)
	}
	return w, bus, seen
}

// TestEffectShortcutChangesNothing runs random worlds twice, once with
// the default handler, which the broker handles without preparing a
// delivery when the trace would not build the processed event, and once
// with a handler doing the same through a delivery, and requires the
// same run in each trace mode: the same events (when a sink listens), the
// same ledger and event count (when only the ledger does), the same
// count of events (when no one does), the same counters, and as many
// envelopes released for reuse. Every seed runs without a budget and
// under a small one (smallBudget), where both runs must stop with the
// same error; most seeds must meet a cap.
func TestEffectShortcutChangesNothing(t *testing.T) {
	var handled [2]int // without a budget, under one
	capped := 0
	for seed := uint64(1); seed <= 60; seed++ {
		for bi, budget := range []sim.Budget{{}, smallBudget(seed)} {
			for _, mode := range []int{traceLedger, traceSink, traceNone} {
				gw, gb, gev := effectRun(t, seed, mode, true, budget)
				ww, wb, wev := effectRun(t, seed, mode, false, budget)
				if g, w := fmt.Sprint(gw.Err()), fmt.Sprint(ww.Err()); g != w {
					t.Fatalf("seed %d mode %d budget %+v: stopped with %s, want %s", seed, mode, budget, g, w)
				}
				if gw.Err() != nil && mode == traceLedger {
					capped++
				}
				at := fmt.Sprintf("seed %d mode %d budget %+v", seed, mode, budget)
				if gb.Metrics() != wb.Metrics() {
					t.Fatalf("%s: metrics %+v, want %+v", at, gb.Metrics(), wb.Metrics())
				}
				for i, s := range gb.Subscribers() {
					if g, w := s.Metrics(), wb.Subscribers()[i].Metrics(); g != w {
						t.Fatalf("%s: %s metrics %+v, want %+v", at, s.Name(), g, w)
					}
				}
				if g, w := len(gb.free), len(wb.free); g != w {
					t.Fatalf("%s: %d envelopes recycled, want %d", at, g, w)
				}
				if g, w := gw.Env().Trace.Len(), ww.Env().Trace.Len(); g != w {
					t.Fatalf("%s: %d events, want %d", at, g, w)
				}
				switch mode {
				case traceLedger:
					if d := ledgercmp.Diff(gw.Ledger(), gw.Trace(), ww.Ledger(), ww.Trace()); d != "" {
						t.Fatalf("%s: %s", at, d)
					}
					handled[bi] += gb.Metrics().Handled
				case traceSink:
					if !reflect.DeepEqual(gev, wev) {
						t.Fatalf("%s: the events differ", at)
					}
				}
			}
		}
	}
	// Runs under a budget stop early and handle less.
	t.Logf("%d copies handled without a budget, %d under one; %d of 60 seeds met a cap", handled[0], handled[1], capped)
	if handled[0] < 1000 || handled[1] < 300 || capped < 30 {
		t.Fatalf("%d copies handled without a budget, %d under one; %d of 60 seeds met a cap: the shortcut was hardly compared",
			handled[0], handled[1], capped)
	}
}
