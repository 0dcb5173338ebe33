package eventlog_test

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// pullRig is a topic with one group and a pull member p1.
func pullRig(t *testing.T, mode eventlog.CommitMode, rules ...faults.Rule) (*rig, *eventlog.Group, *eventlog.Member) {
	r := newRig(t, 5, eventlog.Config{Partitions: 1}, rules...)
	g := r.group(eventlog.GroupConfig{Name: "g", SessionTimeout: 3})
	m := r.member(g, eventlog.MemberConfig{Name: "p1", Pull: true, Commit: mode})
	r.publish(5, "k")
	return r, g, m
}

// handle applies d and marks it processed.
func handle(t *testing.T, m *eventlog.Member, r eventlog.Record) {
	t.Helper()
	d := m.Delivery(r)
	d.Apply("")
	if err := m.MarkProcessed(d); err != nil {
		t.Fatal(err)
	}
}

// A pull member's Step polls nothing: only the adapter's Poll reads.
func TestPullStepPollsNothing(t *testing.T) {
	r, g, m := pullRig(t, eventlog.CommitAfter)
	_ = r.w.Run(2)
	if m.Outstanding() != 0 || len(r.events(sim.KindPolled)) != 0 {
		t.Fatal("Step polled a pull member")
	}
	recs := m.Poll(2)
	if len(recs) != 2 || recs[0].Offset != 0 || recs[1].Offset != 1 || m.Outstanding() != 2 {
		t.Fatalf("Poll = %+v", recs)
	}
	if d := m.Delivery(recs[0]); d.Consumer != "g" || d.Instance != "p1" || !d.HasPos || d.Offset != 0 || d.Attempt != 1 || d.Where != "log:orders" {
		t.Errorf("delivery %+v", d)
	}
	_ = g
}

// Commit never passes an outstanding record; CommitRecords commits what it
// is given.
func TestPullCommitNeverPassesOutstanding(t *testing.T) {
	r, g, m := pullRig(t, eventlog.CommitAfter)
	_ = r.w.Run(1)
	recs := append([]eventlog.Record(nil), m.Poll(3)...)
	handle(t, m, recs[1])
	handle(t, m, recs[2])
	if err := m.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Committed(0); ok {
		t.Error("Commit passed the outstanding record at offset 0")
	}
	handle(t, m, recs[0])
	if err := m.Commit(); err != nil {
		t.Fatal(err)
	}
	if c, _ := g.Committed(0); c != 3 {
		t.Errorf("committed %d, want 3", c)
	}
	if err := m.MarkProcessed(m.Delivery(recs[0])); !errors.Is(err, eventlog.ErrNotOutstanding) {
		t.Errorf("second MarkProcessed: %v", err)
	}
	rest := m.Poll(10)
	if len(rest) != 2 {
		t.Fatalf("Poll = %+v", rest)
	}
	if err := m.CommitRecords(rest[1]); err != nil {
		t.Fatal(err)
	}
	if c, _ := g.Committed(0); c != 5 {
		t.Errorf("committed %d, want 5", c)
	}
}

// A rebalance drops the outstanding records: they are read again by the
// partition's new owner, and reporting one done afterwards moves nothing.
// Its effect still counts: the record was applied twice.
func TestPullRebalanceDropsOutstanding(t *testing.T) {
	r, g, m := pullRig(t, eventlog.CommitAfter)
	_ = r.w.Run(1)
	recs := append([]eventlog.Record(nil), m.Poll(3)...)
	handle(t, m, recs[0])
	_ = m.Commit()
	d := m.Delivery(recs[1])
	a := r.member(g, eventlog.MemberConfig{Name: "a", Pull: true}) // a sorts first: it gets the partition
	if m.Outstanding() != 0 || len(m.Assigned()) != 0 {
		t.Fatalf("outstanding %d, assigned %v after the rebalance", m.Outstanding(), m.Assigned())
	}
	d.Apply("late")
	if err := m.MarkProcessed(d); !errors.Is(err, eventlog.ErrNotOutstanding) {
		t.Errorf("MarkProcessed after the rebalance: %v", err)
	}
	got := append([]eventlog.Record(nil), a.Poll(10)...)
	if len(got) != 4 || got[0].Offset != 1 {
		t.Fatalf("new owner polled %+v, want offsets 1..4", got)
	}
	for _, x := range got {
		handle(t, a, x)
	}
	_ = a.Commit()
	if err := sim.Check(r.w.Ledger(), sim.NoLoss(), sim.AtLeastOnce("g")); err != nil {
		t.Error(err)
	}
	if n := r.w.Ledger().DuplicateEffects("g"); n != 1 {
		t.Errorf("%d duplicate effects, want 1 (m2, applied after the rebalance)", n)
	}
	r.refold()
}

