package lab

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// workShapes are small files of the shapes whose derived work goes past
// the budget; the full-size ones are in scripts/hostile-shapes.sh.
func workShapes() map[string]struct{ src, warning string } {
	list := func(n int, format string) string {
		var parts []string
		for i := 1; i <= n; i++ {
			parts = append(parts, strings.ReplaceAll(format, "@", fmt.Sprint(i)))
		}
		return strings.Join(parts, ", ")
	}
	return map[string]struct{ src, warning string }{
		"fan-out-retry": {`title: t
run: {ticks: 1000}
topology:
  queues: [` + list(16, "{name: q@}") + `]
  topics: [{name: t, fan_out_to_queues: [` + list(16, "q@") + `], fan_out_retry: {immediate: 1000, backoff: 0}}]
actors:
  producers: [{name: p, to: {topic: t}, count: 10000, rate: 10000}]
faults:
  - {name: down, point: broker.unavailable, match: {where: "queue:*"}}
`, `topic "t" retries a refused forward 1000 times at once to each of its 16 queues`},
		"cdc-relays": {`title: t
run: {ticks: 200}
topology:
  queues: [{name: in}]
  services: [{name: shop, writer: outbox, publish_to: {queue: in}}]
actors:
  producers: [{name: orders, to: {service: shop}, count: 1000, rate: 1000}]
  consumers: [{name: c, queue: in}]
  relays: [` + list(200, "{name: r@, service: shop, mode: cdc}") + `]
`, `service "shop" has 200 CDC relays, and CDC relays take no leases, so each publishes every row: its 1000 rows go out 200,000 times`},
		"poison-no-dlq": {`title: t
run: {ticks: 1000000}
topology:
  queues: [{name: q, visibility_timeout: 1}]
actors:
  producers: [{name: p, to: {queue: q}, count: 100, rate: 100}]
  consumers: [{name: c, queue: q, batch: 100, handler: {kind: poison}}]
`, `consumer "c" fails every message (handler poison) of queue "q", which has no dead_letter`},
		"idle-instances": {`title: t
run: {ticks: 1000000}
topology:
  queues: [{name: q}]
actors:
  consumers: [` + list(200, "{name: c@, queue: q, instances: 64}") + `]
`, `12,801 components (12,800 consumer instances among them) step every tick for up to 1,000,000 ticks`},
		"redrive-every-tick": {`title: t
run: {ticks: 300}
topology:
  queues: [{name: q, visibility_timeout: 1, dead_letter: {queue: d, max_receive_count: 1}}, {name: d}]
actors:
  producers: [{name: p, to: {queue: q}, count: 1000, rate: 1000}]
  consumers: [{name: c, queue: q, batch: 1000, handler: {kind: poison}}]
timeline: [` + list(250, "{at: @, action: redrive, queue: d}") + `]
`, `the timeline redrives dead letters of "d" 250 times`},
	}
}

// check warns about each shape, and a run of it under a small budget
// stops with exit-2 material: a positioned error naming the cap and, as
// the likely cause, the warning.
func TestWorkShapesWarnAndStop(t *testing.T) {
	small := sim.Budget{Messages: scenario.MaxCopies, DeliveriesPerTick: scenario.MaxDeliveriesPerTick, CascadePerRoot: scenario.MaxCascadePerRoot,
		Events: 50_000, Steps: 500_000}
	for name, shape := range workShapes() {
		start := time.Now()
		s, err := scenario.Load(name+".yaml", []byte(shape.src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer func() { t.Logf("%s: %v", name, time.Since(start)) }()
		ws := s.Warnings()
		if len(ws) != 1 || !strings.Contains(ws[0].Msg, shape.warning) {
			t.Errorf("%s: warnings %v, want one saying %q", name, ws, shape.warning)
			continue
		}
		_, err = Execute(s, Options{budget: &small})
		if err == nil {
			t.Errorf("%s: the run ended within a budget of %d events and %d steps", name, small.Events, small.Steps)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, name+".yaml:") || !strings.Contains(msg, "exceeded its budget on derived work") ||
			!strings.Contains(msg, "(cap ") || !strings.Contains(msg, "likely cause: "+shape.warning) {
			t.Errorf("%s: the error must name the file, the cap and the warning as the likely cause:\n%s", name, msg)
		}
	}
}

// CDC relays re-send the same IDs, which the message cap never counts:
// the send cap stops them, names itself, and gives the check warning as
// the likely cause, before the queue holds more than the cap of copies.
func TestCDCRelaysHitTheSendCap(t *testing.T) {
	shape := workShapes()["cdc-relays"]
	s, err := scenario.Load("cdc-relays.yaml", []byte(shape.src))
	if err != nil {
		t.Fatal(err)
	}
	budget := runBudget
	budget.Sends = 20_000
	_, err = Execute(s, Options{budget: &budget})
	if err == nil {
		t.Fatal("200 CDC relays of 1000 rows ran to the end under a send cap of 20,000")
	}
	msg := err.Error()
	if !strings.Contains(msg, "more than 20000 copies handed to brokers by tick 10 (cap sends), at queue:in") ||
		!strings.Contains(msg, "likely cause: "+shape.warning) {
		t.Errorf("the error must name the send cap and the CDC warning:\n%s", msg)
	}
}
