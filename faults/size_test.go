package faults

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/brokerlab/brokerlab/sim"
)

// TestInjectorSize pins the Injector to the 448-byte size class (objects
// of at most 512 bytes carry no allocation header), which holds the
// lists and points of a plan of up to smallPlan rules in the injector.
func TestInjectorSize(t *testing.T) {
	if n := unsafe.Sizeof(Injector{}); n > 448 {
		t.Errorf("an Injector takes %d bytes, above its 448-byte size class", n)
	}
}

// TestSmallPlanAllocations checks that an injector for a plan of up to
// smallPlan rules costs two allocations, itself and its rule states (a
// larger one three more, for its lists and points), and that its rules fire as ever when a
// plan outgrows it or a rule is added later.
func TestSmallPlanAllocations(t *testing.T) {
	points := []Point{HandlerTransient, BrokerDuplicate, ConsumerCrashAfterEffect, BrokerDelay, BrokerReorder}
	plan := func(n int) Plan {
		var p Plan
		for i := range n {
			p.Rules = append(p.Rules, Rule{Name: string(rune('a' + i)), Point: points[i], Probability: 1})
		}
		return p
	}
	small, large := plan(smallPlan), plan(smallPlan+1)
	allocs := func(p Plan) uint64 {
		w, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = New(w, Config{Plan: p})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return after.Mallocs - before.Mallocs
	}
	if got := allocs(small); got != 2 {
		t.Errorf("an injector of %d rules took %d allocations, want 2", smallPlan, got)
	}
	if got := allocs(large); got != 5 {
		t.Errorf("an injector of %d rules took %d allocations, want 5", smallPlan+1, got)
	}
	for _, p := range []Plan{small, large} {
		w, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		in, err := New(w, Config{Plan: p})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Add(Rule{Name: "later", Point: BrokerUnavailable, Probability: 1}); err != nil {
			t.Fatal(err)
		}
		for _, r := range append(p.Rules, Rule{Point: BrokerUnavailable}) {
			s := in.Site(r.Point)
			if !s.Armed() || s.Check(&Context{Where: "queue:q"}) == nil {
				t.Errorf("%d rules: point %s did not fire", len(p.Rules), r.Point)
			}
		}
	}
}
