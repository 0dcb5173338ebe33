package exercise

import (
	"fmt"
	"strings"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sweep"
)

// DefaultSeeds is how many seeds Grade runs when asked for 0.
const DefaultSeeds = 500

// PropResult is one property over every seed of a grading.
type PropResult struct {
	Property
	// Failed counts the seeds that broke the property.
	Failed int `json:"failed"`
	// Judged counts the seeds on which the property had something to
	// judge; a property never judged is not a pass.
	Judged int `json:"judged"`
	// ExercisedBy, in a grading of one seed alone (Report.Only) that did
	// not judge the property, are the lowest seeds from 1 to DefaultSeeds
	// (at most maxExercisedBy) that do; empty when none does.
	ExercisedBy []uint64 `json:"exercised_by,omitempty"`
	// First is the lowest seed that broke it and its first violation.
	FirstSeed uint64     `json:"first_seed,omitempty"`
	First     *Violation `json:"first,omitempty"`
}

// Shrunk is the lowest failing seed, shrunk: the property it breaks
// first, the fault decisions of its own run and the fewest of them that
// still break that property.
type Shrunk struct {
	Seed uint64 `json:"seed"`
	Prop string `json:"prop"`
	// Fired counts the fault decisions of the seed's own run.
	Fired int `json:"fired"`
	// Minimal is the 1-minimal schedule, as its own replay recorded it.
	Minimal faults.Schedule `json:"-"`
	// Faults are Minimal in words.
	Faults []string `json:"faults"`
	// Violations are those of the minimal run.
	Violations []Violation `json:"violations"`
	// Runs counts the runs the shrinking took.
	Runs int `json:"runs"`
}

// Report is the grading of one solution.
type Report struct {
	Exercise string `json:"exercise"`
	// Student names the workspace (its directory), when known.
	Student string `json:"student,omitempty"`
	Seeds   int    `json:"seeds"`
	// Only is the seed when one seed was graded alone (GradeSeed, check
	// -seed N), 0 for a grading over a range of seeds. A property that
	// seed does not exercise is then not held against the solution:
	// another seed exercises it, and the full check judges it.
	Only uint64 `json:"only_seed,omitempty"`
	// Passed counts the seeds on which every property held.
	Passed int `json:"passed"`
	// Faults counts the fault decisions the passing seeds survived.
	Faults int          `json:"faults_survived"`
	Props  []PropResult `json:"properties"`
	Shrunk *Shrunk      `json:"shrunk,omitempty"`
	// Error is set when the solution could not be graded at all.
	Error string `json:"error,omitempty"`
}

// Pass reports whether every seed passed and every property was judged
// on some seed. A grading of one seed alone (Only) needs no property
// judged: a seed exercises only the faults it draws.
func (r *Report) Pass() bool {
	if r.Error != "" || r.Seeds == 0 || r.Passed != r.Seeds {
		return false
	}
	if r.Only != 0 {
		return true
	}
	for _, p := range r.Props {
		if p.Judged == 0 {
			return false
		}
	}
	return true
}

// maxExercisedBy is how many seeds GradeSeed names for a property the
// seed does not exercise.
const maxExercisedBy = 3

// GradeSeed grades sol on seed alone (seed 1 when 0) and shrinks it when
// it fails, as GradeSeeds does for one seed, and marks the report as the
// grading of that seed (Report.Only). For each property the seed does not
// exercise it names the lowest seeds from 1 to DefaultSeeds that do
// (PropResult.ExercisedBy). onSeed, when non-nil, is called before every
// run, the search's included. Cost: the seed's run and its shrinking,
// plus up to DefaultSeeds runs when a property is not exercised.
func (e *Exercise) GradeSeed(sol Solution, seed uint64, onSeed func(seed uint64)) *Report {
	if seed == 0 {
		seed = 1
	}
	rep := e.GradeSeeds(sol, seed, 1, onSeed)
	rep.Only = seed
	if rep.Error != "" {
		return rep
	}
	want := 0
	for _, p := range rep.Props {
		if p.Judged == 0 {
			want++
		}
	}
	for s := uint64(1); s <= DefaultSeeds && want > 0; s++ {
		if s == seed {
			continue
		}
		if onSeed != nil {
			onSeed(s)
		}
		o := e.execute(sol, s, nil, false)
		for i := range rep.Props {
			p := &rep.Props[i]
			if p.Judged == 0 && len(p.ExercisedBy) < maxExercisedBy && o.Judged[p.ID] {
				p.ExercisedBy = append(p.ExercisedBy, s)
				if len(p.ExercisedBy) == maxExercisedBy {
					want--
				}
			}
		}
	}
	return rep
}

// Grade runs sol on seeds 1..seeds (DefaultSeeds when seeds <= 0), counts
// per property the seeds that broke it, and shrinks the lowest failing
// seed to the fewest fault decisions that still break its first broken
// property. It is deterministic. Cost: one run per seed, plus O(n²) runs
// at worst (O(log n) for one culprit) to shrink n fired decisions.
func (e *Exercise) Grade(sol Solution, seeds int) *Report { return e.GradeWith(sol, seeds, nil) }

