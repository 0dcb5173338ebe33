package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

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
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	var checks checkList
	fs.Var(&checks, "check", "a check to run (repeatable): no_loss, at_least_once:CONSUMER, at_most_once:CONSUMER, exactly_once:CONSUMER, ordered_per_key:CONSUMER, max_duplicates:CONSUMER:N")
	expect := fs.String("expect", "", "also run the ledger checks of `FILE|LESSON`'s expect: (violated: true included; metrics need the models and are skipped)")
	variant := fs.String("variant", "", "with --expect: the checks of the scenario's variant `NAME`")
	// Flags may come before or after the file.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return exitBadInput
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 1 {
		fmt.Fprintln(c.stderr, "brokerlab verify: give exactly one TRACE.jsonl (written by 'brokerlab trace --format json')")
		return exitBadInput
	}
	path := files[0]
	var checkers []verifyCheck
	for _, spec := range checks {
		ch, err := sim.ParseCheck(spec)
		if err != nil {
			fmt.Fprintln(c.stderr, "brokerlab verify:", printable.String(err.Error()))
			return exitBadInput
		}
		checkers = append(checkers, verifyCheck{name: spec, checker: ch})
	}
	if *variant != "" && *expect == "" {
		fmt.Fprintln(c.stderr, "brokerlab verify: --variant goes with --expect FILE|LESSON")
		return exitBadInput
	}
	skipped := 0
	if *expect != "" {
		more, n, ok := c.expectChecks(*expect, *variant)
		if !ok {
			return exitBadInput
		}
		checkers, skipped = append(checkers, more...), n
	}
	if len(checkers) == 0 {
		checkers = []verifyCheck{{name: "no_loss", checker: sim.NoLoss()}}
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
		fmt.Fprintf(c.stderr, "%s: cannot read the trace: %v\n", strconv.Quote(path), err)
		return exitBadInput
	}
	defer f.Close()
	l := sim.NewLedger()
	if err := sim.ReadJSONL(f, l); err != nil {
		fmt.Fprintf(c.stderr, "%s: %s\n", strconv.Quote(path), printable.String(err.Error()))
		return exitBadInput
	}
	s := l.Stats()
	fmt.Fprintf(c.stdout, "ledger folded from %s: %d messages (%d origins), %d delivered, %d duplicates, %d duplicate effects, %d absorbed, %d dead-lettered, %d missed, %d lost, %d phantoms\n",
		printable.String(path), s.Messages, s.Origins, s.Delivered, s.Duplicates, s.DuplicateEffects, s.Absorbed, s.DeadLettered, s.Missed, s.Lost, s.Phantoms)
	failed := 0
	for _, ch := range checkers {
		v := ch.checker.Violations(l)
		verdict := "PASS"
		if (len(v) > 0) != ch.violated {
			verdict = "FAIL"
			failed++
		}
		noun := "violations"
		if len(v) == 1 {
			noun = "violation"
		}
		fmt.Fprintf(c.stdout, "%s  %s  (%d %s)\n", verdict, printable.String(ch.name), len(v), noun)
		for _, x := range v {
			fmt.Fprintf(c.stdout, "      %s\n", printable.String(x.String()))
		}
	}
	if skipped > 0 {
		fmt.Fprintf(c.stdout, "(%d metric expectation(s) of %s skipped: they need the models, not only the trace; run it for them)\n", skipped, printable.String(*expect))
	}
	if failed > 0 {
		fmt.Fprintf(c.stdout, "FAIL: %d of %d checks failed\n", failed, len(checkers))
		return exitFailed
	}
	fmt.Fprintf(c.stdout, "PASS: %d of %d checks hold\n", len(checkers), len(checkers))
	return exitOK
}
