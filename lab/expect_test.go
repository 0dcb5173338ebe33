package lab

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// TestLossFields checks that every modelled cause has a ledger field, and
// that the field counts the losses of that cause only.
func TestLossFields(t *testing.T) {
	fields := strings.Join(scenario.MetricFields["ledger"], ",")
	for _, c := range scenario.LossCauses {
		f := scenario.LossField(c)
		if strings.ContainsAny(f, " ") || !strings.Contains(","+fields+",", ","+f+",") {
			t.Errorf("cause %q: field %q is not a ledger metric field", c, f)
		}
	}
	if got := scenario.LossField(sim.CauseAckBeforeProcess); got != "lost_ack_before_processing" {
		t.Errorf("LossField = %q", got)
	}
	s := sim.Stats{Lost: 3, LostBy: []sim.CauseCount{{Cause: sim.CauseDualWrite, Count: 1}, {Cause: sim.CauseRetention, Count: 2}}}
	for field, want := range map[string]float64{"lost": 3, "lost_dual_write": 1, "lost_retention": 2, "lost_overflow": 0} {
		if v, ok := (scenario.Metric{Kind: "ledger", Field: field}).Ledger(s); !ok || v != want {
			t.Errorf("ledger.%s = %v, %v; want %v", field, v, ok, want)
		}
	}
}

// TestConsumerMetricsMatchLedger measures every consumer.* metric of every
// ledger consumer of every lesson and compares it with the ledger read
// record by record.
func TestConsumerMetricsMatchLedger(t *testing.T) {
	for _, l := range scenario.Lessons() {
		t.Run(l.Name, func(t *testing.T) {
			_, _, r := runLesson(t, l.Name, nil)
			led := r.Env().Ledger
			for _, name := range led.Consumers() {
				ref := led.Consumer(name)
				// Deliveries, effects and absorbed duplicates summed copy
				// by copy must equal the per-origin fold; the verdict
				// counts come from the fold.
				want := map[string]int{"duplicates": led.Duplicates(name), "duplicate_effects": led.DuplicateEffects(name)}
				for _, rec := range led.Records() {
					d := led.Entry(rec.ID, ref)
					want["delivered"] += int(d.Delivered)
					want["applied"] += int(d.Applied)
					want["absorbed"] += int(d.Skipped)
				}
				for _, o := range led.Outcomes(name) {
					switch o.Verdict {
					case sim.VerdictMissed:
						want["missed"]++
					case sim.VerdictLost:
						want["lost"]++
					case sim.VerdictPending:
						want["pending"]++
					}
				}
				for _, f := range scenario.MetricFields["consumer"] {
					got, err := r.Measure(scenario.Metric{Kind: "consumer", Name: name, Field: f})
					if err != nil || got != float64(want[f]) {
						t.Errorf("consumer.%s.%s = %v, %v; want %d", name, f, got, err, want[f])
					}
				}
			}
		})
	}
}

func TestConsumerMetricByConsumerName(t *testing.T) {
	mustPass(t, `
title: t
run: {until: drained, max_ticks: 50}
topology:
  queues: [{name: q}, {name: idle}]
actors:
  producers: [{name: p, to: {queue: q}, count: 4}]
  consumers: [{name: c, queue: q, instances: 2}]
faults:
  - {point: broker.duplicate, nth: 2}
expect:
  - {metric: consumer.c.delivered, op: "==", value: 5}
  - {metric: consumer.q.delivered, op: "==", value: 5}
  - {metric: consumer.q.duplicates, op: "==", value: 1}
  - {metric: consumer.c.duplicate_effects, op: "==", value: 1}
  - {metric: consumer.q.applied, op: "==", value: 5}
  - {metric: consumer.idle.delivered, op: "==", value: 0}
  - {check: at_most_once, consumer: c, violated: true}
`)
}

// TestViolated checks both outcomes of a violated expectation, its
// measured value and how the report prints it.
func TestViolated(t *testing.T) {
	rep, evs, err := execute(t, `
title: t
run: {ticks: 10}
topology:
  queues: [{name: q, retention: 1}]
actors:
  producers: [{name: p, to: {queue: q}, count: 5}]
expect:
  - {check: no_loss, violated: true}
  - {check: at_most_once, violated: true}
  - {metric: ledger.lost_retention, op: "==", value: 0}
`)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass || rep.Failed() != 2 {
		t.Fatalf("pass %v, %d failed; want at_most_once violated and the metric to fail", rep.Pass, rep.Failed())
	}
	o := rep.Outcomes
	if !o[0].Pass || o[0].Text != "no_loss violated" || len(o[0].Violations) != 5 ||
		o[0].Measured != "5 violations: m1 t=2, m2 t=3, m3 t=4 and 2 more" {
		t.Errorf("no_loss violated: %+v", o[0])
	}
	if o[1].Pass || o[1].Measured != "0 violations" {
		t.Errorf("at_most_once violated without a violation: %+v", o[1])
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"PASS  t.yaml:9:5  no_loss violated  (measured 5 violations: m1 t=2, m2 t=3, m3 t=4 and 2 more)\n        no-loss: m1",
		"        ... and 2 more\nFAIL  t.yaml:10:5  at_most_once violated  (measured 0 violations)\n",
		"FAIL  t.yaml:11:5  ledger.lost_retention == 0  (measured 5)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if n := count(evs, sim.KindChecked, "expect"); n != 3 {
		t.Errorf("%d checked events", n)
	}
}

// TestFaultGlobMatchesInstances runs a fault rule whose consumer pattern
// names a consumer with instances by its base name.
func TestFaultGlobMatchesInstances(t *testing.T) {
	evs := mustPass(t, `
title: t
run: {until: drained, max_ticks: 100}
topology:
  queues: [{name: orders, visibility_timeout: 3}]
actors:
  producers: [{name: p, to: {queue: orders}, count: 6}]
  consumers:
    - {name: order-worker, queue: orders, instances: 2}
faults:
  - {name: crash, point: consumer.crash_before_process, match: {consumer: "*-worker"}, count: 2}
expect:
  - {check: exactly_once, consumer: order-worker}
  - {metric: queue.orders.redeliveries, op: "==", value: 2}
`)
	fired := 0
	for _, e := range evs {
		if e.Kind == sim.KindFault && e.Rule == "crash" {
			fired++
			if !strings.HasPrefix(e.Actor, "order-worker#") {
				t.Errorf("fired for %q", e.Actor)
			}
		}
	}
	if fired != 2 {
		t.Errorf("the rule fired %d times, want 2", fired)
	}
}

// TestSupervisorSubscriber checks that a supervisor's emits are published
// but reach no ephemeral subscriber, while a durable fan-out gets them.
func TestSupervisorSubscriber(t *testing.T) {
	evs := mustPass(t, `
title: t
run: {ticks: 5}
topology:
  queues: [{name: archive}]
  topics:
    - name: saves
      fan_out_to_queues: [archive]
      subscribers:
        - {name: worker, supervisor: true, emits: [{topic: saves, count: 2}]}
        - {name: other}
actors:
  producers: [{name: editor, to: {topic: saves}, count: 1}]
expect:
  - {metric: topic.saves.published, op: "==", value: 3}
  - {metric: topic.saves.delivered, op: "==", value: 2}
  - {metric: consumer.worker.delivered, op: "==", value: 1}
  - {metric: queue.archive.visible, op: "==", value: 3}
`)
	if n := count(evs, "suppressed", "topic:saves"); n != 4 {
		t.Errorf("%d suppressed copies, want 4 (2 saves x 2 subscribers)", n)
	}
}
