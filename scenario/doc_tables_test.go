package scenario

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocTablesKeepTheirHeader: in the Markdown documents, a table row
// that does not follow another row starts a new table, so the next line
// must be its separator (|---|). A paragraph or a blank line inside a
// table splits it, and the rows after it are shown without their header.
func TestDocTablesKeepTheirHeader(t *testing.T) {
	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md")
	if len(files) < 3 {
		t.Fatalf("only %d documents", len(files))
	}
	sep := regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		fence := false
		for i, l := range lines {
			if strings.HasPrefix(l, "```") {
				fence = !fence
			}
			if fence || !strings.HasPrefix(l, "|") || (i > 0 && strings.HasPrefix(lines[i-1], "|")) {
				continue
			}
			if i+1 >= len(lines) || !sep.MatchString(lines[i+1]) {
				t.Errorf("%s:%d: a table row without a header (a paragraph or blank line split the table?): %s", filepath.Base(file), i+1, l)
			}
		}
	}
}
