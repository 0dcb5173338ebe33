package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestLessonFilesMatchMenu checks that every embedded lesson file is in the
// menu exactly once and that every menu entry has a file.
func TestLessonFilesMatchMenu(t *testing.T) {
	files, err := fs.Glob(lessonFiles, "lessons/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	sort.Strings(names)
	want := append([]string(nil), menu...)
	sort.Strings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("embedded lessons %v, menu %v", names, want)
	}
	seen := map[string]bool{}
	for _, n := range menu {
		if seen[n] {
			t.Errorf("lesson %q is twice in the menu", n)
		}
		seen[n] = true
	}
}

// TestLessonsLoad loads every lesson and checks what the menu and the
// player rely on: a title, a one-line summary, a description, narration
// that starts at tick 0 and is in tick order, and expectations.
func TestLessonsLoad(t *testing.T) {
	ls := Lessons()
	if len(ls) < 13 {
		t.Fatalf("Lessons() = %d lessons, want at least 13", len(ls))
	}
	for _, l := range ls {
		t.Run(l.Name, func(t *testing.T) {
			s, err := LoadLesson(l.Name)
			if err != nil {
				t.Fatalf("LoadLesson:\n%v", err)
			}
			if s.File != "lessons/"+l.Name+".yaml" {
				t.Errorf("File = %q", s.File)
			}
			if l.Title != s.Title || l.Summary != s.Summary {
				t.Errorf("menu entry %+v does not match the file (%q, %q)", l, s.Title, s.Summary)
			}
			if s.Title == "" || s.Summary == "" || strings.TrimSpace(s.Description) == "" {
				t.Errorf("title %q, summary %q, description %d bytes: all are required for a lesson", s.Title, s.Summary, len(s.Description))
			}
			if len(s.Narration) < 3 {
				t.Errorf("%d narration steps, want at least 3", len(s.Narration))
			} else if s.Narration[0].At != 0 {
				t.Errorf("narration starts at tick %d, want 0", s.Narration[0].At)
			}
			for i := 1; i < len(s.Narration); i++ {
				if s.Narration[i].At <= s.Narration[i-1].At {
					t.Errorf("narration step %d at tick %d is not after step %d at tick %d", i+1, s.Narration[i].At, i, s.Narration[i-1].At)
				}
			}
			if len(s.Expect) < 3 {
				t.Errorf("%d expectations, want at least 3", len(s.Expect))
			}
			if err := s.FaultPlan().Validate(); err != nil {
				t.Errorf("FaultPlan: %v", err)
			}
		})
	}
}

