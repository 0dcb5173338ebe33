//go:build unix

package main

import (
	"io"
	"regexp"
	"strconv"
	"testing"
)

// The summary of a sweep gives the seeds per CPU-second of the process
// beside the wall-clock seeds per second, with 1 job and with 2: on a busy
// machine the wall-clock rate understates what a core does, and the CPU
// rate is the figure that compares across runs.
func TestExploreReportsSeedsPerCPUSecond(t *testing.T) {
	dir, name := fixture(t)
	line := regexp.MustCompile(`(?m)^200 seeds in [0-9.]+s with (\d) jobs?: \d+ seeds/s, (\d+) per CPU-second \([0-9.]+ CPU-s\)$`)
	for _, jobs := range []string{"1", "2"} {
		code, _, errs := runCLI(t, dir, false, "explore", "--seeds", "200", "--jobs", jobs, "--no-shrink", name)
		if code != exitFailed {
			t.Fatalf("--jobs %s: exit %d, stderr %q", jobs, code, errs)
		}
		m := line.FindStringSubmatch(errs)
		if m == nil || m[1] != jobs {
			t.Fatalf("--jobs %s: no summary with seeds per CPU-second in %q", jobs, errs)
		}
		if n, _ := strconv.Atoi(m[2]); n <= 0 {
			t.Errorf("--jobs %s: %s seeds per CPU-second", jobs, m[2])
		}
	}
}

// On a terminal the progress bar gives both rates too.
func TestExploreProgressGivesSeedsPerCPUSecond(t *testing.T) {
	dir, name := fixture(t)
	old := stderrTerminal
	defer func() { stderrTerminal = old }()
	stderrTerminal = func(io.Writer) bool { return true }
	_, _, errs := runCLI(t, dir, false, "explore", "--seeds", "200", "--no-shrink", name)
	if !regexp.MustCompile(`\x1b\[K\[#+\] 200/200 seeds  \d+ seeds/s \(\d+ per CPU-s\)  \d+ failed`).MatchString(errs) {
		t.Fatalf("no progress bar with both rates: %q", errs)
	}
}
