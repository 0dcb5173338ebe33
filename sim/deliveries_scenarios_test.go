package sim_test

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// TestPackedOnEveryScenario runs every lesson, variant and testdata
// scenario twice: once as it is, and once with every chunk of deliveries
// packed after every event, so every later event writes to a packed
// chunk and every query reads them. The dumps, outcomes, losses and stats
// of the two ledgers must be the same.
func TestPackedOnEveryScenario(t *testing.T) {
	for name, s := range ledgerScenarios(t) {
		t.Run(name, func(t *testing.T) {
			run := func(pack bool) *sim.Ledger {
				var l *sim.Ledger
				sink := sim.SinkFunc(func(e *sim.Event) {
					if pack && l != nil {
						sim.PackAll(l)
					}
				})
				r, err := lab.New(s, lab.Options{Sinks: []sim.Sink{sink}})
				if err != nil {
					t.Fatal(err)
				}
				l = r.World().Ledger()
				r.Finish()
				return l
			}
			packed, plain := run(true), run(false)
			if len(plain.Records()) == 0 {
				t.Fatal("no records: nothing was compared")
			}
			if got, want := packed.Dump(), plain.Dump(); got != want {
				t.Fatalf("dumps differ:\n%s\nwant\n%s", got, want)
			}
			if got, want := packed.Outcomes(""), plain.Outcomes(""); !reflect.DeepEqual(got, want) {
				t.Fatal("outcomes differ")
			}
			if got, want := packed.Losses(), plain.Losses(); !reflect.DeepEqual(got, want) {
				t.Fatal("losses differ")
			}
			if got, want := packed.Stats(), plain.Stats(); !reflect.DeepEqual(got, want) {
				t.Fatalf("stats differ:\n%+v\n%+v", got, want)
			}
		})
	}
}
