package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
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
