package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// controlChar matches what may not reach a terminal raw (see package
// printable).
var controlChar = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")

// TestNoControlCharactersFromNamesFlagsAndTraces feeds ESC and BEL through
// what a scenario file cannot hold: file names (printed on success by
// check, run, explore and record), flags, check names and the keys and
// actors of a hand-written trace. No stream may carry one on.
func TestNoControlCharactersFromNamesFlagsAndTraces(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../scenario/testdata/explore/naive-billing.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := "clear\x1b[2J\a\u009b\u202e.yaml"
	if err := os.WriteFile(filepath.Join(dir, bad), src, 0o644); err != nil {
		t.Skip("the file system refuses the name:", err)
	}
	trace := `{"seq":1,"tick":1,"kind":"sent","where":"queue:q\u001b]0;pwned\u0007","msg":"m1","key":"k\u001b[2J\u0007","actor":"p\u001b[5m"}` + "\n" +
		`{"seq":2,"tick":2,"kind":"sent","where":"queue:q","msg":"m2","key":"k","actor":"p"}` + "\n"
	os.WriteFile(filepath.Join(dir, "esc.jsonl"), []byte(trace), 0o644)
	os.WriteFile(filepath.Join(dir, "bad\x1b[2J.jsonl"), []byte("{\"seq\":1,\"kind\":\"\x1b[2J\a\"}\n"), 0o644)
	cases := [][]string{
		{"check", bad},
		{"run", bad},
		{"run", "--quiet", bad},
		{"explore", "--seeds", "40", "--json", "r\x1b[2J.json", bad},
		{"trace", bad},
		{"explore", "merge", "r\x1b[2J.json"},
		{"explore", "merge", "missing\x1b[2J.json"},
		{"record", "--cast", "c\x1b[2J\a.cast", bad},
		{"record", "--cast", "c.cast", "missing\x1b[2J.yaml"},
		{"run", "--\x1b[2J", bad},
		{"run", "--seed", "\x1b[2J", bad},
		{"trace", "--format", "\x1b[2J", bad},
		{"verify", "esc.jsonl"},
		{"verify", "--check", "exactly_once:c\x1b[2J\a", "esc.jsonl"},
		{"verify", "--check", "bogus\x1b[2J", "esc.jsonl"},
		{"verify", "bad\x1b[2J.jsonl"},
		{"verify", "--\x1b[2J", "esc.jsonl"},
		{"\x1b[2J"},
		{"help", "\x1b[2J"},
		{"explore", "--shard", "\x1b[2J", bad},
	}
	const named = 4 // the first cases print the file name
	for i, args := range cases {
		code, stdout, stderr := runCLI(t, dir, false, args...)
		if stdout == "" && stderr == "" {
			t.Errorf("%q: exit %d and no output", args, code)
		}
		for stream, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if controlChar.MatchString(out) {
				t.Errorf("%q (exit %d): %s carries a control character: %q", args, code, stream, out)
			}
		}
		// The name is still there, spelled out.
		if i < named && !strings.Contains(stdout+stderr, `clear\x1b[2J\a\u009b\u202e.yaml`) {
			t.Errorf("%q: the file name is not shown escaped:\n%s%s", args, stdout, stderr)
		}
	}
}