// GradeWith is Grade that calls onSeed, when non-nil, before each seed's
// run, so that a driver can name the seed a student's code hangs on.
func (e *Exercise) GradeWith(sol Solution, seeds int, onSeed func(seed uint64)) *Report {
	return e.GradeSeeds(sol, 1, seeds, onSeed)
}

// GradeSeeds is GradeWith over the seeds first..first+seeds-1, so that
// any one seed can be graded (and shrunk) again alone.
func (e *Exercise) GradeSeeds(sol Solution, first uint64, seeds int, onSeed func(seed uint64)) *Report {
	if seeds <= 0 {
		seeds = DefaultSeeds
	}
	if first == 0 {
		first = 1
	}
	rep := &Report{Exercise: e.Name, Seeds: seeds}
	for _, p := range e.Props {
		rep.Props = append(rep.Props, PropResult{Property: p})
	}
	if err := e.Check(sol); err != nil {
		rep.Error = err.Error()
		return rep
	}
	// One job: the student's code need not be safe for concurrent use,
	// and the probe folds each seed into rep in seed order.
	var failed *Outcome
	_, err := sweep.Run(sweep.Config{Seeds: sweep.Seeds{From: first, Count: uint64(seeds)}, Jobs: 1},
		func() (sweep.Probe[struct{}], error) {
			return func(s uint64) (struct{}, bool, error) {
				if onSeed != nil {
					onSeed(s)
				}
				o := e.execute(sol, s, nil, false)
				rep.add(o)
				if len(o.Violations) > 0 && failed == nil {
					failed = o
				}
				return struct{}{}, len(o.Violations) > 0, nil
			}, nil
		})
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	if failed != nil {
		rep.Shrunk = e.shrink(sol, failed)
	}
	return rep
}

// add counts one seed's outcome o into the report.
func (r *Report) add(o *Outcome) {
	for i := range r.Props {
		if o.Judged[r.Props[i].ID] {
			r.Props[i].Judged++
		}
	}
	if len(o.Violations) == 0 {
		r.Passed++
		r.Faults += o.Fired.Len() + o.Fired.Omitted
		return
	}
	for i := range r.Props {
		for _, v := range o.Violations {
			if v.Prop != r.Props[i].ID {
				continue
			}
			r.Props[i].Failed++
			if r.Props[i].First == nil {
				v := v
				r.Props[i].FirstSeed, r.Props[i].First = o.Seed, &v
			}
			break
		}
	}
}

// shrink reduces the fault decisions of the failing outcome o to a
// 1-minimal schedule that still breaks the property o broke first, with
// sweep.Shrink (faults.Minimize), starting from the decisions o recorded.
func (e *Exercise) shrink(sol Solution, o *Outcome) *Shrunk {
	prop := o.Violations[0].Prop
	again := o
	res, err := sweep.Shrink(sweep.ShrinkConfig{Fired: &o.Fired, NoVerify: true},
		func(_ sweep.Step, s *faults.Schedule) (faults.Schedule, bool, error) {
			again = e.execute(sol, o.Seed, s, false)
			return again.Fired, again.Failed(prop), nil
		})
	if err != nil {
		// Cannot happen for a deterministic harness unless more faults
		// fired than a schedule holds; keep the seed's own run rather than
		// claim a schedule that does not fail.
		again = o
	}
	sh := &Shrunk{Seed: o.Seed, Prop: prop, Fired: o.Fired.Len(), Runs: res.Runs,
		Minimal: again.Fired, Violations: again.Violations}
	for _, d := range sh.Minimal.Decisions {
		sh.Faults = append(sh.Faults, d.Words())
	}
	return sh
}

// Story tells the shrunk run as a few lines of ticks: each fault that
// fired and each property it broke, in tick order.
func (sh *Shrunk) Story(e *Exercise) []string {
	type line struct {
		tick int64
		text string
	}
	var ls []line
	for _, d := range sh.Minimal.Decisions {
		ls = append(ls, line{int64(d.Tick), "fault  " + faultWords(d)})
	}
	for _, v := range sh.Violations {
		ls = append(ls, line{int64(v.Tick), "FAIL   " + v.Text})
	}
	// Stable insertion sort by tick: faults before failures of a tick.
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].tick < ls[j-1].tick; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = fmt.Sprintf("t=%-3d %s", l.tick, l.text)
	}
	return out
}

// exercisedBy says which seeds exercise a property one seed did not, and
// how to grade them.
func exercisedBy(seeds []uint64) string {
	switch len(seeds) {
	case 0:
		return fmt.Sprintf("no seed from 1 to %d does either (go run . check grades them all)", DefaultSeeds)
	case 1:
		return fmt.Sprintf("seed %d does: go run . check -seed %d, or go run . check for all %d seeds", seeds[0], seeds[0], DefaultSeeds)
	}
	words := make([]string, len(seeds))
	for i, s := range seeds {
		words[i] = fmt.Sprint(s)
	}
	list := strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
	return fmt.Sprintf("seeds %s do: go run . check -seed %d, or go run . check for all %d seeds", list, seeds[0], DefaultSeeds)
}

