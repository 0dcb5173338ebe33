//go:build unix

package exercise

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A student's file that is a FIFO (or a device) is refused at once, with
// the loader's message, instead of blocking the grader on its open or
// reading without end.
func TestArchitectureSpecialFile(t *testing.T) {
	e, _ := Lookup("architecture")
	fifo := filepath.Join(t.TempDir(), "architecture.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, fifo + ":1:1: cannot read the file: it is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "/dev/zero:1:1: cannot read the file: it is a character device, not a regular file"},
	} {
		done := make(chan string, 1)
		go func() { done <- e.Grade(Architecture{File: c.path}, 5).Error }()
		select {
		case got := <-done:
			if !strings.Contains(got, c.want) {
				t.Errorf("error %q, want it to contain %q", got, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("grading %s did not return within 10s", c.path)
		}
	}
}
