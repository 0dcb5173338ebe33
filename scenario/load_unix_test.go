//go:build unix

package scenario

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWithin runs LoadFile(path) and fails the test if it takes longer
// than a few seconds: reading a device or opening a FIFO must not block.
func loadWithin(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		s, err := LoadFile(path)
		if s != nil {
			t.Errorf("LoadFile(%s) returned a scenario", path)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("LoadFile(%s) did not return within 5s", path)
		return nil
	}
}

// TestLoadFileRefusesSpecialFiles: devices, FIFOs, sockets and
// directories are refused before they are opened or read.
func TestLoadFileRefusesSpecialFiles(t *testing.T) {
	dir, err := os.MkdirTemp("", "bl") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.yaml")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{fifo, "it is a named pipe (FIFO), not a regular file"},
		{sock, "it is a socket, not a regular file"},
		{dir, "it is a directory, not a regular file"},
		{"/dev/zero", "it is a character device, not a regular file"},
		{"/dev/urandom", "it is a character device, not a regular file"},
		{link, "it is a character device, not a regular file"},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.path); err != nil {
			t.Logf("skipping %s: %v", c.path, err)
			continue
		}
		err := loadWithin(t, c.path)
		want := c.path + ":1:1: cannot read the file: " + c.want + "; scenario files must be regular files"
		if err == nil || err.Error() != want {
			t.Errorf("LoadFile(%s):\n got %v\nwant %s", c.path, err, want)
		}
	}
}

// TestLoadFileMissing: a missing file is named once, in the position, and
// the message says what is wrong without repeating it.
func TestLoadFileMissing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing.yaml")
	err := loadWithin(t, p)
	if err == nil || err.Error() != p+":1:1: cannot read the file: no such file or directory" {
		t.Errorf("got %v", err)
	}
	if err != nil && strings.Count(err.Error(), p) != 1 {
		t.Errorf("path named more than once: %v", err)
	}
}

// TestLoadFileFIFOSwappedInAfterStat: a file replaced by a FIFO between
// the Stat that found it regular and the Open is refused, and the open
// does not wait for a writer.
func TestLoadFileFIFOSwappedInAfterStat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "swap.yaml")
	if err := os.WriteFile(path, []byte("title: t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := betweenStatAndOpen
	t.Cleanup(func() { betweenStatAndOpen = old })
	swapped := false
	betweenStatAndOpen = func(p string) {
		if p != path {
			return
		}
		if err := os.Remove(p); err != nil {
			t.Error(err)
			return
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Error(err)
			return
		}
		swapped = true
	}
	err := loadWithin(t, path)
	if !swapped {
		t.Fatal("the hook did not run")
	}
	want := path + ":1:1: cannot read the file: it was replaced while it was opened; try again"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
