package scenario

import (
	"fmt"
	"strings"
	"testing"
)

// TestConsumerGlob checks the patterns fault rules get for patterns that
// name consumers with instances.
func TestConsumerGlob(t *testing.T) {
	s, err := Load("t.yaml", []byte(`
title: t
run: {ticks: 10}
topology:
  queues: [{name: orders}]
  topics: [{name: e, subscribers: [{name: mail-sender}]}]
actors:
  consumers:
    - {name: a-worker, queue: orders, instances: 3}
    - {name: b-worker, queue: orders}
    - {name: solo, queue: orders, instances: 2}
faults:
  - {point: handler.poison, match: {consumer: b-worker}}
  - {point: handler.poison, match: {consumer: a-worker}}
  - {point: handler.poison, match: {consumer: "a-*"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"":         "",
		"b-worker": "b-worker",
		"a-worker": "a-worker#*",
		"*-worker": "*-worker*",
		"a-*":      "a-*",
		"mail-*":   "mail-*",
		"s?lo":     "s?lo#*",
		"solo#2":   "solo#2",
		"*":        "*",
	} {
		g := &consumerGlobs{s: s}
		if got, bad, over := g.glob(p); got != want || bad != "" || over {
			t.Errorf("glob(%q) = %q, %q, %v; want %q", p, got, bad, over, want)
		}
	}
	for i, want := range []string{"b-worker", "a-worker#*", "a-*"} {
		if got := s.Faults[i].consumerGlob; got != want {
			t.Errorf("fault %d: consumerGlob %q, want %q", i+1, got, want)
		}
	}
}

// TestConsumerGlobCost loads a file with as many consumers with instances
// and fault rules with consumer patterns as the caps allow: the patterns
// that end in * are cheap, the others run into MaxGlobWork and are refused
// instead of making Load slow.
func TestConsumerGlobCost(t *testing.T) {
	if testing.Short() {
		t.Skip("a large file")
	}
	var b strings.Builder
	b.WriteString("title: x\nrun: {ticks: 1}\ntopology:\n  queues: [{name: q}]\nactors:\n  consumers:\n")
	for i := 0; i < MaxActors; i++ {
		fmt.Fprintf(&b, "    - {name: w%d, queue: q, instances: %d}\n", i, MaxInstances)
	}
	b.WriteString("faults:\n")
	for i := 0; i < MaxFaults/2; i++ {
		fmt.Fprintf(&b, "  - {point: handler.poison, match: {consumer: \"w%d*\"}}\n", i)
	}
	for i := 0; i < MaxFaults/2; i++ {
		fmt.Fprintf(&b, "  - {point: handler.slow, match: {consumer: \"w*%d\"}}\n", i)
	}
	_, err := Load("h.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "end the pattern with * or write names") || strings.Contains(err.Error(), `"w1*"`) {
		t.Errorf("err = %.300v", err)
	}
}
