package lab

import (
	"bytes"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// execute loads src, runs it to the end with a recorder and returns the
// report and the trace.
func execute(t *testing.T, src string) (*Report, []sim.Event, error) {
	t.Helper()
	s, err := scenario.Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	rec := &sim.Recorder{}
	rep, err := Execute(s, Options{Sinks: []sim.Sink{rec}})
	return rep, rec.Events(), err
}

// mustPass runs src and fails the test unless every expectation holds.
func mustPass(t *testing.T, src string) []sim.Event {
	t.Helper()
	rep, evs, err := execute(t, src)
	requirePass(t, rep, err)
	return evs
}

// requirePass fails the test when a run failed or an expectation did not
// hold, printing the report.
func requirePass(t *testing.T, rep *Report, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !rep.Pass {
		var b bytes.Buffer
		_ = rep.WriteText(&b)
		t.Fatalf("expectations failed:\n%s", b.String())
	}
}

// count returns how many events of kind k mention where (a prefix of
// Where; "" for any).
func count(evs []sim.Event, k sim.Kind, where string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k && strings.HasPrefix(e.Where, where) {
			n++
		}
	}
	return n
}

// The topology and actor tests: each scenario states with its expectations
// what the element must do.
var elementCases = []struct {
	name, src string
	check     func(t *testing.T, evs []sim.Event)
}{
	{name: "queue-retention", src: `
title: t
run: {ticks: 20}
topology:
  queues: [{name: q, retention: 3}]
actors:
  producers: [{name: p, to: {queue: q}, count: 5}]
expect:
  - {metric: ledger.expired, op: "==", value: 5}
  - {metric: queue.q.depth, op: "==", value: 0}
`},
	{name: "queue-dlq-redrive", src: `
title: t
run: {until: drained, max_ticks: 200}
topology:
  queues:
    - {name: q, visibility_timeout: 2, dead_letter: {queue: dlq, max_receive_count: 2}}
    - {name: dlq}
actors:
  producers: [{name: p, to: {queue: q}, count: 4, keys: [a, b]}]
  consumers: [{name: c, queue: q, handler: {kind: transient, failures: 5, keys: b}}]
timeline:
  - {at: 40, action: fix_handler, consumer: c}
  - {at: 41, action: redrive, queue: dlq, count: 1}
  - {at: 42, action: redrive, queue: dlq}
expect:
  - {metric: ledger.redriven, op: "==", value: 2}
  - {metric: queue.q.dlq, op: "==", value: 0}
  - {check: at_least_once, consumer: c}
  - {check: no_loss}
`, check: func(t *testing.T, evs []sim.Event) {
		if n := count(evs, sim.KindDeadLettered, "queue:q"); n != 2 {
			t.Errorf("dead_lettered = %d, want 2", n)
		}
	}},
	{name: "queue-fifo-dedup", src: `
title: t
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: q, fifo: true, dedup_window: 10}]
actors:
  producers: [{name: p, to: {queue: q}, count: 12, rate: 3, keys: "k-%d", key_count: 3}]
  consumers: [{name: c, queue: q, instances: 3, batch: 2}]
faults:
  - {point: broker.reorder, probability: 0.5}
expect:
  - {check: ordered_per_key, consumer: q}
  - {check: exactly_once, consumer: c}
  - {metric: queue.q.acks, op: "==", value: 12}
`, check: func(t *testing.T, evs []sim.Event) {
		seen := map[string]bool{}
		for _, e := range evs {
			if e.Kind == sim.KindReceived {
				seen[e.Actor] = true
			}
		}
		if !seen["c#1"] || !seen["c#2"] {
			t.Errorf("instances that received: %v", seen)
		}
	}},
	{name: "visibility-timeout-slow", src: `
title: t
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: q, visibility_timeout: 2}]
actors:
  producers: [{name: p, to: {queue: q}, count: 2}]
  consumers: [{name: c, queue: q, instances: 2, handler: {kind: slow, ticks: 4}}]
expect:
  - {metric: queue.q.redeliveries, op: ">", value: 0}
  - {check: at_least_once, consumer: c}
`},
	{name: "ack-before-crash-loses", src: `
title: t
run: {ticks: 30}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 5}]
  consumers: [{name: c, queue: q, ack: before}]
faults:
  - {point: consumer.crash_before_process, match: {consumer: c}, nth: 2}
expect:
  - {metric: ledger.lost, op: "==", value: 1}
  - {check: at_most_once, consumer: c}
`},
	{name: "retry-fixed-and-exponential", src: `
title: t
run: {until: drained, max_ticks: 200}
topology:
  queues: [{name: q}, {name: r}]
actors:
  producers:
    - {name: p, to: {queue: q}, count: 3}
    - {name: p2, to: {queue: r}, count: 3}
  consumers:
    - {name: c, queue: q, handler: {kind: transient, failures: 2}, retry: {policy: fixed, base: 3}}
    - {name: d, queue: r, handler: {kind: transient, failures: 2}, retry: {policy: exponential, base: 1, cap: 4, jitter: true}}
expect:
  - {metric: queue.q.receives, op: "==", value: 9}
  - {metric: queue.r.receives, op: "==", value: 9}
  - {check: exactly_once, consumer: c}
  - {check: exactly_once, consumer: d}
`},
	{name: "idempotent-consumer", src: `
title: t
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: q}, {name: r}]
actors:
  producers:
    - {name: p, to: {queue: q}, count: 10}
    - {name: p2, to: {queue: r}, count: 10}
  consumers:
    - {name: c, queue: q, idempotency: message_id}
    - {name: d, queue: r, idempotency: business_key}
faults:
  - {point: broker.duplicate, probability: 0.5}
expect:
  - {metric: ledger.duplicates, op: ">", value: 0}
  - {check: exactly_once, consumer: c}
  - {check: exactly_once, consumer: d}
`},
	{name: "topic-subscribers", src: `
title: t
run: {ticks: 30}
topology:
  queues: [{name: audit}]
  topics:
    - name: prices
      subscribers:
        - {name: fast}
        - {name: late, offline: true}
        - {name: tiny, buffer: 1, overflow: drop_oldest}
      fan_out_to_queues: [audit]
actors:
  producers: [{name: p, to: {topic: prices}, count: 10, rate: 2}]
faults:
  - {point: subscriber.slow, match: {consumer: tiny}, param: 5}
timeline:
  - {at: 3, action: connect, subscriber: late}
expect:
  - {metric: topic.prices.published, op: "==", value: 10}
  - {metric: topic.prices.missed, op: "==", value: 4}
  - {metric: topic.prices.dropped, op: ">", value: 0}
  - {metric: queue.audit.visible, op: "==", value: 10}
  - {check: at_least_once, consumer: fast}
`},
	{name: "topic-block-retries", src: `
title: t
run: {until: drained, max_ticks: 200}
topology:
  topics:
    - name: t
      subscribers: [{name: s, buffer: 1, overflow: block}]
actors:
  producers: [{name: p, to: {topic: t}, count: 6, rate: 3}]
faults:
  - {point: subscriber.slow, match: {consumer: s}, param: 2}
expect:
  - {metric: topic.t.published, op: "==", value: 6}
  - {metric: ledger.lost, op: "==", value: 0}
  - {check: exactly_once, consumer: s}
`},
	{name: "topic-emits-cascade-limit", src: `
title: t
run: {ticks: 10}
topology:
  topics:
    - name: a
      cascade_limit: 2
      subscribers: [{name: s, emits: [{topic: a, type: again}]}]
actors:
  producers: [{name: p, to: {topic: a}, count: 1}]
expect:
  - {metric: topic.a.published, op: "==", value: 3}
`, check: func(t *testing.T, evs []sim.Event) {
		if n := count(evs, "cascade_limited", "topic:a"); n != 1 {
			t.Errorf("cascade_limited = %d, want 1", n)
		}
	}},
	{name: "topic-source-check", src: `
title: t
run: {ticks: 10}
topology:
  topics:
    - name: a
      subscribers: [{name: ops, source_check: true, emits: [{topic: b, count: 2}]}]
    - name: b
      subscribers: [{name: shop, emits: [{topic: a}]}]
actors:
  producers: [{name: p, to: {topic: a}, count: 1, source: ops}]
expect:
  - {metric: topic.a.published, op: "==", value: 1}
  - {metric: topic.b.published, op: "==", value: 0}
`},
	{name: "log-compaction-retention", src: `
title: t
run: {ticks: 40}
topology:
  logs:
    - {name: c, compaction: true}
    - {name: r, retention: {records: 3}}
actors:
  producers:
    - {name: p, to: {log: c}, count: 10, keys: [x, y]}
    - {name: q, to: {log: r}, count: 10, keys: [x, y]}
expect:
  - {metric: log.c.records, op: "==", value: 2}
  - {metric: log.c.end, op: "==", value: 10}
  - {metric: log.r.records, op: "==", value: 3}
  - {metric: log.r.start, op: "==", value: 7}
  - {metric: log.r.partitions, op: "==", value: 1}
`},
	{name: "log-retention-bytes", src: `
title: t
run: {ticks: 40}
topology:
  logs:
    - {name: b, retention: {bytes: 1}}
actors:
  producers:
    - {name: p, to: {log: b}, count: 10, keys: [x, y]}
expect:
  - {metric: log.b.records, op: "==", value: 1}
  - {metric: log.b.start, op: "==", value: 9}
  - {metric: log.b.end, op: "==", value: 10}
  - {metric: ledger.lost_retention, op: "==", value: 0}
`},
	{name: "group-members-commit-modes", src: `
title: t
run: {until: drained, max_ticks: 200}
topology:
  logs: [{name: l, partitions: 4}]
  groups:
    - {name: g1, log: l, assignment: round_robin, session_timeout: 5}
    - {name: g2, log: l, assignment: sticky, auto_commit_interval: 2}
    - {name: g3, log: l}
actors:
  producers: [{name: p, to: {log: l}, count: 20, keys: "k-%d", key_count: 4}]
  members:
    - {name: a1, group: g1}
    - {name: a2, group: g1, start: 5, batch: 2}
    - {name: b1, group: g2, commit: auto}
    - {name: c1, group: g3, commit: off_by_one, idempotency: message_id}
faults:
  - {point: member.crash, match: {consumer: c1}, nth: 3}
expect:
  - {metric: group.g1.lag, op: "==", value: 0}
  - {metric: group.g1.committed, op: "==", value: 20}
  - {metric: group.g1.rebalances, op: ">=", value: 2}
  - {metric: group.g2.lag, op: "==", value: 0}
  - {check: exactly_once, consumer: g3}
  - {check: ordered_per_key, consumer: g1}
`},
	{name: "group-commit-before-loses", src: `
title: t
run: {ticks: 30}
topology:
  logs: [{name: l}]
  groups: [{name: g, log: l}]
actors:
  producers: [{name: p, to: {log: l}, count: 5, rate: 5}]
  members: [{name: m, group: g, commit: before}]
faults:
  - {point: member.crash, match: {consumer: m}, nth: 2}
expect:
  - {metric: ledger.lost, op: ">=", value: 1}
`},
	{name: "member-handlers", src: `
title: t
run: {until: drained, max_ticks: 100}
topology:
  logs: [{name: l}]
  groups: [{name: g, log: l}, {name: h, log: l}]
actors:
  producers: [{name: p, to: {log: l}, count: 4}]
  members:
    - {name: m, group: g, handler: {kind: transient, failures: 2}}
    - {name: n, group: h, handler: {kind: slow, ticks: 3}, batch: 1}
faults:
  - {point: handler.transient, match: {group: g}, nth: 1, param: 2}
expect:
  - {check: exactly_once, consumer: g}
  - {check: exactly_once, consumer: h}
  - {metric: group.g.lag, op: "==", value: 0}
`, check: func(t *testing.T, evs []sim.Event) {
		if n := count(evs, sim.KindFailed, "log:l"); n < 3 {
			t.Errorf("failed = %d, want at least 3", n)
		}
	}},
	{name: "service-outbox-relays", src: `
title: t
run: {until: drained, max_ticks: 200}
topology:
  queues: [{name: in}]
  services:
    - {name: shop, publish_to: {queue: in}, max_attempts: 2, cleanup: 3}
    - {name: cdc, publish_to: {queue: in}}
actors:
  producers:
    - {name: orders, to: {service: shop}, count: 10, keys: [a, b]}
    - {name: orders2, to: {service: cdc}, count: 5}
  consumers: [{name: c, queue: in, idempotency: message_id}]
  relays:
    - {name: r1, service: shop, order: per_aggregate, batch: 3, interval: 2, lease: 3, backoff: 1}
    - {name: r2, service: cdc, mode: cdc}
faults:
  - {point: relay.crash_after_publish, match: {where: "relay:r1"}, nth: 2}
expect:
  - {metric: outbox.shop.pending, op: "==", value: 0}
  - {metric: outbox.shop.published, op: ">", value: 10}
  - {metric: outbox.cdc.published, op: "==", value: 5}
  - {check: exactly_once, consumer: c}
  - {check: no_loss}
`},
	{name: "service-dual-write", src: `
title: t
run: {ticks: 30}
topology:
  queues: [{name: in}]
  services:
    - {name: a, writer: commit_then_publish, publish_to: {queue: in}}
    - {name: b, writer: publish_then_commit, publish_to: {queue: in}}
actors:
  producers:
    - {name: pa, to: {service: a}, count: 5}
    - {name: pb, to: {service: b}, count: 5}
faults:
  - {point: writer.crash_after_commit, match: {where: "service:a"}, nth: 2}
  - {point: writer.crash_after_publish, match: {where: "service:b"}, nth: 3}
expect:
  - {metric: ledger.lost, op: "==", value: 1}
  - {metric: ledger.phantoms, op: "==", value: 1}
`},
	{name: "producer-drop-on-refused", src: `
title: t
run: {ticks: 20}
topology:
  queues: [{name: q}, {name: r}]
actors:
  producers:
    - {name: p, to: {queue: q}, count: 5, on_refused: drop}
    - {name: p2, to: {queue: r}, count: 5}
faults:
  - {point: broker.unavailable, from: 2, until: 4}
expect:
  - {metric: ledger.lost, op: "==", value: 2}
  - {metric: queue.q.visible, op: "==", value: 3}
  - {metric: queue.r.visible, op: "==", value: 5}
`},
	{name: "producer-keys-random-start-rate", src: `
title: t
run: {ticks: 12}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 9, rate: 3, start: 5, keys: "k-%d", key_count: 4, key_order: random, type: x}]
expect:
  - {metric: queue.q.visible, op: "==", value: 9}
  - {metric: queue.q.oldest_age, op: "==", value: 7}
`},
}

