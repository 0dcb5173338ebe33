package lab

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// runLesson runs lesson name to the end (with seed when non-nil) and
// returns its text trace, its report and the finished run.
func runLesson(t *testing.T, name string, seed *uint64) ([]byte, *Report, *Run) {
	trace, rep, r, _ := runLessonCount(t, name, seed)
	return trace, rep, r
}

// runLessonCount is runLesson that also counts the narration events.
func runLessonCount(t *testing.T, name string, seed *uint64) ([]byte, *Report, *Run, int) {
	t.Helper()
	s, err := scenario.LoadLesson(name)
	if err != nil {
		t.Fatalf("LoadLesson(%s):\n%v", name, err)
	}
	var buf bytes.Buffer
	steps := 0
	count := sim.SinkFunc(func(e *sim.Event) {
		if e.Kind == sim.KindNarration {
			steps++
		}
	})
	r, err := New(s, Options{Seed: seed, Sinks: []sim.Sink{sim.NewTextWriter(&buf), count}})
	if err != nil {
		t.Fatalf("New(%s):\n%v", name, err)
	}
	rep := r.Finish()
	if err := r.Err(); err != nil {
		t.Fatalf("%s: runtime errors:\n%v", name, err)
	}
	return buf.Bytes(), rep, r, steps
}

// TestLessonsPass runs every lesson with its own seed: every expectation
// holds, every narration step is shown before the run ends, and the text
// trace matches testdata/lessons/NAME.golden (rewrite with -update).
func TestLessonsPass(t *testing.T) {
	for _, l := range scenario.Lessons() {
		t.Run(l.Name, func(t *testing.T) {
			trace, rep, r, steps := runLessonCount(t, l.Name, nil)
			if !rep.Pass {
				var b strings.Builder
				_ = rep.WriteText(&b)
				t.Errorf("the lesson's expectations do not hold:\n%s", b.String())
			}
			if want := len(r.Scenario().Narration); steps != want {
				t.Errorf("%d of %d narration steps were shown; the run ended at tick %d", steps, want, rep.Ticks)
			}
			golden := filepath.Join("testdata", "lessons", l.Name+".golden")
			if *update {
				if err := os.WriteFile(golden, trace, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(trace, want) {
				t.Errorf("trace differs from %s (run with -update and inspect the diff):\n%s", golden, firstDiff(want, trace))
			}
		})
	}
}

// firstDiff describes the first line where got differs from want.
func firstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n want %q\n got  %q", i+1, w, g)
		}
	}
	return "(no line differs)"
}

// TestLessonsDeterministic runs every lesson under GOMAXPROCS 1, 2 and 8
// and requires byte-identical traces.
func TestLessonsDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, l := range scenario.Lessons() {
		t.Run(l.Name, func(t *testing.T) {
			runtime.GOMAXPROCS(1)
			a, _, _ := runLesson(t, l.Name, nil)
			for _, procs := range []int{2, 8} {
				runtime.GOMAXPROCS(procs)
				b, _, _ := runLesson(t, l.Name, nil)
				if !bytes.Equal(a, b) {
					t.Errorf("traces differ between GOMAXPROCS 1 and %d:\n%s", procs, firstDiff(a, b))
				}
			}
		})
	}
}

// probabilistic reports whether s has a fault rule that fires by chance.
func probabilistic(s *scenario.Scenario) bool {
	for _, f := range s.Faults {
		if f.Probability > 0 && f.Probability < 1 {
			return true
		}
	}
	return false
}

// TestLessonsSeed checks that several lessons use probabilistic faults and
// that another seed changes the trace of every one of them.
func TestLessonsSeed(t *testing.T) {
	n := 0
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !probabilistic(s) {
			continue
		}
		n++
		t.Run(l.Name, func(t *testing.T) {
			a, _, _ := runLesson(t, l.Name, nil)
			other := s.Seed + 1
			b, _, _ := runLesson(t, l.Name, &other)
			if bytes.Equal(a, b) {
				t.Errorf("seed %d and seed %d give the same trace", s.Seed, other)
			}
		})
	}
	if n < 5 {
		t.Errorf("%d lessons use probabilistic faults, want at least 5", n)
	}
}

// TestLessonsPassAnySeed runs every lesson with other seeds: the faults
// fire differently, but each lesson's expectations are written to hold
// whatever the seed, so a player can restart a lesson with a new one.
func TestLessonsPassAnySeed(t *testing.T) {
	seeds := 10
	if testing.Short() {
		seeds = 2
	}
	for _, l := range scenario.Lessons() {
		t.Run(l.Name, func(t *testing.T) {
			for i := 1; i <= seeds; i++ {
				seed := uint64(1000 + i)
				if _, rep, _ := runLesson(t, l.Name, &seed); !rep.Pass {
					var b strings.Builder
					_ = rep.WriteText(&b)
					t.Errorf("seed %d:\n%s", seed, b.String())
				}
			}
		})
	}
}

