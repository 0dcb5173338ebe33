package scenario

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestVerdictAgreesWithReport plays every lesson to the end and checks that
// the live verdict says what the report says, expectation by expectation,
// and that before the end no expectation is called broken that the report
// passes... unless the lesson breaks it on purpose and mends it later.
func TestVerdictAgreesWithReport(t *testing.T) {
	for _, l := range Lessons() {
		t.Run(l.Name, func(t *testing.T) {
			s, err := LoadLesson(l.Name)
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.NewRun(Options{})
			if err != nil {
				t.Fatal(err)
			}
			for r.Step() {
				v := r.Verdict()
				if v.Final != r.Done() {
					t.Fatalf("t=%d: Final %v, Done %v", r.Now(), v.Final, r.Done())
				}
			}
			v := r.Verdict()
			if !v.Final {
				t.Fatal("the verdict at the end is not final")
			}
			rep := r.Finish()
			if len(v.Judgments) != len(rep.Outcomes) {
				t.Fatalf("%d judgements, %d outcomes", len(v.Judgments), len(rep.Outcomes))
			}
			for i, j := range v.Judgments {
				o := rep.Outcomes[i]
				if j.Text != o.Text || (j.Standing == Holds) != o.Pass || j.Standing == NotYet {
					t.Errorf("%s: standing %v, report pass %v", j.Text, j.Standing, o.Pass)
				}
			}
			if v.Pass() != rep.Pass {
				t.Errorf("verdict pass %v, report pass %v", v.Pass(), rep.Pass)
			}
		})
	}
}

func TestVerdictPoisonDLQ(t *testing.T) {
	s, err := LoadLesson("poison-dlq")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.NewRun(Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := r.Verdict()
	if start.Final || start.Count(NotYet) == 0 {
		t.Errorf("at t=0: %s", start.Line())
	}
	if !strings.HasPrefix(start.Line(), "so far ") {
		t.Errorf("at t=0 the line is %q", start.Line())
	}
	for r.Step() {
	}
	if got := r.Verdict().Line(); got != "PASS 6 of 6 expectations hold" {
		t.Errorf("at the end: %q", got)
	}
	// Verdict changes nothing: no event, and the run's report is the same.
	if n := r.Env().Trace.Len(); r.Verdict().Line() == "" || r.Env().Trace.Len() != n {
		t.Error("Verdict emitted events")
	}
}

func TestVerdictLineNamesBroken(t *testing.T) {
	v := Verdict{Final: true, Judgments: []Judgement{{Text: "no_loss", Standing: Holds}, {Text: "exactly_once(billing)", Standing: Broken}}}
	if got, want := v.Line(), "FAIL 1 of 2 expectations hold; broken: exactly_once(billing)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (Verdict{}).Line(); got != "no expectations to judge" {
		t.Errorf("empty: %q", got)
	}
}

// TestVerdictBrokenIsSettled plays every lesson and every variant of it
// and checks at every tick that an expectation called broken before the
// end is broken at the end too, and that a violated-on-purpose check
// called holding before the end still holds at the end: before the end
// only a settled violation decides.
func TestVerdictBrokenIsSettled(t *testing.T) {
	for _, l := range Lessons() {
		base, err := LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{""}
		for _, v := range base.Variants {
			names = append(names, v.Name)
		}
		for _, variant := range names {
			t.Run(l.Name+"/"+variant, func(t *testing.T) {
				s := base
				if variant != "" {
					if s, err = base.Variant(variant); err != nil {
						t.Fatal(err)
					}
				}
				r, err := s.NewRun(Options{})
				if err != nil {
					t.Fatal(err)
				}
				type seen struct {
					tick sim.Tick
					s    Standing
					what string
				}
				decided := map[int]seen{} // first decided standing per expectation
				note := func() {
					for i, j := range r.Verdict().Judgments {
						if _, ok := decided[i]; ok || j.Standing == NotYet || r.Done() {
							continue
						}
						if j.Standing == Broken || s.Expect[i].Violated {
							decided[i] = seen{r.Now(), j.Standing, j.Measured}
						}
					}
				}
				note()
				for r.Step() {
					note()
				}
				end := r.Verdict()
				for i, d := range decided {
					if got := end.Judgments[i].Standing; got != d.s {
						t.Errorf("%s: %v at t=%d (%s), %v at the end", end.Judgments[i].Text, d.s, d.tick, d.what, got)
					}
				}
			})
		}
	}
}

// TestVerdictNotYetBeforeDelivery is the dual-write intro: at t=0 nothing
// has been delivered, so no check can be broken yet.
func TestVerdictNotYetBeforeDelivery(t *testing.T) {
	s, err := LoadLesson("dual-write")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.NewRun(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Verdict(); v.Count(Broken) != 0 || strings.Contains(v.Line(), "broken") {
		t.Errorf("at t=0: %s", v.Line())
	}
}

// TestVerdictDoubleEffectIsBrokenAtOnce: an effect applied twice settles
// exactly_once(naive) as soon as it happens, long before the end (the
// lesson breaks it on purpose, so settled reads "holds").
func TestVerdictDoubleEffectIsBrokenAtOnce(t *testing.T) {
	s, err := LoadLesson("idempotent-consumer")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.NewRun(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for r.Step() {
		for _, j := range r.Verdict().Judgments {
			if j.Text == "exactly_once(naive) violated" && j.Standing == Holds && strings.Contains(j.Measured, "effect applied") && !r.Done() {
				return
			}
		}
	}
	t.Error("exactly_once(naive) violated did not hold on a double effect before the end")
}
