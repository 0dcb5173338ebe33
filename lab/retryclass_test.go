package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// TestRetryByClass checks the retry of each error class through the whole
// stack (fault point, handler error, queue consumer): a rate limit is
// retried after its Retry-After, a permanent failure is dead-lettered at
// once; with same_for_all both follow the policy, so the permanent one
// is tried until the redrive policy dead-letters it.
func TestRetryByClass(t *testing.T) {
	src := `title: retry classes
run: {ticks: 20}
topology:
  queues:
    - {name: q, dead_letter: {queue: dlq, max_receive_count: 3}}
    - {name: dlq}
actors:
  producers: [{name: p, to: {queue: q}, count: 2, keys: [limited, invalid]}]
  consumers: [{name: c, queue: q, batch: 2, retry: {policy: fixed, base: 1}}]
faults:
  - {name: rl, point: handler.rate_limited, match: {key: limited}, nth: 1, param: 5}
  - {name: bad, point: handler.permanent, match: {key: invalid}}
`
	run := func(src string) []sim.Event {
		t.Helper()
		s, err := scenario.Load("r.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		rec := &sim.Recorder{}
		if _, err := Execute(s, Options{Sinks: []sim.Sink{rec}}); err != nil {
			t.Fatal(err)
		}
		return rec.Events()
	}
	find := func(evs []sim.Event, kind sim.Kind, key, detail string) *sim.Event {
		for i := range evs {
			if evs[i].Kind == kind && evs[i].Key == key && strings.Contains(evs[i].Detail, detail) {
				return &evs[i]
			}
		}
		return nil
	}
	evs := run(src)
	if e := find(evs, sim.KindNacked, "limited", "delay 5"); e == nil {
		t.Error("the rate-limited message was not nacked with its Retry-After of 5")
	}
	if e := find(evs, sim.KindDeadLettered, "invalid", "permanent failure"); e == nil || e.Tick != 2 {
		t.Errorf("the permanent failure was not dead-lettered at once: %v", e)
	}
	evs = run(strings.Replace(src, "base: 1}", "base: 1, same_for_all: true}", 1))
	if e := find(evs, sim.KindNacked, "limited", "delay 1"); e == nil {
		t.Error("same_for_all: the rate-limited message was not nacked with the policy's delay 1")
	}
	if e := find(evs, sim.KindDeadLettered, "invalid", "receive count would exceed 3"); e == nil {
		t.Error("same_for_all: the permanent failure was not retried until the redrive policy took it")
	}
}
