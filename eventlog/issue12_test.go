package eventlog_test

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// Issue 12, case 3: a commit-before member whose handler fails on a
// record; then a member joins, or the member leaves. The new owner resumes
// at the committed offset, so the failed record and the records the
// failure left unprocessed are never processed: each is booked lost with
// cause "commit before processing", and NoLoss and AtLeastOnce fail naming
// them.
func TestIssue12CommitBeforeFailureThenRebalance(t *testing.T) {
	for _, c := range []struct {
		name string
		then func(r *rig, g *eventlog.Group, z *eventlog.Member)
	}{
		{"a member joins", func(r *rig, g *eventlog.Group, z *eventlog.Member) {
			r.member(g, eventlog.MemberConfig{Name: "a", Commit: eventlog.CommitBefore, Batch: 4})
		}},
		{"the member leaves", func(r *rig, g *eventlog.Group, z *eventlog.Member) {
			z.Leave()
			r.member(g, eventlog.MemberConfig{Name: "a", Commit: eventlog.CommitBefore, Batch: 4, Start: 3})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 12, eventlog.Config{Partitions: 1})
			g := r.group(eventlog.GroupConfig{Name: "billing"})
			on := true
			z := r.member(g, eventlog.MemberConfig{Name: "z", Commit: eventlog.CommitBefore, Batch: 4, Handler: failOn(&on, 2)})
			r.publish(6, "kunde-A") // m1..m6 at offsets 0..5
			r.w.At(2, c.name, func() { c.then(r, g, z) })
			_ = r.w.Run(1)
			// t=1: z polled m1..m4 and committed 4; m1 applied, m2 failed.
			if c, _ := g.Committed(0); c != 4 {
				t.Fatalf("committed %d, want 4", c)
			}
			r.drain(g, 20)
			if owner := g.Owner(0); owner != "a" {
				t.Fatalf("partition 0 owned by %q, want the new member a", owner)
			}
			lost := map[sim.ID]sim.Loss{}
			for _, x := range r.w.Ledger().Losses() {
				lost[x.ID] = x
			}
			for _, id := range []sim.ID{2, 3, 4} {
				x, ok := lost[id]
				if !ok || x.Cause != sim.CauseCommitBeforeProcess || x.Consumer != "billing" {
					t.Errorf("%v: loss %+v, want lost for billing with cause %q", id, x, sim.CauseCommitBeforeProcess)
				}
			}
			// m2 at the failure (t=1), m3 and m4 at the rebalance (t=2).
			if lost[2].Tick != 1 || lost[3].Tick != 2 || lost[4].Tick != 2 {
				t.Errorf("losses booked at %d, %d, %d; want 1, 2, 2", lost[2].Tick, lost[3].Tick, lost[4].Tick)
			}
			if len(lost) != 3 {
				t.Errorf("losses %v, want m2, m3 and m4 only", r.w.Ledger().Losses())
			}
			for _, check := range []sim.Checker{sim.NoLoss(), sim.AtLeastOnce("billing")} {
				vs := violations(sim.Check(r.w.Ledger(), check))
				var named []string
				for _, v := range vs {
					named = append(named, v.Msg.String())
					if !strings.Contains(v.Detail, "lost (commit before processing)") {
						t.Errorf("%s: %v", check.Name(), v)
					}
				}
				if got := strings.Join(named, " "); got != "m2 m3 m4" {
					t.Errorf("%s names %q, want m2 m3 m4", check.Name(), got)
				}
			}
			out := r.outcomes("billing")
			for _, id := range []sim.ID{1, 5, 6} {
				if o := out[id]; o.Verdict != sim.VerdictApplied || o.Effects != 1 {
					t.Errorf("%v: %s, %d effects", id, o.Verdict, o.Effects)
				}
			}
			r.refold()
		})
	}
}

// Without the rebalance, the member reads the unprocessed records again at
// its next poll: only the failed record is lost.
func TestIssue12CommitBeforeFailureWithoutRebalance(t *testing.T) {
	r := newRig(t, 12, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "billing"})
	on := true
	r.member(g, eventlog.MemberConfig{Name: "z", Commit: eventlog.CommitBefore, Batch: 4, Handler: failOn(&on, 2)})
	r.publish(6, "kunde-A")
	r.drain(g, 20)
	vs := violations(sim.Check(r.w.Ledger(), sim.AtLeastOnce("billing")))
	if len(vs) != 1 || vs[0].Msg != 2 {
		t.Errorf("violations %v, want m2 only", vs)
	}
	r.refold()
}