func TestRunElements(t *testing.T) {
	for _, c := range elementCases {
		t.Run(c.name, func(t *testing.T) {
			evs := mustPass(t, c.src)
			if c.check != nil {
				c.check(t, evs)
			}
		})
	}
}

// The timeline action tests.
var actionCases = []struct {
	name, src string
	check     func(t *testing.T, evs []sim.Event)
}{
	{name: "connect-disconnect-consumer", src: `
title: t
run: {ticks: 20}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 10, rate: 10}]
  consumers: [{name: c, queue: q}]
timeline:
  - {at: 0, action: disconnect, consumer: c}
  - {at: 15, action: connect, consumer: c}
expect:
  - {metric: queue.q.acks, op: "==", value: 6}
`},
	{name: "disconnect-member", src: `
title: t
run: {ticks: 20}
topology:
  logs: [{name: l}]
  groups: [{name: g, log: l}]
actors:
  producers: [{name: p, to: {log: l}, count: 10, rate: 10}]
  members: [{name: m, group: g, batch: 1}]
timeline:
  - {at: 2, action: disconnect, member: m}
  - {at: 15, action: connect, member: m}
expect:
  - {metric: group.g.lag, op: "==", value: 3}
`},
	{name: "mute-unmute", src: `
title: t
run: {ticks: 10}
topology:
  topics:
    - {name: a, subscribers: [{name: s, emits: [{topic: b}]}]}
    - {name: b}
actors:
  producers: [{name: p, to: {topic: a}, count: 6}]
timeline:
  - {at: 2, action: mute, subscriber: s}
  - {at: 4, action: unmute, subscriber: s}
expect:
  - {metric: topic.b.published, op: "==", value: 4}
`},
	{name: "seek-variants", src: `
title: t
run: {ticks: 40}
topology:
  logs: [{name: l, partitions: 2}]
  groups: [{name: g, log: l}]
actors:
  producers: [{name: p, to: {log: l}, count: 10, keys: [a, b]}]
  members: [{name: m, group: g}]
timeline:
  - {at: 15, action: seek, group: g, to: earliest}
  - {at: 20, action: seek, group: g, to: offset, offset: 2, partition: 1}
  - {at: 25, action: seek, group: g, to: tick, tick: 8}
  - {at: 30, action: seek, group: g, to: latest}
expect:
  - {metric: group.g.lag, op: "==", value: 0}
  - {metric: ledger.duplicates, op: ">=", value: 10}
`, check: func(t *testing.T, evs []sim.Event) {
		if n := count(evs, sim.KindSeeked, "log:l"); n < 4 {
			t.Errorf("seeked = %d, want at least 4", n)
		}
	}},
	{name: "purge", src: `
title: t
run: {ticks: 10}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 5, rate: 5}]
timeline:
  - {at: 3, action: purge, queue: q}
expect:
  - {metric: ledger.purged, op: "==", value: 5}
  - {metric: ledger.lost, op: "==", value: 5}
`},
	{name: "add-partitions", src: `
title: t
run: {ticks: 10}
topology:
  logs: [{name: l, partitions: 2}]
timeline:
  - {at: 3, action: add_partitions, log: l, count: 3}
expect:
  - {metric: log.l.partitions, op: "==", value: 5}
`},
	{name: "fix-member-handler", src: `
title: t
run: {until: drained, max_ticks: 50}
topology:
  logs: [{name: l}]
  groups: [{name: g, log: l}]
actors:
  producers: [{name: p, to: {log: l}, count: 3}]
  members: [{name: m, group: g, handler: {kind: poison}}]
timeline:
  - {at: 10, action: fix_handler, member: m}
expect:
  - {check: exactly_once, consumer: g}
`},
	{name: "crash-consumer-and-member", src: `
title: t
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: q, visibility_timeout: 3}]
  logs: [{name: l}]
  groups: [{name: g, log: l}]
actors:
  producers:
    - {name: p, to: {queue: q}, count: 3}
    - {name: p2, to: {log: l}, count: 3}
  consumers: [{name: c, queue: q, handler: {kind: slow, ticks: 5}}]
  members: [{name: m, group: g}]
timeline:
  - {at: 3, action: crash, consumer: c}
  - {at: 3, action: crash, member: m}
expect:
  - {check: at_least_once, consumer: c}
  - {check: at_least_once, consumer: g}
`, check: func(t *testing.T, evs []sim.Event) {
		if n := count(evs, sim.KindCrashed, ""); n != 2 {
			t.Errorf("crashed = %d, want 2", n)
		}
	}},
	{name: "kill-start-relay", src: `
title: t
run: {ticks: 30}
topology:
  queues: [{name: in}]
  services: [{name: s, publish_to: {queue: in}}]
actors:
  producers: [{name: p, to: {service: s}, count: 10}]
  relays: [{name: r, service: s}]
timeline:
  - {at: 0, action: kill_relay, relay: r}
  - {at: 20, action: start_relay, relay: r}
expect:
  - {metric: outbox.s.pending, op: "==", value: 0}
  - {metric: outbox.s.relay_lag, op: ">=", value: 10}
`},
	{name: "disable-fault", src: `
title: t
run: {ticks: 20}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 10}]
faults:
  - {name: down, point: broker.unavailable}
timeline:
  - {at: 5, action: disable_fault, fault: down}
expect:
  - {metric: queue.q.visible, op: "==", value: 10}
`},
}

