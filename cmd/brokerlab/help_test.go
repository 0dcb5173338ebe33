package main

import (
	"strings"
	"testing"
)

// TestHelpEveryCommand: 'brokerlab help CMD' and 'brokerlab CMD --help'
// exit 0 for every command of the usage table and print its usage line
// first, then its description, on stdout. A command added to the table is
// covered without touching this test.
func TestHelpEveryCommand(t *testing.T) {
	for _, cmd := range commands {
		for _, args := range [][]string{{"help", cmd.name}, {cmd.name, "--help"}} {
			code, out, errs := runCLI(t, "", false, args...)
			if args[0] != "help" {
				out += errs // a command's own --help goes to stderr, as flag does
			} else if errs != "" {
				t.Errorf("%v: stderr %q", args, errs)
			}
			if code != exitOK || !strings.HasPrefix(out, "Usage: brokerlab "+cmd.name) {
				t.Errorf("%v: exit %d, want 0 and a usage line first:\n%s", args, code, out)
				continue
			}
			if summary, _, _ := strings.Cut(cmd.summary, ";"); !strings.Contains(out, summary) {
				t.Errorf("%v: no description (%q) in:\n%s", args, summary, out)
			}
		}
	}
}
