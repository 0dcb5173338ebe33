package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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

// TestBareNameIsNeitherFileNorLesson: a bare name that is no file says it
// is no lesson either, where a path says only what the file system says.
func TestBareNameIsNeitherFileNorLesson(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := LoadFile("naive-billing")
	if err == nil || err.Error() != "naive-billing:1:1: cannot read the file: no such file or directory; no built-in lesson has that name either (brokerlab list shows them)" {
		t.Errorf("bare name: %v", err)
	}
	_, _, err = Source("naive-billing")
	if err == nil || !strings.Contains(err.Error(), "no built-in lesson has that name") {
		t.Errorf("Source: %v", err)
	}
	_, err = LoadFile("naive-billing.yaml")
	if err == nil || strings.Contains(err.Error(), "lesson") {
		t.Errorf("a file name: %v", err)
	}
}
