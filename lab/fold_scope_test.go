package lab

import (
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// singleScopes are the scopes a run can fold with one kind of component
// metric in its expectations.
var singleScopes = map[string]foldScope{
	"queue":            {queues: true},
	"queue/oldest_age": {queues: true, ages: true},
	"topic":            {topics: true},
	"log":              {logs: true},
	"group":            {logs: true, groups: true},
	"outbox":           {boxes: true},
	"saga":             {sagas: true},
}

// inScope reports whether scope folds metric m.
func inScope(sc foldScope, m scenario.Metric) bool {
	switch m.Kind {
	case "queue":
		return sc.queues && (m.Field != "oldest_age" || sc.ages)
	case "topic":
		return sc.topics
	case "log":
		return sc.logs
	case "group":
		return sc.groups
	case "outbox":
		return sc.boxes
	case "saga":
		return sc.sagas
	}
	return false
}

// TestMetricFoldScopeEqualsTheWholeFold plays every lesson, variant and
// valid test file with a whole fold and, beside it, a fold of each scope
// a run may choose, and requires after every tick: a scoped fold reports
// every metric of its scope, with the whole fold's value, and none
// outside it; and Run.Measure, which folds only what the expectations
// read, gives the whole fold's value for every component metric.
func TestMetricFoldScopeEqualsTheWholeFold(t *testing.T) {
	labels, ss := auditFiles(t)
	compared := 0
	for i, s := range ss {
		whole := NewMetricFold(s)
		sinks := []sim.Sink{whole}
		scoped := map[string]*MetricFold{}
		for name, sc := range singleScopes {
			scoped[name] = newMetricFold(s, sc)
			sinks = append(sinks, scoped[name])
		}
		r, err := New(s, Options{Sinks: sinks})
		if err != nil {
			t.Fatalf("%s: %v", labels[i], err)
		}
		ms := componentMetrics(s)
		bad := map[string]bool{}
		report := func(key, format string, args ...any) {
			if !bad[key] {
				t.Errorf(format, args...)
			}
			bad[key] = true
		}
		for more := true; more; {
			more = r.Step()
			now := r.World().Now()
			whole.SetNow(now)
			for _, m := range ms {
				want, ok := whole.Value(m)
				if !ok {
					continue // not measurable here (a queue without a DLQ)
				}
				for name, f := range scoped {
					f.SetNow(now)
					got, ok := f.Value(m)
					switch {
					case ok != inScope(singleScopes[name], m):
						report(name+m.String(), "%s at t=%d: scope %s reports %s: %v", labels[i], now, name, m, ok)
					case ok && got != want:
						report(name+m.String(), "%s at t=%d: scope %s folded %s = %v, the whole fold %v", labels[i], now, name, m, got, want)
					}
					compared++
				}
				if got, err := r.Measure(m); err != nil || got != want {
					report("measure"+m.String(), "%s at t=%d: Measure(%s) = %v (%v), the whole fold %v", labels[i], now, m, got, err, want)
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no metric compared")
	}
	t.Logf("%d files, %d scoped values compared", len(ss), compared)
}

// TestScopeOf: a run folds only the kinds its expectations read, a group
// with its log, and a queue's resident copies only for oldest_age; a
// scenario that expects only checks, or ledger and consumer metrics,
// folds nothing.
func TestScopeOf(t *testing.T) {
	metric := func(kind, name, field string) scenario.Expectation {
		return scenario.Expectation{Metric: scenario.Metric{Kind: kind, Name: name, Field: field}}
	}
	for _, tc := range []struct {
		name   string
		expect []scenario.Expectation
		want   foldScope
	}{
		{"checks only", []scenario.Expectation{{Check: scenario.CheckNoLoss}, {Check: scenario.CheckAtLeastOnce, Consumer: "orders"}}, foldScope{}},
		{"ledger and consumer", []scenario.Expectation{metric("ledger", "", "delivered"), metric("consumer", "orders", "applied")}, foldScope{}},
		{"model-only metric", []scenario.Expectation{metric("queue", "orders", "visible"), metric("group", "g", "generation")}, foldScope{}},
		{"queue depth", []scenario.Expectation{metric("queue", "orders", "depth")}, foldScope{queues: true}},
		{"queue age", []scenario.Expectation{metric("queue", "orders", "oldest_age")}, foldScope{queues: true, ages: true}},
		{"group lag", []scenario.Expectation{metric("group", "billing", "lag")}, foldScope{logs: true, groups: true}},
		{"mixed", []scenario.Expectation{metric("topic", "t", "published"), metric("outbox", "s", "pending"), metric("saga", "o", "failed")},
			foldScope{topics: true, boxes: true, sagas: true}},
	} {
		if got := scopeOf(&scenario.Scenario{Expect: tc.expect}); got != tc.want {
			t.Errorf("%s: scope %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestRunWithoutMetricsFoldsNothing: a scenario whose expectations are
// all checks attaches no MetricFold to its trace.
func TestRunWithoutMetricsFoldsNothing(t *testing.T) {
	s, err := scenario.Load("checks.yaml", []byte(`
title: checks only
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: orders}]
actors:
  producers: [{name: shop, to: {queue: orders}, count: 5}]
  consumers: [{name: billing, queue: orders}]
expect:
  - {check: no_loss}
  - {check: at_least_once, consumer: orders}
  - {metric: queue.orders.acks, op: ">=", value: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.fold == nil || r.fold.ages {
		t.Fatalf("a queue counter expectation: fold %v, want one without resident copies", r.fold)
	}
	s.Expect = s.Expect[:2]
	if r, err = New(s, Options{}); err != nil {
		t.Fatal(err)
	}
	if r.fold != nil {
		t.Fatal("a run that expects only checks folds metrics")
	}
	if rep := r.Finish(); !rep.Pass || rep.Stats.Done != 5 {
		t.Fatalf("report: pass %v, %+v", rep.Pass, rep.Stats)
	}
}
