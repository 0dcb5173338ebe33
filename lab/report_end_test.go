package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// undrainedScenario sends ten messages to a queue nothing reads, and the
// run stops at max_ticks 30, long after the last send at t=10.
const undrainedScenario = `version: 1
title: Never drains
seed: 3
run: {until: drained, max_ticks: 30}
topology:
  queues:
    - name: orders
actors:
  producers:
    - {name: shop, to: {queue: orders}, count: 10, keys: "kunde-%d", key_count: 3}
expect:
  - {check: no_loss}
  - {check: at_least_once, consumer: orders}
`

// A run stopped at max_ticks says a message is still pending as of the
// tick the run ended, not of the last event, and names the queue it waits
// in rather than a consumer, since none exists; its trace re-derived by
// verify says the same, word for word.
func TestUndrainedRunNamesTheEndTickAndTheQueue(t *testing.T) {
	s, err := scenario.Load("undrained.yaml", []byte(undrainedScenario))
	if err != nil {
		t.Fatal(err)
	}
	rep, trace := jsonTrace(t, "undrained.yaml", s)
	if rep.Ticks != 30 || !rep.Undrained {
		t.Fatalf("ended at t=%d, undrained %v; want t=30, undrained", rep.Ticks, rep.Undrained)
	}
	want := "t=10: still pending in queue:orders at t=30, and no consumer took anything from it; the run ended before it was settled"
	again, err := Rederive(s, trace)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range rep.Outcomes {
		if len(o.Violations) != 10 {
			t.Fatalf("%s: %d violations, want 10", o.Text, len(o.Violations))
		}
		last := o.Violations[9]
		if last.Consumer != "" || !strings.HasSuffix(last.String(), want) {
			t.Errorf("%s: %q, want it to end %q and name no consumer", o.Text, last, want)
		}
		for j, v := range o.Violations {
			if w := again[i].Violations[j]; v != w {
				t.Errorf("%s: the run says %q, verify %q", o.Text, v, w)
			}
		}
	}
}
