package main

import (
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
