package lab

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/scenario"
)

// targetFails runs s at seed replaying sched and reports whether the
// expectation of want (by index and text) fails in it, whatever else
// fails.
func targetFails(t *testing.T, s *scenario.Scenario, seed uint64, sched faults.Schedule, want Failure) bool {
	t.Helper()
	r, err := New(s, Options{Seed: &seed, Replay: &sched})
	if err != nil {
		t.Fatal(err)
	}
	_, failed := failureLike(r.verdictOnly(), r.Err(), want)
	return failed
}

// assertOneMinimal checks that sh's minimal schedule fails sh's failure
// and that removing any single firing of it makes that failure go away.
func assertOneMinimal(t *testing.T, s *scenario.Scenario, sh *Shrunk) {
	t.Helper()
	if sh.Capped {
		t.Fatalf("seed %d: the shrink stopped at its cap", sh.Seed)
	}
	if !targetFails(t, s, sh.Seed, sh.Minimal, sh.Failure) {
		t.Fatalf("seed %d: the minimal schedule %s does not fail %s", sh.Seed, sh.Minimal.Words(), sh.Failure)
	}
	for i, d := range sh.Minimal.Decisions {
		less := faults.Schedule{Decisions: slices.Delete(slices.Clone(sh.Minimal.Decisions), i, i+1)}
		if targetFails(t, s, sh.Seed, less, sh.Failure) {
			t.Errorf("seed %d: without %s the schedule %s still fails %s: not 1-minimal", sh.Seed, d.Words(), less.Words(), sh.Failure)
		}
	}
}

