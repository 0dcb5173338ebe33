package simtest_test

import (
	"os"
	"strings"
	"testing"
)

// TestTestingDocShowsTheExample: docs/testing.md shows the package
// example and what it prints; both are the example's own, line for line
// (the example's output is checked by go test, so the doc cannot go stale
// alone).
func TestTestingDocShowsTheExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, output, ok := strings.Cut(string(src), "\t// Output:\n")
	if !ok {
		t.Fatal("example_test.go has no Output")
	}
	n := 0
	for _, l := range strings.Split(output, "\n") {
		l, ok := strings.CutPrefix(l, "\t// ")
		if !ok {
			break
		}
		n++
		if !strings.Contains(string(doc), "\n"+l+"\n") {
			t.Errorf("docs/testing.md does not show the example's output line\n\t%s", l)
		}
	}
	if n < 5 {
		t.Fatalf("only %d output lines read", n)
	}
}
