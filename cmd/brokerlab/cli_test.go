package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/tui"
)

// runCLI runs the CLI in process from the directory dir and returns the
// exit code, stdout and stderr.
func runCLI(t *testing.T, dir string, terminal bool, args ...string) (int, string, string) {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	var out, errb bytes.Buffer
	c := newCLI(&out, &errb)
	c.terminal = func() bool { return terminal }
	c.play = func(d tui.Driver) error {
		if d == nil {
			return errors.New("no driver")
		}
		return nil
	}
	c.playMenu = func(ls []tui.Lesson, open func(tui.Lesson) (tui.Driver, error)) error {
		if len(ls) == 0 {
			return errors.New("no lessons")
		}
		_, err := open(ls[0])
		return err
	}
	code := c.main(args)
	return code, out.String(), errb.String()
}

// TestInvalidScenarioFilesExitTwo runs every invalid file through check and
// run: each must exit 2 and print exactly its expected file:line:col
// messages.
func TestInvalidScenarioFilesExitTwo(t *testing.T) {
	dir, _ := filepath.Abs("../../scenario/testdata/invalid")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) < 15 {
		t.Fatalf("only %d invalid files", len(files))
	}
	pos := regexp.MustCompile(`^[\w.-]+\.yaml:\d+:\d+: `)
	for _, f := range files {
		name := filepath.Base(f)
		want, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".err")
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"check", "run"} {
			t.Run(cmd+"/"+name, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, dir, false, cmd, name)
				if code != exitBadInput {
					t.Errorf("exit %d, want 2", code)
				}
				if stdout != "" {
					t.Errorf("stdout not empty: %q", stdout)
				}
				if strings.TrimSpace(stderr) != strings.TrimSpace(string(want)) {
					t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
				}
				for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
					if !pos.MatchString(line) && !strings.HasPrefix(line, "...") && !strings.Contains(line, "more error") {
						t.Errorf("line without file:line:col: %q", line)
					}
				}
			})
		}
	}
}

