package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/brokerlab/brokerlab/tui"
)

// fullWriter fails every write, as standard output on a full disk does.
type fullWriter struct{ writes int }

func (f *fullWriter) Write(p []byte) (int, error) {
	f.writes++
	return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
}

// failedStdoutCommands is every command that prints to standard output,
// run from a directory holding a scenario (ok.yaml), a trace (ok.jsonl)
// and two shard reports.
var failedStdoutCommands = [][]string{
	{"verify", "ok.jsonl"},
	{"verify", "--check", "no_loss", "ok.jsonl"},
	{"check", "ok.yaml"},
	{"list"},
	{"version"},
	{"--version"},
	{"help"},
	{"help", "run"},
	{"--help"},
	{},
	{"run", "ok.yaml"},
	{"run", "--quiet", "ok.yaml"},
	{"trace", "ok.yaml"},
	{"trace", "--format", "mermaid", "ok.yaml"},
	{"schema"},
	{"explore", "--seeds", "3", "ok.yaml"},
	{"explore", "merge", "s1.json", "s2.json"},
	{"record", "--cast", "out.cast", "ok.yaml"},
}

func failedStdoutDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("../../scenario/testdata/valid/sqs-queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "ok.yaml"), src, 0o644)
	code, trace, errs := runCLI(t, dir, false, "trace", "--format", "json", "ok.yaml")
	if code != exitOK {
		t.Fatalf("trace: %d %s", code, errs)
	}
	os.WriteFile(filepath.Join(dir, "ok.jsonl"), []byte(trace), 0o644)
	for _, k := range []string{"1", "2"} {
		if code, _, errs := runCLI(t, dir, false, "explore", "--seeds", "4", "--shard", k+"/2", "--json", "s"+k+".json", "ok.yaml"); code != exitOK {
			t.Fatalf("shard %s: %d %s", k, code, errs)
		}
	}
	return dir
}

// Every command whose standard output fails exits 2 and says why on
// stderr, whatever it printed and whatever its own verdict was.
func TestFailedStdoutExitsTwo(t *testing.T) {
	dir := failedStdoutDir(t)
	t.Chdir(dir)
	for _, args := range failedStdoutCommands {
		var out fullWriter
		var errb bytes.Buffer
		c := newCLI(&out, &errb)
		c.terminal = func() bool { return false }
		c.play = func(tui.Driver) error { return nil }
		code := c.main(args)
		if code != exitBadInput || out.writes == 0 || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v: exit %d after %d writes, want 2 and the reason\nstderr: %s", args, code, out.writes, errb.String())
		}
		// Once a write failed, nothing more is tried.
		if out.writes != 1 {
			t.Errorf("%v: %d writes to a failed output, want 1", args, out.writes)
		}
	}
}

// The same, through the real /dev/full, with the command as a process.
func TestFailedStdoutDevFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	dir := failedStdoutDir(t)
	for _, args := range failedStdoutCommands {
		cmd := process(t, dir, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = full, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitBadInput || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%v > /dev/full: %v, want exit 2 and the reason\nstderr: %s", args, err, stderr.String())
		}
	}
	assertDevNull(t)
}
