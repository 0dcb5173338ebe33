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

// refusal refuses an output path whose name the reason does not repeat
// (a missing directory, say); reason says what is wrong and what is
// allowed.
type refusal struct{ path, reason string }

func (e *refusal) Error() string {
	return errOutput.Error() + ": " + printable.String(e.path) + ": " + e.reason
}

func (e *refusal) Unwrap() error { return errOutput }

// errWrite is wrapped by the errors of writeOutput that come from the file
// system after the checks passed (a full disk, a directory removed
// meanwhile); they name the path, never the temporary file.
var errWrite = errors.New("cannot write")

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
		return 0, &refusal{path, fmt.Sprintf("cannot look it up (%v)", pathError(lerr))}
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
	return 0, fmt.Errorf("%w: %s is %s; write to a regular file, a FIFO or a character device such as /dev/stdout", errOutput, name, kind(mode))
}

// inPlace reports whether a file of this mode is written in place: a
// character device or a FIFO.
func inPlace(m fs.FileMode) bool {
	return m&fs.ModeNamedPipe != 0 || (m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0)
}

// kind names the type of a file that is not a regular one, with its
// article ("a socket"), for the messages of outputs and inputs alike.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file (" + m.Type().String() + ")"
}

// statOutput runs planOutput on the file system as it is now. A path that
// is to be replaced (or created) is refused too when its directory cannot
// take the temporary file (see checkDir).
func statOutput(path string) (outputPlan, error) {
	lst, lerr := os.Lstat(path)
	var st fs.FileInfo
	if lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
		st, _ = os.Stat(path)
	}
	plan, err := planOutput(path, lst, lerr, st)
	if lerr != nil || err == nil && plan == planReplace {
		// A directory that is missing or is a file makes Lstat fail
		// too; its own message says more than Lstat's.
		if derr := checkDir(path); derr != nil {
			return 0, derr
		}
	}
	return plan, err
}

// planDir decides whether a file may be created in dir, the directory of
// path, from its Stat (fi, err): dir must exist and be a directory. It is
// pure, like planOutput; checkDir adds what only trying can tell.
func planDir(path, dir string, fi fs.FileInfo, err error) error {
	where := dirName(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		what := "a regular file"
		if !fi.Mode().IsRegular() {
			what = kind(fi.Mode())
		}
		return &refusal{path, fmt.Sprintf("%s is %s, not a directory; name a file in a directory that exists", where, what)}
	case errors.Is(err, fs.ErrNotExist):
		return &refusal{path, where + " does not exist; create it first, or name a file in a directory that exists"}
	}
	return &refusal{path, fmt.Sprintf("cannot use %s (%v); name a file in a directory you can write to", where, pathError(err))}
}

// dirName names dir in a message: "the current directory" for ".",
// otherwise "the directory DIR".
func dirName(dir string) string {
	if dir == "." {
		return "the current directory"
	}
	return "the directory " + printable.String(dir)
}

// checkDir refuses path when the file that replaces it cannot be created
// in its directory: the directory does not exist, is not a directory
// (then the nearest part of the path that exists is named), or does not
// take new files (read-only, no permission). The last is found by trying:
// a temporary file is created there and removed at once, so the answer is
// the one writeOutput will get, for root and read-only file systems too.
func checkDir(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if errors.Is(err, syscall.ENOTDIR) {
		// Some part of dir is a file: name that part.
		for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
			if dfi, derr := os.Stat(d); derr == nil {
				if !dfi.IsDir() {
					return planDir(path, d, dfi, nil)
				}
				break
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	if err := planDir(path, dir, fi, err); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		why := pathError(err).Error()
		if errors.Is(err, fs.ErrNotExist) {
			// The directory is there (planDir saw it): a file system
			// such as /proc answers a new name with "no such file".
			why = "its file system takes no new files"
		}
		return &refusal{path, fmt.Sprintf("cannot create files in %s (%s); name a file in a directory you can write to", dirName(dir), why)}
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// clash is a file an output must not be: an input it would overwrite, or
// another output of the same command. why says which, naming path.
type clash struct{ path, why string }

// inputClash is the input role (e.g. "scenario") at path.
func inputClash(role, path string) clash {
	return clash{path, fmt.Sprintf("it is the %s %s, which it would overwrite; name another file", role, printable.String(path))}
}

// outputClash is another output at path; who says which, as a clause
// ("--out names the same file").
func outputClash(who, path string) clash {
	return clash{path, fmt.Sprintf("%s (%s); give each output its own file", who, printable.String(path))}
}

// checkOutput refuses path before any work is done when it cannot be
// written (see statOutput) or when it is the same file as one of others.
// what names the flag, e.g. "--json"; the message starts with it and the
// path.
func checkOutput(what, path string, others ...clash) error {
	if _, err := statOutput(path); err != nil {
		var r *refusal
		if errors.As(err, &r) {
			return fmt.Errorf("%s %s: %w: %s", what, printable.String(path), errOutput, r.reason)
		}
		if errors.Is(err, errOutput) {
			return fmt.Errorf("%s %s: %w", what, printable.String(path), err)
		}
		return fmt.Errorf("%s %w", what, err)
	}
	for _, o := range others {
		if o.path != "" && sameFile(path, o.path) {
			return fmt.Errorf("%s %s: %w: %s", what, printable.String(path), errOutput, o.why)
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
	// A file-system error names the path given, never the temporary
	// file, which is gone by the time the message is read.
	cannot := func(err error) error {
		var pe *os.PathError
		var le *os.LinkError
		if errors.As(err, &pe) || errors.As(err, &le) {
			return fmt.Errorf("%w %s: %v", errWrite, printable.String(path), pathError(err))
		}
		return err
	}
	if plan == planInPlace {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return cannot(err)
		}
		if err := write(f); err != nil {
			f.Close()
			return cannot(err)
		}
		return cannot(f.Close())
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return cannot(err)
	}
	tmp := f.Name()
	defer removeOnInterrupt(tmp)()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return cannot(err)
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
		return cannot(err)
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