func TestEveryLessonRunsAndPasses(t *testing.T) {
	var names []string
	for _, l := range scenario.Lessons() {
		names = append(names, l.Name)
	}
	code, out, stderr := runCLI(t, "", false, append([]string{"run", "--quiet"}, names...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if n := strings.Count(out, "PASS "); n != len(names) {
		t.Fatalf("%d PASS lines for %d lessons:\n%s", n, len(names), out)
	}
}

func TestRunReportAndExitCodes(t *testing.T) {
	code, out, _ := runCLI(t, "", false, "run", "poison-dlq", "--seed", "7")
	if code != exitOK || !strings.Contains(out, "PASS") || !strings.Contains(out, "seed 7") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	dir := t.TempDir()
	failing := `title: Expectation that cannot hold
seed: 3
run: {ticks: 20}
topology:
  queues: [{name: orders}]
actors:
  producers: [{name: shop, to: {queue: orders}, count: 5}]
  consumers: [{name: worker, queue: orders}]
expect:
  - {metric: queue.orders.acks, op: "==", value: 4}
`
	if err := os.WriteFile(filepath.Join(dir, "fail.yaml"), []byte(failing), 0o644); err != nil {
		t.Fatal(err)
	}
	runaway, err := os.ReadFile(filepath.Join("testdata", "runaway", "emit-self.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runaway.yaml"), runaway, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, dir, false, "run", "fail.yaml")
	if code != exitFailed || !strings.Contains(out, "FAIL") || !strings.Contains(out, "fail.yaml:10:") {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	code, _, stderr := runCLI(t, dir, false, "run", "no-such-file.yaml")
	if code != exitBadInput || stderr == "" {
		t.Fatalf("missing file: exit %d %q", code, stderr)
	}
	// Several scenarios end with a line that adds them up; one does not.
	code, out, _ = runCLI(t, dir, false, "run", "poison-dlq", "fail.yaml", "no-such-file.yaml", "dual-write")
	if code != exitBadInput || !strings.HasSuffix(out, "\n\nTOTAL: 2 of 4 scenarios passed; failed: fail.yaml; not run (bad input): no-such-file.yaml\n") {
		t.Fatalf("several scenarios: exit %d, want 2 and a total line:\n%s", code, out)
	}
	// A run that stops on an error is counted apart from a file that
	// could not be loaded.
	code, out, _ = runCLI(t, dir, false, "run", "--quiet", "poison-dlq", "runaway.yaml", "no-such-file.yaml")
	if code != exitBadInput || !strings.HasSuffix(out, "TOTAL: 1 of 3 scenarios passed; not run (bad input): no-such-file.yaml; stopped by an error: runaway.yaml\n") {
		t.Fatalf("a run stopped by an error: exit %d, want 2 and it named apart:\n%s", code, out)
	}
	if _, out, _ = runCLI(t, dir, false, "run", "fail.yaml"); strings.Contains(out, "TOTAL") {
		t.Fatalf("one scenario has a total line:\n%s", out)
	}
	code, _, stderr = runCLI(t, dir, false, "run", "--seed", "minus-one", "fail.yaml")
	if code != exitBadInput || !strings.Contains(stderr, "whole number") {
		t.Fatalf("bad seed: exit %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, dir, false, "frobnicate")
	if code != exitBadInput || !strings.Contains(stderr, "unknown command") {
		t.Fatalf("unknown command: exit %d %q", code, stderr)
	}
}

func TestTraceFormats(t *testing.T) {
	code, text, _ := runCLI(t, "", false, "trace", "dual-write")
	if code != exitOK || !strings.HasPrefix(text, "t=") {
		t.Fatalf("text: exit %d %q", code, text[:min(len(text), 200)])
	}
	_, again, _ := runCLI(t, "", false, "trace", "dual-write")
	if again != text {
		t.Fatal("two traces of the same lesson differ")
	}
	_, other, _ := runCLI(t, "", false, "trace", "outbox-relay", "--seed", "1")
	_, other2, _ := runCLI(t, "", false, "trace", "outbox-relay", "--seed", "2")
	if other == other2 {
		t.Fatal("--seed did not change a lesson with probabilistic faults")
	}

	code, js, _ := runCLI(t, "", false, "trace", "--format", "json", "dual-write")
	if code != exitOK {
		t.Fatalf("json exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(js), "\n")
	if len(lines) != strings.Count(text, "\n")+1 {
		t.Fatalf("%d JSON lines for %d text lines and the closing record", len(lines), strings.Count(text, "\n"))
	}
	if want := fmt.Sprintf(`{"end":true,"events":%d,"hash":"`, len(lines)-1); !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Fatalf("the last line is not the closing record %s...: %s", want, lines[len(lines)-1])
	}
	lines = lines[:len(lines)-1]
	for i, l := range lines {
		var v struct {
			Seq  int    `json:"seq"`
			Tick int    `json:"tick"`
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Seq != i+1 || v.Kind == "" {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
	}

	code, mm, _ := runCLI(t, "", false, "trace", "--format", "mermaid", "--max", "40", "dual-write")
	if code != exitOK {
		t.Fatalf("mermaid exit %d", code)
	}
	checkMermaid(t, mm)

	code, _, stderr := runCLI(t, "", false, "trace", "--format", "svg", "dual-write")
	if code != exitBadInput || !strings.Contains(stderr, "allowed: text, json, mermaid") {
		t.Fatalf("bad format: %d %q", code, stderr)
	}
}

// checkMermaid checks the shape of a sequenceDiagram: the header, declared
// participants, and only arrows and notes between declared participants.
func checkMermaid(t *testing.T, s string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if lines[0] != "sequenceDiagram" {
		t.Fatalf("first line %q", lines[0])
	}
	// Text is characters Mermaid takes as text, and its entity codes.
	const text = `(?:[^;#:<>&%]|#\d+;)+`
	participant := regexp.MustCompile(`^    participant (p\d+) as ` + text + `$`)
	arrow := regexp.MustCompile(`^    (p\d+)(->>|-->>|--x)(p\d+): ` + text + `$`)
	note := regexp.MustCompile(`^    Note over (p\d+)(?:,(p\d+))?: ` + text + `$`)
	declared := map[string]bool{}
	messages := 0
	for _, l := range lines[1:] {
		switch {
		case participant.MatchString(l):
			if messages > 0 {
				t.Fatalf("participant after messages: %q", l)
			}
			declared[participant.FindStringSubmatch(l)[1]] = true
		case arrow.MatchString(l):
			m := arrow.FindStringSubmatch(l)
			if !declared[m[1]] || !declared[m[3]] {
				t.Fatalf("undeclared participant in %q", l)
			}
			messages++
		case note.MatchString(l):
			if m := note.FindStringSubmatch(l); !declared[m[1]] || m[2] != "" && !declared[m[2]] {
				t.Fatalf("undeclared participant in %q", l)
			}
			messages++
		default:
			t.Fatalf("not a Mermaid sequenceDiagram line: %q", l)
		}
	}
	if messages < 10 || len(declared) < 2 {
		t.Fatalf("%d messages between %d participants", messages, len(declared))
	}
}

func TestListCheckHelpAndHeadless(t *testing.T) {
	code, out, _ := runCLI(t, "", false, "list")
	if code != exitOK || !strings.Contains(out, "poison-dlq") || !strings.Contains(out, "architecture-choice") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", false)
	if code != exitOK || !strings.Contains(out, "Usage:") || !strings.Contains(out, "dual-write") || !strings.Contains(out, "not a terminal") {
		t.Fatalf("headless no-arg: %d\n%s", code, out)
	}
	for _, cmd := range []string{"play", "run", "trace", "check", "list", "version", "help"} {
		code, out, stderr := runCLI(t, "", false, cmd, "--help")
		want := "Usage: brokerlab " + cmd
		if cmd == "help" {
			want = "Usage:"
		}
		if code != exitOK || !strings.Contains(out+stderr, want) && cmd != "version" {
			t.Errorf("%s --help: %d %q %q", cmd, code, out, stderr)
		}
	}
	code, out, _ = runCLI(t, "", false, "help", "trace")
	if code != exitOK || !strings.Contains(out, "--format") && !strings.Contains(out, "-format") {
		t.Fatalf("help trace: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "", false, "check", "../../scenario/testdata/valid/poison-dlq.yaml")
	if code != exitOK || !strings.Contains(out, ": ok") {
		t.Fatalf("check valid: %d %q", code, out)
	}
}

func TestPlayNeedsATerminal(t *testing.T) {
	code, _, stderr := runCLI(t, "", false, "play", "poison-dlq")
	if code != exitBadInput || !strings.Contains(stderr, "needs a terminal") || !strings.Contains(stderr, "brokerlab run") {
		t.Fatalf("play headless: %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", true, "play", "poison-dlq")
	if code != exitOK {
		t.Fatalf("play with terminal: %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", true)
	if code != exitOK {
		t.Fatalf("menu with terminal: %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", true, "play", "no-such-lesson")
	if code != exitBadInput || stderr == "" {
		t.Fatalf("play unknown: %d %q", code, stderr)
	}
}

// TestPlayUnknownLessonBeforeTerminal checks that a mistyped lesson is
// reported as such, with a suggestion, before the missing terminal is: the
// terminal would not help.
func TestPlayUnknownLessonBeforeTerminal(t *testing.T) {
	code, _, stderr := runCLI(t, "", false, "play", "poison-dlg")
	if code != exitBadInput || strings.Contains(stderr, "terminal") || !strings.Contains(stderr, `did you mean "poison-dlq"?`) {
		t.Fatalf("play typo headless: %d %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", false, "run", "poison-dlg")
	if code != exitBadInput || strings.Contains(stderr, "cannot read") || !strings.Contains(stderr, `did you mean "poison-dlq"?`) {
		t.Fatalf("run typo: %d %q", code, stderr)
	}
}

// TestNoControlCharactersReachTheTerminal feeds files with ESC and other
// control characters in every kind of string (title, narration, keys,
// names, types, unknown field names, tags, raw and as escapes) to every
// command and output format: neither stdout nor stderr may carry one on.
func TestNoControlCharactersReachTheTerminal(t *testing.T) {
	base := func(title, extra string) string {
		return "title: " + title + "\nrun: {ticks: 5}\ntopology:\n  queues: [{name: q}]\n" +
			"actors:\n  producers: [{name: p, to: {queue: q}, count: 2, keys: [k1, k2]}]\n  consumers: [{name: c, queue: q}]\n" + extra
	}
	files := map[string]string{
		"title-raw.yaml":       base("\"clear \x1b[2J\"", ""),
		"title-escape.yaml":    base("\"clear \\e[2J\"", ""),
		"title-8bit.yaml":      base("\"csi \x9b2J\"", ""),
		"title-c1.yaml":        base("\"csi \u009b2J\"", ""),
		"narration.yaml":       base("t", "narration:\n  - {at: 1, text: \"beep \\a blink \x1b[5m\\x08\\0\"}\n"),
		"narration-block.yaml": base("t", "narration:\n  - at: 1\n    text: |\n      one\n      two \x1b[5mblink\x1b[0m\n"),
		"keys.yaml":            strings.Replace(base("t", ""), "keys: [k1, k2]", "keys: [\"k\x1b[2J\", k2]", 1),
		"key-pattern.yaml":     strings.Replace(base("t", ""), "keys: [k1, k2]", "keys: \"k\\e%d\", key_count: 2", 1),
		"name.yaml":            strings.Replace(base("t", ""), "{name: q}]", "{name: \"q\x1b[2J\"}]", 1),
		"type.yaml":            strings.Replace(base("t", ""), "count: 2,", "count: 2, type: \"order\\e]0;pwned\\a\",", 1),
		"unknown-field.yaml":   base("t", "\x1b[2Jtitle: x\n"),
		"unknown-value.yaml":   base("t", "extra: \"\x1b[2J\"\n"),
		"tag.yaml":             base("!x\x1b[2J t", ""),
		"syntax.yaml":          "title: \x1b[2J\n  - : ]\x1b\n",
		"seed.yaml":            base("t", "seed: \"\x1b[2J\"\n"),
		"error-text.yaml": strings.Replace(base("t", ""), "{name: c, queue: q}",
			"{name: c, queue: q, handler: {kind: permanent, error: \"\x1b[2J\"}}", 1),
	}
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	control := regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]")
	commands := [][]string{{"check"}, {"run"}, {"run", "--quiet"}, {"trace"}, {"trace", "--format", "json"}, {"trace", "--format", "mermaid"}}
	for _, name := range sortedNames(files) {
		for _, cmd := range commands {
			code, stdout, stderr := runCLI(t, dir, false, append(append([]string(nil), cmd...), name)...)
			if code != exitBadInput {
				t.Errorf("%s %s: exit %d, want 2", strings.Join(cmd, " "), name, code)
			}
			for stream, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
				if strings.Contains(out, "\x1b") || control.MatchString(out) {
					t.Errorf("%s %s: %s carries a control character: %q", strings.Join(cmd, " "), name, stream, out)
				}
			}
			if stdout != "" {
				t.Errorf("%s %s: stdout %q", strings.Join(cmd, " "), name, stdout)
			}
		}
	}
}

func sortedNames(m map[string]string) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// TestRunStrict: a run until drained that stops at max_ticks with work
// left says so; with --strict it fails.
func TestRunStrict(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		// Nobody reads the queue, so it never drains.
		"stuck.yaml": "title: Stuck\nrun: {until: drained, max_ticks: 5}\ntopology:\n  queues: [{name: orders}]\n" +
			"actors:\n  producers: [{name: shop, to: {queue: orders}, count: 3}]\n" +
			"expect:\n  - {metric: queue.orders.depth, op: \">=\", value: 0}\n",
		"drains.yaml": "title: Drains\nrun: {until: drained, max_ticks: 50}\ntopology:\n  queues: [{name: orders}]\n" +
			"actors:\n  producers: [{name: shop, to: {queue: orders}, count: 3}]\n  consumers: [{name: worker, queue: orders}]\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	note := "NOTE: stopped at max_ticks 5 before draining: the expectations were checked on a run that had not finished; raise max_ticks to let it drain\n"
	code, out, _ := runCLI(t, dir, false, "run", "stuck.yaml")
	if code != exitOK || !strings.Contains(out, note) || !strings.HasSuffix(out, "PASS: 1 of 1 expectations hold, not drained\n") {
		t.Errorf("run: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, dir, false, "run", "--strict", "stuck.yaml")
	if code != exitFailed || !strings.Contains(out, note) || !strings.HasSuffix(out, "FAIL: 1 of 1 expectations hold, not drained\n") {
		t.Errorf("run --strict: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, dir, false, "run", "--quiet", "stuck.yaml", "drains.yaml", "--strict")
	want := "FAIL stuck.yaml (seed 1, 5 ticks, stopped at max_ticks before draining)\nPASS drains.yaml (seed 1, 3 ticks)\nTOTAL: 1 of 2 scenarios passed; failed: stuck.yaml\n"
	if code != exitFailed || out != want {
		t.Errorf("run --quiet --strict: exit %d\n%s\nwant:\n%s", code, out, want)
	}
	code, out, _ = runCLI(t, dir, false, "run", "--strict", "drains.yaml", "poison-dlq")
	if code != exitOK || strings.Contains(out, "NOTE") || strings.Contains(out, "not drained") {
		t.Errorf("run --strict of runs that drain or have fixed ticks: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", false, "help", "run")
	if code != exitOK || !strings.Contains(out, "-strict") {
		t.Errorf("help run does not document --strict: %s", out)
	}
}

// TestCheckWarnsAboutUnboundedLoops: check prints warnings as
// file:line:col: warning: ... on stderr and still exits 0.
func TestCheckWarnsAboutUnboundedLoops(t *testing.T) {
	dir, _ := filepath.Abs("../../scenario/testdata/warn")
	want, err := os.ReadFile(filepath.Join(dir, "topic-loops.warn"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, dir, false, "check", "topic-loops.yaml")
	if code != exitOK || stdout != "topic-loops.yaml: ok (Loops)\n" || stderr != string(want) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", code, stdout, stderr, want)
	}
	if !regexp.MustCompile(`^topic-loops\.yaml:\d+:\d+: warning: `).MatchString(stderr) {
		t.Errorf("warning without file:line:col: %q", stderr)
	}
	code, _, stderr = runCLI(t, "", false, "check", "sync-loop", "event-storm")
	if code != exitOK || stderr != "" {
		t.Errorf("lessons with bounded loops: exit %d, stderr %q", code, stderr)
	}
}
