// Package ledgercmp compares two ledgers folded from the same run: the
// tests of the models' typed booking (sim.Trace.BookDelivery and its
// siblings, taken when the ledger is the only listener) run a world once
// booked and once with every event built and emitted, and require the
// same ledger.
package ledgercmp

import (
	"fmt"
	"reflect"

	"github.com/brokerlab/brokerlab/sim"
)

// Diff returns "" when ledger got, folded from trace gt, agrees with
// ledger want, folded from trace wt, on everything the checkers and the
// reports read: the number of events, the last tick, the dump (records,
// deliveries, losses, outcomes), the outcomes, the losses, the stats, the
// consumers, and every copy's entry for every consumer (ticks included).
// Otherwise it describes the first difference. It costs a dump and an
// outcome list of each ledger, O(copies × consumers).
func Diff(got *sim.Ledger, gt *sim.Trace, want *sim.Ledger, wt *sim.Trace) string {
	if gt.Len() != wt.Len() || got.LastTick() != want.LastTick() {
		return fmt.Sprintf("%d events to tick %d, want %d to tick %d", gt.Len(), got.LastTick(), wt.Len(), want.LastTick())
	}
	if g, w := got.Dump(), want.Dump(); g != w {
		return fmt.Sprintf("dumps differ:\n%s\nwant\n%s", g, w)
	}
	if !reflect.DeepEqual(got.Outcomes(""), want.Outcomes("")) {
		return "outcomes differ"
	}
	if !reflect.DeepEqual(got.Losses(), want.Losses()) {
		return "losses differ"
	}
	if g, w := got.Stats(), want.Stats(); !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("stats differ:\n%+v\nwant\n%+v", g, w)
	}
	if g, w := got.Consumers(), want.Consumers(); !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("consumers %v, want %v", g, w)
	}
	// Every copy's entry for every consumer, ticks included: the dump
	// does not show when a consumer last saw a copy.
	for _, r := range want.Records() {
		for _, name := range want.Consumers() {
			if g, w := got.Entry(r.ID, got.Consumer(name)), want.Entry(r.ID, want.Consumer(name)); g != w {
				return fmt.Sprintf("copy %v for %s: %+v, want %+v", r.ID, name, g, w)
			}
		}
	}
	return ""
}
