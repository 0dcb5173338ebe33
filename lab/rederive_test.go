package lab

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// jsonTrace executes s, named label in failures, and returns its report
// and its JSON Lines trace, closed.
func jsonTrace(t *testing.T, label string, s *scenario.Scenario) (*Report, *bytes.Buffer) {
	t.Helper()
	var js bytes.Buffer
	jw := sim.NewJSONWriter(&js)
	rep, err := Execute(s, Options{Sinks: []sim.Sink{jw}})
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
	return rep, &js
}

// TestRederivedVerdictsEqualTheLiveOnes runs every lesson, every variant
// and every valid test file with a JSON Lines trace, re-derives the whole
// expect list from the trace alone (Rederive), and requires the same
// outcome for every expectation: pass or fail, the measured value and
// every violation.
func TestRederivedVerdictsEqualTheLiveOnes(t *testing.T) {
	labels, ss := auditFiles(t)
	equal := 0
	for i, s := range ss {
		rep, js := jsonTrace(t, labels[i], s)
		got, err := Rederive(s, js)
		if err != nil {
			t.Errorf("%s: %v", labels[i], err)
			continue
		}
		if len(got) != len(rep.Outcomes) {
			t.Fatalf("%s: %d outcomes re-derived, %d live", labels[i], len(got), len(rep.Outcomes))
		}
		for k := range got {
			if !reflect.DeepEqual(got[k], rep.Outcomes[k]) {
				t.Errorf("%s: %s\n live:       %+v\n re-derived: %+v", labels[i], got[k].Text, rep.Outcomes[k], got[k])
				continue
			}
			equal++
		}
	}
	t.Logf("%d files, %d verdicts re-derived from their traces, all equal to the live ones", len(ss), equal)
}

// TestRederiveNamesWhatTheTraceCannotCarry: an expectation on a metric
// read from a model's counters is not guessed.
func TestRederiveNamesWhatTheTraceCannotCarry(t *testing.T) {
	s, err := scenario.Load("t.yaml", []byte(`version: 1
title: visible
run: {ticks: 3}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 1}]
expect:
  - {metric: queue.q.visible, op: "==", value: 1}
  - {metric: queue.q.depth, op: "==", value: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, js := jsonTrace(t, "t.yaml", s)
	out, err := Rederive(s, js)
	if !errors.Is(err, ErrNotRederived) || len(out) != 2 || out[0].Pass || !strings.Contains(out[0].Measured, "not re-derivable") || !out[1].Pass {
		t.Fatalf("%v %+v", err, out)
	}
}
