//go:build unix

package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckRefusesSpecialFiles: check and run refuse a device or a FIFO
// at once with exit code 2, instead of reading without end or blocking.
func TestCheckRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", "/dev/urandom", fifo} {
		if _, err := os.Stat(path); err != nil {
			t.Logf("skipping %s: %v", path, err)
			continue
		}
		for _, cmd := range []string{"check", "run"} {
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			start := time.Now()
			go func() {
				code, stdout, stderr := runCLI(t, "", false, cmd, path)
				done <- result{code, stdout, stderr}
			}()
			select {
			case r := <-done:
				if r.code != exitBadInput || r.stdout != "" || !strings.HasPrefix(r.stderr, path+":1:1: cannot read the file: it is a ") {
					t.Errorf("%s %s: exit %d, stdout %q, stderr %q", cmd, path, r.code, r.stdout, r.stderr)
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("%s %s took %v", cmd, path, d)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %s did not return within 5s", cmd, path)
			}
		}
	}
}

// TestExploreMergeFIFOWithoutWriter: a shard report that is a FIFO
// nobody writes to is read as empty, and refused as no report, instead of
// blocking the open for ever; a pipe with a writer (a shell's process
// substitution) is still read.
func TestExploreMergeFIFOWithoutWriter(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "shard.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCLI(t, "", false, "explore", "merge", fifo)
		done <- result{code, stdout, stderr}
	}()
	select {
	case r := <-done:
		if r.code != exitBadInput || !strings.Contains(r.stderr, fifo+": not a sweep report: EOF") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("explore merge on a FIFO without a writer did not return within 5s")
	}

	// The same merge through a pipe with a writer, as <(cat report.json)
	// gives it, reads the report.
	dir, name := fixture(t)
	if code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "20", "--no-shrink", "--json", "all.json", name); code != exitFailed {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errs)
	}
	report, err := os.ReadFile(filepath.Join(dir, "all.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write(report)
		w.Close()
	}()
	pipe := fmt.Sprintf("/dev/fd/%d", r.Fd())
	code, out, errs := runCLI(t, dir, false, "explore", "merge", pipe)
	if code != exitFailed || !strings.Contains(out, "20 seeds") {
		t.Errorf("merge through a pipe: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A FIFO is written in place: the reader gets the text and the FIFO is
// still a FIFO.
func TestWriteOutputFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := writeOutput(fifo, func(w io.Writer) error { _, err := io.WriteString(w, "through the pipe\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe\n" {
		t.Fatalf("reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO became %v (%v)", fi.Mode(), err)
	}
}
