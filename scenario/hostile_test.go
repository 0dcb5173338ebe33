package scenario

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// hostile returns inputs near MaxFileSize that are built to make a YAML
// parser or a loader slow, deep or large: each must be refused with an
// error (never a panic, never a hang).
func hostile() map[string]string {
	gen := func(f func(b *strings.Builder, i int)) string {
		var b strings.Builder
		for i := 0; b.Len() < MaxFileSize-200; i++ {
			f(&b, i)
		}
		return b.String()
	}
	n := MaxFileSize / 4
	return map[string]string{
		"over-size":      strings.Repeat("#", MaxFileSize+1),
		"deep-flow":      strings.Repeat("[", n) + strings.Repeat("]", n),
		"deep-flow-map":  strings.Repeat("{a: ", n/2) + strings.Repeat("}", n/2),
		"dash-chain":     strings.Repeat("- ", n) + "1",
		"question-chain": strings.Repeat("? ", n) + "1",
		"unclosed":       strings.Repeat("]", n),
		"colons":         strings.Repeat(":", n),
		"many-keys":      gen(func(b *strings.Builder, i int) { fmt.Fprintf(b, "k%d: %d\n", i, i) }),
		"repeated-key":   gen(func(b *strings.Builder, _ int) { b.WriteString("zz: 1\n") }),
		"anchors":        "a: &a [x]\n" + gen(func(b *strings.Builder, i int) { fmt.Fprintf(b, "- &a%d [*a, *a]\n", i) }),
		"deep-block":     gen(func(b *strings.Builder, i int) { b.WriteString(strings.Repeat(" ", i) + "a:\n") }),
		"many-timeline":  "title: x\nrun: {ticks: 1}\ntopology:\n  queues: [{name: q}]\ntimeline:\n" + gen(func(b *strings.Builder, i int) { fmt.Fprintf(b, "  - {at: 1, action: purge, queue: nope%d}\n", i) }),
		"many-queues": "title: x\nrun: {ticks: 1}\ntopology:\n  queues:\n" + gen(func(b *strings.Builder, i int) {
			fmt.Fprintf(b, "    - {name: q%d, dead_letter: {queue: q%d}}\n", i, i+1)
		}),
		"long-title":      "title: " + strings.Repeat("x", MaxFileSize-10),
		"huge-everything": "title: x\nrun: {ticks: 1e300}\ntopology:\n  logs: [{name: l, partitions: 99999999999999999999999999}]\nactors:\n  producers: [{name: p, to: {log: l}, count: 1e12, key_count: 1e9, keys: \"k-%d\"}]\n",
	}
}

func TestLoadHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("megabyte inputs; skipped in short mode")
	}
	cases := hostile()
	for _, name := range sortedKeys(cases) {
		t.Run(name, func(t *testing.T) {
			s, err := Load(name+".yaml", []byte(cases[name]))
			if err == nil || s != nil || !errors.Is(err, ErrInvalid) {
				t.Fatalf("want an *Errors, got %v, %v", s != nil, err)
			}
			var errs *Errors
			if !errors.As(err, &errs) || len(errs.List) > MaxErrors {
				t.Fatalf("bad error list: %v", err)
			}
			if msg := err.Error(); len(msg) > 64<<10 {
				t.Errorf("error text is %d bytes", len(msg))
			}
		})
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
