package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/printable"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// checkList is a repeatable --check flag.
type checkList []string

func (c *checkList) String() string     { return fmt.Sprint(*c) }
func (c *checkList) Set(s string) error { *c = append(*c, s); return nil }

// cmdVerify re-derives the ledger from a recorded JSON Lines trace and runs
// the checkers over it, so any verdict can be audited from the trace alone.
func (c *cli) cmdVerify(args []string) int {
	fs := c.flags("verify")
	var checks checkList
	scen := fs.String("scenario", "", "judge the whole expect list of this FILE or LESSON from the trace, as the run did")
	variant := fs.String("variant", "", "with --scenario: the variant the trace was recorded from")
	var seed seedFlag
	fs.Var(&seed, "seed", "with --scenario: also run the scenario at this seed and require the trace to be that run, line for line")
	all := fs.Bool("all", false, fmt.Sprintf("list every violation (default: the first %d of each check, and a count of the rest)", lab.MaxReportViolations))
	fs.Var(&checks, "check", "a check to run (repeatable): no_loss, at_least_once:CONSUMER, at_most_once:CONSUMER, exactly_once:CONSUMER, ordered_per_key:CONSUMER, max_duplicates:CONSUMER:N")
	// Flags may come before or after the file.
	files, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(files) != 1 {
		fmt.Fprintln(c.stderr, "brokerlab verify: give exactly one TRACE.jsonl (written by 'brokerlab trace --format json')")
		return exitBadInput
	}
	path := files[0]
	switch {
	case *scen != "" && len(checks) > 0:
		fmt.Fprintln(c.stderr, "brokerlab verify: give --check CHECK... or --scenario FILE [--variant V] [--seed N], not both")
		return exitBadInput
	case *variant != "" && *scen == "":
		fmt.Fprintln(c.stderr, "brokerlab verify: --variant needs --scenario FILE: a variant is of a scenario")
		return exitBadInput
	case seed.set && *scen == "":
		fmt.Fprintln(c.stderr, "brokerlab verify: --seed needs --scenario FILE: the seed is the one to run the scenario at")
		return exitBadInput
	}
	var checkers []sim.Checker
	for _, spec := range checks {
		ch, err := sim.ParseCheck(spec)
		if err != nil {
			fmt.Fprintln(c.stderr, "brokerlab verify:", printable.String(err.Error()))
			return exitBadInput
		}
		checkers = append(checkers, ch)
	}
	if len(checkers) == 0 {
		checkers = []sim.Checker{sim.NoLoss()}
	}
	// The file is opened first, without blocking (a FIFO nobody writes
	// to would block the open), and what was opened must be a regular
	// file: nothing can be swapped in between a check and the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("it is %s, not a regular file", kind(fi.Mode()))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s:1:1: cannot read the trace: %v\n", printable.String(path), pathError(err))
		return exitBadInput
	}
	defer f.Close()
	r := &headReader{r: f}
	if *scen != "" {
		return c.verifyScenario(*scen, *variant, path, f, r, seed.ptr(), *all)
	}
	l := sim.NewLedger()
	var actors sim.ActorIndex
	if err := sim.ReadJSONL(r, sim.SinkFunc(func(e *sim.Event) { l.Emit(e); actors.Emit(e) })); err != nil {
		fmt.Fprintln(c.stderr, traceError(path, r.head, err))
		return exitBadInput
	}
	results := make([][]sim.Violation, len(checkers))
	misused := false
	for i, ch := range checkers {
		results[i] = actors.Hint(ch.Violations(l), cliCheck)
		for _, x := range results[i] {
			if x.Misuse {
				// A check that names no consumer of the trace judged
				// nothing: that is a mistake in the command, not a
				// verdict on the run, so it is reported as one.
				fmt.Fprintf(c.stderr, "brokerlab verify: --check %s: %s\n", printable.String(checks0(checks, i)), printable.String(x.Detail))
				misused = true
			}
		}
	}
	if misused {
		return exitBadInput
	}
	s := l.Stats()
	fmt.Fprintf(c.stdout, "ledger folded from %s: %s\n", printable.String(path), lab.LedgerLine(s))
	failed := 0
	for i, v := range results {
		verdict := "PASS"
		if len(v) > 0 {
			verdict = "FAIL"
			failed++
		}
		noun := "violations"
		if len(v) == 1 {
			noun = "violation"
		}
		fmt.Fprintf(c.stdout, "%s  %s  (%d %s)\n", verdict, printable.String(checks0(checks, i)), len(v), noun)
		for j, x := range v {
			if j == lab.MaxReportViolations && !*all {
				fmt.Fprintf(c.stdout, "      ... and %d more (--all lists them)\n", len(v)-j)
				break
			}
			fmt.Fprintf(c.stdout, "      %s\n", printable.String(x.String()))
		}
	}
	if failed > 0 {
		fmt.Fprintf(c.stdout, "FAIL: %d of %d checks failed\n", failed, len(checkers))
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "PASS: %d of %d checks hold\n", len(checkers), len(checkers))
	return exitOK
}

