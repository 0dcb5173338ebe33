package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/printable"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/tui"
)

// version is the brokerlab release; overridden with -ldflags at release time.
var version = "0.1.0-dev"

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1
	exitBadInput = 2
)

// cli holds the streams and the hooks the commands use, so tests can run
// them in process.
type cli struct {
	stdout, stderr io.Writer
	// rawStderr is stderr without the escaping of control characters,
	// for explore's progress bar, which draws with them.
	rawStderr io.Writer
	// terminal reports whether the player can take over the terminal.
	terminal func() bool
	// play runs the TUI; replaced in tests.
	play     func(d tui.Driver) error
	playMenu func(lessons []tui.Lesson, open func(tui.Lesson) (tui.Driver, error)) error
	// comparePlay runs the compare view (play --compare); replaced in tests.
	comparePlay func(p *lab.Pair) error
}

func newCLI(stdout, stderr io.Writer) *cli {
	return &cli{
		stdout:   stdout,
		stderr:   stderr,
		terminal: func() bool { return tui.CheckTerminal(os.Stdout) == nil },
		play:     func(d tui.Driver) error { return tui.Run(d, tui.Options{}) },
		playMenu: func(ls []tui.Lesson, open func(tui.Lesson) (tui.Driver, error)) error {
			return tui.RunMenu(ls, open, tui.Options{})
		},
		comparePlay: func(p *lab.Pair) error { return tui.RunCompare(p, tui.Options{}) },
	}
}

type command struct {
	name, args, summary string
	run                 func(c *cli, args []string) int
}

var commands []command

func init() {
	commands = []command{
		{"play", "[--seed N] [--variant V] FILE|LESSON | --compare A [B] [--seeds N,M | --variants V,W]", "play a lesson or scenario file in the terminal; --compare plays two runs side by side in lockstep (two files, one under two seeds, or two variants)", (*cli).cmdPlay},
		{"record", "--cast OUT.cast [--size 100x32] [--seed N] [--variant V] [--tick 500ms] [--no-color] [--bare] [--timestamp] FILE|LESSON", "write an asciinema v2 cast of the player going through the lesson, for slides and web pages", (*cli).cmdRecord},
		{"run", "[--seed N] [--variant V] [--quiet] [--strict] FILE|LESSON...", "run headless and print a report; exit 1 if an expectation fails", (*cli).cmdRun},
		{"trace", "[--seed N] [--variant V] [--format text|json|mermaid] [--max N] FILE|LESSON", "print the trace of a run", (*cli).cmdTrace},
		{"check", "FILE...", "validate scenario files without running them; warnings do not fail a check", (*cli).cmdCheck},
		{"schema", "", "print the JSON Schema of scenario files (for editors using yaml-language-server)", (*cli).cmdSchema},
		{"verify", "[--check CHECK]... | --scenario FILE|LESSON [--variant V] [--seed N] [--all] TRACE.jsonl", "fold the ledger from a recorded JSON trace and run the checks on it, or judge a scenario's whole expect list from it; a trace that was edited or cut is refused (exit 2)", (*cli).cmdVerify},
		{"explore", "[--seeds N] [--from S] [--jobs J] [--shard K/N] [--variant V] [--json FILE] [--out FILE] [--force] [--no-shrink] FILE|LESSON", "sweep seeds in parallel, list the failing ones, shrink the first to its minimal fault schedule and write NAME.min.yaml; 'explore merge A.json B.json...' merges shard reports", (*cli).cmdExplore},
		{"list", "", "list the built-in lessons", (*cli).cmdList},
		{"exercise", "list | start [--clone DIR] NAME [DIR] | check [--seeds N] DIR | grade [--json] [--seeds N] DIR... | hint NAME [N]", "exercises: write the code yourself and have it graded under faults; a teacher grades many workspaces at once", (*cli).cmdExercise},
		{"version", "", "print the version", (*cli).cmdVersion},
		{"help", "[COMMAND]", "show help for a command", (*cli).cmdHelp},
	}
}

