package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// lessonTrace is the JSON Lines trace of one lesson or lesson variant.
type lessonTrace struct {
	label         string
	lesson, vname string
	pass          bool     // the live verdict
	report        string   // the live report's text
	lines         []string // without their "\n"; the last is the closing record
}

// lessonTraces records the JSON Lines trace of every lesson and every
// variant of one, as 'brokerlab trace --format json' writes it.
func lessonTraces(t *testing.T) []lessonTrace {
	t.Helper()
	var out []lessonTrace
	for _, l := range scenario.Lessons() {
		base, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{""}
		for _, vr := range base.Variants {
			names = append(names, vr.Name)
		}
		for _, vn := range names {
			s, label := base, l.Name
			if vn != "" {
				if s, err = base.Variant(vn); err != nil {
					t.Fatal(err)
				}
				label += "/" + vn
			}
			var js bytes.Buffer
			jw := sim.NewJSONWriter(&js)
			rep, err := lab.Execute(s, lab.Options{Sinks: []sim.Sink{jw}})
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			if err := jw.Close(); err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			out = append(out, lessonTrace{label, l.Name, vn, rep.Pass, text.String(), strings.Split(strings.TrimSuffix(js.String(), "\n"), "\n")})
		}
	}
	return out
}

// tamper is one edit of a trace: the lines after the edit, and the line
// the refusal must name (0: the trace must be refused as truncated).
type tamper struct {
	what  string
	lines []string
	line  int
}

var (
	tickField = regexp.MustCompile(`"tick":(\d+)`)
	kindField = regexp.MustCompile(`"kind":"[a-z_]+"`)
	hashField = regexp.MustCompile(`,"hash":"[0-9a-f]+"`)
)

// tampers returns the edits of lines at index i (0-based) of a trace of n
// lines: the line edited, deleted, moved after the next one, duplicated,
// and the trace cut after it.
func tampers(lines []string, i int) []tamper {
	n := len(lines)
	with := func(f func(out []string) []string) []string {
		return f(append([]string(nil), lines...))
	}
	var ts []tamper
	// An edit: a closing record miscounts, an event changes what it says.
	edited := lines[i]
	switch {
	case strings.HasPrefix(edited, `{"end":`):
		edited = strings.Replace(edited, `"events":`, `"events":1`, 1)
	case i%3 == 0:
		edited = tickField.ReplaceAllStringFunc(edited, func(s string) string { return s + "0" })
	case i%3 == 1:
		edited = kindField.ReplaceAllString(edited, `"kind":"skipped"`)
		if edited == lines[i] {
			edited = strings.Replace(edited, `"tick":`, `"tick":1`, 1)
		}
	default:
		edited = hashField.ReplaceAllString(edited, "")
	}
	ts = append(ts, tamper{"edit", with(func(o []string) []string { o[i] = edited; return o }), i + 1})
	// A deletion is named at the line that takes its place; deleting the
	// closing record truncates the trace.
	del := with(func(o []string) []string { return append(o[:i], o[i+1:]...) })
	if i == n-1 {
		ts = append(ts, tamper{"delete", del, 0})
	} else {
		ts = append(ts, tamper{"delete", del, i + 1})
	}
	if i+1 < n {
		ts = append(ts, tamper{"reorder", with(func(o []string) []string { o[i], o[i+1] = o[i+1], o[i]; return o }), i + 1})
	}
	dup := with(func(o []string) []string { return append(o[:i+1], append([]string{lines[i]}, lines[i+1:]...)...) })
	ts = append(ts, tamper{"duplicate", dup, i + 2})
	if i < n-1 {
		ts = append(ts, tamper{"truncate", lines[:i+1], 0})
	}
	return ts
}

