package lab

import (
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// lessonSweepSeeds is how many seeds TestLessonsSweep runs per lesson and
// variant (fewer with -short).
const lessonSweepSeeds = 200

// TestLessonsSweep is brokerlab explore over every built-in lesson and
// every variant of one, seeds 1 to 200: a lesson's expectations are meant
// to hold whatever the seed (the player restarts a lesson with another
// seed), so no seed may fail. It reports every failing seed with its
// failure. The sweeps of the lessons run in parallel.
func TestLessonsSweep(t *testing.T) {
	n := uint64(lessonSweepSeeds)
	if testing.Short() {
		n = 20
	}
	for _, l := range scenario.Lessons() {
		base, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{""}
		for _, vr := range base.Variants {
			names = append(names, vr.Name)
		}
		for _, vn := range names {
			label := l.Name
			if vn != "" {
				label += "/" + vn
			}
			t.Run(label, func(t *testing.T) {
				t.Parallel()
				s := base
				if vn != "" {
					var err error
					if s, err = base.Variant(vn); err != nil {
						t.Fatal(err)
					}
				}
				failed := 0
				for seed := range (Seeds{From: 1, Count: n}).All() {
					f, bad, err := Probe(s, seed, Options{})
					if err != nil {
						t.Fatal(err)
					}
					if bad {
						failed++
						t.Errorf("seed %d: %s (reproduce: brokerlab explore %s --from %d --seeds 1)", seed, f, exploreArgs(l.Name, vn), seed)
					}
				}
				if failed > 0 {
					t.Errorf("%d of %d seeds fail", failed, n)
				}
			})
		}
	}
}

// exploreArgs is the command-line argument of a lesson, with its variant.
func exploreArgs(lesson, variant string) string {
	if variant == "" {
		return lesson
	}
	return "--variant " + variant + " " + lesson
}
