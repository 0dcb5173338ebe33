package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/printable"
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
	if *scen != "" && len(checks) > 0 || *variant != "" && *scen == "" {
		fmt.Fprintln(c.stderr, "brokerlab verify: give --check CHECK... or --scenario FILE [--variant V], not both; --variant needs --scenario")
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
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		what := "it is not a regular file"
		if err != nil {
			what = err.Error()
		}
		fmt.Fprintf(c.stderr, "%s: cannot read the trace: %s\n", strconv.Quote(path), what)
		return exitBadInput
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: cannot read the trace: %s\n", strconv.Quote(path), printable.String(err.Error()))
		return exitBadInput
	}
	defer f.Close()
	if *scen != "" {
		return c.verifyScenario(*scen, *variant, path, f, *all)
	}
	l := sim.NewLedger()
	var actors sim.ActorIndex
	if err := sim.ReadJSONL(f, sim.SinkFunc(func(e *sim.Event) { l.Emit(e); actors.Emit(e) })); err != nil {
		fmt.Fprintf(c.stderr, "%s: %s\n", strconv.Quote(path), printable.String(err.Error()))
		return exitBadInput
	}
	s := l.Stats()
	fmt.Fprintf(c.stdout, "ledger folded from %s: %s\n", printable.String(path), lab.LedgerLine(s))
	failed, misused := 0, 0
	for i, ch := range checkers {
		v := actors.Hint(ch.Violations(l), cliCheck)
		verdict := "PASS"
		if len(v) > 0 {
			verdict = "FAIL"
			failed++
		}
		for _, x := range v {
			if x.Misuse {
				misused++
				break
			}
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
	if misused > 0 {
		// A check that names no consumer of the trace judged nothing: that
		// is a mistake in the command, not a verdict on the run.
		fmt.Fprintf(c.stdout, "ERROR: %d of %d checks could not judge the trace as asked\n", misused, len(checkers))
		return exitBadInput
	}
	if failed > 0 {
		fmt.Fprintf(c.stdout, "FAIL: %d of %d checks failed\n", failed, len(checkers))
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "PASS: %d of %d checks hold\n", len(checkers), len(checkers))
	return exitOK
}

// verifyScenario judges the expect list of the scenario arg (variant v)
// from the trace in f, read from path, and prints it as run does.
func (c *cli) verifyScenario(arg, v, path string, f *os.File, all bool) int {
	s, ok := c.load(arg)
	if !ok {
		return exitBadInput
	}
	if s, ok = c.variantOf(s, v); !ok {
		return exitBadInput
	}
	out, err := lab.Rederive(s, f)
	if out == nil && err != nil {
		fmt.Fprintf(c.stderr, "%s: %s\n", strconv.Quote(path), printable.String(err.Error()))
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
	if failed > 0 {
		fmt.Fprintf(c.stdout, "FAIL: %d of %d expectations hold\n", len(out)-failed, len(out))
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "PASS: %d of %d expectations hold\n", len(out), len(out))
	return exitOK
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