// TestLessonsShowTheirPoint checks, on the ledger of each lesson's run,
// the facts the lessons teach. Most are also in the lessons' own expect
// blocks (a loss by cause, a guarantee broken on purpose with violated:
// true, per-consumer counts); what those cannot state stays here only:
// which consumer a cause hit, that two consumers saw the same number of
// duplicates, and the key whose order breaks.
func TestLessonsShowTheirPoint(t *testing.T) {
	ledger := func(t *testing.T, name string) *sim.Ledger {
		_, _, r := runLesson(t, name, nil)
		return r.Env().Ledger
	}
	causes := func(l *sim.Ledger) map[string]int {
		m := map[string]int{}
		for _, x := range l.Losses() {
			m[x.Consumer+"/"+string(x.Cause)]++
		}
		return m
	}
	broken := func(t *testing.T, l *sim.Ledger, c sim.Checker, want bool) {
		t.Helper()
		v := c.Violations(l)
		if want && len(v) == 0 {
			t.Errorf("%s holds; the lesson shows it broken", c.Name())
		}
		if !want && len(v) > 0 {
			t.Errorf("%s: %v", c.Name(), v)
		}
	}
	t.Run("dual-write", func(t *testing.T) {
		l := ledger(t, "dual-write")
		if got := causes(l); len(got) != 1 || got["/"+string(sim.CauseDualWrite)] != 1 {
			t.Errorf("losses %v, want one, caused by the dual write", got)
		}
		broken(t, l, sim.NoLoss(), true)
	})
	t.Run("outbox-relay", func(t *testing.T) {
		l := ledger(t, "outbox-relay")
		broken(t, l, sim.AtMostOnce("billing-in"), true)
		broken(t, l, sim.NoLoss(), false)
	})
	t.Run("idempotent-consumer", func(t *testing.T) {
		l := ledger(t, "idempotent-consumer")
		if a, b := l.Duplicates("naive-in"), l.Duplicates("safe-in"); a == 0 || a != b {
			t.Errorf("duplicate deliveries naive %d, safe %d: want the same, above zero", a, b)
		}
		if d := l.DuplicateEffects("naive-in"); d != l.Duplicates("naive-in") {
			t.Errorf("naive applied %d duplicate effects for %d duplicates", d, l.Duplicates("naive-in"))
		}
		broken(t, l, sim.ExactlyOnce("naive-in"), true)
		broken(t, l, sim.ExactlyOnce("safe-in"), false)
	})
	t.Run("visibility-timeout", func(t *testing.T) {
		l := ledger(t, "visibility-timeout")
		broken(t, l, sim.AtMostOnce("render-short"), true)
		broken(t, l, sim.ExactlyOnce("render-long"), false)
	})
	t.Run("offline-subscriber", func(t *testing.T) {
		l := ledger(t, "offline-subscriber")
		broken(t, l, sim.ExactlyOnce("analytics"), false)
		broken(t, l, sim.NoLoss(), false)
	})
	t.Run("partition-order", func(t *testing.T) {
		l := ledger(t, "partition-order")
		broken(t, l, sim.OrderedPerKey("billing"), true)
		broken(t, l, sim.OrderedPerKey("billing-fixed"), false)
		for _, v := range sim.OrderedPerKey("billing").Violations(l) {
			if v.Key != "kunde-A" {
				t.Errorf("order broken for %s; the narration names kunde-A: %v", v.Key, v)
			}
		}
	})
	t.Run("crash-before-commit", func(t *testing.T) {
		l := ledger(t, "crash-before-commit")
		broken(t, l, sim.AtMostOnce("ledger-writer"), true)
		broken(t, l, sim.NoLoss(), false)
	})
	t.Run("retention-lag", func(t *testing.T) {
		l := ledger(t, "retention-lag")
		if got := causes(l); len(got) != 1 || got["reports/"+string(sim.CauseRetention)] != 11 {
			t.Errorf("losses %v, want 11 for reports, by retention", got)
		}
	})
	t.Run("architecture-choice", func(t *testing.T) {
		l := ledger(t, "architecture-choice")
		for _, g := range []string{"b-shipping", "b-billing", "b-analytics"} {
			broken(t, l, sim.AtLeastOnce(g), false)
			broken(t, l, sim.OrderedPerKey(g), false)
		}
		broken(t, l, sim.OrderedPerKey("c-billing"), true)
		if got := causes(l); len(got) != 1 || got["/"+string(sim.CauseDualWrite)] != 1 {
			t.Errorf("losses %v, want one in design C, caused by the dual write", got)
		}
		var missed int
		for _, o := range l.Outcomes("d-analytics") {
			if o.Verdict == sim.VerdictMissed {
				missed++
			}
		}
		if missed != 6 {
			t.Errorf("d-analytics missed %d events, want 6", missed)
		}
	})
}

var update = flag.Bool("update", false, "rewrite golden files")
