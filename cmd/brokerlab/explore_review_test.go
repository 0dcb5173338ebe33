package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A merge that lacks a shard must not pass: the missing shard's seeds were
// never run, and a CI job that lost one would otherwise go green.
func TestExploreMergeMissingShardFails(t *testing.T) {
	dir, _ := fixture(t)
	src := filepath.Join("..", "..", "scenario", "lessons", "sync-loop.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pass.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "20", "--shard", "1/2", "--no-shrink", "--json", "p1.json", "pass.yaml")
	if code != exitOK {
		t.Fatalf("shard 1/2 of a passing file: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, dir, false, "explore", "merge", "p1.json")
	if code != exitFailed || !strings.Contains(errs, "shards [2] of 2 are missing") {
		t.Fatalf("merge of one of two shards: exit %d, want %d and a message naming shard 2\n%s%s", code, exitFailed, out, errs)
	}
}

// --out through a symbolic link to the scenario itself is refused: the
// guard compares files, not path strings.
func TestExploreOutNeverOverwritesTheScenario(t *testing.T) {
	dir, name := fixture(t)
	if err := os.Symlink(".", filepath.Join(dir, "here")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	before, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "50", "--out", filepath.Join("here", name), name)
	if code != exitBadInput || !strings.Contains(errs, "would overwrite the scenario itself") {
		t.Fatalf("exit %d, want %d and a refusal\n%s%s", code, exitBadInput, out, errs)
	}
	after, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || string(after) != string(before) {
		t.Fatalf("the scenario file changed (err %v)", err)
	}
}

// The plan names a rule's second firing "dup-2"; when the file has its own
// dup-2, which the timeline switches off at t=1, the reproducer's rule must
// take another name, or it is switched off too and the reproducer passes.
func TestExploreMinFileRuleNameCollision(t *testing.T) {
	src, err := os.ReadFile("../../scenario/testdata/explore/rule-name-collision.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "coll.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "100", "coll.yaml")
	if code != exitFailed || !strings.Contains(out+errs, "wrote coll.min.yaml") {
		t.Fatalf("explore: exit %d, want %d and a reproducer\n%s%s", code, exitFailed, out, errs)
	}
	code, out, errs = runCLI(t, dir, false, "run", "coll.min.yaml")
	if code != exitFailed || !strings.Contains(out, "FAIL") {
		t.Fatalf("run coll.min.yaml: exit %d, want %d\n%s%s", code, exitFailed, out, errs)
	}
}

// A reproducer written to a device or FIFO (--out /dev/null) leaves no
// file to run: explore says so and gives the command that reproduces the
// failing seed from the scenario itself, and that command fails.
func TestExploreOutToADeviceGivesARunnableCommand(t *testing.T) {
	dir, name := fixture(t)
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "30", "--out", os.DevNull, name)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, out, errs)
	}
	if strings.Contains(out, "brokerlab run "+os.DevNull) {
		t.Errorf("it offers to run %s:\n%s", os.DevNull, out)
	}
	m := regexp.MustCompile(`(?m)^wrote the reproducer to ` + regexp.QuoteMeta(os.DevNull) + `, which keeps no file to run; reproduce the failing seed with: brokerlab run (.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no command to reproduce with:\n%s", out)
	}
	args := strings.Fields(m[1])
	if want := []string{"--seed", "5", name}; strings.Join(args, " ") != strings.Join(want, " ") {
		t.Fatalf("reproduce with %q, want %q", args, want)
	}
	if code, rout, rerr := runCLI(t, dir, false, append([]string{"run"}, args...)...); code != exitFailed {
		t.Fatalf("brokerlab run %v: exit %d, want %d\n%s%s", args, code, exitFailed, rout, rerr)
	}
	assertDevNull(t)
}
