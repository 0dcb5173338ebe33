package exercise

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/tui"
)

// Main is the main function of a student's workspace (its generated
// main.go calls it with the student's functions bound): it runs
// MainArgs on the command line and exits with its code.
func Main(sol Solution) {
	os.Exit(MainArgs(sol, os.Args[1:], os.Stdout, os.Stderr))
}

// mainUsage is the workspace's command line.
const mainUsage = `usage: go run . [command]

  check [-seeds N|-seed N]  grade your code under faults (the default command);
                            -seed N grades and shrinks that one seed
  play [-seed N] [-cast F]  replay the shrunk failing run in the player
                            (-cast F writes an asciicast instead)
  hint [N]                  show hint N (1 first), one at a time
  task                      show the task again
  json [-seeds N|-seed N]   the grading as JSON
`

// MainArgs runs one workspace command and returns the exit code: 0 on
// success and on a passing grade, 1 on a failing grade, 2 on a usage
// error.
func MainArgs(sol Solution, args []string, stdout, stderr io.Writer) int {
	if sol == nil {
		fmt.Fprintln(stderr, "exercise: no solution")
		return 2
	}
	e, err := Lookup(sol.Exercise())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cmd := "check"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.Int("seeds", DefaultSeeds, "how many seeds to grade")
	seed := fs.Uint64("seed", 0, "only this seed: grade it (and shrink it) alone, or replay it with the exercise's fault plan instead of the shrunk failure")
	cast := fs.String("cast", "", "write the replay as an asciicast to this file instead of opening the player")
	switch cmd {
	case "check", "json", "play":
	case "hint":
		n := 1
		if len(args) > 0 {
			if n, err = strconv.Atoi(args[0]); err != nil {
				fmt.Fprintf(stderr, "hint: %q is not a number; the hints are 1 to %d\n", args[0], len(e.Hints))
				return 2
			}
		}
		h, total, err := e.Hint(n)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		fmt.Fprintf(stdout, "Hint %d of %d: %s\n", n, total, h)
		if n < total {
			fmt.Fprintf(stdout, "(go run . hint %d for the next one)\n", n+1)
		}
		return 0
	case "task":
		fmt.Fprintf(stdout, "Exercise %d, %s (after lesson %s)\n\n%s\n", e.Number, e.Title, e.Lesson, e.Task)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, mainUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "unknown command %q\n%s", cmd, mainUsage)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n%s", cmd, fs.Arg(0), mainUsage)
		return 2
	}
	if *seeds <= 0 {
		fmt.Fprintf(stderr, "%s: -seeds must be at least 1, not %d\n", cmd, *seeds)
		return 2
	}
	if cmd == "play" {
		return play(e, sol, *seed, *cast, stdout, stderr)
	}
	grade := func(onSeed func(uint64)) *Report { return e.GradeSeeds(sol, 1, *seeds, onSeed) }
	if *seed != 0 {
		grade = func(onSeed func(uint64)) *Report { return e.GradeSeed(sol, *seed, onSeed) }
	}
	rep, hung := gradeWatched(grade)
	if rep == nil {
		fmt.Fprint(stderr, hangText(e, hung))
		return 1
	}
	switch cmd {
	case "json":
		if wd, err := os.Getwd(); err == nil {
			rep.Student = filepath.Base(wd)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return exitOf(rep)
	}
	fmt.Fprint(stdout, rep.Text(e))
	return exitOf(rep)
}

// Hang is how long a driver (Main, Test) waits for a grading before it
// gives up: student code that loops without calling into the world is
// the only way a run can take that long.
var Hang = 60 * time.Second

// gradeWatched runs grade on its own goroutine and waits at most Hang
// for it; on a hang it returns nil and the seed that hung, the last one
// grade passed to its onSeed.
func gradeWatched(grade func(onSeed func(uint64)) *Report) (*Report, uint64) {
	var seed atomic.Uint64
	done := make(chan *Report, 1)
	go func() { done <- grade(seed.Store) }()
	select {
	case rep := <-done:
		return rep, 0
	case <-time.After(Hang):
		return nil, seed.Load()
	}
}