func TestLoadLessonUnknown(t *testing.T) {
	_, err := LoadLesson("poison-dql")
	if !errors.Is(err, ErrUnknownLesson) {
		t.Fatalf("err = %v, want ErrUnknownLesson", err)
	}
	for _, want := range []string{`unknown lesson "poison-dql"`, `did you mean "poison-dlq"?`, "lessons: dual-write, "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if _, err := LoadLesson("../load_test"); !errors.Is(err, ErrUnknownLesson) {
		t.Errorf("a path as lesson name: err = %v, want ErrUnknownLesson", err)
	}
}

func TestResolve(t *testing.T) {
	s, err := Resolve("poison-dlq")
	if err != nil || s.File != "lessons/poison-dlq.yaml" {
		t.Fatalf("Resolve(lesson) = %v, %v", s, err)
	}
	s, err = Resolve(filepath.Join("testdata", "valid", "poison-dlq.yaml"))
	if err != nil || s.File != filepath.Join("testdata", "valid", "poison-dlq.yaml") {
		t.Fatalf("Resolve(file) = %v, %v", s, err)
	}
	dir := t.TempDir()
	_, err = Resolve(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "cannot read the file") {
		t.Errorf("Resolve(missing file) = %v, want a positioned read error", err)
	}
	// A file named like a lesson is reached with an explicit directory.
	p := filepath.Join(dir, "dual-write")
	if err := os.WriteFile(p, []byte("title: t\nrun: {ticks: 1}\ntopology: {queues: [{name: q}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Resolve(p); err != nil || s.Title != "t" {
		t.Errorf("Resolve(%s) = %v, %v", p, s, err)
	}
}

func TestResolveTypoSuggestsLesson(t *testing.T) {
	_, err := Resolve("poison-dlg")
	if !errors.Is(err, ErrUnknownLesson) || !strings.Contains(err.Error(), `did you mean "poison-dlq"?`) {
		t.Errorf("Resolve(typo) = %v, want an unknown lesson with a suggestion", err)
	}
	// Nothing like a lesson: the file error stays.
	_, err = Resolve("zzzzzzzzzzzzzzzz")
	if errors.Is(err, ErrUnknownLesson) || !strings.Contains(err.Error(), "cannot read the file") {
		t.Errorf("Resolve(far from any lesson) = %v, want the read error", err)
	}
}

func TestLessonsStable(t *testing.T) {
	a, b := Lessons(), Lessons()
	a[0].Name = "changed"
	if b[0].Name != "dual-write" || Lessons()[0].Name != "dual-write" {
		t.Errorf("Lessons() shares its slice with callers")
	}
}

// runLesson runs lesson name to the end (with seed when non-nil) and
// returns its text trace, its report and the finished run.
func runLesson(t *testing.T, name string, seed *uint64) ([]byte, *Report, *Run) {
	trace, rep, r, _ := runLessonCount(t, name, seed)
	return trace, rep, r
}

// runLessonCount is runLesson that also counts the narration events.
func runLessonCount(t *testing.T, name string, seed *uint64) ([]byte, *Report, *Run, int) {
	t.Helper()
	s, err := LoadLesson(name)
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
	r, err := s.NewRun(Options{Seed: seed, Sinks: []sim.Sink{sim.NewTextWriter(&buf), count}})
	if err != nil {
		t.Fatalf("NewRun(%s):\n%v", name, err)
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
	for _, l := range Lessons() {
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

// TestLessonsDeterministic runs every lesson under GOMAXPROCS 1 and 2 and
// requires byte-identical traces.
func TestLessonsDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, l := range Lessons() {
		t.Run(l.Name, func(t *testing.T) {
			runtime.GOMAXPROCS(1)
			a, _, _ := runLesson(t, l.Name, nil)
			runtime.GOMAXPROCS(2)
			b, _, _ := runLesson(t, l.Name, nil)
			if !bytes.Equal(a, b) {
				t.Errorf("traces differ between GOMAXPROCS 1 and 2:\n%s", firstDiff(a, b))
			}
		})
	}
}

// probabilistic reports whether s has a fault rule that fires by chance.
func probabilistic(s *Scenario) bool {
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
	for _, l := range Lessons() {
		s, err := LoadLesson(l.Name)
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
	for _, l := range Lessons() {
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

func ExampleLessons() {
	for _, l := range Lessons() {
		fmt.Printf("%-20s %s\n", l.Name, l.Title)
	}
	// Output:
	// dual-write           Dual write loses an event
	// outbox-relay         The outbox fixes it, but a relay crash duplicates
	// idempotent-consumer  An idempotent consumer absorbs the duplicates
	// poison-dlq           Poison message goes to the DLQ, and comes back after the fix
	// visibility-timeout   Visibility timeout shorter than the processing time
	// offline-subscriber   Offline subscriber misses events; a log consumer group does not
	// partition-order      Per-key order with crc32 partitions, and what adding partitions breaks
	// crash-before-commit  Consumer crash before commit re-reads the batch
	// replay-projection    Replay after a bug fix rebuilds a projection
	// retention-lag        Retention shorter than the lag loses data
	// event-storm          Event storm and its supervisor
	// sync-loop            Sync loop and source tracking
	// architecture-choice  Which architecture fits: queue, pub/sub or log?
	// redrive-dedup        A message ID is not a dedup key after a redrive
	// queue-health         Queue health - a peak that drains, a backlog that grows
	// competing-order      Competing consumers against per-customer order
	// correlation-ids      Correlation IDs find a failure deep in a chain
	// retry-classes        Retries by error class
	// resend-outgoing      Idempotency also means re-sending
	// schema-evolution     Schema evolution - v2 events meet a v1 consumer
	// saga-compensation    Saga with compensation
	// eventual-consistency Eventual consistency - a projection lags and must not go back
}
