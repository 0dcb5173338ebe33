package scenario

import (
	"errors"
	"strings"
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

// A disable_fault action of the timeline keeps the rule it names in the
// reproducer, never active, so the file still loads and fails the same
// way.
func TestMinFileKeepsDisabledRules(t *testing.T) {
	_, src, err := Source(naiveBilling)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "expect:\n", "timeline:\n  - {at: 300, action: disable_fault, fault: flaky}\nexpect:\n", 1)
	s, err := Load("x.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := s.Shrink(5, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.MinFile(sh, []byte(text), "x.min.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !strings.Contains(string(data), "name: flaky") || !strings.Contains(string(data), "disable_fault") {
		t.Fatalf("the reproducer lost rule flaky or the timeline:\n%s", data)
	}
}

// A fault that fired at one instance of a consumer with instances is
// matched by that instance in the reproducer, in a form the file accepts
// (a plain NAME#i is not a name of the file, so it is written as a
// pattern that matches it alone), and the reproducer fails the same way.
func TestMinFileInstances(t *testing.T) {
	const name = "testdata/explore/slow-instances.yaml"
	_, src, err := Source(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(name, src)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := s.Shrink(2252, nil)
	if err != nil {
		t.Fatal(err)
	}
	instances := 0
	for _, d := range sh.Minimal.Decisions {
		if strings.Contains(d.Consumer, "#") {
			instances++
		}
	}
	if instances == 0 {
		t.Fatalf("no firing at an instance: %s", sh.Minimal.Words())
	}
	data, err := s.MinFile(sh, src, "slow-instances.min.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !strings.Contains(string(data), `consumer: "short-worker#[1]"`) && !strings.Contains(string(data), `consumer: short-worker#[1]`) {
		t.Errorf("no rule matches instance short-worker#1 alone:\n%s", data)
	}
}
