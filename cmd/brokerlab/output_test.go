package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain runs the command itself when the test binary is started with
// BROKERLAB_TEST_MAIN=1, so tests can drive a real process (signals, real
// standard output) without building the binary.
func TestMain(m *testing.M) {
	if os.Getenv("BROKERLAB_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// process returns the brokerlab process for args, run from dir.
func process(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BROKERLAB_TEST_MAIN=1")
	return cmd
}

// fileInfo is a fs.FileInfo of a given mode, to test the output rules on
// devices without touching real ones.
type fileInfo struct{ mode fs.FileMode }

func (f fileInfo) Name() string       { return "x" }
func (f fileInfo) Size() int64        { return 0 }
func (f fileInfo) Mode() fs.FileMode  { return f.mode }
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fileInfo) Sys() any           { return nil }

// TestPlanOutput: regular files and new paths are replaced, devices and
// FIFOs written in place, everything else refused.
func TestPlanOutput(t *testing.T) {
	char := fs.ModeDevice | fs.ModeCharDevice | 0o666
	cases := []struct {
		name    string
		lst     fs.FileInfo
		lerr    error
		st      fs.FileInfo
		want    outputPlan
		refused string
	}{
		{"new", nil, fs.ErrNotExist, nil, planReplace, ""},
		{"regular", fileInfo{0o644}, nil, nil, planReplace, ""},
		{"/dev/null", fileInfo{char}, nil, nil, planInPlace, ""},
		{"fifo", fileInfo{fs.ModeNamedPipe | 0o600}, nil, nil, planInPlace, ""},
		{"/dev/stdout to a terminal", fileInfo{fs.ModeSymlink | 0o777}, nil, fileInfo{char}, planInPlace, ""},
		{"/dev/stdout to a pipe", fileInfo{fs.ModeSymlink | 0o777}, nil, fileInfo{fs.ModeNamedPipe}, planInPlace, ""},
		{"link to a file", fileInfo{fs.ModeSymlink | 0o777}, nil, fileInfo{0o644}, 0, "is a symbolic link"},
		{"dangling link", fileInfo{fs.ModeSymlink | 0o777}, nil, nil, 0, "symbolic link to a missing file"},
		{"dir", fileInfo{fs.ModeDir | 0o755}, nil, nil, 0, "is a directory"},
		{"block", fileInfo{fs.ModeDevice | 0o660}, nil, nil, 0, "block device"},
		{"socket", fileInfo{fs.ModeSocket | 0o660}, nil, nil, 0, "socket"},
		{"unreadable", nil, fs.ErrPermission, nil, 0, "permission denied"},
	}
	for _, c := range cases {
		got, err := planOutput(c.name, c.lst, c.lerr, c.st)
		if c.refused != "" {
			if !errors.Is(err, errOutput) || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s: err %v, want a refusal saying %q", c.name, err, c.refused)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: plan %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	// The real /dev/null is written in place, never replaced.
	if plan, err := statOutput(os.DevNull); err != nil || plan != planInPlace {
		t.Fatalf("%s: plan %d, %v; want in place", os.DevNull, plan, err)
	}
}

// assertDevNull fails the test unless /dev/null is still a character
// device.
func assertDevNull(t *testing.T) {
	t.Helper()
	fi, err := os.Lstat(os.DevNull)
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", os.DevNull, fi.Mode(), err)
	}
}

func TestWriteOutputDevNull(t *testing.T) {
	if plan, err := statOutput(os.DevNull); err != nil || plan != planInPlace {
		t.Skip("the plan for /dev/null is not in place; TestPlanOutput fails")
	}
	defer assertDevNull(t)
	if err := writeOutput(os.DevNull, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	assertDevNull(t)
	dir, name := fixture(t)
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "5", "--no-shrink", "--json", os.DevNull, name)
	if code == exitBadInput {
		t.Fatalf("explore --json /dev/null: exit %d\n%s%s", code, out, errs)
	}
	if m, _ := filepath.Glob("/dev/.null*"); len(m) > 0 {
		t.Fatalf("temporary files in /dev: %v", m)
	}
}

// A symbolic link to a regular file is refused and both stay as they
// were; a dangling one too.
func TestWriteOutputSymlink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.json", link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
	if err := writeOutput(link, write); !errors.Is(err, errOutput) || !strings.Contains(err.Error(), "symbolic link (to target.json)") {
		t.Fatalf("err %v, want a refusal naming the link's target", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the target changed to %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink("nowhere.json", dangling)
	if err := writeOutput(dangling, write); !errors.Is(err, errOutput) {
		t.Fatalf("dangling link: err %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere.json")); err == nil {
		t.Fatal("the dangling link's target was created")
	}
	// A regular file is replaced, and no temporary file is left.
	if err := writeOutput(target, write); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(m) > 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// explore --json naming the scenario, or the reproducer, is refused before
// the sweep, and the scenario is unchanged.
func TestExploreJSONNeverOverwritesAnInput(t *testing.T) {
	dir, name := fixture(t)
	before, _ := os.ReadFile(filepath.Join(dir, name))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", name}, "--json naive-billing.yaml: output refused: it is the scenario naive-billing.yaml, which it would overwrite"},
		{[]string{"--json", "./" + name}, "--json ./naive-billing.yaml: output refused: it is the scenario naive-billing.yaml, which it would overwrite"},
		// Two outputs on one file: the message names the other flag.
		{[]string{"--json", "x.yaml", "--out", "x.yaml"}, "--json x.yaml: output refused: --out names the same file (x.yaml); give each output its own file"},
		{[]string{"--json", "x.yaml", "--out", "./x.yaml"}, "--json x.yaml: output refused: --out names the same file (./x.yaml); give each output its own file"},
		{[]string{"--json", "naive-billing.min.yaml"}, "--json naive-billing.min.yaml: output refused: the reproducer goes to the same file (naive-billing.min.yaml; change that with --out); give each output its own file"},
	} {
		code, out, errs := runCLI(t, dir, false, append(append([]string{"explore", "--seeds", "5"}, c.args...), name)...)
		if code != exitBadInput || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, want 2 and a refusal before the sweep saying %q\n%s%s", c.args, code, c.want, out, errs)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, name)); !bytes.Equal(before, after) {
		t.Fatal("the scenario changed")
	}
	// With --no-shrink there is no reproducer, so --json may take its name.
	if code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "5", "--no-shrink", "--json", "naive-billing.min.yaml", name); code == exitBadInput {
		t.Errorf("--no-shrink: exit %d\n%s%s", code, out, errs)
	}
}

// An existing reproducer is kept unless --force says to replace it.
func TestExploreKeepsAnExistingReproducer(t *testing.T) {
	dir, name := fixture(t)
	min := filepath.Join(dir, "naive-billing.min.yaml")
	if err := os.WriteFile(min, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "200", name)
	if code != exitBadInput || !strings.Contains(errs, "naive-billing.min.yaml exists; pass --force") {
		t.Fatalf("exit %d, want 2 and a refusal\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(min); string(b) != "mine\n" {
		t.Fatalf("the reproducer was replaced: %q", b)
	}
	code, out, errs = runCLI(t, dir, false, "explore", "--seeds", "200", "--force", name)
	if code != exitFailed || !strings.Contains(out, "wrote naive-billing.min.yaml") {
		t.Fatalf("--force: exit %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(min); string(b) == "mine\n" {
		t.Fatal("--force did not replace the reproducer")
	}
}

// explore merge refuses a report given twice (under any name) and a --json
// that is one of its inputs.
func TestExploreMergeRefusesDuplicatesAndSelfOverwrite(t *testing.T) {
	dir, name := fixture(t)
	for _, k := range []string{"1", "2"} {
		if code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "40", "--shard", k+"/2", "--no-shrink", "--json", "s"+k+".json", name); code == exitBadInput {
			t.Fatalf("shard %s: exit %d\n%s%s", k, code, out, errs)
		}
	}
	s1, _ := os.ReadFile(filepath.Join(dir, "s1.json"))
	for _, args := range [][]string{
		{"--json", "s1.json", "s1.json", "s2.json"},
		{"s1.json", "./s1.json", "s2.json"},
		{"--json", "s2.json", "s1.json", "s2.json"},
	} {
		code, out, errs := runCLI(t, dir, false, append([]string{"explore", "merge"}, args...)...)
		if code != exitBadInput || out != "" || !strings.Contains(errs, "same report") && !strings.Contains(errs, "which it would overwrite") {
			t.Errorf("merge %v: exit %d, want 2 and a refusal\n%s%s", args, code, out, errs)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "s1.json")); !bytes.Equal(b, s1) {
		t.Fatal("s1.json changed")
	}
	// --json /dev/stdout on a pipe: written in place, through the link.
	cmd := process(t, dir, "explore", "merge", "--json", "/dev/stdout", "s1.json", "s2.json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() == exitBadInput) {
		t.Fatalf("merge --json /dev/stdout: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"scenario"`) || !strings.Contains(stdout.String(), "wrote /dev/stdout") {
		t.Fatalf("no JSON report on stdout:\n%s\n%s", stdout.String(), stderr.String())
	}
	assertDevNull(t)
}

// record removes its unfinished temporary file when interrupted.
func TestRecordInterruptRemovesTheTemporaryFile(t *testing.T) {
	if testing.Short() {
		t.Skip("records a long run in a process")
	}
	dir := t.TempDir()
	src := "title: slow\nrun: {ticks: 3000}\ntopology:\n  queues: [{name: q}]\n" +
		"actors:\n  producers: [{name: p, to: {queue: q}, count: 1000}]\n  consumers: [{name: c, queue: q}]\n"
	if err := os.WriteFile(filepath.Join(dir, "slow.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := process(t, dir, "record", "--cast", "slow.cast", "slow.yaml")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tmps []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && len(tmps) == 0; time.Sleep(5 * time.Millisecond) {
		tmps, _ = filepath.Glob(filepath.Join(dir, ".slow.cast.*.tmp"))
	}
	if len(tmps) == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("no temporary file appeared")
	}
	time.Sleep(50 * time.Millisecond) // let the recording get going
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130 (finished before the interrupt?)\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "removed the unfinished") {
		t.Errorf("stderr: %q", stderr.String())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".slow.cast*"))
	if _, err := os.Stat(filepath.Join(dir, "slow.cast")); err == nil || len(left) > 0 {
		t.Fatalf("left behind: %v (cast exists: %v)", left, err == nil)
	}
}