// main runs the command args names. Every string it prints passes
// through a printable.Writer, so no control character from a file name, a
// flag or a trace reaches the terminal, and standard output through a
// writer that remembers its first error: a command whose output was lost
// (a full disk, a closed pipe) exits 2 and says so, whatever it printed.
func (c *cli) main(args []string) int {
	out := &stickyWriter{w: c.stdout}
	stdout, stderr := printable.NewWriter(out), printable.NewWriter(c.stderr)
	if c.rawStderr == nil {
		c.rawStderr = c.stderr
	}
	c.stdout, c.stderr = stdout, stderr
	code := c.dispatch(args)
	stdout.Flush()
	if out.err != nil && code != exitBadInput {
		fmt.Fprintf(stderr, "brokerlab: cannot write the output: %v\n", pathError(out.err))
		code = exitBadInput
	}
	stderr.Flush()
	return code
}

// stickyWriter passes writes on until the first error, which it keeps and
// returns from then on.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	s.err = err
	return n, err
}

// isHelpFlag reports whether arg asks for help, in any of the spellings
// package flag accepts.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}

func (c *cli) dispatch(args []string) int {
	if len(args) == 0 {
		return c.menu()
	}
	name := args[0]
	switch {
	case isHelpFlag(name):
		c.usage(c.stdout)
		return exitOK
	case name == "--version" || name == "-version":
		return c.cmdVersion(nil)
	}
	for _, cmd := range commands {
		if cmd.name == name {
			return cmd.run(c, args[1:])
		}
	}
	fmt.Fprintf(c.stderr, "brokerlab: unknown command %q; commands: %s\n", name, commandNames())
	fmt.Fprintln(c.stderr, "Run 'brokerlab help' for usage.")
	return exitBadInput
}

func commandNames() string {
	var names []string
	for _, cmd := range commands {
		names = append(names, cmd.name)
	}
	return strings.Join(names, ", ")
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, "brokerlab %s: message brokers simulated in memory, deterministically, under injected faults.\n\n", version)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w, "  brokerlab\n      open the lesson menu (needs a terminal)")
	for _, cmd := range commands {
		line := "  brokerlab " + cmd.name
		if cmd.args != "" {
			line += " " + cmd.args
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, cmd.summary)
	}
	fmt.Fprintln(w, "\nFILE is a scenario file (docs/scenario-format.md); LESSON is a built-in lesson name.")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 an expectation failed, 2 bad input or no terminal to play in (brokerlab alone, with no terminal, prints this help and exits 0).")
}

// menu opens the lesson menu, or headless prints the usage and the lessons.
func (c *cli) menu() int {
	if !c.terminal() {
		c.usage(c.stdout)
		fmt.Fprintln(c.stdout)
		c.printLessons(c.stdout)
		fmt.Fprintf(c.stdout, "\nThe lesson player did not open: %s.\n", tui.TerminalReason(c.noTerminal()))
		fmt.Fprintln(c.stdout, "Try: brokerlab run poison-dlq")
		return exitOK
	}
	var ls []tui.Lesson
	for _, l := range scenario.Lessons() {
		tl := tui.Lesson{Name: l.Name, Title: l.Title, Summary: l.Summary}
		if s, err := scenario.LoadLesson(l.Name); err == nil {
			tl.Description = s.Description
			for _, e := range s.Expect {
				tl.Goals = append(tl.Goals, e.String())
			}
		}
		ls = append(ls, tl)
	}
	err := c.playMenu(ls, func(l tui.Lesson) (tui.Driver, error) {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			return nil, err
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			return nil, err
		}
		d.SetLesson(l.Name)
		return d, nil
	})
	return c.playResult(err)
}

