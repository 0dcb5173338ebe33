package eventlog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// A commit past the partition's end offset is refused and traced, as a
// stale or unowned commit is, and changes nothing: the records produced
// later are read and handled, not booked lost because a committed offset
// had passed them before they existed.
func TestCommitPastTheEndIsRefused(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "g", Reset: eventlog.ResetEarliest})
	r.publish(2, "k")
	m1 := r.member(g, eventlog.MemberConfig{Name: "m1", Pull: true})
	r.w.Tick()
	for _, rec := range m1.Poll(10) {
		d := m1.Delivery(rec)
		d.Apply("x")
		m1.MarkProcessed(d)
	}
	err := g.Commit("m1", g.Generation(), 0, 10)
	if !errors.Is(err, eventlog.ErrOffsetOutOfRange) || !strings.Contains(err.Error(), "10") || !strings.Contains(err.Error(), "end is 2") {
		t.Errorf("commit past the end: %v", err)
	}
	if off, ok := g.Committed(0); ok && off > 2 {
		t.Errorf("committed %d after a refused commit", off)
	}
	if rej := r.events(sim.KindRejected); len(rej) != 1 || rej[0].Offset != 10 || !strings.Contains(rej[0].Detail, "past the end") {
		t.Errorf("rejections %v", rej)
	}
	// At the end itself the commit is accepted.
	if err := g.Commit("m1", g.Generation(), 0, 2); err != nil {
		t.Errorf("commit at the end: %v", err)
	}
	r.publish(15, "k")
	if lag := g.Metrics().Lag; lag != 15 {
		t.Errorf("lag %d, want 15", lag)
	}
	m1.Crash("test")
	r.member(g, eventlog.MemberConfig{Name: "m2"})
	r.drain(g, 20)
	if causes := lossCauses(t, r, "g"); len(causes) != 0 {
		t.Errorf("losses %v", causes)
	}
}
