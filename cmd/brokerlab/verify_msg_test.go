package main

import (
	"os"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestVerifyMisconfiguredCheckIsOnlyAnError: a check that names a
// consumer the trace does not have judged nothing. It is a mistake in the
// command: reported once, on stderr, with exit 2, and never counted as a
// failing check nor printed beside a verdict.
func TestVerifyMisconfiguredCheckIsOnlyAnError(t *testing.T) {
	path := writeTrace(t, t.TempDir(),
		sim.Event{Tick: 1, Kind: sim.KindSent, Where: "queue:orders", Consumer: "orders", Msg: 1},
		sim.Event{Tick: 2, Kind: sim.KindReceived, Where: "queue:orders", Consumer: "orders", Msg: 1},
		sim.Event{Tick: 2, Kind: sim.KindProcessed, Where: "queue:orders", Consumer: "orders", Msg: 1},
	)
	code, stdout, stderr := runCLI(t, "", false, "verify", "--check", "at_least_once:orders", "--check", "exactly_once:nobody", path)
	if code != exitBadInput || stdout != "" {
		t.Fatalf("exit %d, want 2 and no verdict\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := `brokerlab verify: --check exactly_once:nobody: the ledger knows no consumer "nobody"; it knows: "orders"` + "\n"
	if stderr != want {
		t.Fatalf("stderr %q, want %q", stderr, want)
	}
}

// TestVerifyNamesTheTraceFileLineAndColumn: every complaint about the
// trace file starts FILE:LINE:COL, as the scenario loader's do; a file
// that is not JSON Lines says so, and a scenario file given by mistake
// gets the commands that verify a trace of it.
func TestVerifyNamesTheTraceFileLineAndColumn(t *testing.T) {
	src, err := os.ReadFile("../../scenario/lessons/poison-dlq.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("orders.yaml", string(src))
	write("notes.txt", "\n  hello\n")
	writeTrace(t, dir,
		sim.Event{Tick: 1, Kind: sim.KindSent, Where: "queue:orders", Consumer: "orders", Msg: 1},
		sim.Event{Tick: 2, Kind: sim.KindReceived, Where: "queue:orders", Consumer: "orders", Msg: 1},
	)
	whole, _ := os.ReadFile("run.jsonl")
	lines := strings.SplitAfter(string(whole), "\n")
	write("cut.jsonl", strings.Join(lines[:2], ""))
	write("gap.jsonl", lines[0]+lines[2])
	write("empty.jsonl", "")
	scenarioHint := "orders.yaml:1:1: not a JSON Lines trace: it looks like a scenario file; verify a trace of it with 'brokerlab verify --scenario orders.yaml TRACE.jsonl', written by 'brokerlab trace --format json orders.yaml > TRACE.jsonl'\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"orders.yaml"}, scenarioHint},
		{[]string{"--check", "no_loss", "orders.yaml"}, scenarioHint},
		{[]string{"--scenario", "poison-dlq", "orders.yaml"}, scenarioHint},
		{[]string{"notes.txt"}, "notes.txt:2:3: not a JSON Lines trace: a trace has one JSON object per line, as 'brokerlab trace --format json' writes it\n"},
		{[]string{"gap.jsonl"}, "gap.jsonl:2:1: bad trace: the closing record counts 2 events, but 1 came before it (events were added or removed)\n"},
		{[]string{"cut.jsonl"}, "cut.jsonl:2:1: bad trace: truncated: the run did not finish: no closing record after line 2 (seq 2)\n"},
		{[]string{"empty.jsonl"}, "empty.jsonl:1:1: bad trace: truncated: the run did not finish: the trace is empty: no events and no closing record\n"},
		{[]string{"missing.jsonl"}, "missing.jsonl:1:1: cannot read the trace: no such file or directory\n"},
		{[]string{"."}, ".:1:1: cannot read the trace: it is a directory, not a regular file\n"},
	} {
		code, stdout, stderr := runCLI(t, "", false, append([]string{"verify"}, c.args...)...)
		if code != exitBadInput || stdout != "" || stderr != c.want {
			t.Errorf("verify %v: exit %d, want 2\nstdout %q\nstderr %q\nwant   %q", c.args, code, stdout, stderr, c.want)
		}
	}
}