// positions picks the lines of a trace to tamper with: about 12 spread
// over it, the first, the last event and the closing record, and the
// first 4 lines of a processed effect (deleting the second one of a
// duplicate is how a forged PASS was made).
func positions(lines []string) []int {
	n := len(lines)
	seen := map[int]bool{}
	var out []int
	add := func(i int) {
		if i >= 0 && i < n && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	add(0)
	add(n - 2)
	add(n - 1)
	step := max(1, n/12)
	for i := 0; i < n; i += step {
		add(i)
	}
	processed := 0
	for i, l := range lines {
		if strings.Contains(l, `"kind":"processed"`) && processed < 4 {
			add(i)
			processed++
		}
	}
	return out
}

// TestVerifyRefusesTamperedTraces edits, deletes, reorders, duplicates
// and cuts lines of every lesson's trace (variants included) and runs
// 'brokerlab verify' on each result: every one must exit 2 and name the
// line it went wrong on, or say the trace was truncated. None may PASS or
// FAIL, since a verdict on a tampered trace is a forgery.
func TestVerifyRefusesTamperedTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("tampers with every lesson's trace")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.jsonl")
	traces, tampered := 0, 0
	byKind := map[string]int{}
	for _, lt := range lessonTraces(t) {
		traces++
		// The untouched trace verifies.
		if err := os.WriteFile(path, []byte(strings.Join(lt.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "", false, "verify", path); code == exitBadInput {
			t.Fatalf("%s: the untouched trace is refused: %s", lt.label, stderr)
		}
		for _, i := range positions(lt.lines) {
			for _, tm := range tampers(lt.lines, i) {
				body := strings.Join(tm.lines, "\n")
				if len(tm.lines) > 0 {
					body += "\n"
				}
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				tampered++
				byKind[tm.what]++
				code, stdout, stderr := runCLI(t, "", false, "verify", path)
				where := fmt.Sprintf("%s: %s of line %d", lt.label, tm.what, i+1)
				if code != exitBadInput || stdout != "" {
					t.Errorf("%s: exit %d, want 2 and no verdict; stdout %q", where, code, stdout)
					continue
				}
				want := fmt.Sprintf("%s:%d:1: bad trace: ", path, tm.line)
				if tm.line == 0 {
					want = "bad trace: truncated: the run did not finish"
				}
				if !strings.HasPrefix(stderr, path+":") || !strings.Contains(stderr, want) {
					t.Errorf("%s: want %q in %q", where, want, stderr)
				}
			}
		}
	}
	t.Logf("%d traces, %d tampered copies, all refused with the line named: %v", traces, tampered, byKind)
}

// TestVerifyRefusesTheForgedPass is the report's repro: a naive consumer
// charged twice after a redrive, the second processed line deleted.
// verify used to say PASS; now it names the gap.
func TestVerifyRefusesTheForgedPass(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pay.jsonl")
	var js bytes.Buffer
	tr := sim.NewTrace(sim.NewJSONWriter(&js))
	for _, e := range []sim.Event{
		{Tick: 1, Kind: sim.KindSent, Where: "queue:pay", Consumer: "pay", Msg: 1},
		{Tick: 2, Kind: sim.KindReceived, Where: "queue:pay", Consumer: "pay", Msg: 1, Attempt: 1},
		{Tick: 2, Kind: sim.KindProcessed, Where: "queue:pay", Consumer: "pay", Msg: 1},
		{Tick: 5, Kind: sim.KindDeadLettered, Where: "queue:pay", Consumer: "pay", Msg: 1},
		{Tick: 6, Kind: sim.KindRedriven, Where: "queue:pay", Consumer: "pay", Msg: 2, Origin: 1},
		{Tick: 7, Kind: sim.KindReceived, Where: "queue:pay", Consumer: "pay", Msg: 2, Attempt: 1},
		{Tick: 7, Kind: sim.KindProcessed, Where: "queue:pay", Consumer: "pay", Msg: 2},
		{Tick: 7, Kind: sim.KindAcked, Where: "queue:pay", Consumer: "pay", Msg: 2},
	} {
		tr.Emit(e)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(js.String(), "\n")
	if err := os.WriteFile(path, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := runCLI(t, "", false, "verify", "--check", "exactly_once:pay", path); code != exitFailed || !strings.Contains(stdout, "effect applied 2 times") {
		t.Fatalf("the whole trace: exit %d\n%s", code, stdout)
	}
	forged := strings.Join(append(lines[:6:6], lines[7:]...), "")
	if err := os.WriteFile(path, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", false, "verify", "--check", "exactly_once:pay", path)
	if code != exitBadInput || strings.Contains(stdout, "PASS") || !strings.Contains(stderr, "pay.jsonl:7:1: bad trace: seq 8, but seq 7 comes next") {
		t.Fatalf("the forged trace: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// Cut while the duplicate is still to come: truncated, exit 2.
	if err := os.WriteFile(path, []byte(strings.Join(lines[:5], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "", false, "verify", "--check", "exactly_once:pay", path)
	if code != exitBadInput || stdout != "" || !strings.Contains(stderr, "truncated: the run did not finish") {
		t.Fatalf("the cut trace: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// writeTrace records events as a closed JSON Lines trace in dir.
func writeTrace(t *testing.T, dir string, events ...sim.Event) string {
	t.Helper()
	var js bytes.Buffer
	tr := sim.NewTrace(sim.NewJSONWriter(&js))
	for _, e := range events {
		tr.Emit(e)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(path, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestVerifyNamesTheQueueForAWorker: a check given a worker's name judged
// nothing; verify says which queue the worker serves, spelled as a flag,
// on stderr with no verdict, and exits 2 as for any other mistake in the
// command.
func TestVerifyNamesTheQueueForAWorker(t *testing.T) {
	path := writeTrace(t, t.TempDir(),
		sim.Event{Tick: 1, Kind: sim.KindSent, Where: "queue:orders", Consumer: "orders", Msg: 1},
		sim.Event{Tick: 2, Kind: sim.KindReceived, Where: "queue:orders", Consumer: "orders", Actor: "worker#2", Msg: 1},
		sim.Event{Tick: 2, Kind: sim.KindProcessed, Where: "queue:orders", Consumer: "orders", Actor: "worker#2", Msg: 1},
	)
	code, stdout, stderr := runCLI(t, "", false, "verify", "--check", "at_least_once:worker", path)
	if code != exitBadInput || stdout != "" || !strings.Contains(stderr, `brokerlab verify: --check at_least_once:worker: `) ||
		!strings.Contains(stderr, `"worker" is a worker of queue "orders": checks name the queue (--check at_least_once:orders)`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if code, stdout, _ := runCLI(t, "", false, "verify", "--check", "at_least_once:orders", path); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
}

// TestVerifyCapsItsOutput lists the first violations of a check and
// counts the rest, as run does; --all lists every one.
func TestVerifyCapsItsOutput(t *testing.T) {
	var evs []sim.Event
	for i := 1; i <= 25; i++ {
		evs = append(evs, sim.Event{Tick: 1, Kind: sim.KindSent, Where: "queue:orders", Consumer: "orders", Msg: sim.ID(i)})
	}
	path := writeTrace(t, t.TempDir(), evs...)
	code, stdout, _ := runCLI(t, "", false, "verify", "--check", "at_least_once:orders", path)
	if code != exitFailed || strings.Count(stdout, "at-least-once: m") != lab.MaxReportViolations || !strings.Contains(stdout, "... and 15 more (--all lists them)") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCLI(t, "", false, "verify", "--all", "--check", "at_least_once:orders", path)
	if code != exitFailed || strings.Count(stdout, "at-least-once: m") != 25 || strings.Contains(stdout, "more") {
		t.Fatalf("--all: exit %d\n%s", code, stdout)
	}
}

// TestVerifyScenarioRederivesEveryLesson records every lesson and variant
// with 'brokerlab trace --format json [--variant V]' and judges it with
// 'brokerlab verify --scenario': the re-derived report is the live one,
// line for line, and so is the exit code.
func TestVerifyScenarioRederivesEveryLesson(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	n := 0
	for _, lt := range lessonTraces(t) {
		args := []string{"trace", "--format", "json", lt.lesson}
		verify := []string{"verify", "--scenario", lt.lesson, path}
		if lt.vname != "" {
			args = append(args, "--variant", lt.vname)
			verify = append(verify, "--variant", lt.vname)
		}
		_, js, _ := runCLI(t, "", false, args...)
		if js != strings.Join(lt.lines, "\n")+"\n" {
			t.Fatalf("%s: the CLI's trace differs from the library's", lt.label)
		}
		if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCLI(t, "", false, verify...)
		want := exitOK
		if !lt.pass {
			want = exitFailed
		}
		if code != want {
			t.Errorf("%s: verify --scenario exit %d, live %d\n%s%s", lt.label, code, want, stdout, stderr)
			continue
		}
		live := lt.report
		for _, line := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(line, "PASS  ") || strings.HasPrefix(line, "FAIL  ") {
				n++
				if !strings.Contains(live, line+"\n") {
					t.Errorf("%s: re-derived %q is not in the live report:\n%s", lt.label, line, live)
				}
			}
		}
	}
	t.Logf("%d expectations of every lesson and variant re-derived by verify --scenario, each equal to the live report's line", n)
}
