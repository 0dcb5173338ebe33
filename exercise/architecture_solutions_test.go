package exercise

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The architecture exercise's solutions are scenario files.
func archFile(name string) func() Solution {
	return func() Solution { return Architecture{File: filepath.Join("testdata", "architecture", name)} }
}

// The stub file of the workspace, written where a test can read it.
func archStubbed(t *testing.T) Solution {
	path := filepath.Join(t.TempDir(), "architecture.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(archStub, "{{schema}}", "scenario.schema.json")), 0o644); err != nil {
		t.Fatal(err)
	}
	return Architecture{File: path}
}

// The stub is the shared work queue: it fails "every team gets every
// event" without any fault.
func TestArchitectureStub(t *testing.T) {
	e, _ := Lookup("architecture")
	rep := e.Grade(archStubbed(t), 50)
	if rep.Pass() || rep.Shrunk == nil || rep.Shrunk.Prop != "every-team" || rep.Shrunk.Minimal.Len() != 0 {
		t.Fatalf("\n%s", rep.Text(e))
	}
}

// A file that does not load, or drops a team or the workload, is not
// graded; the error names the file and what is wrong.
func TestArchitectureBadFile(t *testing.T) {
	e, _ := Lookup("architecture")
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"version: 1\ntitle: x\nrun: {ticks: 5}\ntopology:\n  queues: [{name: q}]\nactors:\n  producers:\n    - {name: app, to: {queue: nope}, count: 12, keys: \"o-%d\", key_count: 4}\n", "bad.yaml:8:"},
		{"version: 1\ntitle: x\nrun: {ticks: 5}\ntopology:\n  queues: [{name: q}]\nactors:\n  producers:\n    - {name: app, to: {queue: q}, count: 12, keys: \"o-%d\", key_count: 4}\n  consumers:\n    - {name: shipping, queue: q}\n", "[billing analytics]"},
		{"version: 1\ntitle: x\nrun: {ticks: 5}\ntopology:\n  queues: [{name: q}]\nactors:\n  producers:\n    - {name: app, to: {queue: q}, count: 2, keys: \"o-%d\", key_count: 4}\n", "at least 12 events"},
	} {
		path := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		rep := e.Grade(Architecture{File: path}, 5)
		if rep.Error == "" || !strings.Contains(rep.Error, c.want) {
			t.Errorf("error %q, want it to contain %q", rep.Error, c.want)
		}
	}
}

// The replay of an architecture's failing run spans the scenario's ticks
// and shows the fault and the broken requirement.
func TestArchitectureRecording(t *testing.T) {
	e, _ := Lookup("architecture")
	sol := archFile("pubsub.yaml")()
	rep := e.Grade(sol, 20)
	rec, err := e.Recording(sol, rep.Shrunk.Seed, &rep.Shrunk.Minimal)
	if err != nil {
		t.Fatal(err)
	}
	if rec.End != 80 || len(rec.Trace) == 0 {
		t.Fatalf("recording ends at %d with %d events", rec.End, len(rec.Trace))
	}
	broken := 0
	for _, c := range rec.Checks {
		if c.Broken {
			broken++
		}
	}
	if broken == 0 || len(rec.Steps) < 2 {
		t.Fatalf("%d broken checks, %d steps", broken, len(rec.Steps))
	}
}