// faultWords says what a decision did, in the words of the exercises.
func faultWords(d faults.Decision) string {
	what := map[faults.Point]string{
		faults.WriterCrashAfterCommit:   "the process crashed right after a commit",
		faults.BrokerUnavailable:        "the broker was unavailable",
		faults.RelayCrashAfterPublish:   "the relay crashed right after a publish",
		faults.HandlerPoison:            "a poison message: its handler fails on every try",
		faults.HandlerTransient:         "the handler failed once (a transient error)",
		faults.HandlerPermanent:         "the handler failed for good (a permanent error)",
		faults.ConsumerCrashAfterEffect: "the consumer crashed right after a commit, before its ack",
		faults.BrokerDuplicate:          "the broker delivered a message twice",
		faults.MemberCrash:              "a group member crashed; its partitions were rebalanced",
		faults.SubscriberOffline:        "a subscriber went offline",
	}[d.Point]
	if what == "" {
		what = string(d.Point)
	}
	s := what + " (" + string(d.Point) + ", rule " + d.Rule
	if d.Key != "" {
		s += ", key " + d.Key
	}
	return s + ")"
}

// Text is the report for a person: one line per property, then the
// shrunk failure as a story, or the seeds and faults a pass survived.
func (r *Report) Text(e *Exercise) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exercise %d, %s: %s\n", e.Number, e.Name, e.Title)
	if r.Error != "" {
		fmt.Fprintf(&b, "cannot grade: %s\n", r.Error)
		return b.String()
	}
	for _, p := range r.Props {
		if p.Failed == 0 && p.Judged == 0 && r.Only != 0 {
			fmt.Fprintf(&b, "  --    %s: not exercised by seed %d; %s\n", p.Title, r.Only, exercisedBy(p.ExercisedBy))
			continue
		}
		if p.Failed == 0 && p.Judged == 0 {
			fmt.Fprintf(&b, "  --    %s: not judged, your code never got that far\n", p.Title)
			continue
		}
		if p.Failed == 0 {
			fmt.Fprintf(&b, "  ok    %s\n", p.Title)
			continue
		}
		fmt.Fprintf(&b, "  FAIL  %s: %d of %d seeds; seed %d: %s\n", p.Title, p.Failed, r.Seeds, p.FirstSeed, p.First.Text)
	}
	if r.Pass() && r.Only != 0 {
		fmt.Fprintf(&b, "PASS: seed %d, surviving %d injected faults\n", r.Only, r.Faults)
		for _, p := range r.Props {
			if p.Judged == 0 {
				fmt.Fprintf(&b, "Seed %d does not exercise every property; go run . check grades all %d seeds.\n", r.Only, DefaultSeeds)
				break
			}
		}
		return b.String()
	}
	if r.Pass() {
		fmt.Fprintf(&b, "PASS: %d of %d seeds, surviving %d injected faults\n", r.Passed, r.Seeds, r.Faults)
		return b.String()
	}
	if r.Passed == r.Seeds {
		fmt.Fprintf(&b, "FAIL: every seed passed, but not every property was judged\n")
		return b.String()
	}
	fmt.Fprintf(&b, "FAIL: %d of %d seeds passed\n", r.Passed, r.Seeds)
	if sh := r.Shrunk; sh != nil {
		n := sh.Minimal.Len()
		// A failure with no fault needed is told by what was taken away:
		// the faults its own run drew, all of them, and it still failed.
		switch {
		case n == 0 && sh.Fired == 0:
			fmt.Fprintf(&b, "\nSeed %d fails, and no fault fired in its run:\n", sh.Seed)
		case n == 0 && sh.Fired == 1:
			fmt.Fprintf(&b, "\nSeed %d fails even with the one fault that fired in its run removed; your code fails without any fault:\n", sh.Seed)
		case n == 0:
			fmt.Fprintf(&b, "\nSeed %d fails even with all %d of the faults that fired in its run removed; your code fails without any fault:\n", sh.Seed, sh.Fired)
		default:
			fmt.Fprintf(&b, "\nSeed %d, shrunk from %d faults to %d (%d runs):\n", sh.Seed, sh.Fired, n, sh.Runs)
		}
		for _, l := range sh.Story(e) {
			b.WriteString("  " + l + "\n")
		}
		if n == 0 {
			fmt.Fprintf(&b, "Replay it in the player: go run . play   (seed %d, no fault needed)\n", sh.Seed)
		} else {
			fmt.Fprintf(&b, "Replay it in the player: go run . play   (seed %d, exactly these faults)\n", sh.Seed)
		}
	}
	return b.String()
}
