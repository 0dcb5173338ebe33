package scenario

import (
	"errors"
	"testing"
)

func TestRewrite(t *testing.T) {
	seed := uint64(9)
	src := `# header comment
version: 1
title: t
run: {ticks: 5}
seed: 3
# the faults
faults:
  - {point: broker.duplicate, probability: 0.5}

# the variants
variants:
  - name: a
expect: []
`
	got, err := Rewrite{Header: "line one\n\nline two", Seed: &seed,
		Sections: map[string]string{"faults": "faults: []\n", "variants": "", "view": "view: {tab: q}\n"}}.Apply([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := `# line one
#
# line two
# header comment
version: 1
title: t
run: {ticks: 5}
seed: 9
faults: []
expect: []
view: {tab: q}
`
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// A document without seed or faults gets them at its end; a text
	// without a final newline gets one.
	got, err = Rewrite{Seed: &seed, Sections: map[string]string{"faults": "faults: []\n"}}.Apply([]byte("title: t\nrun: {ticks: 5}"))
	if err != nil || string(got) != "title: t\nrun: {ticks: 5}\nseed: 9\nfaults: []\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, bad := range []string{"{title: t, seed: 3}", "- a\n- b\n", "a: [\n"} {
		if _, err := (Rewrite{Seed: &seed}).Apply([]byte(bad)); !errors.Is(err, ErrRewrite) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
