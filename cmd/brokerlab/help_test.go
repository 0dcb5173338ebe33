package main

import (
	"maps"
	"os"
	"regexp"
	"slices"
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

// TestHelpAfterArguments: a help flag after an exercise subcommand's
// arguments still prints its usage line and exits 0.
func TestHelpAfterArguments(t *testing.T) {
	for _, args := range [][]string{{"exercise", "hint", "outbox", "--help"}, {"exercise", "hint", "outbox", "2", "-h"}, {"exercise", "list", "--help"}} {
		code, out, errs := runCLI(t, "", false, args...)
		if code != exitOK || !strings.HasPrefix(out, "Usage: brokerlab exercise "+args[1]) {
			t.Errorf("%v: exit %d, want 0 and the usage line:\n%s%s", args, code, out, errs)
		}
	}
}

// TestHelpExerciseSubcommands: each exercise subcommand that takes flags
// prints its own usage line (from the exercise row of the usage table)
// before its flags, and exits 0.
func TestHelpExerciseSubcommands(t *testing.T) {
	for sub, want := range map[string]string{
		"start": "Usage: brokerlab exercise start [--clone DIR] NAME [DIR]\n",
		"check": "Usage: brokerlab exercise check [--seeds N] DIR\n",
		"grade": "Usage: brokerlab exercise grade [--json] [--seeds N] DIR...\n",
	} {
		code, out, errs := runCLI(t, "", false, "exercise", sub, "--help")
		if code != exitOK || !strings.HasPrefix(out+errs, want) || !strings.Contains(out+errs, "Flags:") {
			t.Errorf("exercise %s --help: exit %d, want 0, %q first and the flags:\n%s%s", sub, code, want, out, errs)
		}
	}
}

// flagNames returns the long flags ("--seed" as "seed") a usage line
// names, in order of first appearance.
func flagNames(line string) []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(line, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	return names
}

// helpedCommands are the commands and subcommands with usage lines of
// their own: every command of the usage table but exercise, whose line is
// the alternatives of its subcommands, and each of those subcommands.
func helpedCommands() []string {
	var names []string
	for _, cmd := range commands {
		if cmd.name != "exercise" {
			names = append(names, cmd.name)
		}
	}
	return append(names, "explore merge", "exercise list", "exercise start", "exercise check", "exercise grade", "exercise hint")
}

// TestUsageNamesEveryFlag: the usage line of every command and subcommand
// names each flag the command accepts, and only those, so a flag added to
// a command cannot be left out of its usage line, the usage table and the
// README's command table (TestReadmeCommandTable).
func TestUsageNamesEveryFlag(t *testing.T) {
	for _, name := range helpedCommands() {
		args := append(strings.Fields(name), "--help")
		code, out, errs := runCLI(t, "", false, args...)
		out += errs
		first, rest, _ := strings.Cut(out, "\n")
		if code != exitOK || !strings.HasPrefix(first, "Usage: brokerlab "+name) {
			t.Errorf("%s --help: exit %d, want 0 and its usage line first:\n%s", name, code, out)
			continue
		}
		var defined []string
		for _, line := range strings.Split(rest, "\n") {
			if f, ok := strings.CutPrefix(line, "  -"); ok {
				defined = append(defined, strings.Fields(f)[0])
			}
		}
		named := flagNames(first)
		slices.Sort(defined)
		slices.Sort(named)
		if !slices.Equal(defined, named) {
			t.Errorf("%s: the usage line names flags %v, the command accepts %v:\n%s", name, named, defined, first)
		}
	}
}

// TestReadmeCommandTable: the README's command table has a row for every
// command of the usage table and none for a command that does not exist;
// a command with one row shows exactly its usage line, and one split over
// several rows names exactly its flags between them.
func TestReadmeCommandTable(t *testing.T) {
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	row := regexp.MustCompile("(?m)^\\| `(brokerlab(?: [^`]*)?)` \\|")
	for _, m := range row.FindAllStringSubmatch(string(text), -1) {
		line := strings.ReplaceAll(m[1], `\|`, "|")
		name := ""
		if f := strings.Fields(line); len(f) > 1 {
			name = f[1]
		}
		rows[name] = append(rows[name], line)
	}
	if len(rows[""]) != 1 {
		t.Errorf("README: %d rows for brokerlab alone, want 1", len(rows[""]))
	}
	delete(rows, "")
	for _, cmd := range commands {
		got := rows[cmd.name]
		delete(rows, cmd.name)
		want := strings.TrimSpace("brokerlab " + cmd.name + " " + cmd.args)
		switch {
		case len(got) == 0:
			t.Errorf("README: no row for %q", want)
		case len(got) == 1 && got[0] != want:
			t.Errorf("README row\n\t%s\nis not the usage line\n\t%s", got[0], want)
		case len(got) > 1:
			named := flagNames(strings.Join(got, " "))
			wanted := flagNames(want)
			slices.Sort(named)
			slices.Sort(wanted)
			if !slices.Equal(named, wanted) {
				t.Errorf("README rows of %s name flags %v, its usage line %v", cmd.name, named, wanted)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		t.Errorf("README: rows for %q, which is not a command: %q", name, rows[name])
	}
}
