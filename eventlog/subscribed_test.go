package eventlog_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// The "subscribed" event names the group's configured auto.offset.reset
// policy, and the ledger expects the same records of a "none" group as of
// a "latest" one: those produced from its creation on.
func TestSubscribedNamesThePolicy(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{})
	r.publish(2, "k") // before the groups: expected only by the earliest one
	for _, reset := range []eventlog.Reset{eventlog.ResetEarliest, eventlog.ResetLatest, eventlog.ResetNone} {
		r.group(eventlog.GroupConfig{Name: reset.String(), Reset: reset})
	}
	r.publish(1, "k")
	subs := r.events(sim.KindSubscribed)
	if len(subs) != 3 {
		t.Fatalf("subscribed events %v", subs)
	}
	for _, e := range subs {
		if e.Detail != e.Consumer {
			t.Errorf("group %s subscribed with %q", e.Consumer, e.Detail)
		}
	}
	for name, want := range map[string]int{"earliest": 3, "latest": 1, "none": 1} {
		if got := len(r.w.Ledger().Outcomes(name)); got != want {
			t.Errorf("group %s expects %d records, want %d", name, got, want)
		}
	}
	r.refold()
}
