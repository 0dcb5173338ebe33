package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// runYAML loads and runs a scenario file given as text.
func runYAML(t *testing.T, src string) *Report {
	t.Helper()
	s, err := scenario.Load("t.yaml", []byte(src))
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

// TestForwardLossCountsForItsQueue: a fan-out copy SNS gave up on never
// reached queue b, and at_least_once(b) must say so, under the publish's
// ID as every other violation is.
//
// SNS (developer guide, "Amazon SNS message delivery retries"): when the
// delivery policy's retries are exhausted, SNS discards the message for
// that endpoint (or sends it to the subscription's dead-letter queue):
// that subscriber never receives it.
func TestForwardLossCountsForItsQueue(t *testing.T) {
	rep := runYAML(t, `version: 1
title: a forward given up
seed: 1
run: {until: drained, max_ticks: 50}
topology:
  queues:
    - {name: a}
    - {name: b}
  topics:
    - {name: orders, fan_out_to_queues: [a, b], fan_out_retry: none}
actors:
  producers:
    - {name: shop, to: {topic: orders}, count: 3}
  consumers:
    - {name: wa, queue: a}
    - {name: wb, queue: b}
faults:
  - {name: outage, point: broker.unavailable, match: {where: "queue:b"}, from: 2, until: 3}
expect:
  - {check: no_loss}
  - {check: at_least_once, consumer: a}
  - {check: at_least_once, consumer: b}
`)
	if o := outcomeOf(t, rep, "at_least_once(a)"); !o.Pass {
		t.Fatalf("a got every copy: %+v", o)
	}
	for _, prefix := range []string{"no_loss", "at_least_once(b)"} {
		o := outcomeOf(t, rep, prefix)
		if o.Pass || len(o.Violations) != 1 {
			t.Fatalf("%s: %+v", prefix, o)
		}
		v := o.Violations[0]
		if v.Msg != 4 || v.Consumer != "b" || !strings.Contains(v.Detail, "forward failed") {
			t.Errorf("%s: want the publish m4 lost for b (forward failed), got %s", prefix, v)
		}
	}
}

// TestRefusedCommitBeforeIsNotProcessed: under commit-before, a commit
// the broker refuses stops the batch; the member does not process it, and
// reads it again. Before, the batch was processed anyway, nothing was
// committed, and after a rebalance all 3 records were applied twice.
//
// Kafka (KafkaConsumer javadoc, commitSync): it throws on failure, so a
// poll-commit-process loop never reaches the processing of that batch.
func TestRefusedCommitBeforeIsNotProcessed(t *testing.T) {
	rep := runYAML(t, `version: 1
title: commit before, refused
seed: 1
run: {ticks: 12}
topology:
  logs:
    - {name: pay, partitions: 1}
  groups:
    - {name: g, log: pay, session_timeout: 3}
actors:
  producers:
    - {name: psp, to: {log: pay}, count: 3, rate: 3}
  members:
    - {name: w1, group: g, commit: before, batch: 3}
    - {name: w2, group: g, commit: before, batch: 3, start: 4}
faults:
  - {name: down, point: broker.unavailable, match: {where: "log:pay", consumer: w1}, nth: 2}
  - {name: bye, point: member.leave, match: {consumer: w1}, from: 3, until: 4}
expect:
  - {check: exactly_once, consumer: g}
  - {metric: consumer.g.delivered, op: "==", value: 6}
`)
	if !rep.Pass {
		t.Fatalf("%+v", rep.Outcomes)
	}
}

// TestDelayedCopyReleasedIntoAnOfflineWindowIsLost: a copy held by
// broker.delay and released while subscriber.offline holds is lost
// (disconnect), as the same thing done with a timeline disconnect is
// (testdata/valid/pubsub-delay-disconnect.yaml): by the package's own
// definition, missed means offline at publish time, and the subscriber
// was online when m2 was published.
//
// Core NATS (docs, "Core NATS"): at-most-once delivery; a subscriber
// that is not connected when a message is sent does not receive it (a
// miss), and a message in flight to a connection that goes away is gone
// with it (a loss).
func TestDelayedCopyReleasedIntoAnOfflineWindowIsLost(t *testing.T) {
	rep := runYAML(t, `version: 1
title: a delayed copy meets an offline window
seed: 2
run: {until: drained, max_ticks: 100}
topology:
  topics:
    - name: quotes
      subscribers:
        - {name: screen}
actors:
  producers:
    - {name: feed, to: {topic: quotes}, count: 10}
faults:
  - {name: slow-link, point: broker.delay, match: {consumer: screen}, nth: 2, param: 3}
  - {name: away, point: subscriber.offline, match: {consumer: screen}, from: 4, until: 6}
expect:
  - {metric: consumer.screen.lost, op: "==", value: 1}
  - {metric: ledger.lost_disconnect, op: "==", value: 1}
  - {metric: consumer.screen.missed, op: "==", value: 2}
  - {metric: consumer.screen.delivered, op: "==", value: 7}
  - {check: no_loss, violated: true}
`)
	for _, o := range rep.Outcomes {
		if !o.Pass {
			t.Errorf("%s: measured %s", o.Text, o.Measured)
		}
	}
}

// TestRefusedForwardIsTracedOnce: a forward the target queue refuses is
// one "rejected" line, the fan-out's (with its attempt), not one from
// the queue and one from the fan-out.
func TestRefusedForwardIsTracedOnce(t *testing.T) {
	s, err := scenario.Load("t.yaml", []byte(`version: 1
title: a refused forward
run: {until: drained, max_ticks: 50}
topology:
  queues:
    - {name: b}
  topics:
    - {name: orders, fan_out_to_queues: [b], fan_out_retry: none}
actors:
  producers:
    - {name: shop, to: {topic: orders}, count: 3}
  consumers:
    - {name: wb, queue: b}
faults:
  - {name: outage, point: broker.unavailable, match: {where: "queue:b"}, from: 2, until: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &sim.Recorder{}
	if _, err := Execute(s, Options{Sinks: []sim.Sink{rec}}); err != nil {
		t.Fatal(err)
	}
	refusals := map[sim.ID]int{}
	for _, e := range rec.Events() {
		if e.Kind == sim.KindRejected && e.Msg != 0 {
			refusals[e.Msg]++
		}
	}
	if len(refusals) != 1 {
		t.Fatalf("refusals %v", refusals)
	}
	for id, n := range refusals {
		if n != 1 {
			t.Errorf("the refused forward of %v is traced %d times", id, n)
		}
	}
}
