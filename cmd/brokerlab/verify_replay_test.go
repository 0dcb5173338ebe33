package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyReplaysTheSeed: with --seed, verify --scenario also runs the
// scenario at that seed and holds the trace to that run, line for line.
// A trace recorded at seed 7 passes at 7 and fails at 8 naming the first
// line that differs, for a lesson and for a lesson's variant; --seed
// without --scenario is refused.
func TestVerifyReplaysTheSeed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ lesson, variant string }{{"visibility-timeout", ""}, {"idempotent-consumer", "naive"}} {
		args := []string{"trace", "--format", "json", "--seed", "7", c.lesson}
		vargs := []string{}
		if c.variant != "" {
			vargs = []string{"--variant", c.variant}
		}
		code, out, errs := runCLI(t, dir, false, append(args, vargs...)...)
		if code == exitBadInput {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		trace := filepath.Join(dir, c.lesson+".jsonl")
		if err := os.WriteFile(trace, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		verify := func(seed string) (int, string) {
			code, out, errs := runCLI(t, dir, false, append([]string{"verify", "--scenario", c.lesson, "--seed", seed, trace}, vargs...)...)
			return code, out + errs
		}
		if code, out := verify("7"); code == exitBadInput || !strings.Contains(out, "PASS  replay at seed 7: the run gives this trace, line for line") ||
			!strings.Contains(out, "; the trace is the run at seed 7\n") {
			t.Errorf("%s %s at its own seed: exit %d, want the replay to pass:\n%s", c.lesson, c.variant, code, out)
		}
		if code, out := verify("8"); code != exitFailed || !strings.Contains(out, "FAIL  replay at seed 8: line ") ||
			!strings.Contains(out, "trace: {") || !strings.Contains(out, "run:   {") || !strings.Contains(out, "FAIL: the trace is not the run at seed 8; ") {
			t.Errorf("%s %s at another seed: exit %d, want 1 and the first line that differs:\n%s", c.lesson, c.variant, code, out)
		}
	}
	code, _, errs := runCLI(t, dir, false, "verify", "--seed", "7", filepath.Join(dir, "visibility-timeout.jsonl"))
	if code != exitBadInput || !strings.Contains(errs, "--seed need") {
		t.Errorf("--seed without --scenario: exit %d, want 2 and why:\n%s", code, errs)
	}
}

// TestLineComparerShowsWhereLongLinesDiffer: a difference past the 160th
// column is shown, in a window around it.
func TestLineComparerShowsWhereLongLinesDiffer(t *testing.T) {
	long := strings.Repeat("x", 300)
	cmp := &lineComparer{rec: bufio.NewReader(strings.NewReader(long + "A" + long + "\n"))}
	cmp.Write([]byte(long + "B" + long + "\n"))
	cmp.end()
	if !strings.Contains(cmp.diff, "column 301") || !strings.Contains(cmp.diff, "xA") || !strings.Contains(cmp.diff, "xB") || !strings.Contains(cmp.diff, "…") {
		t.Errorf("the difference is not shown:\n%s", cmp.diff)
	}
}

// TestLineComparer: the comparer of a replay names the first line that
// differs, a trace that ends before the run, and one that goes on after
// it, and passes identical text written in any pieces.
func TestLineComparer(t *testing.T) {
	for _, c := range []struct {
		rec, run string
		want     string // a part of the difference; "" for none
	}{
		{"a\nb\nc\n", "a\nb\nc\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n", "line 2 differs from column 1 on"},
		{"a\nbcd\nc\n", "a\nbcD\nc\n", "line 2 differs from column 3 on"},
		{"a\nb\n", "a\nb\nc\n", "the trace ends after its line 2"},
		{"a\nb\nc\n", "a\nb\n", "the run ends, the trace goes on at its line 3"},
		{"a\nb", "a\nb", ""},
		// As sim.ReadJSONL reads a trace: no final newline, CRLF line
		// ends, spaces around a line and blank lines do not count.
		{"a\nb", "a\nb\n", ""},
		{"a\r\nb\r\n", "a\nb\n", ""},
		{"a\n\n  b \n\n", "a\nb\n", ""},
		{"a\n\nB\n", "a\nb\n", "line 3 differs"},
	} {
		for _, piece := range []int{1, 2, 100} {
			cmp := &lineComparer{rec: bufio.NewReader(strings.NewReader(c.rec))}
			for run := c.run; run != ""; {
				n := min(piece, len(run))
				cmp.Write([]byte(run[:n]))
				run = run[n:]
			}
			cmp.end()
			if cmp.err != nil || (c.want == "") != (cmp.diff == "") || !strings.Contains(cmp.diff, c.want) {
				t.Errorf("recorded %q, run %q in pieces of %d: diff %q, err %v; want %q", c.rec, c.run, piece, cmp.diff, cmp.err, c.want)
			}
		}
	}
}
