package scenario

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	yaml "github.com/goccy/go-yaml"
)

// The written variant keeps the sections its set entries do not touch
// byte for byte, comments included, and drops the variants section.
func TestVariantSourceKeepsUntouchedSections(t *testing.T) {
	src := []byte(`version: 1
title: base
seed: 3
run: {ticks: 10}
# the queues
topology:
  queues:
    - {name: q, visibility_timeout: 4}   # short
actors:
  producers:
    - {name: p, to: {queue: q}, count: 2}
  consumers:
    - {name: c, queue: q, idempotency: none}
expect:
  - {check: no_loss}
variants:
  - name: safe
    description: The consumer is idempotent.
    set:
      title: "safe: an idempotent consumer"
      consumers.c.idempotency: message_id
`)
	s, err := Load("v.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.VariantSource("safe")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Variant \"safe\" of v.yaml, its set entries applied:\n# The consumer is idempotent.\n",
		"# the queues\ntopology:\n  queues:\n    - {name: q, visibility_timeout: 4}   # short\n",
		"title: \"safe: an idempotent consumer\"\n",
		"actors:\n  producers:\n    - {name: p, to: {queue: q}, count: 2}\n  consumers:\n    - {name: c, queue: q, idempotency: message_id}\n",
		"expect:\n  - {check: no_loss}\n",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "variants:") || strings.Contains(string(got), "idempotency: none") {
		t.Errorf("the variants section or the overridden value is still there:\n%s", got)
	}
	if _, err := s.VariantSource("nope"); !errors.Is(err, ErrNoVariant) {
		t.Errorf("VariantSource(nope) = %v, want ErrNoVariant", err)
	}
}

// sectionYAML writes values that decode back to themselves: strings that
// look like other scalars, hold flow indicators or span lines, empty
// collections and nulls, nested in mappings and lists.
func TestSectionYAMLRoundTrip(t *testing.T) {
	in := `k:
  plain: order.placed
  glob: "c-billing*"
  colon: "Design C: one queue"
  comma: "a, b"
  hash: "x #y"
  quote: "it's \"quoted\""
  empty: ""
  looks: ["12", "yes", "null", "~", "0.5", "-3", "true"]
  numbers: [12, 0.15, -3, true]
  none:
  emptymap: {}
  emptylist: []
  text: "line one\nline two\n"
  stripped: "line one\nline two"
  kept: "line one\n\n"
  indented: "  starts with spaces\nand more"
  list:
    - {a: 1, b: {c: "d, e"}}
    - [1, 2]
    - "multi\nline"
    - name: n
      text: "x\ny\n"
`
	var v yaml.MapSlice
	if err := yaml.UnmarshalWithOptions([]byte(in), &v, yaml.UseOrderedMap()); err != nil {
		t.Fatal(err)
	}
	out, err := sectionYAML("k", v[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	var back yaml.MapSlice
	if err := yaml.UnmarshalWithOptions([]byte(out), &back, yaml.UseOrderedMap()); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(back, v) {
		t.Errorf("round trip changed the value:\n%s\ngot  %#v\nwant %#v", out, back, v)
	}
}
