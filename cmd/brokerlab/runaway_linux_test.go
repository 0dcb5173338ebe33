//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunawayFilesHitTheBudget runs the shapes that can only grow (a
// subscriber emitting into its own topic, 1024 subscribers emitting 100
// each, a redrive of 100,000 poison messages every tick, a fan-out retried
// 1000 times at once into queues that are down, poison messages with no
// dead-letter queue coming back every tick for 1M ticks) through the real
// binary and requires each to stop within 20 s with exit code 2, a message
// naming the cap and the likely cause, within 20 s of CPU time (user+sys)
// and at most 256 MiB peak RSS, both measured from the child's rusage; the
// wall clock only bounds a run that does not stop at all (120 s), since
// the machines that run this are shared and a loaded one stretches wall
// time several times. broker.duplicate on every delivery no
// longer grows (a duplicate is not duplicated again): that file must end,
// within the same bounds, without a budget error.
func TestRunawayFilesHitTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "brokerlab")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cases := []struct {
		file       string
		code       int
		cap, cause string
	}{
		{"emit-self.yaml", 2, "cap cascade_per_root", "set cascade_limit"},
		{"wide-emits.yaml", 2, "cap cascade_per_root", "set cascade_limit"},
		{"redrive-storm.yaml", 2, "cap messages", "redrives dead letters"},
		{"fan-out-retry-down.yaml", 2, "cap events", "retries a refused forward 1000 times at once"},
		{"poison-no-dlq.yaml", 2, "cap events", "which has no dead_letter"},
		{"dup-always.yaml", 0, "", ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", filepath.Join("testdata", "runaway", c.file))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if ctx.Err() != nil {
				t.Fatalf("still running after 120 s of wall time")
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			rss := ru.Maxrss // KiB on Linux
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			t.Logf("exit %d in %v (%v CPU), peak RSS %d MiB", code, took.Round(time.Millisecond), cpu.Round(time.Millisecond), rss>>10)
			if cpu > 20*time.Second {
				t.Errorf("took %v of CPU time, over 20 s", cpu.Round(time.Millisecond))
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout.String(), stderr.String())
			}
			if rss > 256<<10 {
				t.Errorf("peak RSS %d MiB, over 256 MiB", rss>>10)
			}
			if c.cap == "" && strings.Contains(stdout.String(), "not drained") {
				t.Errorf("the run must drain:\n%s", stdout.String())
			}
			if c.cap != "" && (!strings.Contains(stderr.String(), c.cap) || !strings.Contains(stderr.String(), c.cause) ||
				!strings.Contains(stderr.String(), "runaway/"+c.file+":")) {
				t.Errorf("the message must name the file, the cap (%q) and the likely cause (%q):\n%s", c.cap, c.cause, stderr.String())
			}
		})
	}
}
