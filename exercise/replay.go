package exercise

import (
	"fmt"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// Recording runs sol once at seed, firing exactly schedule when it is
// non-nil (a shrunk failure) or drawing from the exercise's plan, and
// returns the run for the player: its trace, each property broken from
// the tick of its first violation, and a narration step at every tick
// with a fault or a failure, its faults told before its failures. Cost:
// one run of the exercise.
func (e *Exercise) Recording(sol Solution, seed uint64, schedule *faults.Schedule) (lab.Recording, error) {
	if err := e.Check(sol); err != nil {
		return lab.Recording{}, err
	}
	o := e.execute(sol, seed, schedule, true)
	rec := lab.Recording{
		Title:       e.Title,
		Lesson:      "exercise " + e.Name,
		Seed:        seed,
		End:         o.End,
		Trace:       o.Trace,
		Description: e.Concept,
	}
	first := map[string]Violation{}
	for _, v := range o.Violations {
		if _, ok := first[v.Prop]; !ok {
			first[v.Prop] = v
		}
	}
	for _, p := range e.Props {
		rec.Goals = append(rec.Goals, p.Title)
		c := lab.RecordedCheck{Text: p.Title, Unjudged: !o.Judged[p.ID]}
		if v, ok := first[p.ID]; ok {
			c.Broken, c.At, c.Why, c.Unjudged = true, v.Tick, v.Text, false
		}
		rec.Checks = append(rec.Checks, c)
	}
	what := "drawn from the exercise's fault plan"
	if schedule != nil {
		what = fmt.Sprintf("with exactly the %d fault(s) the grader shrank the failure to", schedule.Len())
	}
	// The player steps by ticks: a fault and the failure it causes on the
	// same tick (code that runs within one tick) share one step. The text
	// fits two lines of the narration at 80 columns, or the introduction
	// hides the narration's title.
	intro := fmt.Sprintf("Your code on seed %d, %s. Press n to step to each tick with a fault or a failure.", seed, what)
	if len(o.Violations) == 0 {
		intro = fmt.Sprintf("Your code on seed %d, %s: every property holds.", seed, what)
	}
	rec.Steps = append(rec.Steps, lab.RecordedStep{At: 0, Text: intro})
	type at struct {
		tick int64
		text string
	}
	var steps []at
	for _, d := range o.Fired.Decisions {
		steps = append(steps, at{int64(d.Tick), "Fault: " + faultWords(d) + "."})
	}
	for _, v := range o.Violations {
		steps = append(steps, at{int64(v.Tick), "FAIL " + e.prop(v.Prop).Title + ": " + v.Text + "."})
	}
	for i := 1; i < len(steps); i++ {
		for j := i; j > 0 && steps[j].tick < steps[j-1].tick; j-- {
			steps[j], steps[j-1] = steps[j-1], steps[j]
		}
	}
	for _, s := range steps {
		n := len(rec.Steps)
		if last := &rec.Steps[n-1]; int64(last.At) == s.tick && n > 1 {
			last.Text += " " + s.text
			continue
		}
		rec.Steps = append(rec.Steps, lab.RecordedStep{At: sim.Tick(s.tick), Text: s.text, Pause: true})
	}
	return rec, nil
}
