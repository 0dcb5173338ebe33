package lab

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestReadSweepReportRefusesInconsistentReports edits a shard's report by
// hand in each way a merge must not trust: every edit is refused, naming
// the file and what does not add up.
func TestReadSweepReportRefusesInconsistentReports(t *testing.T) {
	r := NewSweepReport("x.yaml", []byte("title: x\n"), Seeds{From: 1, Count: 10, Shard: 2, Shards: 2})
	f := Failure{Expect: 0, Text: "no_loss", Line: 8, Col: 5, Detail: "no-loss: m1 t=1"}
	for _, seed := range []uint64{1, 3, 5, 7, 9} { // shard 2 of 2: the seeds s with s mod 2 == 1
		r.Add(seed, f, seed == 3 || seed == 7)
	}
	var js strings.Builder
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSweepReport("s2.json", strings.NewReader(js.String())); err != nil {
		t.Fatalf("the report as written: %v", err)
	}
	fail := func(seed uint64) map[string]any {
		return map[string]any{"seed": seed, "expect": 0, "text": "no_loss", "line": 8, "col": 5, "detail": "x"}
	}
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"failed above ran", func(m map[string]any) { m["failed"], m["ran"] = 999999, 5 }, "999999 seeds failed of 5 run"},
		{"ran not the shard's", func(m map[string]any) { m["ran"] = 7 }, "ran 7 seeds, but shard 2 of 2 of seeds 1..10 has 5"},
		{"seed outside the shard", func(m map[string]any) { m["failures"] = []any{fail(2), fail(7)} }, "failing seed 2 is not in shard 2 of 2"},
		{"seed outside the space", func(m map[string]any) { m["failures"] = []any{fail(3), fail(11)} }, "failing seed 11 is not in shard 2 of 2"},
		{"seed repeated", func(m map[string]any) { m["failures"] = []any{fail(3), fail(3)} }, "failing seed 3 is listed twice"},
		{"seeds out of order", func(m map[string]any) { m["failures"] = []any{fail(7), fail(3)} }, "failing seeds are not in increasing order (7, then 3)"},
		{"count not the list's", func(m map[string]any) { m["failed"] = 3 }, "3 seeds failed, but 2 are listed"},
		{"list longer than the count", func(m map[string]any) { m["failures"] = []any{fail(3), fail(5), fail(7)} }, "2 seeds failed, but 3 are listed"},
		{"shard out of range", func(m map[string]any) { m["covered"] = []any{3} }, "covers shard 3 of 2"},
		{"no shard", func(m map[string]any) { m["covered"] = []any{} }, "covers no shard"},
		{"shard twice", func(m map[string]any) { m["shards"], m["covered"] = 3, []any{2, 2} }, "covers shard 2 twice"},
		{"no seeds", func(m map[string]any) { m["count"] = 0 }, "no seeds"},
		{"too many shards", func(m map[string]any) { m["shards"] = MaxSweepShards + 1 }, "shards; at most"},
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(js.String()), &m); err != nil {
			t.Fatal(err)
		}
		c.edit(m)
		b, _ := json.Marshal(m)
		_, err := ReadSweepReport("s2.json", strings.NewReader(string(b)))
		if !errors.Is(err, ErrSweep) || !strings.Contains(err.Error(), "s2.json: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestMergeSweepsChecksEachReport: a report built in memory is held to
// the same rules as one read from a file.
func TestMergeSweepsChecksEachReport(t *testing.T) {
	r := NewSweepReport("x.yaml", []byte("title: x\n"), Seeds{From: 1, Count: 10, Shard: 1, Shards: 2})
	for _, seed := range []uint64{8, 2, 4, 6, 10} {
		r.Add(seed, Failure{Text: "no_loss"}, seed == 8 || seed == 2)
	}
	if _, err := MergeSweeps(r); err != nil {
		t.Fatalf("the report as built: %v", err)
	}
	r.Failed = 99
	if _, err := MergeSweeps(r); !errors.Is(err, ErrSweep) || !strings.Contains(err.Error(), "report 1: 99 seeds failed of 5 run") {
		t.Fatalf("got %v", err)
	}
}
