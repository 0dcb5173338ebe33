package faults

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/brokerlab/brokerlab/sim"
)

// TestInjectorSize pins the Injector to the 176-byte size class and a
// rule to 248 bytes, so that three rules, a sweep's plan, take the
// 768-byte size class, and the handler wrapper to the 96-byte class.
func TestInjectorSize(t *testing.T) {
	if n := unsafe.Sizeof(Injector{}); n > 176 {
		t.Errorf("an Injector takes %d bytes, above its 176-byte size class", n)
	}
	if n := unsafe.Sizeof(ruleState{}); n > 248 {
		t.Errorf("a rule takes %d bytes, above 248 (three in the 768-byte size class)", n)
	}
	if n := unsafe.Sizeof(faultyHandler{}); n > 96 {
		t.Errorf("a handler wrapper takes %d bytes, above its 96-byte size class", n)
	}
}

// TestPlanAllocations checks that an injector for a plan costs two
// allocations, itself and its rule states, however many rules it has,
// and that its rules fire as ever, with a rule added later.
func TestPlanAllocations(t *testing.T) {
	points := []Point{HandlerTransient, BrokerDuplicate, ConsumerCrashAfterEffect, BrokerDelay, BrokerReorder}
	plan := func(n int) Plan {
		var p Plan
		for i := range n {
			p.Rules = append(p.Rules, Rule{Name: string(rune('a' + i)), Point: points[i], Probability: 1})
		}
		return p
	}
	small, large := plan(3), plan(5)
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
	for _, p := range []Plan{small, large} {
		if got := allocs(p); got != 2 {
			t.Errorf("an injector of %d rules took %d allocations, want 2", len(p.Rules), got)
		}
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