// headSize is how much of the start of a trace headReader keeps.
const headSize = 4 << 10

// headReader reads r and keeps its first headSize bytes, so that a
// complaint about the start of the file can look at it again.
type headReader struct {
	r    io.Reader
	head []byte
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if room := headSize - len(h.head); room > 0 {
		h.head = append(h.head, p[:min(n, room)]...)
	}
	return n, err
}

// yamlKey matches a first line that starts as a YAML mapping key.
var yamlKey = regexp.MustCompile(`^[A-Za-z_][\w-]*\s*:`)

// traceError words err, from reading the trace at path whose file starts
// with head, as FILE:LINE:COL: MESSAGE, the form of the scenario loader's
// messages. A first line that is not a JSON object is "not a JSON Lines
// trace", and when the file looks like a scenario (a .yaml name, or a
// first line that is a YAML comment, document start or key) the message
// gives the commands that verify a trace of it.
func traceError(path string, head []byte, err error) string {
	name := printable.String(path)
	var te *sim.TraceError
	if !errors.As(err, &te) {
		return fmt.Sprintf("%s:1:1: cannot read the trace: %s", name, printable.String(err.Error()))
	}
	line, msg := max(te.Line, 1), te.Msg
	if te.Truncated {
		msg = strings.TrimPrefix(te.Error(), sim.ErrBadTrace.Error()+": ")
	}
	if first, n, col, ok := firstLine(head); ok && n == line && !bytes.HasPrefix(first, []byte("{")) {
		pos := fmt.Sprintf("%s:%d:%d: not a JSON Lines trace: ", name, n, col)
		ext := strings.ToLower(filepath.Ext(path))
		if ext == ".yaml" || ext == ".yml" || first[0] == '#' || bytes.HasPrefix(first, []byte("---")) || yamlKey.Match(first) {
			return pos + fmt.Sprintf("it looks like a scenario file; verify a trace of it with 'brokerlab verify --scenario %s TRACE.jsonl', written by 'brokerlab trace --format json %s > TRACE.jsonl'", name, name)
		}
		return pos + "a trace has one JSON object per line, as 'brokerlab trace --format json' writes it"
	}
	return fmt.Sprintf("%s:%d:1: bad trace: %s", name, line, printable.String(msg))
}

// firstLine returns the first line of head that is not blank, without its
// leading spaces, with its line and the column it starts at; ok is false
// when head has no such line whole.
func firstLine(head []byte) (text []byte, line, col int, ok bool) {
	for line = 1; ; line++ {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			return nil, 0, 0, false
		}
		raw := head[:i]
		head = head[i+1:]
		if t := bytes.TrimLeft(raw, " \t\r"); len(bytes.TrimSpace(t)) > 0 {
			return t, line, len(raw) - len(t) + 1, true
		}
	}
}