// The README's scenario at seed 18 fails ledger.redriven == 3 first; its
// shrink must keep that expectation failing, not the whole list of
// failures: without the crash after the effect, duplicate_effects == 1
// fails too, earlier in the file, and the candidate still reproduces.
func TestShrinkKeepsTheTargetExpectation(t *testing.T) {
	s, src := readmeScenario(t)
	first, failed, err := Probe(s, 18, Options{})
	if err != nil || !failed || first.Text != "ledger.redriven == 3" {
		t.Fatalf("seed 18 of the README scenario: %v %v %v", first, failed, err)
	}
	sh, err := Shrink(s, 18, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Failure.Expect != first.Expect || sh.Failure.Text != first.Text || sh.Failure.Line != first.Line {
		t.Fatalf("shrunk for %v, the seed failed %v", sh.Failure, first)
	}
	for _, d := range sh.Minimal.Decisions {
		if d.Point == "consumer.crash_after_effect" {
			t.Errorf("the minimal schedule keeps %s, which ledger.redriven does not need: %s", d.Words(), sh.Minimal.Words())
		}
	}
	assertOneMinimal(t, s, sh)
	data, err := MinFile(s, sh, src, "orders.min.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !strings.Contains(string(data), "# It fails "+sh.Failure.Text+": "+sh.Failure.Detail+"\n") {
		t.Errorf("the header does not name the failure shrunk for (%s):\n%s", sh.Failure, data)
	}
	// The written file fails the expectation, and deleting any one of its
	// rules makes the expectation hold.
	m, err := scenario.Load("orders.min.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Faults) != sh.Minimal.Len() {
		t.Fatalf("the reproducer has %d rules for %d firings", len(m.Faults), sh.Minimal.Len())
	}
	for i := range m.Faults {
		less := *m
		less.Faults = slices.Delete(slices.Clone(m.Faults), i, i+1)
		rep, err := Execute(&less, Options{})
		if f, failed := failureLike(rep, err, sh.Failure); failed {
			t.Errorf("the reproducer without rule %s still fails %s", m.Faults[i].Name, f)
		}
	}
}

// Shrinking is 1-minimal for the expectation it shrinks for, on several
// scenarios and seeds, and gives the same result when repeated.
func TestShrinkOneMinimal(t *testing.T) {
	readme, _ := readmeScenario(t)
	load := func(name string) *scenario.Scenario {
		s, err := scenario.LoadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	billing := load(naiveBilling)
	slow := load("../scenario/testdata/explore/slow-instances.yaml")
	for _, c := range []struct {
		name  string
		s     *scenario.Scenario
		seeds []uint64
	}{
		{"readme", readme, []uint64{18, 23, 30, 41, 61}},
		{"naive-billing", billing, []uint64{5}},
		{"slow-instances", slow, []uint64{2252}},
	} {
		for _, seed := range c.seeds {
			sh, err := Shrink(c.s, seed, nil)
			if err != nil {
				t.Fatalf("%s seed %d: %v", c.name, seed, err)
			}
			t.Logf("%s seed %d: %s; %d firings -> %d in %d runs", c.name, seed, sh.Failure, sh.Fired.Len(), sh.Minimal.Len(), sh.Runs)
			assertOneMinimal(t, c.s, sh)
			again, err := Shrink(c.s, seed, nil)
			if err != nil || !reflect.DeepEqual(sh, again) {
				t.Errorf("%s seed %d: a second shrink gave %+v (%v), the first %+v", c.name, seed, again, err, sh)
			}
		}
	}
}

// failureLike finds the failure shrunk for among all of a run's failures:
// an expectation by index and text, a runtime error by its words.
func TestFailureLike(t *testing.T) {
	rep := &Report{
		Outcomes: []Outcome{
			{Text: "ledger.duplicate_effects == 1", Line: 3, Col: 5, Measured: "0"},
			{Text: "ledger.redriven == 3", Line: 4, Col: 5, Measured: "4"},
			{Text: "queue.orders-dlq.depth == 0", Line: 5, Col: 5, Pass: true, Measured: "0"},
		},
		Errors: []scenario.Error{
			{File: "x.yaml", Line: 9, Col: 3, Msg: "redrive: queue q has no dead letters"},
			{File: "x.yaml", Line: 12, Col: 3, Msg: "run over its budget of 200 ticks"},
		},
	}
	redriven := Failure{Expect: 1, Text: "ledger.redriven == 3", Line: 40, Col: 5, Detail: "measured 5"}
	budget := Failure{Expect: -1, Text: "runtime error", Detail: "x.yaml:7:3: run over its budget of 100 ticks"}
	for _, c := range []struct {
		name string
		want Failure
		ok   bool
		got  Failure
	}{
		{"a later expectation that fails", redriven, true, Failure{Expect: 1, Text: "ledger.redriven == 3", Line: 4, Col: 5, Detail: "measured 4"}},
		{"an expectation that holds", Failure{Expect: 2, Text: "queue.orders-dlq.depth == 0"}, false, Failure{}},
		{"an expectation of another text", Failure{Expect: 1, Text: "ledger.redriven == 4"}, false, Failure{}},
		{"an expectation past the end", Failure{Expect: 7, Text: "ledger.redriven == 3"}, false, Failure{}},
		{"the second runtime error", budget, true, Failure{Expect: -1, Text: "runtime error", Detail: "x.yaml:12:3: run over its budget of 200 ticks"}},
		{"a runtime error not made", Failure{Expect: -1, Text: "runtime error", Detail: "x.yaml:1:1: crash: no consumer z"}, false, Failure{}},
	} {
		got, ok := failureLike(rep, nil, c.want)
		if ok != c.ok || got != c.got {
			t.Errorf("%s: got %+v %v, want %+v %v", c.name, got, ok, c.got, c.ok)
		}
	}
	// A run that could not be built has only its error.
	err := scenario.ErrorList("x.yaml", []scenario.Error{{File: "x.yaml", Line: 2, Col: 1, Msg: "bad"}, rep.Errors[1]})
	if got, ok := failureLike(nil, err, budget); !ok || got.Detail != "x.yaml:12:3: run over its budget of 200 ticks" {
		t.Errorf("from the error list: %+v %v", got, ok)
	}
	if _, ok := failureLike(nil, nil, redriven); ok {
		t.Error("no report fails an expectation")
	}
}

// A runtime error shrinks and gets a reproducer too: its words name the
// file it was loaded as, and the reproducer has another name, which must
// not count as another failure. Here a timeline crash of member w1 fails
// when a fault crashed w1 just before it.
func TestMinFileRuntimeError(t *testing.T) {
	_, src, err := scenario.Source("../scenario/lessons/crash-before-commit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "  - {name: crash-once, point: consumer.crash_before_commit, match: {consumer: w1}, nth: 2}\n", "", 1)
	text = strings.Replace(text, "probability: 0.1, from: 6}", "probability: 0.3}\ntimeline:\n  - {at: 8, action: crash, member: w1}\n", 1)
	s, err := scenario.Load("rt.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	first, failed, err := Probe(s, 2, Options{})
	if err != nil || !failed || first.Expect != -1 || !strings.Contains(first.Detail, `member "w1" is not active`) {
		t.Fatalf("seed 2: %v %v %v", first, failed, err)
	}
	sh, err := Shrink(s, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sh.Minimal.Len() != 1 || sh.Minimal.Decisions[0].Point != "consumer.crash_before_commit" {
		t.Fatalf("minimal schedule %s", sh.Minimal.Words())
	}
	assertOneMinimal(t, s, sh)
	data, err := MinFile(s, sh, []byte(text), "rt.min.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	// Another runtime error is still told apart.
	other := *sh
	other.Failure.Detail = "rt.yaml:33:5: action crash: lab: runtime error: member \"audit\" is not active in its group"
	if _, err := MinFile(s, &other, []byte(text), "rt.min.yaml"); !errors.Is(err, ErrShrink) || !strings.Contains(err.Error(), "the reproducer does not fail") {
		t.Errorf("a reproducer of another runtime error passed the check: %v", err)
	}
}
