package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outputCommands are the commands that write a file, each with the output
// named by out; the scenario is name and a shard report s1.json, both in
// the working directory.
func outputCommands(name, out string) [][]string {
	return [][]string{
		{"explore", "--seeds", "30", "--out", out + ".yaml", name},
		{"explore", "--seeds", "30", "--json", out + ".json", name},
		{"explore", "--seeds", "30", "--no-shrink", "--json", out + ".json", name},
		{"explore", "merge", "--json", out + ".json", "s1.json"},
		{"record", "--cast", out + ".cast", "poison-dlq"},
	}
}

// TestEveryOutputIsCheckedFirst: an output in a directory that does not
// exist, or under a path that is a file, is refused before any work (no
// sweep, no shrink, no recording), with exit 2 and a message that names
// the path, says what is wrong and never shows a temporary file's name.
func TestEveryOutputIsCheckedFirst(t *testing.T) {
	dir, name := fixture(t)
	if code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "10", "--shard", "1/2", "--no-shrink", "--json", "s1.json", name); code == exitBadInput {
		t.Fatalf("the shard report: exit %d\n%s%s", code, out, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, want string }{
		{filepath.Join("nope", "x"), "the directory nope does not exist"},
		{filepath.Join("nope", "deeper", "x"), "the directory " + filepath.Join("nope", "deeper") + " does not exist"},
		{filepath.Join("plain", "x"), "plain is a regular file, not a directory"},
	} {
		for _, args := range outputCommands(name, c.out) {
			code, out, errs := runCLI(t, dir, false, args...)
			if code != exitBadInput || out != "" {
				t.Errorf("%v: exit %d, want 2 and no work done\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
				continue
			}
			if !strings.Contains(errs, c.out+".") || !strings.Contains(errs, c.want) || strings.Contains(errs, ".tmp") {
				t.Errorf("%v: stderr %q, want it to name %s and say %q", args, errs, c.out, c.want)
			}
		}
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "naive-billing.yaml plain s1.json" {
		t.Errorf("the directory holds %s", got)
	}
}

// TestPlanDir: a file may be created only in a directory that exists.
func TestPlanDir(t *testing.T) {
	for _, c := range []struct {
		dir     string
		fi      fs.FileInfo
		err     error
		refused string
	}{
		{"d", fileInfo{fs.ModeDir | 0o755}, nil, ""},
		{"nope", nil, fs.ErrNotExist, "the directory nope does not exist"},
		{".", nil, fs.ErrNotExist, "the current directory does not exist"},
		{"f", fileInfo{0o644}, nil, "the directory f is a regular file, not a directory"},
		{"s", fileInfo{fs.ModeSocket}, nil, "the directory s is a socket, not a directory"},
		{"x", nil, fs.ErrPermission, "cannot use the directory x (permission denied)"},
	} {
		err := planDir(filepath.Join(c.dir, "out.json"), c.dir, c.fi, c.err)
		if c.refused == "" {
			if err != nil {
				t.Errorf("%s: %v", c.dir, err)
			}
			continue
		}
		if !errors.Is(err, errOutput) || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), "out.json") {
			t.Errorf("%s: err %v, want a refusal of out.json saying %q", c.dir, err, c.refused)
		}
	}
}

// A write that fails names the output, not the temporary file, and leaves
// nothing behind.
func TestWriteOutputErrorNamesThePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	err := writeOutput(path, func(w io.Writer) error {
		f := w.(*os.File)
		f.Close()
		_, err := f.Write([]byte("x"))
		return err
	})
	if !errors.Is(err, errWrite) || !strings.Contains(err.Error(), "cannot write "+path+": ") || strings.Contains(err.Error(), ".tmp") {
		t.Fatalf("err %v, want one naming %s and no temporary file", err, path)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}