func (c *cli) playResult(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, tui.ErrNotTerminal):
		fmt.Fprint(c.stderr, tui.TerminalMessage("brokerlab", err))
		return exitBadInput
	default:
		fmt.Fprintln(c.stderr, "brokerlab:", err)
		return exitBadInput
	}
}

// noTerminal is why the player cannot open when c.terminal() is false:
// the error of tui.CheckTerminal (stdout is not a terminal, or $TERM is
// unset, dumb or unknown), or tui.ErrNotTerminal.
func (c *cli) noTerminal() error {
	if err := tui.CheckTerminal(os.Stdout); err != nil {
		return err
	}
	return tui.ErrNotTerminal
}

// seedFlag is a --seed value that remembers whether it was given.
type seedFlag struct {
	set bool
	v   uint64
}

func (s *seedFlag) String() string {
	if !s.set {
		return "the file's seed"
	}
	return strconv.FormatUint(s.v, 10)
}

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("must be a whole number from 0 to %d", uint64(1<<64-1))
	}
	s.set, s.v = true, n
	return nil
}

func (s *seedFlag) ptr() *uint64 {
	if !s.set {
		return nil
	}
	v := s.v
	return &v
}

// flags builds the flag set of a command with the shared --help text.
func (c *cli) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("brokerlab "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		printUsage(fs.Output(), name)
		var has bool
		fs.VisitAll(func(*flag.Flag) { has = true })
		if has {
			fmt.Fprintln(fs.Output(), "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// printUsage prints the usage line of the command name, as the usage table
// has it, and its description. A subcommand ("exercise start") gets the
// alternative of its command's arguments that starts with its name.
func printUsage(w io.Writer, name string) {
	top, sub, _ := strings.Cut(name, " ")
	for _, cmd := range commands {
		if cmd.name != top {
			continue
		}
		args := cmd.args
		if sub != "" {
			args = ""
			for _, alt := range strings.Split(cmd.args, " | ") {
				if alt == sub || strings.HasPrefix(alt, sub+" ") {
					args = alt
				}
			}
			if args == "" {
				continue
			}
		}
		line := "Usage: brokerlab " + top
		if args != "" {
			line += " " + args
		}
		fmt.Fprintf(w, "%s\n\n%s.\n", line, cmd.summary)
	}
}

// parse parses flags anywhere among the arguments (flags may follow the
// file names) and returns the positional arguments. ok is false when the
// caller must return code (help printed: 0; bad flag: 2).
func parse(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitBadInput, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, 0, true
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), 0, true
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// load resolves a lesson name or a file and prints load errors.
func (c *cli) load(arg string) (*scenario.Scenario, bool) {
	s, err := scenario.Resolve(arg)
	if err != nil {
		fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
		return nil, false
	}
	return s, true
}

func (c *cli) cmdPlay(args []string) int {
	fs := c.flags("play")
	var seed seedFlag
	fs.Var(&seed, "seed", "override the scenario's seed")
	cf := addCompareFlags(fs)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if code, done := c.compareMode(pos, seed, cf); done {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(c.stderr, "brokerlab play: want exactly one FILE or LESSON; lessons:", lessonNames())
		return exitBadInput
	}
	s, ok := c.load(pos[0])
	if !ok {
		return exitBadInput
	}
	if s, ok = c.variantOf(s, cf.variant); !ok {
		return exitBadInput
	}
	if !c.terminal() {
		return c.playResult(c.noTerminal())
	}
	d, err := lab.Open(s, lab.SessionOptions{Seed: seed.ptr()})
	if err != nil {
		fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
		return exitBadInput
	}
	if isLesson(pos[0]) {
		d.SetLesson(pos[0])
	}
	return c.playResult(c.play(d))
}

func (c *cli) cmdRun(args []string) int {
	fs := c.flags("run")
	var seed seedFlag
	fs.Var(&seed, "seed", "override the scenario's seed")
	quiet := fs.Bool("quiet", false, "print only the one-line verdict per scenario")
	strict := fs.Bool("strict", false, "fail (exit 1) a run until drained that stops at max_ticks before it drains")
	variant := addVariantFlag(fs)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintln(c.stderr, "brokerlab run: want at least one FILE or LESSON; lessons:", lessonNames())
		return exitBadInput
	}
	worst := exitOK
	var passed int
	var failed, notRun, errored []string
	writeFailed := false
	defer func() {
		// Several scenarios end with one line that adds them up, unless
		// the output was lost on the way.
		if len(pos) < 2 || writeFailed {
			return
		}
		total := fmt.Sprintf("%d of %d scenarios passed", passed, len(pos))
		if len(failed) > 0 {
			total += "; failed: " + strings.Join(failed, ", ")
		}
		if len(notRun) > 0 {
			total += "; not run (bad input): " + strings.Join(notRun, ", ")
		}
		if len(errored) > 0 {
			total += "; stopped by an error: " + strings.Join(errored, ", ")
		}
		if !*quiet {
			fmt.Fprintln(c.stdout)
		}
		fmt.Fprintf(c.stdout, "TOTAL: %s\n", total)
	}()
	for i, arg := range pos {
		s, ok := c.loadVariant(arg, *variant)
		if !ok {
			worst = exitBadInput
			notRun = append(notRun, printable.String(arg))
			continue
		}
		rep, err := lab.Execute(s, lab.Options{Seed: seed.ptr()})
		if err != nil {
			fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
			worst = exitBadInput
			errored = append(errored, printable.String(arg))
			continue
		}
		if *strict && rep.Undrained {
			rep.Pass = false
		}
		if i > 0 && !*quiet {
			fmt.Fprintln(c.stdout)
		}
		if *quiet {
			verdict := "PASS"
			if !rep.Pass {
				verdict = "FAIL"
			}
			undrained := ""
			if rep.Undrained {
				undrained = ", stopped at max_ticks before draining"
			}
			if *variant != "" {
				undrained += ", variant " + printable.String(*variant)
			}
			fmt.Fprintf(c.stdout, "%s %s (seed %d, %d ticks%s)\n", verdict, printable.String(arg), rep.Seed, rep.Ticks, undrained)
		} else if err := rep.WriteText(c.stdout); err != nil {
			fmt.Fprintln(c.stderr, "brokerlab:", err)
			writeFailed = true
			return exitBadInput
		}
		if rep.Pass {
			passed++
		} else {
			failed = append(failed, printable.String(arg))
			if worst == exitOK {
				worst = exitFailed
			}
		}
	}
	return worst
}

func (c *cli) cmdTrace(args []string) int {
	fs := c.flags("trace")
	var seed seedFlag
	fs.Var(&seed, "seed", "override the scenario's seed")
	format := fs.String("format", "text", "text (stable one line per event), json (JSON Lines) or mermaid (sequenceDiagram)")
	max := fs.Int("max", 200, "mermaid only: draw at most this many events (0 = all)")
	variant := addVariantFlag(fs)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(c.stderr, "brokerlab trace: want exactly one FILE or LESSON")
		return exitBadInput
	}
	out := bufio.NewWriter(c.stdout)
	var sink sim.Sink
	var rec *sim.Recorder
	var werr func() error
	var jw *sim.JSONWriter
	switch *format {
	case "text":
		tw := sim.NewTextWriter(out)
		sink, werr = tw, func() error { return tw.Err }
	case "json":
		jw = sim.NewJSONWriter(out)
		sink, werr = jw, func() error { return jw.Err }
	case "mermaid":
		rec = &sim.Recorder{}
		sink, werr = rec, func() error { return nil }
	default:
		fmt.Fprintf(c.stderr, "brokerlab trace: unknown format %q; allowed: text, json, mermaid\n", *format)
		return exitBadInput
	}
	if *max < 0 {
		fmt.Fprintln(c.stderr, "brokerlab trace: --max must not be negative")
		return exitBadInput
	}
	s, ok := c.loadVariant(pos[0], *variant)
	if !ok {
		return exitBadInput
	}
	rep, err := lab.Execute(s, lab.Options{Seed: seed.ptr(), Sinks: []sim.Sink{sink}})
	if err != nil {
		fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
		return exitBadInput
	}
	if jw != nil {
		// Only a run that finished gets the closing record; one that
		// stopped on an error above reads as truncated.
		_ = jw.Close() // the error is jw.Err, reported below
	}
	if rec != nil {
		if err := sim.WriteMermaid(out, rec.Events(), *max); err != nil {
			fmt.Fprintln(c.stderr, "brokerlab:", err)
			return exitBadInput
		}
	}
	if err := werr(); err != nil {
		fmt.Fprintln(c.stderr, "brokerlab:", err)
		return exitBadInput
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(c.stderr, "brokerlab:", err)
		return exitBadInput
	}
	if !rep.Pass {
		return exitFailed
	}
	return exitOK
}

func (c *cli) cmdCheck(args []string) int {
	fs := c.flags("check")
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintln(c.stderr, "brokerlab check: want at least one FILE")
		return exitBadInput
	}
	worst := exitOK
	for _, arg := range pos {
		s, ok := c.load(arg)
		if !ok {
			worst = exitBadInput
			continue
		}
		for _, w := range s.Warnings() {
			fmt.Fprintln(c.stderr, w.String())
		}
		fmt.Fprintf(c.stdout, "%s: ok (%s)\n", printable.String(arg), s.Title)
	}
	return worst
}

