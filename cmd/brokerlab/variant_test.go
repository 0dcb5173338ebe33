package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVariantHeadless checks --variant on run, trace and verify: each
// variant of architecture-choice runs, its trace differs from the file's,
// and verify --scenario --variant judges the variant's trace by the
// variant's whole expect list.
func TestVariantHeadless(t *testing.T) {
	code, out, stderr := runCLI(t, "", false, "run", "--quiet", "--variant", "log", "architecture-choice")
	if code != exitOK || !strings.Contains(out, "PASS architecture-choice") || !strings.Contains(out, "variant log") {
		t.Fatalf("run --variant log: %d %q %q", code, out, stderr)
	}
	code, out, _ = runCLI(t, "", false, "run", "--variant", "log", "architecture-choice")
	if code != exitOK || !strings.HasPrefix(out, "Design B") {
		t.Fatalf("run --variant log (report): %d %q", code, out)
	}
	code, _, stderr = runCLI(t, "", false, "run", "--variant", "nope", "architecture-choice")
	if code != exitBadInput || !strings.Contains(stderr, `no such variant "nope"`) || !strings.Contains(stderr, "queue-per-team, log") {
		t.Fatalf("run --variant nope: %d %q", code, stderr)
	}
	_, base, _ := runCLI(t, "", false, "trace", "architecture-choice")
	code, vtrace, stderr := runCLI(t, "", false, "trace", "--variant", "log", "--format", "json", "architecture-choice")
	if code != exitOK || vtrace == "" || strings.Contains(vtrace, "c-billing") {
		t.Fatalf("trace --variant log: %d, %d bytes, stderr %q", code, len(vtrace), stderr)
	}
	if strings.Contains(base, "b-orders") == false {
		t.Fatalf("the file's own trace lacks design B")
	}
	p := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(p, []byte(vtrace), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runCLI(t, "", false, "verify", "--scenario", "architecture-choice", "--variant", "log", p)
	if code != exitOK || !strings.Contains(out, "PASS: ") || !strings.Contains(out, "b-billing") {
		t.Fatalf("verify --scenario --variant: %d %q %q", code, out, stderr)
	}
	code, _, stderr = runCLI(t, "", false, "verify", "--variant", "log", p)
	if code != exitBadInput || !strings.Contains(stderr, "--variant needs --scenario") {
		t.Fatalf("verify --variant alone: %d %q", code, stderr)
	}
	// --check still works on a variant's trace.
	code, out, _ = runCLI(t, "", false, "verify", "--check", "exactly_once:b-billing", p)
	if code != exitOK {
		t.Fatalf("verify --check on the variant's trace: %d %q", code, out)
	}
}
