package lab

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// The numbered cases of issue 12 that a scenario file can express, each
// run through the runner with the faithful verdict stated in the file's
// own expectations; the Go side checks the evidence the verdicts name.

// runFile loads src, runs it to the end, requires every expectation to
// hold and returns the finished run.
func runFile(t *testing.T, src string) *Run {
	t.Helper()
	s, err := scenario.Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rep := r.Finish()
	requirePass(t, rep, r.Err())
	return r
}

// violations runs checker c on the run's ledger.
func violations(r *Run, c sim.Checker) []sim.Violation { return c.Violations(r.Env().Ledger) }

// wantViolations fails unless vs are exactly one per key in keys (in
// order), each for consumer and with a detail containing detail.
func wantViolations(t *testing.T, what string, vs []sim.Violation, consumer, detail string, keys ...string) {
	t.Helper()
	if len(vs) != len(keys) {
		t.Fatalf("%s: %d violations, want %d (%v):\n%v", what, len(vs), len(keys), keys, vs)
	}
	for i, v := range vs {
		if v.Key != keys[i] || v.Consumer != consumer || !strings.Contains(v.Detail, detail) {
			t.Errorf("%s: violation %d = %v; want key %s, consumer %q, detail containing %q", what, i+1, v, keys[i], consumer, detail)
		}
	}
}

// Case 1: each fan-out copy has a state of its own. One publish to a topic
// that fans out to queues a and b, only a consumed: the copy in b is still
// pending (not "left the broker"), and only b is reported.
func TestIssue12FanOutCopies(t *testing.T) {
	r := runFile(t, `
title: fan-out copies are judged per destination
run: {ticks: 10}
topology:
  queues: [{name: a}, {name: b}]
  topics: [{name: orders, fan_out_to_queues: [a, b]}]
actors:
  producers: [{name: shop, to: {topic: orders}, count: 1, keys: [order-1]}]
  consumers: [{name: ca, queue: a}]
expect:
  - {check: no_loss, violated: true}
  - {check: at_least_once, consumer: ca}
  - {check: exactly_once, consumer: a}
  - {check: at_least_once, consumer: b, violated: true}
  - {metric: queue.b.depth, op: "==", value: 1}
  - {metric: consumer.b.pending, op: "==", value: 1}
`)
	// Nothing reads b: the copy waits in the queue, which the violation
	// names as a place, not as a consumer.
	wantViolations(t, "no_loss", violations(r, sim.NoLoss()), "", "still pending in queue:b at t=10", "order-1")
	wantViolations(t, "at_least_once(b)", violations(r, sim.AtLeastOnce("b")), "", "still pending", "order-1")
}

// Case 1, the reverse: a dead-letters its copy while b applies its own.
// a's copy is parked, b's applied; no loss anywhere.
func TestIssue12FanOutCopiesSettleApart(t *testing.T) {
	r := runFile(t, `
title: one copy parked, the other applied
run: {until: drained, max_ticks: 100}
topology:
  queues:
    - {name: a, dead_letter: {queue: a-dlq, max_receive_count: 3}}
    - {name: a-dlq}
    - {name: b}
  topics: [{name: orders, fan_out_to_queues: [a, b]}]
actors:
  producers: [{name: shop, to: {topic: orders}, count: 1, keys: [order-1]}]
  consumers:
    - {name: ca, queue: a, handler: {kind: poison}}
    - {name: cb, queue: b}
expect:
  - {check: no_loss}
  - {check: at_least_once, consumer: a}
  - {check: exactly_once, consumer: b}
  - {metric: queue.a-dlq.depth, op: "==", value: 1}
`)
	l := r.Env().Ledger
	got := map[string]sim.Verdict{}
	for _, o := range l.Outcomes("") {
		got[o.Consumer] = o.Verdict
	}
	if got["a"] != sim.VerdictParked || got["b"] != sim.VerdictApplied || len(got) != 2 {
		t.Errorf("verdicts %v, want a parked and b applied", got)
	}
}

