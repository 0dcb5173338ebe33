package lab

import (
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// standingOf plays r to tick at and returns the standing of its
// expectation i, checking that the kept verdict is the one judged afresh.
func standingOf(t *testing.T, r *Run, at int, i int) Judgement {
	t.Helper()
	for int(r.Now()) < at && r.Step() {
	}
	got, want := r.Verdict(), fullVerdict(r)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("t=%d: kept %+v\nfull %+v", r.Now(), got, want)
	}
	return got.Judgments[i]
}

// A loss no later event can undo settles no_loss at the tick of the loss:
// in correlation-ids shipping's ephemeral delivery of m24 fails at t=5 and
// is never redelivered, so "no_loss violated" holds for good from t=5, not
// only at the end. Before the loss it is not yet decided.
func TestFinalLossSettlesNoLossAtItsTick(t *testing.T) {
	s, err := scenario.LoadLesson("correlation-ids")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const noLoss = 1 // {check: no_loss, violated: true}
	if j := standingOf(t, r, 4, noLoss); j.Text != "no_loss violated" || j.Standing != NotYet {
		t.Fatalf("t=4, before the loss: %+v, want no_loss violated not yet", j)
	}
	for _, at := range []int{5, 15} {
		if j := standingOf(t, r, at, noLoss); j.Standing != Holds || !strings.Contains(j.Measured, "m24 lost (handler failed)") {
			t.Fatalf("t=%d: %+v, want no_loss violated to hold for good, naming m24's loss", at, j)
		}
	}
}

// A message still pending may yet be applied: no_loss, violated or not,
// stays undecided until the end however long it waits, and only the end
// decides it.
func TestPendingNeverSettlesNoLossEarly(t *testing.T) {
	src := strings.Replace(undrainedScenario, "  - {check: at_least_once, consumer: orders}\n", "  - {check: no_loss, violated: true}\n", 1)
	s, err := scenario.Load("undrained.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for at := 1; at < 30; at++ {
		for i := range 2 {
			if j := standingOf(t, r, at, i); j.Standing != NotYet {
				t.Fatalf("t=%d: %+v, want not yet", at, j)
			}
		}
	}
	r.Finish()
	if v := r.Verdict(); v.Judgments[0].Standing != Broken || v.Judgments[1].Standing != Holds {
		t.Fatalf("at the end: %+v, want no_loss broken and no_loss violated holding", v.Judgments)
	}
}
