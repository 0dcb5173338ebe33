package lab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// fuzzTicks bounds the ticks FuzzRun runs of one input.
const fuzzTicks = 200

// FuzzRun loads arbitrary bytes and runs whatever loads for up to
// fuzzTicks ticks, then evaluates its expectations: the runner must never
// panic, whatever the file says, and a run must be repeatable.
func FuzzRun(f *testing.F) {
	addSeedFiles(f, "../scenario/testdata/valid/*.yaml", "../scenario/lessons/*.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Load("fuzz.yaml", data)
		if err != nil {
			return
		}
		var stats [2]int
		for i := range stats {
			r, err := New(s, Options{})
			if err != nil {
				return
			}
			for n := 0; n < fuzzTicks && r.Step(); n++ {
			}
			rep := r.evaluate()
			if len(rep.Outcomes) != len(s.Expect) {
				t.Fatalf("%d outcomes for %d expectations", len(rep.Outcomes), len(s.Expect))
			}
			stats[i] = rep.Stats.Messages*31 + rep.Stats.Delivered
		}
		if stats[0] != stats[1] {
			t.Fatalf("two runs differ: %v", stats)
		}
	})
}

// addSeedFiles adds every file matching the glob patterns to f's corpus.
func addSeedFiles(f *testing.F, patterns ...string) {
	for _, pat := range patterns {
		files, _ := filepath.Glob(pat)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}
