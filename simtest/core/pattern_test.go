package core

import (
	"reflect"
	"testing"
)

// A -run pattern splits at the slashes outside brackets and parentheses,
// as the testing package splits it, so Sweep sees a pattern that picks
// seeds.
func TestSplitPattern(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"TestX", []string{"TestX"}},
		{"^TestX$/^seed=5$", []string{"^TestX$", "^seed=5$"}},
		{"TestX/", []string{"TestX", ""}},
		{"Test(A/B)", []string{"Test(A/B)"}},
		{"Test[/]x/seed", []string{"Test[/]x", "seed"}},
		{`Test\/x/seed`, []string{`Test\/x`, "seed"}},
	} {
		if got := splitPattern(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitPattern(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
