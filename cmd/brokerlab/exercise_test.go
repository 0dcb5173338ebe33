package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/exercise"
)

// exercise list names every exercise with the lesson before it.
func TestExerciseList(t *testing.T) {
	code, out, errOut := runCLI(t, "", false, "exercise", "list")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, e := range exercise.All() {
		if !strings.Contains(out, e.Name) || !strings.Contains(out, e.Lesson) {
			t.Errorf("list lacks %s or its lesson %s:\n%s", e.Name, e.Lesson, out)
		}
	}
}

// exercise start writes a workspace from inside the clone, keeps what is
// there on a second start, and says what it did.
func TestExerciseStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bob")
	code, out, errOut := runCLI(t, "", false, "exercise", "start", "dead-letter", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "wrote: solution.go") || !strings.Contains(out, "go test") {
		t.Errorf("start says:\n%s", out)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	clone, _ := exercise.FindClone(".")
	if !strings.Contains(string(gomod), "=> "+clone+"\n") {
		t.Errorf("go.mod does not replace the module with the clone %s:\n%s", clone, gomod)
	}
	code, out, _ = runCLI(t, "", false, "exercise", "start", "dead-letter", dir)
	if code != exitOK || !strings.Contains(out, "kept as they were: solution.go") {
		t.Errorf("second start (exit %d):\n%s", code, out)
	}
}

// Bad input names what is wrong and what is allowed, with exit code 2.
func TestExerciseBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exercise"}, "Usage:"},
		{[]string{"exercise", "frobnicate"}, "it has: list, start, check, grade, hint"},
		{[]string{"exercise", "start", "outboks"}, "the exercises are: outbox"},
		{[]string{"exercise", "hint", "outbox", "9"}, "hints 1 to 3"},
		{[]string{"exercise", "hint", "outbox", "two"}, "is not a number"},
		{[]string{"exercise", "check", "."}, "not an exercise workspace"},
		{[]string{"exercise", "grade"}, "one or more workspace"},
	} {
		code, _, errOut := runCLI(t, "", false, c.args...)
		if code != exitBadInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// A teacher's grade of a directory that is no workspace lists it as not
// graded and fails, without running anything.
func TestExerciseGradeNotWorkspace(t *testing.T) {
	code, out, _ := runCLI(t, "", false, "exercise", "grade", t.TempDir())
	if code != exitFailed || !strings.Contains(out, "not graded") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// Hints come one at a time and never hold the solution's code.
func TestExerciseHint(t *testing.T) {
	code, out, _ := runCLI(t, "", false, "exercise", "hint", "dead-letter", "2")
	if code != exitOK || !strings.Contains(out, "Hint 2 of 3") || !strings.Contains(out, "last allowed attempt") {
		t.Errorf("exit %d: %s", code, out)
	}
}

// dlqRight is a right solution of the dead-letter exercise, as a student
// would write it into solution.go.
const dlqRight = `package main

import "github.com/brokerlab/brokerlab/exercise"

func ProcessAll(q exercise.WorkQueue, handle func(body string) error, maxAttempts int, dlq *[]exercise.DeadLetter) {
	for q.Open() > 0 {
		m, ok := q.Receive()
		if !ok {
			q.Tick()
			continue
		}
		if err := handle(m.Body); err != nil {
			if m.Attempts >= maxAttempts {
				*dlq = append(*dlq, exercise.DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
				q.Ack(m.ID)
			}
			continue
		}
		q.Ack(m.ID)
	}
}
`

// A teacher grades three workspaces: the stub, a right solution and one
// that does not build. The table has a row per student, a column per
// property and the seeds survived; --json carries the same. It runs the
// go command in each workspace, so -short skips it.
func TestExerciseGradeWorkspaces(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run in three workspaces")
	}
	root := t.TempDir()
	for _, s := range []string{"stub", "right", "broken"} {
		if code, _, errOut := runCLI(t, "", false, "exercise", "start", "dead-letter", filepath.Join(root, s)); code != exitOK {
			t.Fatalf("start %s: %s", s, errOut)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "right", "solution.go"), []byte(dlqRight), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "broken", "solution.go"), []byte("package main\n\nfunc ProcessAll() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(root, "stub"), filepath.Join(root, "right"), filepath.Join(root, "broken")}
	code, out, _ := runCLI(t, "", false, append([]string{"exercise", "grade", "--seeds", "20"}, dirs...)...)
	if code != exitFailed {
		t.Errorf("exit %d, want 1 (not every workspace passes)", code)
	}
	for _, want := range []string{"exercise dead-letter:", "STUDENT", "no-loss", "SEEDS SURVIVED", "right    pass", "20/20", "stub     FAIL     -", "0/20", "not graded:", "broken", "cannot use ProcessAll"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "", false, "exercise", "grade", "--json", "--seeds", "20", dirs[1])
	var rows []gradeRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != exitOK || len(rows) != 1 || rows[0].Report == nil || rows[0].Report.Passed != 20 {
		t.Errorf("json: exit %d, %v\n%s", code, err, out)
	}
}
