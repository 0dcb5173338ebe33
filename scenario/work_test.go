package scenario

import (
	"path/filepath"
	"testing"
)

// No file that ships (lessons, valid test files, explore fixtures) has a
// shape that goes past the budget.
func TestShippedFilesHaveNoWorkWarnings(t *testing.T) {
	var files []string
	for _, pat := range []string{"lessons/*.yaml", "testdata/valid/*.yaml", "testdata/explore/*.yaml"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d files", len(files))
	}
	for _, f := range files {
		s, err := Resolve(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if ws := s.workWarnings(); len(ws) > 0 {
			t.Errorf("%s: %v", f, ws)
		}
	}
}
