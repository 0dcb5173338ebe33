// Package ledgercmp compares two ledgers folded from the same run: the
// tests of the models' typed booking (sim.Trace.BookDelivery and its
// siblings, taken when the ledger is the only listener) run a world once
// booked and once with every event built and emitted, and require the
// same ledger. Seeds compares runs without a budget at their end;
// Lockstep compares runs under a budget (BudgetWorld) after every tick,
// up to the tick a cap stops them, and requires the same budget error.
package ledgercmp

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// Diff returns "" when ledger got, folded from trace gt, agrees with
// ledger want, folded from trace wt, on everything the checkers and the
// reports read: the number of events, the last tick, the dump (records,
// deliveries, losses, outcomes), the outcomes, the losses, the stats, the
// consumers, and every copy's entry for every consumer (ticks included).
// Otherwise it describes the first difference. It costs a dump and an
// outcome list of each ledger, O(copies × consumers).
func Diff(got *sim.Ledger, gt *sim.Trace, want *sim.Ledger, wt *sim.Trace) string {
	if gt.Len() != wt.Len() || got.LastTick() != want.LastTick() {
		return fmt.Sprintf("%d events to tick %d, want %d to tick %d", gt.Len(), got.LastTick(), wt.Len(), want.LastTick())
	}
	if g, w := got.Dump(), want.Dump(); g != w {
		return fmt.Sprintf("dumps differ:\n%s\nwant\n%s", g, w)
	}
	if !reflect.DeepEqual(got.Outcomes(""), want.Outcomes("")) {
		return "outcomes differ"
	}
	if !reflect.DeepEqual(got.Losses(), want.Losses()) {
		return "losses differ"
	}
	if g, w := got.Stats(), want.Stats(); !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("stats differ:\n%+v\nwant\n%+v", g, w)
	}
	if g, w := got.Consumers(), want.Consumers(); !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("consumers %v, want %v", g, w)
	}
	// Every copy's entry for every consumer, ticks included: the dump
	// does not show when a consumer last saw a copy.
	for _, r := range want.Records() {
		for _, name := range want.Consumers() {
			if g, w := got.Entry(r.ID, got.Consumer(name)), want.Entry(r.ID, want.Consumer(name)); g != w {
				return fmt.Sprintf("copy %v for %s: %+v, want %+v", r.ID, name, g, w)
			}
		}
	}
	return ""
}

// World returns a world for seed whose trace the ledger alone listens to
// (listen false: models take their typed booking paths, and the ledger
// keeps its Stats from the first event, so the kept summary is compared
// too), or a sink that listens as well (listen true: every event is built
// and folded by Ledger.Emit). It fails tb when the world cannot be made.
func World(tb testing.TB, seed uint64, listen bool) *sim.World {
	tb.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		tb.Fatal(err)
	}
	if listen {
		w.Trace().Attach(sim.SinkFunc(func(*sim.Event) {}))
	} else {
		w.Ledger().Stats()
	}
	return w
}

// BudgetWorld returns World(tb, seed, listen) with budget b in force from
// its first event: the typed entry points charge b as Emit does, and book
// nothing that would breach a cap (see sim.World.SetBudget), so a small b
// compares the two paths where a cap is met.
func BudgetWorld(tb testing.TB, seed uint64, listen bool, b sim.Budget) *sim.World {
	tb.Helper()
	w := World(tb, seed, listen)
	w.SetBudget(b)
	return w
}

// Lockstep builds the world of every seed from 1 to n twice with build,
// booked (listen false) and emitted (listen true), and ticks the two side
// by side for up to ticks ticks, stopping as World.Run does at the tick
// a cap of the world's budget is exceeded. It fails tb at the first tick
// whose two ledgers differ (see Diff) or whose worlds stopped with
// different errors: a later event of the same copy and consumer
// overwrites the tick an entry last saw it, so a delivery booked at a
// wrong tick shows only before it. It returns the outcomes of every
// emitted run, and per seed the error its runs stopped with (nil when
// none did; else it wraps sim.ErrBudget), so the caller can require that
// enough was compared and enough caps were met. It costs 2n runs and up
// to n×ticks Diffs.
func Lockstep(tb testing.TB, n uint64, ticks sim.Tick, build func(seed uint64, listen bool) *sim.World) ([]sim.Outcome, []error) {
	tb.Helper()
	var all []sim.Outcome
	var errs []error
	for seed := uint64(1); seed <= n; seed++ {
		booked, emitted := build(seed, false), build(seed, true)
		for range ticks {
			booked.Tick()
			emitted.Tick()
			if d := Diff(booked.Ledger(), booked.Trace(), emitted.Ledger(), emitted.Trace()); d != "" {
				tb.Fatalf("seed %d, t=%d: %s", seed, booked.Now(), d)
			}
			b, e := booked.Env().Exceeded(), emitted.Env().Exceeded()
			if fmt.Sprint(b) != fmt.Sprint(e) {
				tb.Fatalf("seed %d, t=%d: the booked run stopped with %v, the emitted one with %v", seed, booked.Now(), b, e)
			}
			if b != nil {
				if !errors.Is(b, sim.ErrBudget) {
					tb.Fatalf("seed %d, t=%d: stopped with %v, not a budget error", seed, booked.Now(), b)
				}
				break
			}
		}
		all = append(all, emitted.Ledger().Outcomes("")...)
		errs = append(errs, booked.Err())
	}
	return all, errs
}

// Seeds runs run for seeds 1 to n twice, booked (listen false) and
// emitted (listen true), and fails tb at the first seed whose two ledgers
// differ (see Diff). It returns the outcomes of every emitted run, so the
// caller can require that the runs delivered and lost enough to have
// compared something. It costs 2n runs and n Diffs.
func Seeds(tb testing.TB, n uint64, run func(seed uint64, listen bool) (*sim.Ledger, *sim.Trace)) []sim.Outcome {
	tb.Helper()
	var all []sim.Outcome
	for seed := uint64(1); seed <= n; seed++ {
		booked, btr := run(seed, false)
		emitted, etr := run(seed, true)
		if d := Diff(booked, btr, emitted, etr); d != "" {
			tb.Fatalf("seed %d: %s", seed, d)
		}
		all = append(all, emitted.Outcomes("")...)
	}
	return all
}

// Caps counts the budget caps that errs, as Lockstep returns them, name:
// capped is how many errors are not nil, and by maps each cap's name (the
// NAME of "(cap NAME)" in the error, such as "sends" or
// "deliveries_per_tick") to how many errors name it. A caller requires
// enough of them to know the budget was compared. O(len(errs)).
func Caps(errs []error) (capped int, by map[string]int) {
	by = map[string]int{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		capped++
		msg := err.Error()
		if i := strings.Index(msg, "(cap "); i >= 0 {
			if j := strings.IndexByte(msg[i:], ')'); j >= 0 {
				by[msg[i+len("(cap "):i+j]]++
			}
		}
	}
	return capped, by
}
