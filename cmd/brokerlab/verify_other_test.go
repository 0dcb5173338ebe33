package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyScenarioRefusesAnotherScenariosTrace judges the trace of
// every lesson and variant as every other lesson and variant: each is
// refused with exit 2 and no verdict, unless the two runs are the same
// (a variant that is the lesson as written).
func TestVerifyScenarioRefusesAnotherScenariosTrace(t *testing.T) {
	dir := t.TempDir()
	lts := lessonTraces(t)
	paths := make([]string, len(lts))
	for i, lt := range lts {
		paths[i] = filepath.Join(dir, strings.ReplaceAll(lt.label, "/", "@")+".jsonl")
		if err := os.WriteFile(paths[i], []byte(strings.Join(lt.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refused := 0
	for i, lt := range lts {
		for j, as := range lts {
			if i == j {
				continue
			}
			args := []string{"verify", "--scenario", as.lesson, paths[i]}
			if as.vname != "" {
				args = append(args, "--variant", as.vname)
			}
			code, stdout, stderr := runCLI(t, "", false, args...)
			if strings.Join(lt.lines, "\n") == strings.Join(as.lines, "\n") {
				if code == exitBadInput {
					t.Errorf("%s verified as %s, the same run: exit %d\n%s", lt.label, as.label, code, stderr)
				}
				continue
			}
			if code != exitBadInput || strings.Contains(stdout, "PASS") || !strings.Contains(stderr, "is not a trace of") {
				t.Errorf("%s verified as %s: exit %d\n%s%s", lt.label, as.label, code, stdout, stderr)
				continue
			}
			refused++
		}
	}
	t.Logf("%d traces refused as another lesson's or variant's", refused)
}

// TestVerifyScenarioNamesWhatDiffers: the trace of dual-write judged as
// poison-dlq, and as dual-write's outbox variant, is refused with the
// differences, each at the line of the trace or the position in the
// scenario's file that shows it.
func TestVerifyScenarioNamesWhatDiffers(t *testing.T) {
	dir := t.TempDir()
	_, js, _ := runCLI(t, "", false, "trace", "--format", "json", "dual-write")
	path := filepath.Join(dir, "dw.jsonl")
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", false, "verify", "--scenario", "poison-dlq", path)
	for _, want := range []string{
		path + " is not a trace of lessons/poison-dlq.yaml",
		path + `:22:1: the trace's run judged "ledger.lost_dual_write == 1 by t=4" at 67:5, which is not an expectation of lessons/poison-dlq.yaml there`,
		`lessons/poison-dlq.yaml:90:5: "no_loss" is not judged in the trace`,
		"more differences",
		"brokerlab trace --format json poison-dlq > TRACE.jsonl",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("missing %q in\n%s", want, stderr)
		}
	}
	if code != exitBadInput || stdout != "" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	code, stdout, stderr = runCLI(t, "", false, "verify", "--scenario", "dual-write", "--variant", "outbox", path)
	if code != exitBadInput || stdout != "" || !strings.Contains(stderr, "is not a trace of lessons/dual-write.yaml (variant outbox)") ||
		!strings.Contains(stderr, "--variant outbox dual-write > TRACE.jsonl") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestVerifyScenarioWithoutExpectations refuses to judge a scenario that
// has no expectations: a verdict of 0 of 0 would hold for any trace.
func TestVerifyScenarioWithoutExpectations(t *testing.T) {
	dir := t.TempDir()
	yaml := filepath.Join(dir, "none.yaml")
	if err := os.WriteFile(yaml, []byte(`version: 1
title: nothing expected
run: {ticks: 3}
topology:
  queues: [{name: q}]
actors:
  producers: [{name: p, to: {queue: q}, count: 1}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, js, _ := runCLI(t, "", false, "trace", "--format", "json", yaml)
	path := filepath.Join(dir, "none.jsonl")
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", false, "verify", "--scenario", yaml, path)
	if code != exitBadInput || stdout != "" || !strings.Contains(stderr, "has no expectations") || !strings.Contains(stderr, "--check") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}
