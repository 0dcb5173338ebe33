package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/brokerlab/brokerlab/printable"
)

// How an output path is written. Every file a command writes (explore's
// --json and reproducer, record's cast) goes through writeOutput, which
// never destroys anything that is not a regular file the user named:
//
//   - a regular file, or a path that does not exist yet, is written to a
//     temporary file next to it and renamed into place, so a reader never
//     sees half of it and a failure leaves the old file as it was;
//   - a character device or a FIFO (/dev/null, /dev/stdout, a named pipe)
//     is opened and written in place: it is never created, truncated,
//     renamed over or removed;
//   - a symbolic link is followed only to a device or FIFO; a link to a
//     regular file, or a dangling one, is refused, because renaming over
//     it would replace the link and writing through it would change a file
//     the user did not name;
//   - a directory, a socket and a block device are refused.
type outputPlan int

const (
	// planReplace writes a temporary file and renames it over the path.
	planReplace outputPlan = iota
	// planInPlace opens the existing path for writing, without creating
	// or truncating it.
	planInPlace
)

// errOutput is wrapped by every refusal of an output path.
var errOutput = errors.New("output refused")

// planOutput decides how to write path from its Lstat (lst, lerr) and, for
// a symbolic link, the Stat of what it points to (st, nil when dangling).
// It is pure, so the rules are tested on file modes without touching real
// devices.
func planOutput(path string, lst fs.FileInfo, lerr error, st fs.FileInfo) (outputPlan, error) {
	name := printable.String(path)
	if lerr != nil {
		if errors.Is(lerr, fs.ErrNotExist) {
			return planReplace, nil
		}
		return 0, fmt.Errorf("%w: %s: %v", errOutput, name, pathError(lerr))
	}
	mode := lst.Mode()
	if mode&fs.ModeSymlink != 0 {
		if st == nil {
			return 0, fmt.Errorf("%w: %s is a symbolic link to a missing file; name the file to write itself", errOutput, name)
		}
		if inPlace(st.Mode()) {
			return planInPlace, nil
		}
		target, _ := os.Readlink(path)
		return 0, fmt.Errorf("%w: %s is a symbolic link (to %s); writing through it would replace a file not named here, so name the file itself", errOutput, name, printable.String(target))
	}
	switch {
	case mode.IsRegular():
		return planReplace, nil
	case inPlace(mode):
		return planInPlace, nil
	case mode.IsDir():
		return 0, fmt.Errorf("%w: %s is a directory; give a file name", errOutput, name)
	}
	return 0, fmt.Errorf("%w: %s is a %s; write to a regular file, a FIFO or a character device such as /dev/stdout", errOutput, name, kind(mode))
}

// inPlace reports whether a file of this mode is written in place: a
// character device or a FIFO.
func inPlace(m fs.FileMode) bool {
	return m&fs.ModeNamedPipe != 0 || (m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0:
		return "block device"
	}
	return "special file (" + m.Type().String() + ")"
}

// statOutput runs planOutput on the file system as it is now.
func statOutput(path string) (outputPlan, error) {
	lst, lerr := os.Lstat(path)
	var st fs.FileInfo
	if lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
		st, _ = os.Stat(path)
	}
	return planOutput(path, lst, lerr, st)
}

// checkOutput refuses path before any work is done when it cannot be
// written (see planOutput) or when it is the same file as one of inputs,
// which it would overwrite. what names the flag, e.g. "--json".
func checkOutput(what, path string, inputs ...string) error {
	if _, err := statOutput(path); err != nil {
		return fmt.Errorf("%s %w", what, err)
	}
	for _, in := range inputs {
		if in != "" && sameFile(path, in) {
			return fmt.Errorf("%s %s: %w: it is %s, which it would overwrite; name another file", what, printable.String(path), errOutput, printable.String(in))
		}
	}
	return nil
}

// sameFile reports whether a and b name the same file, through symbolic
// links and relative paths too (os.SameFile on both), or the same absolute
// path when either does not exist yet.
func sameFile(a, b string) bool {
	if sa, err := os.Stat(a); err == nil {
		if sb, err := os.Stat(b); err == nil {
			return os.SameFile(sa, sb)
		}
	}
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// writeOutput writes path with write, as planOutput decides. A replaced
// file is written to a temporary file in the same directory, made
// readable by all (0644) and renamed into place; the rename happens only
// if the path is still a regular file or absent at that moment. The
// temporary file is removed on every failure and on an interrupt (SIGINT,
// SIGTERM, SIGHUP), after which the command exits with code 130.
func writeOutput(path string, write func(io.Writer) error) error {
	plan, err := statOutput(path)
	if err != nil {
		return err
	}
	if plan == planInPlace {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer removeOnInterrupt(tmp)()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := write(f); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes the file private
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	// The path may have changed while the output was written.
	if lst, err := os.Lstat(path); err == nil && !lst.Mode().IsRegular() {
		os.Remove(tmp)
		return fmt.Errorf("%w: %s is no longer a regular file (now %s); it was left as it is", errOutput, printable.String(path), lst.Mode().Type())
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// interruptExit ends the process after an interrupt; replaced in tests.
var interruptExit = func() { os.Exit(130) }

// removeOnInterrupt removes file if the process is interrupted before the
// returned stop is called.
func removeOnInterrupt(file string) (stop func()) {
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case s := <-sig:
			os.Remove(file)
			fmt.Fprintf(os.Stderr, "brokerlab: %v: removed the unfinished %s\n", s, printable.String(file))
			interruptExit()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