// Issue 12, case 3: records skipped by a seek to latest are booked lost at
// the seek with cause "seek": not pending until retention deletes them,
// and not "lost, no cause recorded" afterwards.
func TestIssue12SeekLatestBooksSkippedRecords(t *testing.T) {
	r := newRig(t, 12, eventlog.Config{Partitions: 2, RetentionTicks: 8})
	g := r.group(eventlog.GroupConfig{Name: "reports"})
	// The member reads 2 records per tick; 10 are waiting.
	r.member(g, eventlog.MemberConfig{Name: "r1", Batch: 2})
	r.publish(10, keys5...)
	r.w.At(3, "skip the backlog", func() {
		if err := g.SeekLatest(eventlog.AllPartitions); err != nil {
			t.Fatal(err)
		}
	})
	_ = r.w.Run(3)
	l := r.w.Ledger()
	applied, lost := 0, 0
	for _, o := range l.Outcomes("reports") {
		switch {
		case o.Verdict == sim.VerdictApplied:
			applied++
		case o.Verdict == sim.VerdictLost && o.Cause == sim.CauseSeek && o.Tick == 3:
			lost++
		default:
			t.Errorf("%v at the seek: %s (%s) t=%d", o.Origin, o.Verdict, o.Cause, o.Tick)
		}
	}
	if applied != 4 || lost != 6 {
		t.Errorf("%d applied and %d lost at the seek, want 4 and 6", applied, lost)
	}
	// Retention deletes the skipped records later: still lost to the seek.
	r.publish(2, keys5...)
	_ = r.w.Run(12)
	r.drain(g, 10)
	if n := len(r.events(sim.KindExpired)); n != 12 {
		t.Fatalf("%d records expired, want 12", n)
	}
	vs := violations(sim.Check(l, sim.NoLoss()))
	if len(vs) != 6 {
		t.Errorf("violations %v, want the 6 skipped records", vs)
	}
	for _, v := range vs {
		if v.Detail != "lost (seek)" {
			t.Errorf("violation %v, want lost (seek)", v)
		}
	}
	for _, x := range l.Losses() {
		if x.Cause != sim.CauseSeek || x.Tick != 3 || x.Consumer != "reports" {
			t.Errorf("loss %+v, want booked at the seek (t=3) with cause seek", x)
		}
	}
	if st := l.Stats(); st.Lost != 6 || st.Pending != 0 || st.Applied != 6 {
		t.Errorf("stats %+v", st)
	}
	r.refold()
}

// A seek backward (a replay) re-reads and loses nothing; a seek forward
// with no member books the records between the committed offset and the
// target.
func TestSeekLossesAreExact(t *testing.T) {
	r := newRig(t, 3, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	r.publish(10, "k")
	if err := g.SeekOffset(0, 4); err != nil { // no member yet: m1..m4 are skipped
		t.Fatal(err)
	}
	m := r.member(g, eventlog.MemberConfig{Name: "a", Batch: 3})
	_ = r.w.Run(1) // m5..m7
	if err := g.SeekEarliest(0); err != nil {
		t.Fatal(err)
	}
	r.drain(g, 20)
	out := r.outcomes("g")
	for id := sim.ID(1); id <= 10; id++ {
		o := out[id]
		switch {
		case id <= 4 && o.Verdict == sim.VerdictApplied: // the replay applied them after all
		case id >= 5 && id <= 7 && o.Effects == 2:
		case id >= 8 && o.Effects == 1:
		default:
			t.Errorf("%v: %s, %d effects", id, o.Verdict, o.Effects)
		}
	}
	if n := len(r.events(sim.KindLost)); n != 4 {
		t.Errorf("%d losses booked, want 4 (the first seek)", n)
	}
	if len(r.w.Ledger().Losses()) != 0 {
		t.Errorf("losses still stand after the replay: %v", r.w.Ledger().Losses())
	}
	_ = m
	r.refold()
}
