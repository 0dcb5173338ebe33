package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// A disable_fault action of the timeline keeps the rule it names in the
// reproducer, never active, so the file still loads and fails the same
// way.
func TestMinFileKeepsDisabledRules(t *testing.T) {
	_, src, err := scenario.Source(naiveBilling)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "expect:\n", "timeline:\n  - {at: 300, action: disable_fault, fault: flaky}\nexpect:\n", 1)
	s, err := scenario.Load("x.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := Shrink(s, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := MinFile(s, sh, []byte(text), "x.min.yaml")
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
	const name = "../scenario/testdata/explore/slow-instances.yaml"
	_, src, err := scenario.Source(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Load(name, src)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := Shrink(s, 2252, nil)
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
	data, err := MinFile(s, sh, src, "slow-instances.min.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !strings.Contains(string(data), `consumer: "short-worker#[1]"`) && !strings.Contains(string(data), `consumer: short-worker#[1]`) {
		t.Errorf("no rule matches instance short-worker#1 alone:\n%s", data)
	}
}
