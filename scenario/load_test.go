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