// redriveSrc is case 2 with the given idempotency: the first delivery
// applies the effect and the consumer crashes before the ack; the
// redelivery fails permanently into the DLQ; the DLQ is redriven as a new
// message (new ID, same business key) and applied.
func redriveSrc(idempotency string) string {
	return `
title: redrive lineage
run: {until: drained, max_ticks: 100}
topology:
  queues:
    - {name: orders, visibility_timeout: 3, dead_letter: {queue: orders-dlq, max_receive_count: 5}}
    - {name: orders-dlq}
actors:
  producers: [{name: shop, to: {queue: orders}, count: 1, keys: [order-1], type: order.placed}]
  consumers: [{name: billing, queue: orders, idempotency: ` + idempotency + `}]
faults:
  - {name: crash, point: consumer.crash_after_effect, nth: 1}
  - {name: reject, point: handler.permanent, nth: 2}
timeline:
  - {at: 20, action: redrive, queue: orders-dlq}
expect:
`
}

// Case 2 without idempotency: the order is charged twice over its
// lineage (the first copy before the crash, the redriven copy after), so
// exactly_once fails and one duplicate effect is counted.
func TestIssue12RedriveChargesTwiceWithoutIdempotency(t *testing.T) {
	r := runFile(t, redriveSrc("none")+`
  - {check: no_loss}
  - {check: at_least_once, consumer: billing}
  - {check: exactly_once, consumer: billing, violated: true}
  - {check: at_most_once, consumer: billing, violated: true}
  - {metric: ledger.duplicate_effects, op: "==", value: 1}
  - {metric: ledger.redriven, op: "==", value: 1}
  - {metric: ledger.origins, op: "==", value: 1}
  - {metric: ledger.messages, op: "==", value: 2}
`)
	wantViolations(t, "exactly_once", violations(r, sim.ExactlyOnce("orders")), "orders", "effect applied 2 times", "order-1")
}

// Case 2 with idempotency by business key: the redriven copy has a new ID
// but the same business key, so it is absorbed: charged once, and
// no_loss and exactly_once hold.
func TestIssue12RedriveChargedOnceByBusinessKey(t *testing.T) {
	r := runFile(t, redriveSrc("business_key")+`
  - {check: no_loss}
  - {check: exactly_once, consumer: billing}
  - {metric: ledger.duplicate_effects, op: "==", value: 0}
  - {metric: ledger.absorbed, op: "==", value: 1}
  - {metric: ledger.redriven, op: "==", value: 1}
`)
	// message_id idempotency does not help here: the redriven copy has a
	// new ID, so it is charged again.
	r2 := runFile(t, redriveSrc("message_id")+`
  - {check: exactly_once, consumer: billing, violated: true}
  - {metric: ledger.duplicate_effects, op: "==", value: 1}
`)
	_, _ = r, r2
}

// Case 3: a commit: before member fails on a record, then a member joins
// before it has read the rest again. The failed record and the one after
// it were committed but never processed: both are lost with cause "commit
// before processing", and no_loss names them.
func TestIssue12CommitBeforeThenJoin(t *testing.T) {
	r := runFile(t, `
title: commit before processing, then a rebalance
run: {until: drained, max_ticks: 50}
topology:
  logs: [{name: orders}]
  groups: [{name: billing, log: orders}]
actors:
  producers: [{name: shop, to: {log: orders}, count: 3, rate: 3, keys: [order-1, order-2, order-3]}]
  members:
    # late is listed first, so at tick 2 it joins (and the group
    # rebalances) before m1 polls again; range assignment gives it the
    # partition, and it resumes at the committed offset.
    - {name: late, group: billing, start: 2}
    - {name: m1, group: billing, commit: before, batch: 10, handler: {kind: permanent, keys: order-2}}
expect:
  - {check: no_loss, violated: true}
  - {check: at_least_once, consumer: billing, violated: true}
  - {metric: ledger.lost_commit_before_processing, op: "==", value: 2}
  - {metric: consumer.billing.applied, op: "==", value: 1}
  - {metric: group.billing.lag, op: "==", value: 0}
`)
	wantViolations(t, "no_loss", violations(r, sim.NoLoss()), "billing", "lost (commit before processing)", "order-2", "order-3")
}

