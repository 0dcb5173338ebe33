package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExploreMergeRefusesEditedReports edits a shard's report by hand:
// counts that do not add up, a failing seed of another shard, a repeated
// failure. Each is refused with exit 2, naming the file and what is wrong,
// before anything is merged.
func TestExploreMergeRefusesEditedReports(t *testing.T) {
	dir, name := fixture(t)
	for _, k := range []string{"1", "2"} {
		code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "60", "--shard", k+"/2", "--no-shrink", "--json", "s"+k+".json", name)
		if code != exitFailed && code != exitOK {
			t.Fatalf("shard %s: exit %d\n%s%s", k, code, out, errs)
		}
	}
	js, err := os.ReadFile(filepath.Join(dir, "s2.json"))
	if err != nil {
		t.Fatal(err)
	}
	var orig map[string]any
	if err := json.Unmarshal(js, &orig); err != nil {
		t.Fatal(err)
	}
	fails := orig["failures"].([]any)
	if len(fails) == 0 {
		t.Fatal("shard 2 has no failure to edit")
	}
	first := fails[0].(map[string]any)
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"failed above ran", func(m map[string]any) { m["failed"], m["ran"] = 999999, 5 }, "s2.json: the report ran 5 seeds, but shard 2 of 2 of seeds 1..60 has 30"},
		{"failed above ran, ran kept", func(m map[string]any) { m["failed"] = 999999 }, "s2.json: 999999 seeds failed of 30 run"},
		{"a seed of shard 1", func(m map[string]any) {
			f := map[string]any{}
			for k, v := range first {
				f[k] = v
			}
			f["seed"] = 2
			m["failures"] = append([]any{f}, fails...)
			m["failed"] = m["failed"].(float64) + 1
		}, "s2.json: failing seed 2 is not in shard 2 of 2 of seeds 1..60"},
		{"a failure twice", func(m map[string]any) {
			m["failures"] = append([]any{first}, fails...)
			m["failed"] = m["failed"].(float64) + 1
		}, "is listed twice"},
		{"a failure twice, count kept", func(m map[string]any) { m["failures"] = append([]any{first}, fails...) }, "are listed"},
	} {
		m := map[string]any{}
		b, _ := json.Marshal(orig)
		_ = json.Unmarshal(b, &m)
		c.edit(m)
		b, _ = json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, "edited.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runCLI(t, dir, false, "explore", "merge", "s1.json", "edited.json")
		if code != exitBadInput || out != "" || !strings.Contains(errs, strings.Replace(c.want, "s2.json", "edited.json", 1)) {
			t.Errorf("%s: exit %d, want %d and %q\n%s%s", c.name, code, exitBadInput, c.want, out, errs)
		}
	}
}

// TestExploreMergeOfOneShardSaysWhatIsMissing: merging one of two shards
// says once which shard is missing, and does not advise to merge.
func TestExploreMergeOfOneShardSaysWhatIsMissing(t *testing.T) {
	dir, name := fixture(t)
	code, out, errs := runCLI(t, dir, false, "explore", "--seeds", "20", "--shard", "1/2", "--no-shrink", "--json", "s1.json", name)
	if code != exitFailed && code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, dir, false, "explore", "merge", "s1.json")
	all := out + errs
	if code != exitFailed || strings.Contains(all, "NOTE") || strings.Contains(all, "merge the shards") ||
		strings.Count(all, "missing") != 1 || !strings.Contains(errs, "shards [2] of 2 are missing") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
