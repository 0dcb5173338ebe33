package scenario

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
)

// writtenPlans are fault plans whose every field, every match pattern and
// strings YAML would misread when plain (reserved words, quotes, colons,
// leading digits, non-ASCII) are written.
var writtenPlans = []faults.Plan{
	{},
	{Rules: []faults.Rule{{Name: "down", Point: faults.BrokerUnavailable}}},
	{Rules: []faults.Rule{
		{Name: "crash", Point: faults.ConsumerCrashAfterEffect, From: 4, Until: 5, Nth: 1,
			Match: faults.Match{Key: "order-3", Consumer: "billing", Where: "queue:orders"}},
		{Name: "slow", Point: faults.HandlerSlow, Probability: 0.25, Count: 3, Param: 2, Error: `said "no": #1`,
			Match: faults.Match{Key: `a\*b`, Group: "g*", Type: "order.placed"}},
		{Name: "yes", Point: faults.HandlerTransient, Error: "null", Match: faults.Match{Key: "1st", Type: "Ünicode ok"}},
		{Name: "fault-4", Point: faults.BrokerDuplicate, Probability: 1, From: 999_999, Until: 1_000_000},
	}},
}

// TestFaultsYAMLMatchesPlanYAML holds faults.Plan.YAML, which packages
// below scenario use, to the section the field table writes.
func TestFaultsYAMLMatchesPlanYAML(t *testing.T) {
	for i, p := range writtenPlans {
		if got, want := FaultsYAML(p), p.YAML(); got != want {
			t.Errorf("plan %d: FaultsYAML\n%s\nPlan.YAML\n%s", i, got, want)
		}
	}
}

// TestFaultsYAMLLoadsBack checks that a written section loads to the
// same rules, so a reproducer fires exactly the plan it was written from.
func TestFaultsYAMLLoadsBack(t *testing.T) {
	const head = `version: 1
title: faults written back
run: {ticks: 10}
topology:
  queues: [{name: orders}]
actors:
  consumers: [{name: billing, queue: orders}]
`
	for i, p := range writtenPlans {
		src := head + FaultsYAML(p)
		s, err := Load("written.yaml", []byte(src))
		if err != nil {
			t.Errorf("plan %d does not load: %v\n%s", i, err, src)
			continue
		}
		got := s.FaultPlan()
		if len(p.Rules) == 0 && len(got.Rules) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("plan %d loads back as\n%+v\nwant\n%+v", i, got, p)
		}
	}
}