// Case 4: ack before processing and a crash before every handler call: every
// message is acked and lost, and every delivery checker says so (at_least_once
// included: deliveries never stand in for effects).
func TestIssue12AckBeforeCrashFailsEveryChecker(t *testing.T) {
	r := runFile(t, `
title: ack before processing, then a crash
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 3, keys: [k-1, k-2, k-3]}]
  consumers: [{name: c, queue: q, ack: before}]
faults:
  - {name: crash, point: consumer.crash_before_process}
expect:
  - {check: no_loss, violated: true}
  - {check: at_least_once, consumer: c, violated: true}
  - {check: exactly_once, consumer: c, violated: true}
  - {metric: ledger.lost_ack_before_processing, op: "==", value: 3}
  - {metric: ledger.applied, op: "==", value: 0}
  - {metric: queue.q.acks, op: "==", value: 3}
`)
	for _, c := range []sim.Checker{sim.NoLoss(), sim.AtLeastOnce("q"), sim.ExactlyOnce("q")} {
		wantViolations(t, c.Name(), violations(r, c), "q", "lost (ack before processing)", "k-1", "k-2", "k-3")
	}
}

// Case 4: a run that ends before anything is delivered does not pass
// at_least_once: the messages are still pending.
func TestIssue12NothingDeliveredFailsAtLeastOnce(t *testing.T) {
	r := runFile(t, `
title: the run ends before the consumer starts
run: {ticks: 10}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 2, keys: [k-1, k-2]}]
  consumers: [{name: c, queue: q, start: 50}]
expect:
  - {check: at_least_once, consumer: c, violated: true}
  - {check: no_loss, violated: true}
  - {metric: ledger.delivered, op: "==", value: 0}
`)
	// Nothing took from q yet: the messages wait in the queue.
	wantViolations(t, "at_least_once", violations(r, sim.AtLeastOnce("q")), "", "still pending in queue:q at t=10", "k-1", "k-2")
}

// A run until drained that stops at its cap says so, in the report and in
// its verdict line.
func TestIssue12UndrainedIsReported(t *testing.T) {
	rep, _, err := execute(t, `
title: never drains
run: {until: drained, max_ticks: 20}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 2}]
  consumers: [{name: c, queue: q, start: 50}]
expect:
  - {check: at_least_once, consumer: c, violated: true}
`)
	if err != nil || !rep.Undrained || rep.Drained || !rep.Pass {
		t.Fatalf("undrained %v, drained %v, pass %v, err %v", rep.Undrained, rep.Drained, rep.Pass, err)
	}
	var b bytes.Buffer
	_ = rep.WriteText(&b)
	for _, want := range []string{"NOTE: stopped at max_ticks 20 before draining", ", not drained"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// Case 3, the seek: records a seek to latest skips before the group read
// them are lost with cause "seek" at the seek, not pending and later lost
// without a cause.
func TestIssue12SeekPastUnreadRecords(t *testing.T) {
	r := runFile(t, `
title: a seek to latest skips unread records
run: {until: drained, max_ticks: 100}
topology:
  logs: [{name: orders, retention: {ticks: 30}}]
  groups: [{name: billing, log: orders}]
actors:
  producers: [{name: shop, to: {log: orders}, count: 3, rate: 3, keys: [order-1, order-2, order-3]}]
  members: [{name: m1, group: billing, start: 10}]
timeline:
  - {at: 5, action: seek, group: billing, to: latest}
  - {at: 60, action: seek, group: billing, to: earliest}
expect:
  - {check: no_loss, violated: true}
  - {metric: ledger.lost_seek, op: "==", value: 3}
  - {metric: ledger.lost, op: "==", value: 3}
  - {metric: consumer.billing.applied, op: "==", value: 0}
  - {metric: ledger.expired, op: "==", value: 3}
`)
	wantViolations(t, "no_loss", violations(r, sim.NoLoss()), "billing", "lost (seek)", "order-1", "order-2", "order-3")
}
