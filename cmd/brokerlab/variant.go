package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// variantOf returns s as its variant name ("" for s itself).
func (c *cli) variantOf(s *scenario.Scenario, name string) (*scenario.Scenario, bool) {
	if name == "" {
		return s, true
	}
	v, err := s.Variant(name)
	if err != nil {
		fmt.Fprintln(c.stderr, strings.TrimRight(err.Error(), "\n"))
		return nil, false
	}
	return v, true
}

// addVariantFlag adds --variant to a headless command (run, trace).
func addVariantFlag(fs *flag.FlagSet) *string {
	return fs.String("variant", "", "run the variant `NAME` of the scenario (see its variants:) instead of the file as written")
}

// loadVariant resolves arg and picks its variant name ("" for the file as
// written), printing what went wrong.
func (c *cli) loadVariant(arg, name string) (*scenario.Scenario, bool) {
	s, ok := c.load(arg)
	if !ok {
		return nil, false
	}
	return c.variantOf(s, name)
}

// verifyCheck is one check verify runs: its name as printed, the checker,
// and whether the scenario expects it to be violated.
type verifyCheck struct {
	name     string
	checker  sim.Checker
	violated bool
}

// expectChecks returns the ledger checks of the scenario (or lesson) arg,
// of its variant name when given, for verify --expect: each check
// expectation becomes a check, violated: true included. Metric
// expectations need the models, not only the trace, so they are skipped
// and counted in skipped.
func (c *cli) expectChecks(arg, variant string) (checks []verifyCheck, skipped int, ok bool) {
	s, ok := c.loadVariant(arg, variant)
	if !ok {
		return nil, 0, false
	}
	for _, e := range s.Expect {
		ch := s.Checker(e)
		if ch == nil {
			skipped++
			continue
		}
		checks = append(checks, verifyCheck{name: e.String(), checker: ch, violated: e.Violated})
	}
	return checks, skipped, true
}
