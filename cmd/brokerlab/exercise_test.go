package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// fakeWorkspace writes into dir a module that stands for a workspace of
// the dead-letter exercise: go run . json prints a report of seeds seeds
// of which passed passed. It builds from the standard library alone, so a
// grading of it is quick.
func fakeWorkspace(t *testing.T, dir string, passed, seeds int) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	rep := exercise.Report{Exercise: "dead-letter", Seeds: seeds, Passed: passed,
		Props: []exercise.PropResult{{Property: exercise.Property{ID: "no-loss"}, Judged: seeds, Failed: seeds - passed}}}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	main := "package main\n\nimport \"os\"\n\n// It stands for exercise.Main(solution()).\nfunc main() { os.Stdout.WriteString(" + strconv.Quote(string(data)) + ") }\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"go.mod": "module fake\n\ngo 1.26\n", "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Two students with the same directory name in different classes get
// rows a teacher can tell apart: each labelled with the shortest end of
// its path that no other workspace shares, in the table and in --json.
func TestExerciseGradeSameBaseName(t *testing.T) {
	root := t.TempDir()
	fakeWorkspace(t, filepath.Join(root, "c1", "sam"), 5, 5)
	fakeWorkspace(t, filepath.Join(root, "c2", "sam"), 0, 5)
	fakeWorkspace(t, filepath.Join(root, "c2", "ann"), 5, 5)
	_, out, errOut := runCLI(t, root, false, "exercise", "grade", "c1/sam", "c2/sam", "c2/ann")
	for _, want := range []string{"\nc1/sam   pass     5/5\n", "\nc2/sam   FAIL     0/5\n", "\nann      pass     5/5\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s%s", want, out, errOut)
		}
	}
	_, out, errOut = runCLI(t, root, false, "exercise", "grade", "--json", "c1/sam", "c2/sam", "c2/ann")
	var rows []struct {
		Student string
		Report  *exercise.Report
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("json: %v\n%s%s", err, out, errOut)
	}
	for i, want := range []string{"c1/sam", "c2/sam", "ann"} {
		if rows[i].Student != want || rows[i].Report == nil || rows[i].Report.Student != want {
			t.Errorf("json row %d: student %q, want %q:\n%s", i, rows[i].Student, want, out)
		}
	}
}

// The same workspace named twice, however it is spelled, is graded and
// listed once, with a note on stderr.
func TestExerciseGradeSameWorkspaceTwice(t *testing.T) {
	root := t.TempDir()
	fakeWorkspace(t, filepath.Join(root, "alice"), 5, 5)
	code, out, errOut := runCLI(t, root, false, "exercise", "grade", "alice", "./alice/", filepath.Join(root, "alice"))
	if code != exitOK || strings.Count(out, "alice") != 1 || !strings.Contains(errOut, "same workspace as alice") {
		t.Errorf("exit %d, stdout:\n%sstderr:\n%s", code, out, errOut)
	}
	// Directories that are no workspace are listed once too.
	empty := t.TempDir()
	_, out, errOut = runCLI(t, "", false, "exercise", "grade", empty, empty)
	if strings.Count(out, empty) != 2 || !strings.Contains(errOut, "same workspace") { // its name and its error
		t.Errorf("stdout:\n%sstderr:\n%s", out, errOut)
	}
}

// A workspace that does not exist is said to be missing, not to lack a
// main.go; and the workspaces that could not be graded are listed after
// the tables, whichever came first on the command line.
func TestExerciseGradeMissingAfterTable(t *testing.T) {
	root := t.TempDir()
	fakeWorkspace(t, filepath.Join(root, "alice"), 5, 5)
	for _, args := range [][]string{{"nonexist", "alice"}, {"alice", "nonexist"}} {
		code, out, errOut := runCLI(t, root, false, append([]string{"exercise", "grade"}, args...)...)
		table, missing := strings.Index(out, "exercise dead-letter:"), strings.Index(out, "not graded:")
		if code != exitFailed || table < 0 || missing < table || !strings.Contains(out, "nonexist does not exist") {
			t.Errorf("grade %v: exit %d, stdout:\n%sstderr:\n%s", args, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI(t, root, false, "exercise", "check", "nonexist"); code != exitBadInput || !strings.Contains(errOut, "nonexist does not exist") {
		t.Errorf("check: exit %d, %q", code, errOut)
	}
}

// Each label is the shortest end of its own path that no other workspace
// shares, so one collision deeper down does not lengthen the others.
func TestStudentLabels(t *testing.T) {
	root := string(filepath.Separator)
	p := func(parts ...string) string { return filepath.Join(append([]string{root}, parts...)...) }
	dirs := []string{p("x", "a", "c1", "sam"), p("x", "b", "c1", "sam"), p("x", "c2", "sam"), p("x", "ann"), p("sam")}
	want := []string{filepath.Join("a", "c1", "sam"), filepath.Join("b", "c1", "sam"), filepath.Join("c2", "sam"), "ann", p("sam")}
	if got := studentLabels(dirs); !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}
