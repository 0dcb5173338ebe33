package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load: it must never panic or hang, and
// must return either a scenario whose fault plan and checks are usable or
// an *Errors wrapping ErrInvalid with real positions.
func FuzzLoad(f *testing.F) {
	addSeedFiles(f, "testdata/valid/*.yaml", "testdata/invalid/*.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load("fuzz.yaml", data)
		if err != nil {
			if s != nil {
				t.Fatal("scenario and error returned together")
			}
			var errs *Errors
			if !errors.As(err, &errs) || !errors.Is(err, ErrInvalid) || len(errs.List) == 0 {
				t.Fatalf("error of type %T is not a non-empty *Errors wrapping ErrInvalid: %v", err, err)
			}
			if len(errs.List) > MaxErrors {
				t.Fatalf("%d errors, more than MaxErrors", len(errs.List))
			}
			for i, e := range errs.List {
				if e.Line < 1 || e.Col < 1 || e.File != "fuzz.yaml" || e.Msg == "" {
					t.Fatalf("bad error %q", e.Error())
				}
				if i > 0 && (e.Line < errs.List[i-1].Line || e.Line == errs.List[i-1].Line && e.Col < errs.List[i-1].Col) {
					t.Fatalf("errors not sorted by position:\n%v", err)
				}
			}
			return
		}
		if s.Title == "" || s.Run.Cap() < 1 || s.Run.Cap() > MaxTicks {
			t.Fatalf("loaded scenario breaks an invariant: title %q, cap %d", s.Title, s.Run.Cap())
		}
		if err := s.FaultPlan().Validate(); err != nil {
			t.Fatalf("fault plan of a loaded scenario is invalid: %v", err)
		}
		total := 0
		for i := range s.Actors.Producers {
			p := &s.Actors.Producers[i]
			total += p.Count
			if n := p.NumKeys(); n > 0 {
				_ = p.Key(n - 1)
			}
		}
		if total > MaxMessages {
			t.Fatalf("loaded scenario sends %d messages", total)
		}
		for _, e := range s.Expect {
			if (e.Check != "") == (s.Checker(e) == nil) {
				t.Fatalf("expectation %v: checker mismatch", e)
			}
		}
	})
}

// addSeedFiles adds every file matching the glob patterns to f's corpus.
func addSeedFiles(f *testing.F, patterns ...string) {
	for _, pat := range patterns {
		files, _ := filepath.Glob(pat)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}
