package scenario

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestCapsTable compares the caps table of docs/scenario-format.md with
// the constants the loader and the run enforce, so the documented caps
// cannot drift from the real ones: a row per constant, found by the start
// of its label, and its figure with the thousands separators taken out.
func TestCapsTable(t *testing.T) {
	data, err := os.ReadFile("../docs/scenario-format.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n## Caps\n")
	if i < 0 {
		t.Fatal("docs/scenario-format.md has no Caps section")
	}
	text = text[i+1:]
	if j := strings.Index(text[1:], "\n## "); j >= 0 {
		text = text[:j+1]
	}
	rows := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		cells := strings.Split(l, " | ")
		if len(cells) == 2 && strings.HasPrefix(l, "| ") && strings.HasSuffix(l, " |") {
			rows[strings.TrimPrefix(cells[0], "| ")] = strings.TrimSuffix(cells[1], " |")
		}
	}
	figure := func(cell string) int {
		f := strings.Fields(cell)
		if len(f) == 0 {
			return -1
		}
		n, err := strconv.Atoi(strings.ReplaceAll(f[0], ",", ""))
		if err != nil {
			return -1
		}
		return n
	}
	for _, c := range []struct {
		label string
		want  int
	}{
		{"every tick value", MaxTicks},
		{"messages over all producers", MaxMessages},
		{"`rate` of one producer", MaxRate},
		{"`partitions` of a log", MaxPartitions},
		{"queues, topics, logs, groups, services", MaxEntities},
		{"producers, consumers, members, relays", MaxActors},
		{"`instances` of a consumer", MaxInstances},
		{"`batch` sizes", MaxBatch},
		{"subscriber `buffer`", MaxBuffer},
		{"`key_count`", MaxKeys},
		{"keys written as a list", MaxKeyList},
		{"`emits[].count`", MaxEmits},
		{"fault rules", MaxFaults},
		{"timeline actions, narration steps", MaxTimeline},
		{"expectations", MaxExpect},
		{"variants", MaxVariants},
		{"names", MaxNameLen},
		{"message copies created over a run", MaxCopies},
		{"copies handed to brokers and outboxes", MaxSends},
		{"deliveries within one tick", MaxDeliveriesPerTick},
		{"copies one root publish causes", MaxCascadePerRoot},
		{"events traced over a run", MaxEvents},
		{"component steps over a run", MaxSteps},
	} {
		found := false
		for label, cell := range rows {
			if strings.HasPrefix(label, c.label) {
				found = true
				if got := figure(cell); got != c.want {
					t.Errorf("caps table, %q: %q, but the cap is %d", label, cell, c.want)
				}
			}
		}
		if !found {
			t.Errorf("caps table: no row starting %q (the cap is %d)", c.label, c.want)
		}
	}
}
