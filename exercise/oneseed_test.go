package exercise

import (
	"strings"
	"testing"
)

// A seed graded alone (check -seed N) that does not exercise a property
// does not fail the check: the line says the seed does not exercise it,
// names seeds that do and how to run the full check. Seed 7 of exercise 2
// has no poison message, so it cannot judge "blocks".
func TestCheckOneSeedNotExercised(t *testing.T) {
	e, _ := Lookup("dead-letter")
	if o := e.execute(dlqModel(), 7, nil, false); o.Judged["blocks"] {
		t.Fatal("seed 7 judges blocks: pick a seed without a poison message")
	}
	var out, errb strings.Builder
	code := MainArgs(dlqModel(), []string{"check", "-seed", "7"}, &out, &errb)
	text := out.String()
	if code != 0 {
		t.Errorf("a correct solution fails check -seed 7: exit %d\n%s%s", code, text, errb.String())
	}
	if strings.Contains(text, "never got that far") {
		t.Errorf("the line blames the code for what the seed does not exercise:\n%s", text)
	}
	for _, want := range []string{"not exercised by seed 7", "go run . check -seed ", "go run . check "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// The seeds it names do exercise the property.
	rep := e.GradeSeed(dlqModel(), 7, nil)
	p := rep.Props[2]
	if p.ID != "blocks" || len(p.ExercisedBy) == 0 {
		t.Fatalf("no seed named for blocks: %+v", p)
	}
	for _, s := range p.ExercisedBy {
		if !e.execute(dlqModel(), s, nil, false).Judged["blocks"] {
			t.Errorf("seed %d is named but does not judge blocks", s)
		}
	}
	// A wrong solution still fails on the one seed.
	if code := MainArgs(dlqFirstFailure(), []string{"check", "-seed", "1"}, &out, &errb); code != 1 {
		t.Errorf("a wrong solution passes check -seed 1: exit %d", code)
	}
}

// Over a range of seeds, a property no seed judged is no pass, even when
// every seed passed: the rule that check -seed relaxes for one seed.
func TestCheckRangeNeverJudged(t *testing.T) {
	e, _ := Lookup("dead-letter")
	rep := e.GradeSeeds(dlqModel(), 7, 1, nil)
	if rep.Passed != 1 || rep.Props[2].Judged != 0 {
		t.Fatalf("seed 7 alone: %+v", rep)
	}
	if rep.Pass() {
		t.Errorf("a range in which no seed judged blocks passes:\n%s", rep.Text(e))
	}
	if !strings.Contains(rep.Text(e), "not every property was judged") {
		t.Errorf("the text does not say why it fails:\n%s", rep.Text(e))
	}
}

// Without a terminal, play names only commands the workspace has: the
// grading of the same seed as text, and the replay written as a cast.
func TestPlayHeadlessHint(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"play", "-seed", "7"}, []string{"go run . check -seed 7", "go run . play -seed 7 -cast replay.cast"}},
		{[]string{"play"}, []string{"go run . check", "go run . play -cast replay.cast"}},
	} {
		var out, errb strings.Builder
		code := MainArgs(dlqModel(), c.args, &out, &errb)
		msg := errb.String()
		if code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", c.args, code, msg)
		}
		for _, want := range append(c.want, "needs a terminal") {
			if !strings.Contains(msg, want) {
				t.Errorf("%v: the message lacks %q:\n%s", c.args, want, msg)
			}
		}
		for _, bad := range []string{"play run", "play list", "FILE|LESSON"} {
			if strings.Contains(msg, bad) {
				t.Errorf("%v: the message suggests %q, which the workspace has no command for:\n%s", c.args, bad, msg)
			}
		}
	}
}
