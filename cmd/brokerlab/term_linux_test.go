//go:build linux

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// On a real terminal (a pseudo-terminal from script(1)) whose TERM is
// dumb, unset or unknown, play gives the headless hints and exits 2, and
// the menu lists the lessons and says why the player did not open, as
// they do when standard output is not a terminal.
func TestPlayUnderDumbTerminals(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to make a pseudo-terminal")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"TERM=dumb", "-u TERM", "TERM=no-such-terminal"} {
		for _, args := range []string{"play poison-dlq", ""} {
			line := "env " + env + " BROKERLAB_TEST_MAIN=1 " + exe + " " + args
			cmd := exec.Command(script, "-qec", line, os.DevNull)
			timer := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
			out, err := cmd.Output()
			timer.Stop()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			text := strings.ReplaceAll(string(out), "\r\n", "\n")
			if args == "" {
				if code != exitOK || !strings.Contains(text, "The lesson player did not open: TERM is") || !strings.Contains(text, "poison-dlq") {
					t.Errorf("%s (menu): exit %d\n%s", env, code, text)
				}
				continue
			}
			if code != exitBadInput || !strings.Contains(text, "needs a terminal it can draw on, and TERM is") ||
				!strings.Contains(text, "brokerlab run FILE|LESSON") || strings.Contains(text, "cursor addressable") || strings.Contains(text, "\x1b[") {
				t.Errorf("%s %s: exit %d\n%q", env, args, code, text)
			}
		}
	}
}
