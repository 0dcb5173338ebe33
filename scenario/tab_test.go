package scenario

import (
	"strings"
	"testing"
)

// TestTabIndentSaysUseSpaces: a tab used for indentation is the most common
// YAML mistake of people new to it, and the parser's own words ("cannot
// start any token") do not say what to do.
func TestTabIndentSaysUseSpaces(t *testing.T) {
	_, err := Load("tab.yaml", []byte("version: 1\ntitle: t\n\tsummary: x\n"))
	if err == nil {
		t.Fatal("a tab-indented file loaded")
	}
	got := err.Error()
	for _, want := range []string{"tab.yaml:3:1:", "YAML indents with spaces"} {
		if !strings.Contains(got, want) {
			t.Errorf("error %q does not contain %q", got, want)
		}
	}
}
