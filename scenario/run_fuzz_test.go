package scenario

import (
	"testing"
)

// fuzzTicks bounds the ticks FuzzRun runs of one input.
const fuzzTicks = 200

// FuzzRun loads arbitrary bytes and runs whatever loads for up to
// fuzzTicks ticks, then evaluates its expectations: the runner must never
// panic, whatever the file says, and a run must be repeatable.
func FuzzRun(f *testing.F) {
	addSeedFiles(f, "testdata/valid/*.yaml", "lessons/*.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load("fuzz.yaml", data)
		if err != nil {
			return
		}
		var stats [2]int
		for i := range stats {
			r, err := s.NewRun(Options{})
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