func (c *cli) printLessons(w io.Writer) {
	fmt.Fprintln(w, "Built-in lessons (brokerlab run NAME, brokerlab play NAME):")
	for _, l := range scenario.Lessons() {
		fmt.Fprintf(w, "  %-22s %s\n  %-22s %s\n", l.Name, l.Title, "", l.Summary)
	}
}

func isLesson(name string) bool {
	for _, l := range scenario.Lessons() {
		if l.Name == name {
			return true
		}
	}
	return false
}

func lessonNames() string {
	var names []string
	for _, l := range scenario.Lessons() {
		names = append(names, l.Name)
	}
	return strings.Join(names, ", ")
}

// noArgs parses the flags of the command name, which takes no other
// arguments; ok is false, with the exit code, when the command line asks
// for help or is wrong.
func (c *cli) noArgs(name string, args []string) (code int, ok bool) {
	pos, code, ok := parse(c.flags(name), args)
	if !ok {
		return code, false
	}
	if len(pos) != 0 {
		fmt.Fprintf(c.stderr, "brokerlab %s: takes no arguments\n", name)
		return exitBadInput, false
	}
	return exitOK, true
}

func (c *cli) cmdList(args []string) int {
	if code, ok := c.noArgs("list", args); !ok {
		return code
	}
	c.printLessons(c.stdout)
	return exitOK
}

func (c *cli) cmdVersion(args []string) int {
	if code, ok := c.noArgs("version", args); !ok {
		return code
	}
	fmt.Fprintln(c.stdout, "brokerlab", version)
	return exitOK
}

func (c *cli) cmdHelp(args []string) int {
	if len(args) == 0 {
		c.usage(c.stdout)
		return exitOK
	}
	if args[0] == "help" || isHelpFlag(args[0]) {
		printUsage(c.stdout, "help")
		fmt.Fprintf(c.stdout, "\nCommands: %s.\n", commandNames())
		return exitOK
	}
	for _, cmd := range commands {
		if cmd.name == args[0] {
			return cmd.run(&cli{stdout: c.stdout, stderr: c.stdout, rawStderr: c.stdout, terminal: c.terminal, play: c.play, playMenu: c.playMenu}, []string{"--help"})
		}
	}
	fmt.Fprintf(c.stderr, "brokerlab help: unknown command %q; commands: %s\n", args[0], commandNames())
	return exitBadInput
}