// verifyScenario judges the expect list of the scenario arg (variant v)
// from the trace in f, read from path, and prints it as run does. With a
// seed it then runs the scenario at that seed and requires the trace, read
// again from the start of file, to be that run's JSON trace byte for byte:
// a difference fails the verdict (exit 1), naming the first line that
// differs.
func (c *cli) verifyScenario(arg, v, path string, file *os.File, f *headReader, seed *uint64, all bool) int {
	s, ok := c.load(arg)
	if !ok {
		return exitBadInput
	}
	if s, ok = c.variantOf(s, v); !ok {
		return exitBadInput
	}
	if len(s.Expect) == 0 {
		// A verdict of 0 of 0 would hold for the trace of anything.
		fmt.Fprintf(c.stderr, "brokerlab verify: %s%s has no expectations (expect:), so there is nothing to judge from the trace; judge it with --check CHECK instead\n", printable.String(s.File), variantSuffix(v))
		return exitBadInput
	}
	out, err := lab.Rederive(s, f)
	var other *lab.MismatchError
	if errors.As(err, &other) {
		c.otherScenario(arg, v, s.File, path, other)
		return exitBadInput
	}
	if out == nil && err != nil {
		fmt.Fprintln(c.stderr, traceError(path, f.head, err))
		return exitBadInput
	}
	fmt.Fprintf(c.stdout, "expectations of %s re-derived from %s:\n", printable.String(s.File), printable.String(path))
	failed := 0
	for _, o := range out {
		verdict := "PASS"
		if !o.Pass {
			verdict = "FAIL"
			failed++
		}
		fmt.Fprintf(c.stdout, "%s  %s:%d:%d  %s  (measured %s)\n", verdict, printable.String(s.File), o.Line, o.Col, printable.String(o.Text), printable.String(o.Measured))
		limit := lab.MaxReportViolations
		if o.Pass {
			limit = lab.MaxViolationExamples // a check expected to be violated
		}
		for j, x := range o.Violations {
			if j == limit && !all {
				fmt.Fprintf(c.stdout, "        ... and %d more (--all lists them)\n", len(o.Violations)-j)
				break
			}
			fmt.Fprintf(c.stdout, "        %s\n", printable.String(x.String()))
		}
	}
	if err != nil {
		fmt.Fprintf(c.stdout, "ERROR: %s\n", printable.String(err.Error()))
		return exitBadInput
	}
	// With a seed, the trace must also be the run at that seed.
	replay, replayFailed := "", false
	if seed != nil {
		diff, lines, err := replayDiff(s, *seed, file)
		if err != nil {
			fmt.Fprintf(c.stderr, "brokerlab verify: --seed %d: %s\n", *seed, strings.TrimRight(printable.String(err.Error()), "\n"))
			return exitBadInput
		}
		if replayFailed = diff != ""; replayFailed {
			fmt.Fprintf(c.stdout, "FAIL  replay at seed %d: %s\n", *seed, diff)
		} else {
			fmt.Fprintf(c.stdout, "PASS  replay at seed %d: the run gives this trace, line for line (%d lines)\n", *seed, lines)
			replay = fmt.Sprintf("; the trace is the run at seed %d", *seed)
		}
	}
	if replayFailed {
		fmt.Fprintf(c.stdout, "FAIL: the trace is not the run at seed %d; %d of %d expectations hold\n", *seed, len(out)-failed, len(out))
		return exitFailed
	}
	if failed > 0 {
		fmt.Fprintf(c.stdout, "FAIL: %d of %d expectations hold%s\n", len(out)-failed, len(out), replay)
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "PASS: %d of %d expectations hold%s\n", len(out), len(out), replay)
	return exitOK
}

// replayDiff runs s at seed and compares its JSON trace, as 'brokerlab
// trace --format json' writes it, with the recorded trace in file, read
// from its start. It returns "" and the number of lines when they are the
// same byte for byte, or a description of the first line that differs.
// Memory is one line of each; the run costs what 'brokerlab trace' does.
func replayDiff(s *scenario.Scenario, seed uint64, file *os.File) (diff string, lines int, err error) {
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return "", 0, fmt.Errorf("cannot read the trace again: %v", pathError(err))
	}
	cmp := &lineComparer{rec: bufio.NewReader(file)}
	jw := sim.NewJSONWriter(cmp)
	if _, err := lab.Execute(s, lab.Options{Seed: &seed, Sinks: []sim.Sink{jw}}); err != nil {
		return "", 0, err
	}
	_ = jw.Close() // an error is jw.Err, below
	if jw.Err != nil {
		return "", 0, jw.Err
	}
	cmp.end()
	return cmp.diff, cmp.line, cmp.err
}

// lineComparer is the writer of a replay's JSON trace: it compares each
// line written with the next line of the recorded trace and keeps the
// first difference. It reads the recording as sim.ReadJSONL does: spaces
// around a line (a "\r" before its "\n" among them) and blank lines do
// not count, and the last line needs no newline.
type lineComparer struct {
	rec   *bufio.Reader
	part  []byte // the written line so far
	line  int    // lines compared
	recLn int    // lines of the recording read, blank ones included
	diff  string
	err   error
}

