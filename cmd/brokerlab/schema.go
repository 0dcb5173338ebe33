package main

import (
	"fmt"

	"github.com/brokerlab/brokerlab/scenario"
)

// cmdSchema prints the JSON Schema of scenario files (scenario.JSONSchema),
// the same document as scenario.schema.json at the root of the repository.
// Editors that use yaml-language-server read it from the modeline
//
//	# yaml-language-server: $schema=https://raw.githubusercontent.com/brokerlab/brokerlab/main/scenario.schema.json
//
// and then complete field names and values and mark unknown fields,
// wrong types, bad enum values and values out of range as the file is
// typed. `brokerlab check` still has the last word: references between
// names and rules that relate fields are checked by the loader only.
func (c *cli) cmdSchema(args []string) int {
	if code, ok := c.noArgs("schema", args); !ok {
		return code
	}
	if _, err := c.stdout.Write(scenario.JSONSchema()); err != nil {
		fmt.Fprintf(c.stderr, "brokerlab schema: %v\n", err)
		return exitBadInput
	}
	return exitOK
}