func TestRunActions(t *testing.T) {
	for _, c := range actionCases {
		t.Run(c.name, func(t *testing.T) {
			evs := mustPass(t, c.src)
			if c.check != nil {
				c.check(t, evs)
			}
		})
	}
}

func TestNarrationAndChecked(t *testing.T) {
	evs := mustPass(t, `
title: t
run: {ticks: 5}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 1}]
  consumers: [{name: c, queue: q}]
narration:
  - {at: 0, text: first}
  - {at: 3, text: second, pause: true}
expect:
  - {metric: queue.q.depth, op: "==", value: 0}
  - {check: no_loss}
`)
	var got []string
	for _, e := range evs {
		if e.Kind == sim.KindNarration || e.Kind == sim.KindChecked {
			got = append(got, string(sim.AppendText(nil, &e)))
		}
	}
	want := []string{
		`t=0 narration lesson - "1/2 first"`,
		`t=3 narration lesson - "2/2 [pause] second"`,
		`t=5 checked expect - "PASS queue.q.depth == 0 (measured 0) at 13:5"`,
		`t=5 checked expect - "PASS no_loss (measured 0 violations) at 14:5"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestStepAndNarration(t *testing.T) {
	s, err := scenario.Load("t.yaml", []byte(`
title: t
run: {ticks: 4}
topology:
  queues: [{name: q}]
narration:
  - {at: 2, text: two}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if i, n, txt := r.Narration(); i != 0 || n != 1 || txt != "" {
		t.Errorf("narration at 0 = %d/%d %q", i, n, txt)
	}
	steps := 0
	for r.Step() {
		steps++
		if r.Now() == 2 {
			if i, _, txt := r.Narration(); i != 1 || txt != "two" {
				t.Errorf("narration at 2 = %d %q", i, txt)
			}
		}
	}
	if steps != 4 || !r.Done() || r.Now() != 4 {
		t.Errorf("steps %d, done %v, now %d", steps, r.Done(), r.Now())
	}
	if r.Step() {
		t.Error("Step after the end ran a tick")
	}
	if rep := r.Finish(); rep.Ticks != 4 || !rep.Pass || r.Finish() != rep {
		t.Errorf("report %+v", rep)
	}
}

func TestUntilDrained(t *testing.T) {
	rep, _, err := execute(t, `
title: t
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 3}]
  consumers: [{name: c, queue: q}]
`)
	if err != nil || !rep.Drained || rep.Ticks >= 10 {
		t.Errorf("drained %v at %d, err %v", rep.Drained, rep.Ticks, err)
	}
	rep, _, _ = execute(t, `
title: t
run: {until: drained, max_ticks: 30}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 3}]
`)
	if rep.Drained || rep.Ticks != 30 {
		t.Errorf("undrained run: drained %v at %d", rep.Drained, rep.Ticks)
	}
}

func TestExpectationFails(t *testing.T) {
	rep, evs, err := execute(t, `
title: Failing
run: {ticks: 30}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 5, rate: 5}]
  consumers: [{name: c, queue: q, ack: before}]
faults:
  - {point: consumer.crash_before_process, nth: 1}
expect:
  - {check: no_loss}
  - {metric: queue.q.acks, op: "<", value: 5}
  - {metric: ledger.lost, op: "==", value: 1}
`)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass || rep.Failed() != 2 {
		t.Fatalf("pass %v, failed %d", rep.Pass, rep.Failed())
	}
	o := rep.Outcomes[0]
	if o.Pass || len(o.Violations) != 1 || o.Measured != "1 violation" || o.Line != 12 {
		t.Errorf("no_loss outcome %+v", o)
	}
	if o := rep.Outcomes[1]; o.Pass || o.Measured != "5" {
		t.Errorf("acks outcome %+v", o)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FAIL  t.yaml:12:5  no_loss  (measured 1 violation)",
		"no-loss: m1",
		"FAIL  t.yaml:13:5  queue.q.acks < 5  (measured 5)",
		"PASS  t.yaml:14:5  ledger.lost == 1  (measured 1)",
		"ledger: 5 messages (5 origins),",
		"lost by cause: ack before processing 1",
		"FAIL: 1 of 3 expectations hold",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if n := count(evs, sim.KindChecked, "expect"); n != 3 {
		t.Errorf("checked events = %d", n)
	}
}

// TestRuntimeErrorPositioned: an action the run cannot carry out (a crash
// of a member that has not joined its group yet) is a runtime error at the
// action's position, traced as rejected; the actions around it still run.
func TestRuntimeErrorPositioned(t *testing.T) {
	src := `
title: t
run: {ticks: 10}
topology:
  logs: [{name: l}]
  groups: [{name: g, log: l}]
actors:
  members: [{name: m, group: g, start: 5}]
timeline:
  - {at: 2, action: crash, member: m}
  - {at: 3, action: add_partitions, log: l, count: 1}
`
	rep, evs, err := execute(t, src)
	var es *scenario.Errors
	if !errors.As(err, &es) || !errors.Is(err, scenario.ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
	if len(es.List) != 1 || es.List[0].Line != 10 || es.List[0].Col != 5 || !strings.Contains(es.List[0].Msg, "not active") {
		t.Errorf("errors = %v", es)
	}
	if !strings.HasPrefix(err.Error(), "t.yaml:10:5: action crash: ") {
		t.Errorf("error text %q", err.Error())
	}
	if rep == nil || rep.Pass || len(rep.Errors) != 1 || rep.Ticks != 10 {
		t.Errorf("report %+v", rep)
	}
	if n := count(evs, sim.KindRejected, "timeline"); n != 1 {
		t.Errorf("rejected = %d", n)
	}
	if n := count(evs, sim.KindAction, "log:l"); n != 1 {
		t.Errorf("add_partitions after the failed action: %d log actions, want 1", n)
	}
}

// TestDeterminism runs every valid scenario under GOMAXPROCS 1, 2 and 8
// and compares the text traces byte for byte; it also
// checks that each passes its expectations.
func TestDeterminism(t *testing.T) {
	files, _ := filepath.Glob("../scenario/testdata/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no valid scenarios")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := scenario.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			trace := func(procs int) []byte {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				var b bytes.Buffer
				rep, err := Execute(s, Options{Sinks: []sim.Sink{sim.NewTextWriter(&b)}})
				if err != nil {
					t.Fatal(err)
				}
				if !rep.Pass {
					var x bytes.Buffer
					_ = rep.WriteText(&x)
					t.Fatalf("expectations failed:\n%s", x.String())
				}
				_ = rep.WriteText(&b)
				return b.Bytes()
			}
			a := trace(1)
			for _, procs := range []int{2, 8} {
				if b := trace(procs); !bytes.Equal(a, b) {
					t.Fatalf("traces differ between GOMAXPROCS 1 and %d (%d vs %d bytes)", procs, len(a), len(b))
				}
			}
			seed := s.Seed + 1
			rep, err := Execute(s, Options{Seed: &seed})
			if err != nil || rep.Seed != seed {
				t.Errorf("seed override: %v, seed %d", err, rep.Seed)
			}
		})
	}
}

