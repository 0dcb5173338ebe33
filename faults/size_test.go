package faults

import (
	"math"
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	"github.com/brokerlab/brokerlab/sim"
)

// TestInjectorSize pins the Injector to the 160-byte size class and a
// rule to 160 bytes, so that three rules, a sweep's plan, take the
// 480-byte size class, and the handler wrapper to the 96-byte class.
func TestInjectorSize(t *testing.T) {
	if n := unsafe.Sizeof(Injector{}); n > 160 {
		t.Errorf("an Injector takes %d bytes, above its 160-byte size class", n)
	}
	if n := unsafe.Sizeof(ruleState{}); n > 160 {
		t.Errorf("a rule takes %d bytes, above 160 (three in the 480-byte size class)", n)
	}
	if n := unsafe.Sizeof(faultyHandler{}); n > 96 {
		t.Errorf("a handler wrapper takes %d bytes, above its 96-byte size class", n)
	}
}

// TestRulesAreKeptAsAdded checks that a rule's handle returns the rule
// exactly as the plan or Add gave it, though the injector keeps Until,
// Count and Match in other forms, and that Rule has the fields
// ruleState.original rebuilds: a field added to Rule must be kept too.
func TestRulesAreKeptAsAdded(t *testing.T) {
	if n := reflect.TypeOf(Rule{}).NumField(); n != 10 {
		t.Fatalf("Rule has %d fields, ruleState keeps 10: keep the new ones and rebuild them in original", n)
	}
	rules := []Rule{
		{Name: "plain", Point: BrokerDuplicate},
		{Name: "all", Point: BrokerDelay, Probability: 0.25, From: 3, Until: 9, Count: 2, Nth: 4, Param: 7, Error: "boom",
			Match: Match{Key: "k-*", Consumer: "c", Group: "g", Type: "t", Where: "queue:q"}},
		{Name: "ends-at-max", Point: BrokerDelay, Until: math.MaxInt64, Count: math.MaxInt},
		{Name: "key-only", Point: HandlerTransient, Match: Match{Key: "a"}},
		{Name: "where-only", Point: HandlerTransient, Match: Match{Where: "queue:*"}, Probability: 1},
	}
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := New(w, Config{Plan: Plan{Rules: rules[:3]}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules[3:] {
		if _, err := in.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rules {
		h, ok := in.Handle(r.Name)
		if !ok {
			t.Fatalf("no handle for %s", r.Name)
		}
		if got := h.Rule(); got != r {
			t.Errorf("rule %s came back as %+v, want %+v", r.Name, got, r)
		}
	}
	if allocs := testing.AllocsPerRun(20, func() { _, _ = New(w, Config{Plan: Plan{Rules: rules[:3]}}) }); allocs != 3 {
		t.Errorf("a plan with a Match took %v allocations, want 3 (injector, rules, matches)", allocs)
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
	allocs := func(p Plan) float64 {
		w, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		// AllocsPerRun, not one reading of the process's malloc count,
		// which another goroutine of the test binary can move.
		return testing.AllocsPerRun(20, func() { _, _ = New(w, Config{Plan: p}) })
	}
	for _, p := range []Plan{small, large} {
		if got := allocs(p); got != 2 {
			t.Errorf("an injector of %d rules took %v allocations, want 2", len(p.Rules), got)
		}
	}
	// A rule added later costs the rule and its Handle, and its Match
	// when it has one; the first Add also makes the list of added rules.
	for _, tc := range []struct {
		match bool
		want  float64
	}{{false, 2}, {true, 3}} {
		w, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		in, err := New(w, Config{Plan: small})
		if err != nil {
			t.Fatal(err)
		}
		r := Rule{Name: "later", Point: BrokerUnavailable, Probability: 1}
		if tc.match {
			r.Match = Match{Key: "k"}
		}
		if _, err := in.Add(r); err != nil { // the first Add, which makes the list
			t.Fatal(err)
		}
		names := make([]string, 21) // AllocsPerRun runs the function once more than asked
		for i := range names {
			names[i] = "later-" + strconv.Itoa(i)
		}
		n, failed := 0, 0
		got := testing.AllocsPerRun(20, func() {
			r.Name = names[n]
			n++
			if _, err := in.Add(r); err != nil {
				failed++
			}
		})
		if failed > 0 || got != tc.want {
			t.Errorf("Add of a rule (Match %v) took %v allocations (%d refused), want %v", tc.match, got, failed, tc.want)
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