// With CommitBefore, Poll commits; a crash then loses the outstanding
// records, booked with cause "commit before processing".
func TestPullCommitBeforeCrashBooksOutstanding(t *testing.T) {
	r, g, m := pullRig(t, eventlog.CommitBefore)
	_ = r.w.Run(1)
	recs := append([]eventlog.Record(nil), m.Poll(3)...)
	if c, _ := g.Committed(0); c != 3 {
		t.Fatalf("committed %d, want 3", c)
	}
	handle(t, m, recs[0])
	m.Crash("")
	_ = r.w.Run(2) // restarts at t=2
	for _, x := range m.Poll(10) {
		handle(t, m, x)
	}
	out := r.outcomes("g")
	for id, want := range map[sim.ID]sim.Verdict{1: sim.VerdictApplied, 2: sim.VerdictLost, 3: sim.VerdictLost, 4: sim.VerdictApplied, 5: sim.VerdictApplied} {
		if o := out[id]; o.Verdict != want || want == sim.VerdictLost && o.Cause != sim.CauseCommitBeforeProcess {
			t.Errorf("%v: %s (%s), want %s", id, o.Verdict, o.Cause, want)
		}
	}
	r.refold()
}

// A failure rewinds: with CommitAfter the failed record comes again, with
// CommitBefore the one after it.
func TestPullMarkFailed(t *testing.T) {
	for _, c := range []struct {
		mode eventlog.CommitMode
		next int64
	}{{eventlog.CommitAfter, 1}, {eventlog.CommitBefore, 2}} {
		r, _, m := pullRig(t, c.mode)
		_ = r.w.Run(1)
		recs := append([]eventlog.Record(nil), m.Poll(3)...)
		handle(t, m, recs[0])
		if err := m.MarkFailed(m.Delivery(recs[1]), nil); err != nil {
			t.Fatal(err)
		}
		if m.Outstanding() != 0 {
			t.Errorf("%v: %d outstanding after the failure", c.mode, m.Outstanding())
		}
		if got := m.Poll(1); len(got) != 1 || got[0].Offset != c.next {
			t.Errorf("%v: polled %+v, want offset %d", c.mode, got, c.next)
		}
	}
}

// A pull member that stops polling is removed at its session timeout; its
// commit is refused, and its next Poll rejoins from the committed offset.
func TestPullSessionTimeoutRejoinsAtPoll(t *testing.T) {
	r, g, m := pullRig(t, eventlog.CommitAfter)
	_ = r.w.Run(1)
	recs := append([]eventlog.Record(nil), m.Poll(2)...)
	handle(t, m, recs[0])
	handle(t, m, recs[1])
	_ = r.w.Run(5)
	if m.Active() || len(g.Members()) != 0 {
		t.Fatalf("p1 still in the group: %v", g.Members())
	}
	if err := m.Commit(); !errors.Is(err, eventlog.ErrNotActive) {
		t.Errorf("Commit after removal: %v", err)
	}
	got := m.Poll(10)
	if !m.Active() || len(got) != 5 || got[0].Offset != 0 || got[0].Message.ID != 1 {
		t.Fatalf("Poll after removal: active=%v %+v", m.Active(), got)
	}
	if d := m.Delivery(got[0]); d.Attempt != 2 {
		t.Errorf("attempt %d, want 2", d.Attempt)
	}
}