func TestServiceCleanup(t *testing.T) {
	s, err := scenario.Load("t.yaml", []byte(`
title: t
run: {ticks: 30}
topology:
  queues: [{name: in}]
  services: [{name: shop, publish_to: {queue: in}, cleanup: 5}]
actors:
  producers: [{name: p, to: {service: shop}, count: 5}]
  relays: [{name: r, service: shop, mode: cdc}]
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Finish()
	svc := r.Services()[0]
	if m := svc.Service.Metrics(); m.Cleaned != 5 || m.Sent != 0 {
		t.Errorf("outbox metrics %+v", m)
	}
	if len(svc.Relays) != 1 || svc.Relays[0].Name != "r" || svc.Relays[0].Down {
		t.Errorf("relays %+v", svc.Relays)
	}
}

func TestDrainedWaitsForTimeline(t *testing.T) {
	rep, _, err := execute(t, `
title: t
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 2}]
  consumers: [{name: c, queue: q}]
timeline:
  - {at: 20, action: purge, queue: q}
`)
	if err != nil || !rep.Drained || rep.Ticks != 20 {
		t.Errorf("drained %v at %d, err %v", rep.Drained, rep.Ticks, err)
	}
}

// TestFaultMatchTranslation checks that the file's match vocabulary reaches
// the models: group:G, relay:R, service:S and a plain consumer name with
// several instances.
func TestFaultMatchTranslation(t *testing.T) {
	evs := mustPass(t, `
title: t
run: {until: drained, max_ticks: 200}
topology:
  queues: [{name: q}, {name: in}]
  logs: [{name: l}]
  groups: [{name: g, log: l}]
  services: [{name: s, publish_to: {queue: in}}]
actors:
  producers:
    - {name: p, to: {queue: q}, count: 6, rate: 6}
    - {name: p2, to: {log: l}, count: 3}
    - {name: p3, to: {service: s}, count: 3}
  consumers: [{name: w, queue: q, instances: 3}]
  members: [{name: m, group: g}]
  relays: [{name: r, service: s}]
faults:
  - {name: w-crash, point: consumer.crash_before_process, match: {consumer: w}, count: 2}
  - {name: g-crash, point: member.crash, match: {where: "group:g"}, nth: 1}
  - {name: r-crash, point: relay.crash_after_publish, match: {where: "relay:r"}, nth: 1}
expect:
  - {check: at_least_once, consumer: w}
  - {check: at_least_once, consumer: g}
`)
	fired := map[string]int{}
	for _, e := range evs {
		if e.Kind == sim.KindFault {
			fired[e.Rule]++
		}
	}
	if fired["w-crash"] != 2 || fired["g-crash"] != 1 || fired["r-crash"] != 1 {
		t.Errorf("fired %v", fired)
	}
}

func TestMemberStartAndConnectBeforeJoin(t *testing.T) {
	mustPass(t, `
title: t
run: {ticks: 30}
topology:
  logs: [{name: l}]
  groups: [{name: g, log: l}]
actors:
  producers: [{name: p, to: {log: l}, count: 5, rate: 5}]
  members: [{name: m, group: g, start: 10}]
timeline:
  - {at: 2, action: disconnect, member: m}
  - {at: 20, action: connect, member: m}
expect:
  - {metric: group.g.committed, op: "==", value: 5}
  - {metric: group.g.generation, op: ">=", value: 1}
`)
}

// TestGroupLagCountsOnlyReadableRecords: when retention deletes the last
// records a slow group had not read, auto.offset.reset moves it to the end
// and its lag is 0: the deleted records are losses, not lag.
func TestGroupLagCountsOnlyReadableRecords(t *testing.T) {
	src := `title: lag after reset
seed: 10
run: {ticks: 80}
topology:
  logs: [{name: clicks, partitions: 1, retention: {ticks: 10}}]
  groups: [{name: reports, log: clicks, auto_offset_reset: earliest}]
actors:
  producers: [{name: web, to: {log: clicks}, count: 40, rate: 2, keys: "page-%d", key_count: 4}]
  members: [{name: reports-1, group: reports, batch: 1}]
expect:
  - {metric: group.reports.lag, op: "==", value: 0}
  - {metric: ledger.lost_retention, op: ">", value: 0}
`
	mustPass(t, src)
}
