package lab

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// fullVerdict is Run.Verdict judged afresh, every ledger check by its
// checker's walk over every outcome (judge), with nothing kept: what
// the kept verdict is held to.
func fullVerdict(r *Run) Verdict {
	v := Verdict{Final: r.over, Errors: len(r.errs)}
	for i := range r.s.Expect {
		if i < len(r.judged) && r.judged[i] != nil {
			o := r.judged[i]
			v.Judgments = append(v.Judgments, Judgement{Text: o.Text, Line: o.Line, Col: o.Col,
				Standing: pick(o.Pass, Holds, Broken), Measured: o.Measured})
			continue
		}
		v.Judgments = append(v.Judgments, r.judge(&r.s.Expect[i], v.Final))
	}
	return v
}

// verdictScenarios returns every lesson and valid testdata scenario, and
// the scenarios of lab's and simtest's testdata.
func verdictScenarios(t *testing.T) map[string]*scenario.Scenario {
	all := allScenarios(t)
	for _, glob := range []string{filepath.Join("testdata", "*.yaml"), filepath.Join("..", "simtest", "testdata", "*.yaml")} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			s, err := scenario.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all[f] = s
		}
	}
	return all
}

// tallyChecks are the checkers Tally is held to on every consumer.
var tallyChecks = []func(name string) sim.Checker{
	func(string) sim.Checker { return sim.NoLoss() },
	sim.AtLeastOnce, sim.AtMostOnce, sim.ExactlyOnce, sim.OrderedPerKey,
	func(name string) sim.Checker { return sim.MaxDuplicates(name, 0) },
	func(name string) sim.Checker { return sim.MaxDuplicates(name, 3) },
	func(name string) sim.Checker { return sim.MaxDuplicates(name, -1) },
}

// walkTally counts vs as Tally does: the fixed ones are those settledBy
// settles.
func walkTally(l *sim.Ledger, check, name string, n int, vs []sim.Violation) sim.Tally {
	t := sim.Tally{Count: len(vs), Duplicates: l.Duplicates(name)}
	for _, v := range vs {
		fixed := false
		switch check {
		case "at-most-once", "exactly-once":
			fixed = v.Msg != 0 && l.Effects(v.Msg, v.Consumer) > 1
		case "no-loss", "at-least-once":
			fixed = v.Msg != 0 && v.Consumer != "" && l.LostForGood(v.Msg, v.Consumer)
		case "ordered-per-key":
			fixed = v.Msg != 0
		case "max-duplicates":
			fixed = n >= 0 && (name == "" || l.Consumer(name) != sim.NoConsumer) && t.Duplicates > n
		}
		if fixed {
			if t.Fixed == 0 {
				t.First = v
			}
			t.Fixed++
		}
	}
	return t
}

// checkTallies holds Tally to every checker's Violations on every
// consumer the ledger knows, every consumer, and one it does not.
func checkTallies(t *testing.T, where string, l *sim.Ledger) int {
	t.Helper()
	n := 0
	for _, name := range append(l.Consumers(), "", "nobody") {
		for i, mk := range tallyChecks {
			c := mk(name)
			bound := []int{0, 0, 0, 0, 0, 0, 3, -1}[i]
			got, ok := l.Tally(c.Name(), name, bound)
			if !ok {
				t.Fatalf("%s: Tally does not know %s", where, c.Name())
			}
			want := walkTally(l, c.Name(), name, bound, c.Violations(l))
			if got != want {
				t.Fatalf("%s: %s(%q): kept %+v\nwalk %+v", where, c.Name(), name, got, want)
			}
			vs := c.Violations(l)
			for _, k := range []int{1, MaxViolationExamples, 10} {
				if first := l.FirstViolations(c, name, bound, k); !reflect.DeepEqual(first, vs[:min(k, len(vs))]) && len(first)+len(vs) > 0 {
					t.Fatalf("%s: %s(%q): first %d %+v\nwalk %+v", where, c.Name(), name, k, first, vs[:min(k, len(vs))])
				}
			}
			n++
		}
	}
	return n
}

// TestVerdictKeptEqualsFull plays every lesson and testdata scenario and,
// at random ticks, holds the verdict the run keeps to one judged afresh
// by the checkers' walks, and the ledger's tallies to every checker on
// every consumer.
func TestVerdictKeptEqualsFull(t *testing.T) {
	all := verdictScenarios(t)
	rnd := rand.New(rand.NewPCG(24, 3))
	judged, tallies, fixed := 0, 0, 0
	for _, name := range sortedNames(all) {
		r, err := New(all[name], Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for {
			more := r.Step()
			if rnd.IntN(3) == 0 || !more {
				got, want := r.Verdict(), fullVerdict(r)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s t=%d: kept %+v\nfull %+v", name, r.Now(), got, want)
				}
				judged++
				for _, j := range got.Judgments {
					if !got.Final && j.Standing != NotYet {
						fixed++
					}
				}
				if rnd.IntN(4) == 0 || !more {
					tallies += checkTallies(t, name+" t="+strconv.Itoa(int(r.Now())), r.Env().Ledger)
				}
			}
			if !more || r.Now() >= 2000 {
				break
			}
		}
	}
	if judged < 200 || tallies < 1000 || fixed == 0 {
		t.Fatalf("%d verdicts, %d tallies, %d settled before the end: too few to hold the kept verdict to the walk", judged, tallies, fixed)
	}
}

// TestSessionVerdictKept: a session's verdict, on every frame, after
// going back and forth and after hand actions, is the one judged afresh.
func TestSessionVerdictKept(t *testing.T) {
	all := verdictScenarios(t)
	rnd := rand.New(rand.NewPCG(24, 4))
	frames, acted := 0, 0
	for _, name := range sortedNames(all) {
		d, err := Open(all[name], SessionOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check := func(snap Snapshot, how string) {
			t.Helper()
			if want := fullVerdict(d.run); !reflect.DeepEqual(snap.Verdict, want) {
				t.Fatalf("%s t=%d after %s: kept %+v\nfull %+v", name, d.Now(), how, snap.Verdict, want)
			}
			frames++
		}
		for range 40 {
			switch k := rnd.IntN(10); {
			case k < 6:
				check(d.Step(), "a step")
			case k < 8:
				check(d.Seek(sim.Tick(rnd.IntN(120))), "a seek")
			default:
				for _, a := range []scenario.Action{Redrive(""), SeekEarliest(""), Crash(""), BrokerDown()} {
					if snap, err := d.Do(a); err == nil {
						check(snap, "action "+a.Action)
						acted++
						break
					}
				}
			}
		}
	}
	if frames < 500 || acted == 0 {
		t.Fatalf("%d frames, %d hand actions: too few", frames, acted)
	}
}