// hangText says that the code hung on seed.
func hangText(e *Exercise, seed uint64) string {
	return fmt.Sprintf("exercise %d, %s: your code did not return within %v on seed %d: the grader cannot stop a loop that never calls into the queue, the log or the database\n", e.Number, e.Name, Hang, seed)
}

// exitOf is the exit code of a grading: 0 for a pass, 1 otherwise.
func exitOf(rep *Report) int {
	if rep.Pass() {
		return 0
	}
	return 1
}

// play replays the shrunk failure of sol (or seed, when non-zero) in the
// player, or writes it as a cast.
func play(e *Exercise, sol Solution, seed uint64, cast string, stdout, stderr io.Writer) int {
	// The player draws on stdout: say at once, before any grading, when
	// it cannot.
	term, _ := stdout.(*os.File)
	if cast == "" {
		err := error(tui.ErrNotTerminal)
		if term != nil {
			err = tui.CheckTerminal(term)
		}
		if err != nil {
			fmt.Fprint(stderr, noPlayerText(seed, err))
			return 2
		}
	}
	var rec lab.Recording
	var err error
	if seed != 0 {
		rec, err = e.Recording(sol, seed, nil)
	} else {
		rep := e.Grade(sol, DefaultSeeds)
		switch {
		case rep.Error != "":
			err = errors.New(rep.Error)
		case rep.Shrunk != nil:
			rec, err = e.Recording(sol, rep.Shrunk.Seed, &rep.Shrunk.Minimal)
		default:
			fmt.Fprintf(stdout, "Every seed passes; showing seed 1 with the exercise's faults.\n")
			rec, err = e.Recording(sol, 1, nil)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if cast != "" {
		f, err := os.Create(cast)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		_, err = tui.Record(f, lab.NewPlayback(rec), tui.RecordConfig{Width: 80, Height: 24})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", cast)
		return 0
	}
	if err := tui.Play(rec, tui.Options{Stdout: term}); err != nil {
		if errors.Is(err, tui.ErrNotTerminal) {
			fmt.Fprint(stderr, noPlayerText(seed, err))
			return 2
		}
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// noPlayerText is what play prints when the player cannot open (err
// wraps tui.ErrNotTerminal): the reason, and the workspace's commands
// that show the same run without a terminal.
func noPlayerText(seed uint64, err error) string {
	var b strings.Builder
	reason := tui.TerminalReason(err)
	fmt.Fprintf(&b, "go run . play: the player needs a terminal it can draw on, and %s.\n", reason)
	if reason != tui.TerminalReason(tui.ErrNotTerminal) {
		fmt.Fprintf(&b, "Set TERM to your terminal's type (e.g. TERM=xterm-256color), or without the player:\n")
	} else {
		fmt.Fprintf(&b, "Without the player:\n")
	}
	if seed != 0 {
		fmt.Fprintf(&b, "  go run . check -seed %d                    (the grading of seed %d: each fault and each broken property, tick by tick)\n", seed, seed)
		fmt.Fprintf(&b, "  go run . play -seed %d -cast replay.cast   (writes the replay as an asciicast, 80x24)\n", seed)
		return b.String()
	}
	fmt.Fprintf(&b, "  go run . check                        (the grading: the lowest failing seed, shrunk and told tick by tick)\n")
	fmt.Fprintf(&b, "  go run . play -cast replay.cast       (writes the replay as an asciicast, 80x24)\n")
	return b.String()
}

// Test grades sol over DefaultSeeds seeds (the workspace's go test calls
// it) and fails t with the report unless every seed passes; a pass prints
// the report to standard output.
func Test(t testing.TB, sol Solution) {
	t.Helper()
	if sol == nil {
		t.Fatal("exercise: no solution")
		return
	}
	e, err := Lookup(sol.Exercise())
	if err != nil {
		t.Fatal(err)
		return
	}
	rep, hung := gradeWatched(func(onSeed func(uint64)) *Report { return e.GradeSeeds(sol, 1, DefaultSeeds, onSeed) })
	if rep == nil {
		t.Fatal(hangText(e, hung))
		return
	}
	if !rep.Pass() {
		t.Errorf("\n%s", rep.Text(e))
		return
	}
	// Printed, not logged: go test in a workspace (local directory mode)
	// shows a passing test's standard output, so the pass is seen with
	// its counts.
	fmt.Print(rep.Text(e))
}
