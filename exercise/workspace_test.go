package exercise

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeClone makes a directory that looks like a clone: a go.mod of
// ModulePath and a go.sum.
func fakeClone(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gomod := "module " + ModulePath + "\n\ngo 1.26\n\nrequire (\n\tgithub.com/hashicorp/go-memdb v1.3.5\n\tgolang.org/x/term v0.37.0\n)\n\nrequire github.com/rivo/uniseg v0.4.7 // indirect\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), []byte("example.com/x v1.0.0 h1:abc=\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Start writes every file once, builds against the clone, and never
// overwrites the student's work.
func TestStartNeverOverwrites(t *testing.T) {
	clone := fakeClone(t)
	e, _ := Lookup("outbox")
	dir := filepath.Join(t.TempDir(), "alice")
	w, err := e.Start(dir, clone)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Wrote) != 6 || len(w.Kept) != 0 {
		t.Fatalf("first start: wrote %v, kept %v", w.Wrote, w.Kept)
	}
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	for _, want := range []string{"replace " + ModulePath + " => " + clone, "github.com/hashicorp/go-memdb v1.3.5 // indirect", "github.com/rivo/uniseg v0.4.7 // indirect"} {
		if !strings.Contains(string(gomod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, gomod)
		}
	}
	mine := []byte("package main\n// my own work\n")
	if err := os.WriteFile(filepath.Join(dir, "solution.go"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "main.go"))
	w, err = e.Start(dir, clone)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(w.Wrote, ",") != "main.go" {
		t.Errorf("second start wrote %v, want only the missing main.go", w.Wrote)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "solution.go")); string(got) != string(mine) {
		t.Errorf("the student's file was overwritten:\n%s", got)
	}
	for _, f := range []string{"main.go", "grade_test.go", "README.md", "go.mod", "go.sum", "solution.go"} {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		if strings.Contains(string(data), "outboxModel") {
			t.Errorf("%s holds the model solution", f)
		}
	}
}

// A workspace inside the clone would be part of the clone's module; Start
// refuses it.
func TestStartOutsideClone(t *testing.T) {
	clone := fakeClone(t)
	e, _ := Lookup("dead-letter")
	_, err := e.Start(filepath.Join(clone, "ws"), clone)
	if !errors.Is(err, ErrWorkspace) || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("err = %v", err)
	}
	if _, err := FindClone(filepath.Join(clone, "deep", "er")); err != nil {
		t.Fatalf("FindClone from below the clone: %v", err)
	}
}

// Every exercise's README names the lesson before it and every property,
// and its stub file names the functions the binding expects.
func TestWorkspaceText(t *testing.T) {
	for _, e := range All() {
		files := e.Files("/clone", nil, nil)
		readme := string(files["README.md"])
		if !strings.Contains(readme, e.Lesson) {
			t.Errorf("%s: README does not name lesson %s", e.Name, e.Lesson)
		}
		for _, p := range e.Props {
			if !strings.Contains(readme, p.Title) {
				t.Errorf("%s: README lacks property %q", e.Name, p.Title)
			}
		}
		if len(e.Hints) < 2 || len(e.Hints) > 3 {
			t.Errorf("%s has %d hints, want 2 or 3", e.Name, len(e.Hints))
		}
		if _, err := os.Stat(filepath.Join("..", "scenario", "lessons", e.Lesson+".yaml")); err != nil {
			t.Errorf("%s: lesson %s: %v", e.Name, e.Lesson, err)
		}
	}
}
