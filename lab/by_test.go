package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// byScenario publishes four messages at ticks 1-4 to a queue nobody reads
// until tick 6, so its depth is 4 at tick 4 and 0 at the end.
const byScenario = `title: by
run: {ticks: 12}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 4}]
  consumers: [{name: c, queue: q, start: 6}]
expect:
  - {metric: queue.q.depth, op: "==", value: 4, by: 4}
  - {metric: queue.q.depth, op: "==", value: 0}
  - {check: exactly_once, consumer: c, by: 10}
`

// TestByJudgesAtItsTick checks by: an expectation is undecided before its
// tick, judged at the end of that tick, keeps that judgement although its
// metric changes later, and the report agrees with the live verdict; the
// "checked" event is traced at that tick.
func TestByJudgesAtItsTick(t *testing.T) {
	s, err := scenario.Load("by.yaml", []byte(byScenario))
	if err != nil {
		t.Fatal(err)
	}
	rec := &sim.Recorder{}
	r, err := New(s, Options{Sinks: []sim.Sink{rec}})
	if err != nil {
		t.Fatal(err)
	}
	for r.Now() < 3 {
		r.Step()
	}
	j := r.Verdict().Judgments[0]
	if j.Standing != NotYet || !strings.Contains(j.Measured, "judged at t=4") {
		t.Fatalf("at t=3: %+v, want not yet, judged at t=4", j)
	}
	r.Step()
	j = r.Verdict().Judgments[0]
	if j.Standing != Holds || j.Text != "queue.q.depth == 4 by t=4" || j.Measured != "4" {
		t.Fatalf("at t=4: %+v, want holds, measured 4", j)
	}
	rep := r.Finish()
	if !rep.Pass {
		t.Fatalf("report fails: %v", rep.Failures())
	}
	if o := rep.Outcomes[0]; !o.Pass || o.Measured != "4" {
		t.Errorf("report judges the by: expectation as %v, want PASS measured 4 (the value at t=4)", o)
	}
	if o := rep.Outcomes[1]; !o.Pass || o.Measured != "0" {
		t.Errorf("report judges the end expectation as %v", o)
	}
	v := r.Verdict()
	if !v.Final || v.Count(Holds) != 3 {
		t.Errorf("final verdict %q", v.Line())
	}
	var checkedAt []int64
	for _, e := range rec.Events() {
		if e.Kind == sim.KindChecked {
			checkedAt = append(checkedAt, int64(e.Tick))
		}
	}
	if len(checkedAt) != 3 || checkedAt[0] != 4 || checkedAt[1] != 10 || checkedAt[2] != 12 {
		t.Errorf("checked events at ticks %v, want [4 10 12]", checkedAt)
	}
}

// TestByBrokenStaysBroken checks that a by: expectation that does not
// hold at its tick fails the report even when it would hold at the end.
func TestByBrokenStaysBroken(t *testing.T) {
	src := strings.Replace(byScenario, `value: 4, by: 4}`, `value: 0, by: 4}`, 1)
	s, err := scenario.Load("by.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := Execute(s, Options{})
	if rep.Pass || len(rep.Failures()) != 1 || rep.Failures()[0].Measured != "4" {
		t.Fatalf("report: pass=%v failures %v, want one failure measured 4", rep.Pass, rep.Failures())
	}
}

// TestByAfterTheEnd checks that a by: tick after the end of the run is an
// error at the field.
func TestByAfterTheEnd(t *testing.T) {
	src := strings.Replace(byScenario, `by: 10}`, `by: 13}`, 1)
	_, err := scenario.Load("by.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "by.yaml:11:") || !strings.Contains(err.Error(), "judged by tick 13 comes after the end of the run (tick 12)") {
		t.Fatalf("err = %v", err)
	}
}
