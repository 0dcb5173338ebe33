//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckRefusesSpecialFiles: check and run refuse a device or a FIFO
// at once with exit code 2, instead of reading without end or blocking.
func TestCheckRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", "/dev/urandom", fifo} {
		if _, err := os.Stat(path); err != nil {
			t.Logf("skipping %s: %v", path, err)
			continue
		}
		for _, cmd := range []string{"check", "run"} {
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			start := time.Now()
			go func() {
				code, stdout, stderr := runCLI(t, "", false, cmd, path)
				done <- result{code, stdout, stderr}
			}()
			select {
			case r := <-done:
				if r.code != exitBadInput || r.stdout != "" || !strings.HasPrefix(r.stderr, path+":1:1: cannot read the file: it is a ") {
					t.Errorf("%s %s: exit %d, stdout %q, stderr %q", cmd, path, r.code, r.stdout, r.stderr)
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("%s %s took %v", cmd, path, d)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %s did not return within 5s", cmd, path)
			}
		}
	}
}
