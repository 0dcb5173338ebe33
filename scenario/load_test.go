package scenario

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadValid(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	if len(files) < 2 {
		t.Fatalf("want valid examples, got %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := LoadFile(f)
			if err != nil {
				t.Fatalf("LoadFile:\n%v", err)
			}
			if err := s.FaultPlan().Validate(); err != nil {
				t.Errorf("FaultPlan: %v", err)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite golden files")

// TestLoadInvalid loads every file under testdata/invalid and compares the
// error with the golden NAME.err next to it (rewrite with -update).
func TestLoadInvalid(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) < 15 {
		t.Fatalf("want at least 15 invalid scenarios, got %d", len(files))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Load(name, data)
			if err == nil {
				t.Fatalf("Load accepted an invalid scenario: %+v", s)
			}
			if s != nil {
				t.Errorf("Load returned a scenario with an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			var errs *Errors
			if !errors.As(err, &errs) || len(errs.List) == 0 {
				t.Fatalf("error is not a non-empty *Errors: %T", err)
			}
			for _, e := range errs.List {
				if e.File != name || e.Line < 1 || e.Col < 1 {
					t.Errorf("bad position in %q", e.Error())
				}
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(f, ".yaml") + ".err"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("errors differ from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// endless is a reader that never ends, like /dev/zero or a file that keeps
// growing; it counts what is read from it.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	e.n += len(p)
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

// TestReadCapped: whatever the reader, at most MaxFileSize+1 bytes are
// read, so the loader can tell "too long" without reading on.
func TestReadCapped(t *testing.T) {
	r := &endless{}
	data, err := readCapped(r)
	if err != nil || len(data) != MaxFileSize+1 {
		t.Fatalf("readCapped = %d bytes, %v; want %d", len(data), err, MaxFileSize+1)
	}
	if r.n > MaxFileSize+1 {
		t.Errorf("read %d bytes from the reader, want at most %d", r.n, MaxFileSize+1)
	}
	data, err = readCapped(strings.NewReader("title: t\n"))
	if err != nil || string(data) != "title: t\n" {
		t.Errorf("short reader: %q, %v", data, err)
	}
}

// TestLoadFileTooLarge: a regular file over the cap is refused by its
// size, before it is read.
func TestLoadFileTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(p, make([]byte, MaxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(p)
	want := p + ":1:1: the file is 1048577 bytes long; scenario files are capped at 1048576 bytes"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestLoadCRLF: a file saved with Windows line ends loads like the
// original; a CR before a line feed is a line break, not a control
// character of a text.
func TestLoadCRLF(t *testing.T) {
	files, _ := filepath.Glob("lessons/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Load(f, data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Load(f, []byte(strings.ReplaceAll(string(data), "\n", "\r\n")))
		if err != nil {
			t.Errorf("%s with CRLF line ends:\n%v", f, err)
			continue
		}
		if got.Title != want.Title || got.Description != want.Description || len(got.Narration) != len(want.Narration) {
			t.Errorf("%s with CRLF line ends loads differently", f)
		}
	}
}

// TestErrorsEscapeControlCharacters: whatever a file holds, and whatever
// the file is called, an error message carries no control character.
func TestErrorsEscapeControlCharacters(t *testing.T) {
	for _, src := range []string{
		"ti\x1btle: x\n",
		"title: !t\x1bg x\n",
		"title: [\x1b\n",
		"seed: \"\x1b[2J\"\n",
		"title: x\nrun: {until: \"dr\u009bined\"}\n",
	} {
		_, err := Load("f\x1b.yaml", []byte(src))
		if err == nil {
			t.Fatalf("%q loaded", src)
		}
		if msg := err.Error(); strings.IndexFunc(msg, func(r rune) bool { return r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f }) >= 0 {
			t.Errorf("%q: error carries a control character: %q", src, msg)
		}
	}
	if got := (Error{File: "a\x1b.yaml", Line: 1, Col: 2, Msg: "b\u009bc\x7f\n"}).Error(); got != `a\x1b.yaml:1:2: b\u009bc\x7f\n` {
		t.Errorf("Error() = %q", got)
	}
}

// TestLoadBOM: a UTF-8 byte order mark at the start is skipped, so a file
// some editors save loads like the original.
func TestLoadBOM(t *testing.T) {
	files, _ := filepath.Glob("lessons/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Load(f, data)
		got, err := Load(f, append([]byte("\ufeff"), data...))
		if err != nil {
			t.Errorf("%s with a BOM:\n%v", f, err)
			continue
		}
		if got.Title != want.Title || got.Pos != want.Pos {
			t.Errorf("%s with a BOM: title %q at %v, want %q at %v", f, got.Title, got.Pos, want.Title, want.Pos)
		}
	}
}