func (c *lineComparer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && c.diff == "" && c.err == nil {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.part = append(c.part, p...)
			break
		}
		c.part = append(c.part, p[:i+1]...)
		p = p[i+1:]
		c.compare(c.part)
		c.part = c.part[:0]
	}
	return n, nil
}

// next returns the recording's next line that is not blank, without the
// spaces around it, or nil at its end.
func (c *lineComparer) next() []byte {
	for {
		raw, err := c.rec.ReadBytes('\n')
		if len(raw) > 0 {
			c.recLn++
		}
		if b := bytes.TrimSpace(raw); len(b) > 0 {
			return b
		}
		if err != nil {
			if err != io.EOF {
				c.err = fmt.Errorf("cannot read the trace again: %v", pathError(err))
			}
			return nil
		}
	}
}

// compare compares the written line got with the next recorded one.
func (c *lineComparer) compare(got []byte) {
	got = bytes.TrimSpace(got)
	want := c.next()
	switch {
	case c.err != nil:
	case want == nil:
		c.diff = fmt.Sprintf("the trace ends after its line %d, the run goes on:\n        run:   %s", c.recLn, clip(got, 0))
	case !bytes.Equal(want, got):
		col := 0
		for col < len(want) && col < len(got) && want[col] == got[col] {
			col++
		}
		c.diff = fmt.Sprintf("line %d differs from column %d on:\n        trace: %s\n        run:   %s", c.recLn, col+1, clip(want, col), clip(got, col))
	}
	c.line++
}

// end checks, after the run, that the recorded trace has no more lines.
func (c *lineComparer) end() {
	if c.diff != "" || c.err != nil {
		return
	}
	if len(c.part) > 0 {
		c.compare(c.part)
		if c.diff != "" || c.err != nil {
			return
		}
	}
	if more := c.next(); more != nil {
		c.diff = fmt.Sprintf("the run ends, the trace goes on at its line %d:\n        trace: %s", c.recLn, clip(more, 0))
	}
}

// clip is a window of line for a message: up to 160 characters from a
// little before byte col (where two lines start to differ), with "…"
// where it cuts.
func clip(line []byte, col int) string {
	r := []rune(string(line))
	from := 0
	if col > 60 {
		from = len([]rune(string(line[:col]))) - 40
	}
	s := string(r[from:min(len(r), from+160)])
	if from > 0 {
		s = "…" + s
	}
	if from+160 < len(r) {
		s += "…"
	}
	return printable.String(s)
}

// otherScenario explains why the trace at path is not one of the
// scenario arg (variant v, read from file): each difference at the line
// of the trace or the position in file that shows it.
func (c *cli) otherScenario(arg, v, file, path string, e *lab.MismatchError) {
	name, file := printable.String(path), printable.String(file)
	fmt.Fprintf(c.stderr, "brokerlab verify: %s is not a trace of %s%s: the expectations its run judged, or its narration, are not the scenario's (%d %s)\n",
		name, file, variantSuffix(v), e.Total, plural(e.Total, "difference", "differences"))
	for _, d := range e.Diffs {
		if d.Seq > 0 {
			fmt.Fprintf(c.stderr, "%s:%d:1: %s\n", name, d.Seq, printable.String(d.Text))
		} else {
			fmt.Fprintf(c.stderr, "%s:%d:%d: %s\n", file, d.Pos.Line, d.Pos.Col, printable.String(d.Text))
		}
	}
	if n := e.Total - len(e.Diffs); n > 0 {
		fmt.Fprintf(c.stderr, "... and %d more %s\n", n, plural(n, "difference", "differences"))
	}
	again := arg
	if v != "" {
		again = "--variant " + v + " " + arg
	}
	fmt.Fprintf(c.stderr, "verify a trace of this scenario, written by 'brokerlab trace --format json %s > TRACE.jsonl'\n", printable.String(again))
}

// variantSuffix names variant v after a file name: " (variant V)", or ""
// for the file as written.
func variantSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " (variant " + printable.String(v) + ")"
}

// cliCheck spells the checker called check on consumer as a --check flag.
func cliCheck(check, consumer string) string {
	spec := strings.ReplaceAll(check, "-", "_") + ":" + consumer
	if check == "max-duplicates" {
		spec += ":N"
	}
	return "--check " + spec
}

// checks0 names check i as given, or no_loss for the default.
func checks0(specs []string, i int) string {
	if i < len(specs) {
		return specs[i]
	}
	return "no_loss"
}
