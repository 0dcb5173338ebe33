package eventlog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// A handler member busy with a slow record refuses Poll and Fetch: its
// batch stays where it is, every record of it is handled once, in order,
// and nothing is lost or read again.
func TestPollWhileBusyKeepsTheBatch(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	m := r.member(g, eventlog.MemberConfig{Name: "a", Batch: 3, Handler: &sim.Script{Behaviour: sim.Slow, Ticks: 2}})
	r.publish(3, "kunde-A")
	_ = r.w.Run(1)
	if !m.Busy() || m.Outstanding() != 3 {
		t.Fatalf("busy=%v outstanding=%d, want busy with 3", m.Busy(), m.Outstanding())
	}
	if recs := m.Poll(10); recs != nil {
		t.Errorf("Poll while busy returned %d records, want none", len(recs))
	}
	recs, err := m.Fetch(10)
	if recs != nil || !errors.Is(err, eventlog.ErrBusy) {
		t.Errorf("Fetch while busy = %d records, %v; want none and ErrBusy", len(recs), err)
	} else if want := `"a" in group g handles partition 0 offset 0 until t=3`; !strings.Contains(err.Error(), want) {
		t.Errorf("Fetch while busy: %q does not say %q", err, want)
	}
	if !m.Busy() || m.Outstanding() != 3 {
		t.Fatalf("after the refused polls: busy=%v outstanding=%d, want busy with 3", m.Busy(), m.Outstanding())
	}
	r.drain(g, 20)
	if err := sim.Check(r.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("g"), sim.OrderedPerKey("g")); err != nil {
		t.Error(err)
	}
	if n := len(r.events(sim.KindPolled)); n != 3 {
		t.Errorf("%d records polled, want 3 (none read again)", n)
	}
	var at []sim.Tick
	for _, e := range r.events(sim.KindProcessed) {
		at = append(at, e.Tick)
	}
	if want := []sim.Tick{3, 5, 7}; len(at) != len(want) || at[0] != want[0] || at[1] != want[1] || at[2] != want[2] {
		t.Errorf("effects at %v, want %v (one record every 2 ticks)", at, want)
	}
	r.refold()
}
