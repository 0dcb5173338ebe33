package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sessionBlock returns the code block of doc that starts with the line
// first: a transcript of "$ brokerlab ..." commands and what they print.
func sessionBlock(t *testing.T, doc, first string) []string {
	t.Helper()
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(text), "```\n"+first+"\n")
	if i < 0 {
		t.Fatalf("%s: no block starting %q", doc, first)
	}
	block := string(text[i+4:])
	block = block[:strings.Index(block, "```")]
	return strings.Split(strings.TrimRight(block, "\n"), "\n")
}

// machineDependent matches the lines of explore's output that depend on
// the machine: how long the sweep took and how fast it went.
var machineDependent = regexp.MustCompile(`seeds in [0-9.]+m?s with \d+ jobs?|seeds/s`)

// TestReadmeExploreTranscript: the README's explore transcript (explore
// over naive-billing.yaml, then run of the reproducer it wrote) is what
// the commands print, line for line, but for "..." and the timing line;
// and the reproducer's header that docs/explore.md shows is the one
// explore writes.
func TestReadmeExploreTranscript(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "simtest", "testdata", "naive-billing.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := sessionBlock(t, filepath.Join("..", "..", "README.md"), "$ brokerlab explore naive-billing.yaml --seeds 200")
	headers := sessionBlock(t, filepath.Join("..", "..", "docs", "explore.md"), "# Reproducer written by brokerlab explore from naive-billing.yaml, seed 5.")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "naive-billing.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	var out string
	checked := 0
	for _, l := range lines {
		if cmd, ok := strings.CutPrefix(l, "$ brokerlab "); ok {
			_, stdout, stderr := runCLI(t, dir, false, strings.Fields(cmd)...)
			out = stdout + stderr
			continue
		}
		if l == "..." || machineDependent.MatchString(l) {
			continue
		}
		checked++
		if !strings.Contains(out, l+"\n") {
			t.Errorf("README: the line\n\t%s\nis not in what the command printed:\n%s", l, out)
		}
	}
	minimal, err := os.ReadFile(filepath.Join(dir, "naive-billing.min.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range headers {
		if strings.HasPrefix(l, "#") {
			checked++
			if !strings.Contains(string(minimal), l+"\n") {
				t.Errorf("docs/explore.md: the reproducer line\n\t%s\nis not in the reproducer explore wrote:\n%s", l, minimal)
			}
		}
	}
	if checked < 15 {
		t.Fatalf("only %d lines checked", checked)
	}
}
