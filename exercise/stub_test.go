package exercise

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every workspace, as Start writes it against this repository, builds and
// vets: the stub's signatures match the binding in main.go. It runs the
// go command, so -short skips it.
func TestWorkspacesBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet in a workspace per exercise")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	clone, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range All() {
		dir := filepath.Join(t.TempDir(), e.Name)
		if _, err := e.Start(dir, clone); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(goBin, "vet", ".")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: go vet: %v\n%s", e.Name, err, strings.TrimSpace(string(out)))
		}
	}
}
