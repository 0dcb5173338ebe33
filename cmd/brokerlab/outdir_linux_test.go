//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryOutputInAnUnwritableDirectory: sysfs refuses new files even to
// root, so an output in /sys, and explore's default reproducer when the
// working directory is /sys, are refused before any work.
func TestEveryOutputInAnUnwritableDirectory(t *testing.T) {
	if fi, err := os.Stat("/sys"); err != nil || !fi.IsDir() {
		t.Skip("no /sys")
	}
	if f, err := os.CreateTemp("/sys", "probe"); err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Skip("/sys takes new files here")
	}
	dir, name := fixture(t)
	if code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "10", "--shard", "1/2", "--no-shrink", "--json", "s1.json", name); code == exitBadInput {
		t.Fatalf("the shard report: exit %d\n%s%s", code, out, errs)
	}
	scen, report := filepath.Join(dir, name), filepath.Join(dir, "s1.json")
	for _, args := range outputCommands(scen, "/sys/brokerlab-out") {
		for i, a := range args {
			if a == "s1.json" {
				args[i] = report
			}
		}
		code, out, errs := runCLI(t, dir, false, args...)
		if code != exitBadInput || out != "" || !strings.Contains(errs, "/sys/brokerlab-out.") ||
			!strings.Contains(errs, "cannot create files in the directory /sys") || strings.Contains(errs, ".tmp") {
			t.Errorf("%v: exit %d, want 2, no work done and a refusal\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
		}
	}
	// The default reproducer goes to the working directory.
	code, out, errs := runCLI(t, "/sys", false, "explore", "--seeds", "30", scen)
	if code != exitBadInput || out != "" || !strings.Contains(errs, "naive-billing.min.yaml") ||
		!strings.Contains(errs, "cannot create files in the current directory") || !strings.Contains(errs, "--out") {
		t.Errorf("the default reproducer: exit %d, want 2 and a refusal\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// TestOutputWhereNoFileCanBeMade: procfs answers a new file's name with
// "no such file or directory" although the directory is there; the
// refusal says what is wrong instead of repeating the kernel's words.
func TestOutputWhereNoFileCanBeMade(t *testing.T) {
	if fi, err := os.Stat("/proc/self"); err != nil || !fi.IsDir() {
		t.Skip("no /proc")
	}
	dir, name := fixture(t)
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "10", "--json", "/proc/brokerlab-out.json", name)
	if code != exitBadInput || out != "" || strings.Contains(errs, "no such file") ||
		!strings.Contains(errs, "cannot create files in the directory /proc (its file system takes no new files)") {
		t.Errorf("exit %d, want 2 and a refusal that says why\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
