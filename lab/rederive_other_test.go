package lab

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// lessonRuns returns every lesson and every variant of one with its JSON
// Lines trace.
func lessonRuns(t *testing.T) (labels []string, ss []*scenario.Scenario, traces []string) {
	t.Helper()
	for _, l := range scenario.Lessons() {
		base, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		add := func(label string, s *scenario.Scenario) {
			_, js := jsonTrace(t, label, s)
			labels, ss, traces = append(labels, label), append(ss, s), append(traces, js.String())
		}
		add(l.Name, base)
		for _, vr := range base.Variants {
			v, err := base.Variant(vr.Name)
			if err != nil {
				t.Fatal(err)
			}
			add(l.Name+"/"+vr.Name, v)
		}
	}
	return labels, ss, traces
}

// TestRederiveRefusesAnotherScenariosTrace judges the trace of every
// lesson and variant against every other one: each is refused, with no
// outcome, as the trace of another scenario. A variant that runs exactly
// the lesson as written (the same trace) is the one pair accepted.
func TestRederiveRefusesAnotherScenariosTrace(t *testing.T) {
	labels, ss, traces := lessonRuns(t)
	refused := 0
	for i := range ss {
		for j := range ss {
			out, err := Rederive(ss[j], strings.NewReader(traces[i]))
			if traces[i] == traces[j] {
				if err != nil {
					t.Errorf("%s judged as %s, the same run: %v", labels[i], labels[j], err)
				}
				continue
			}
			var me *MismatchError
			if !errors.Is(err, ErrOtherScenario) || !errors.As(err, &me) || out != nil {
				t.Errorf("the trace of %s judged as %s: %d outcomes, %v", labels[i], labels[j], len(out), err)
				continue
			}
			if len(me.Diffs) == 0 {
				t.Errorf("the trace of %s judged as %s: no difference named", labels[i], labels[j])
			}
			refused++
		}
	}
	t.Logf("%d traces refused as another scenario's", refused)
}

// TestRederiveNamesTheDifferences: the trace of dual-write judged as
// poison-dlq names an expectation the trace judged that the scenario does
// not have (by its line in the trace) and one of the scenario's the trace
// never judged (by its position in the file).
func TestRederiveNamesTheDifferences(t *testing.T) {
	dw, err := scenario.LoadLesson("dual-write")
	if err != nil {
		t.Fatal(err)
	}
	pd, err := scenario.LoadLesson("poison-dlq")
	if err != nil {
		t.Fatal(err)
	}
	_, js := jsonTrace(t, "dual-write", dw)
	_, err = Rederive(pd, js)
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("%v", err)
	}
	var inTrace, inFile bool
	for _, d := range me.Diffs {
		inTrace = inTrace || d.Seq > 0 && strings.Contains(d.Text, "ledger.lost_dual_write == 1 by t=4")
		inFile = inFile || d.Pos == scenario.Pos{Line: 90, Col: 5} && d.Text == `"no_loss" is not judged in the trace`
	}
	if !inTrace || !inFile || me.Total < len(me.Diffs) {
		t.Errorf("%+v", *me)
	}
}

// TestRederiveJudgesAnUnusedComponentAsTheRunDid: a queue the scenario
// declares and its run never uses is named by no event of a genuine trace;
// its metric is re-derived as the run measured it (0), and the trace is
// not refused. A trace of another scenario cannot pass such a metric: the
// identity check refuses it first (TestRederiveRefusesAnotherScenariosTrace).
func TestRederiveJudgesAnUnusedComponentAsTheRunDid(t *testing.T) {
	s, err := scenario.Load("t.yaml", []byte(`version: 1
title: unused
run: {ticks: 3}
topology:
  queues: [{name: q}, {name: unused}]
actors:
  producers: [{name: p, to: {queue: q}, count: 1}]
expect:
  - {metric: queue.unused.depth, op: "==", value: 0}
  - {metric: queue.q.depth, op: "==", value: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, js := jsonTrace(t, "t.yaml", s)
	out, err := Rederive(s, js)
	if err != nil || len(out) != 2 || !out[0].Pass || out[0].Measured != "0" || !out[1].Pass {
		t.Fatalf("%v %+v", err, out)
	}
}
