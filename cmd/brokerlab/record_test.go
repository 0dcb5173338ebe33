package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/tui"
)

// runRecord runs the CLI in process with args and returns the exit code,
// stdout and stderr.
func runRecord(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := newCLI(&out, &errb)
	c.terminal = func() bool { return false } // record needs no terminal
	code := c.main(args)
	return code, out.String(), errb.String()
}

// checkCast parses a cast file as asciinema v2 and returns its header and
// the number of events.
func checkCast(t *testing.T, path string) (map[string]any, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	var hdr map[string]any
	n := 0
	last := -1.0
	for sc.Scan() {
		if hdr == nil {
			if err := json.Unmarshal(sc.Bytes(), &hdr); err != nil {
				t.Fatalf("header: %v", err)
			}
			continue
		}
		var ev []any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || len(ev) != 3 {
			t.Fatalf("event %d: %v %s", n, err, sc.Bytes())
		}
		at, ok := ev[0].(float64)
		if !ok || at < last || ev[1] != "o" {
			t.Fatalf("event %d: %v", n, ev)
		}
		if _, ok := ev[2].(string); !ok {
			t.Fatalf("event %d: data %v", n, ev[2])
		}
		last = at
		n++
	}
	if hdr["version"] != float64(2) {
		t.Fatalf("header %v", hdr)
	}
	return hdr, n
}

func TestRecordCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "poison.cast")
	code, stdout, stderr := runRecord(t, "record", "poison-dlq", "--cast", out, "--size", "90x30", "--seed", "4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote "+out+": 90x30") {
		t.Errorf("stdout %q", stdout)
	}
	hdr, n := checkCast(t, out)
	if hdr["width"] != float64(90) || hdr["height"] != float64(30) || n < 20 {
		t.Errorf("header %v, %d events", hdr, n)
	}
	if title, _ := hdr["title"].(string); !strings.Contains(title, "(poison-dlq)") {
		t.Errorf("title %q", title)
	}
	if _, ok := hdr["timestamp"]; ok {
		t.Errorf("timestamp without --timestamp: %v", hdr)
	}
	first, _ := os.ReadFile(out)
	if code, _, stderr := runRecord(t, "record", "--cast", out, "--size", "90x30", "--seed", "4", "poison-dlq"); code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	second, _ := os.ReadFile(out)
	if !bytes.Equal(first, second) {
		t.Error("two recordings of the same lesson, seed and size differ")
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("cast mode %v, %v: want readable by others", fi.Mode(), err)
	}
	code, _, stderr = runRecord(t, "record", "--cast", out, "--timestamp", "dual-write")
	if code != exitOK {
		t.Fatalf("--timestamp: exit %d: %s", code, stderr)
	}
	if hdr, _ := checkCast(t, out); hdr["timestamp"] == nil || hdr["width"] != float64(tui.RecordDefaultWidth) {
		t.Errorf("--timestamp header %v", hdr)
	}
}

func TestRecordBadArguments(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.cast")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "poison-dlq"}, "--cast OUT.cast is required"},
		{[]string{"record", "--cast", out}, "want exactly one FILE or LESSON"},
		{[]string{"record", "--cast", out, "--size", "100", "poison-dlq"}, "--size wants WIDTHxHEIGHT"},
		{[]string{"record", "--cast", out, "--size", "axb", "poison-dlq"}, "--size wants WIDTHxHEIGHT"},
		{[]string{"record", "--cast", out, "--size", "10x5", "poison-dlq"}, "widths go from"},
		{[]string{"record", "--cast", out, "--size", "0x40", "poison-dlq"}, "widths go from"},
		{[]string{"record", "--cast", out, "--size", "100000x40", "poison-dlq"}, "widths go from"},
		{[]string{"record", "--cast", out, "--tick", "0s", "poison-dlq"}, "--tick 0s"},
		{[]string{"record", "--cast", out, "no-such-lesson"}, "no-such-lesson"},
		{[]string{"record", "--cast", out, "--variant", "nope", "poison-dlq"}, "nope"},
		{[]string{"record", "--cast", filepath.Join(dir, "missing", "x.cast"), "poison-dlq"}, "missing does not exist"},
		{[]string{"record", "--cast", dir, "poison-dlq"}, "is a directory"},
		{[]string{"record", "--cast", out, "--seed", "-1", "poison-dlq"}, "seed"},
	} {
		code, stdout, stderr := runRecord(t, c.args...)
		if code != exitBadInput {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, stderr)
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q, want it to say %q", c.args, stderr, c.want)
		}
		if stdout != "" {
			t.Errorf("%v: stdout %q", c.args, stdout)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

func TestRecordUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	code, _, stderr := runRecord(t, "record", "--cast", filepath.Join(dir, "x.cast"), "poison-dlq")
	if code != exitBadInput || !strings.Contains(stderr, "cannot create files in the directory") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
