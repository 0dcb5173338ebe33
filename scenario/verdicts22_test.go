package scenario

import (
	"strings"
	"testing"
)

// runYAML loads and runs a scenario file given as text.
func runYAML(t *testing.T, src string) *Report {
	t.Helper()
	s, err := Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Execute(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// outcomeOf returns the report's outcome whose text starts with prefix.
func outcomeOf(t *testing.T, rep *Report, prefix string) Outcome {
	t.Helper()
	for _, o := range rep.Outcomes {
		if strings.HasPrefix(o.Text, prefix) {
			return o
		}
	}
	t.Fatalf("no outcome %q in %+v", prefix, rep.Outcomes)
	return Outcome{}
}

// TestBrokerDuplicateStillQueuedIsPending: a broker duplicate of the
// first send still in the queue when the run ends makes at_most_once
// fail: the queue's depth says a copy is there, and it will be handed
// out.
//
// SQS (developer guide, "Amazon SQS at-least-once delivery"): a copy of
// a message can be delivered again, and each copy must be deleted; the
// consumer must be idempotent.
func TestBrokerDuplicateStillQueuedIsPending(t *testing.T) {
	rep := runYAML(t, `version: 1
title: a duplicate still queued
seed: 1
run: {ticks: 1}
topology:
  queues:
    - name: pay
actors:
  producers:
    - {name: shop, to: {queue: pay}, count: 1}
  consumers:
    - {name: worker, queue: pay}
faults:
  - {name: dup, point: broker.duplicate, nth: 1}
expect:
  - {metric: queue.pay.depth, op: "==", value: 1}
  - {check: at_most_once, consumer: pay}
`)
	if o := outcomeOf(t, rep, "queue.pay.depth"); !o.Pass {
		t.Fatalf("depth: %+v", o)
	}
	o := outcomeOf(t, rep, "at_most_once")
	if o.Pass || len(o.Violations) != 1 || !strings.Contains(o.Violations[0].Detail, "a copy is still held at queue:pay") {
		t.Fatalf("at_most_once with a copy queued: %+v", o)
	}
}
