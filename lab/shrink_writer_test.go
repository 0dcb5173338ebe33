package lab

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// A failure that needs a writer fault shrinks to a reproducer that loads:
// the writer points are consulted with the service as the consumer, so
// the explicit rule matches consumer "shop", which the loader accepts as
// a service's name.
func TestShrinkWriterFaultReproducer(t *testing.T) {
	_, src, err := scenario.Source("dual-write")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	i, j := strings.Index(text, "\nfaults:\n"), strings.Index(text, "\nnarration:\n")
	k := strings.Index(text, "\nexpect:\n")
	if i < 0 || j < i || k < j {
		t.Fatal("dual-write has no faults, narration and expect sections in that order")
	}
	text = text[:i] + "\nfaults:\n  - {name: crash-after-commit, point: writer.crash_after_commit, match: {where: \"service:shop\"}, probability: 0.2}" +
		text[j:k] + "\nexpect:\n  - {check: no_loss}\n"
	text = strings.ReplaceAll(text, "\n    pause: true", "")
	s, err := scenario.Load("dw.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var seed uint64
	for seed = 1; seed < 50; seed++ {
		if _, failed, err := Probe(s, seed, Options{}); err == nil && failed {
			break
		}
	}
	sh, err := Shrink(s, seed, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := MinFile(s, sh, []byte(text), "dw.min.yaml")
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, data)
	}
	if !strings.Contains(string(data), "consumer: shop") {
		t.Errorf("the reproducer's rule does not match the service:\n%s", data)
	}
}
