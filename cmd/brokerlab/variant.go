package main

import (
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
