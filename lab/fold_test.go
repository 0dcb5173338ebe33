package lab

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// TestLessonLedgersFoldFromTheirTraces runs every lesson with a JSON Lines
// sink, folds the recorded trace into a fresh ledger, and requires the
// same ledger (Dump) and the same violations for every check the lesson
// states: every verdict of a lesson can be audited from its trace alone.
func TestLessonLedgersFoldFromTheirTraces(t *testing.T) {
	for _, l := range scenario.Lessons() {
		t.Run(l.Name, func(t *testing.T) {
			s, err := scenario.LoadLesson(l.Name)
			if err != nil {
				t.Fatal(err)
			}
			var js bytes.Buffer
			r, err := New(s, Options{Sinks: []sim.Sink{sim.NewJSONWriter(&js)}})
			if err != nil {
				t.Fatal(err)
			}
			r.Finish()
			if err := r.World().Trace().Close(); err != nil {
				t.Fatal(err)
			}
			live := r.World().Ledger()
			folded := sim.NewLedger()
			if err := sim.ReadJSONL(&js, folded); err != nil {
				t.Fatal(err)
			}
			if live.Dump() != folded.Dump() {
				t.Fatal("the ledger folded from the JSON Lines trace differs from the live one")
			}
			checks := 0
			for _, e := range s.Expect {
				if e.Check == "" {
					continue
				}
				checks++
				c := s.Checker(e)
				if a, b := c.Violations(live), c.Violations(folded); !reflect.DeepEqual(a, b) {
					t.Errorf("%s: live %v, folded %v", c.Name(), a, b)
				}
			}
			t.Logf("%d records, %d checks agree", len(live.Records()), checks)
		})
	}
}
