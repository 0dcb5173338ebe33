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

// TestHelpExerciseSubcommands: each exercise subcommand that takes flags
// prints its own usage line (from the exercise row of the usage table)
// before its flags, and exits 0.
func TestHelpExerciseSubcommands(t *testing.T) {
	for sub, want := range map[string]string{
		"start": "Usage: brokerlab exercise start [--clone DIR] NAME [DIR]\n",
		"check": "Usage: brokerlab exercise check DIR\n",
		"grade": "Usage: brokerlab exercise grade [--json] [--seeds N] DIR...\n",
	} {
		code, out, errs := runCLI(t, "", false, "exercise", sub, "--help")
		if code != exitOK || !strings.HasPrefix(out+errs, want) || !strings.Contains(out+errs, "Flags:") {
			t.Errorf("exercise %s --help: exit %d, want 0, %q first and the flags:\n%s%s", sub, code, want, out, errs)
		}
	}
}
