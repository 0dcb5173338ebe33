package eventlog_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Issue 13 (broker fidelity), the Kafka-like log. Every test cites the
// real behaviour it holds the model to.

// tombstone returns a tombstone for key: a keyed record with a nil body.
func (r *rig) tombstone(p int, key string) {
	r.tb.Helper()
	if _, err := r.topic.ProduceTo(p, r.env.NewMessage(key, nil, sim.Headers{Type: "order.deleted"})); err != nil {
		r.tb.Fatal(err)
	}
}

func (r *rig) value(p int, key, body string) {
	r.tb.Helper()
	if _, err := r.topic.ProduceTo(p, r.env.NewMessage(key, []byte(body), sim.Headers{Type: "order.event"})); err != nil {
		r.tb.Fatal(err)
	}
}

// Bug: compaction never moved the log start, so a group behind a tail that
// compaction emptied (a value and its tombstone, gone after the tombstone
// retention) stayed at lag 2 forever and never caught up. Kafka's docs (4.8
// Log Compaction Basics): "all offsets remain valid positions in the log,
// even if the message with that offset has been compacted away; in this
// case this position is indistinguishable from the next highest offset
// that does appear in the log", so a position in the emptied tail reads as
// the log end; and delete.retention.ms bounds "the time in which a consumer
// must complete a read ... (otherwise delete tombstones may be collected
// before they complete their scan)".
func TestCompactedTailMovesTheLogStartAndDrains(t *testing.T) {
	r := newRig(t, 13, eventlog.Config{Partitions: 2, Compact: true, CompactEvery: 1000, TombstoneRetention: 3})
	g := r.group(eventlog.GroupConfig{Name: "view"})
	r.value(0, "B", "b1") // p0/0
	a := r.member(g, eventlog.MemberConfig{Name: "a"})
	_ = r.w.Run(1) // a reads b1 and commits 1
	a.Leave()
	r.value(0, "A", "a1") // p0/1
	r.tombstone(0, "A")   // p0/2: deletes A
	r.value(1, "C", "c1") // p1/0
	r.tombstone(1, "C")   // p1/1: deletes C; nothing else in p1
	_ = r.w.Run(4)
	r.topic.Compact() // the tombstones are 4 ticks old: gone with what they deleted

	pm := r.topic.Metrics().Partitions
	if pm[0].LogStart != 0 || pm[0].End != 3 || pm[0].Records != 1 {
		t.Errorf("p0 %+v, want b1 alone at offset 0, end 3", pm[0])
	}
	// The log start moves to the first record that remains: none in p1.
	if pm[1].LogStart != 2 || pm[1].End != 2 || pm[1].Records != 0 || r.topic.Start(1) != 2 {
		t.Errorf("p1 %+v, want log start = end = 2", pm[1])
	}
	// Offset 0 of p1 is still a valid position, equivalent to the end.
	if recs, err := r.topic.Fetch(1, 0, 10, nil); err != nil || len(recs) != 0 {
		t.Errorf("Fetch(p1, 0) = %v, %v; want no record and no error", recs, err)
	}
	// The group committed 1 in p0: offsets 1 and 2 hold nothing, so it is
	// caught up there (lag 0, not 2); in p1 it owes nothing either.
	if m := g.Metrics(); m.Lag != 0 || m.Partitions[0].Committed != 1 || m.Partitions[0].Lag != 0 {
		t.Errorf("lag behind the compacted tail: %+v", m)
	}
	// A member drains: its fetch finds nothing past its position and moves
	// it to the end; before the fix the run never ended.
	r.member(g, eventlog.MemberConfig{Name: "b"})
	r.drain(g, 5)
	for _, pl := range g.Metrics().Partitions {
		if pl.Position != pl.End {
			t.Errorf("p%d position %d, want the end %d", pl.Partition, pl.Position, pl.End)
		}
	}
	// The group never read a1, c1 and the tombstones: compaction removed
	// them first, and each is booked lost with that cause.
	if got := lossCauses(t, r, "view"); got[sim.CauseCompaction] != 4 || len(got) != 1 {
		t.Errorf("losses %v, want 4 to compaction", got)
	}
	r.refold()
}

// Boundary: a tombstone stays while it is younger than TombstoneRetention
// and goes once its age reaches it. Kafka's Cleaner keeps a tombstone while
// "currentTime < batch.deleteHorizonMs()" (shouldRetainDeletes), so it is
// removed by the first cleaning at or after the horizon.
func TestTombstoneRetentionBoundary(t *testing.T) {
	const retention = 3
	r := newRig(t, 13, eventlog.Config{Compact: true, CompactEvery: 1000, TombstoneRetention: retention})
	var ages []string
	compactAt := func(at sim.Tick) {
		r.w.At(at, "compact", func() {
			r.topic.Compact()
			recs, err := r.topic.Fetch(0, r.topic.Start(0), 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			stays := len(recs) == 1 && recs[0].Tombstone()
			ages = append(ages, fmt.Sprintf("age %d: %v", at-2, stays))
		})
	}
	r.w.At(2, "delete A", func() {
		r.value(0, "A", "a1")
		r.tombstone(0, "A")
	})
	compactAt(2 + retention - 1) // one tick younger than the retention
	compactAt(2 + retention)     // exactly the retention
	_ = r.w.Run(10)
	if got, want := strings.Join(ages, ", "), "age 2: true, age 3: false"; got != want {
		t.Errorf("tombstone %s, want %s", got, want)
	}
	// The superseded value went at the first compaction, the tombstone at
	// the second.
	var at []sim.Tick
	for _, e := range r.events(sim.KindExpired) {
		if e.Cause == sim.CauseCompaction {
			at = append(at, e.Tick)
		}
	}
	if fmt.Sprint(at) != "[t=4 t=5]" {
		t.Errorf("compaction removed records at %v, want [4 5]", at)
	}
}

// Bug: SeekOffset(AllPartitions, n) moved the partitions before the one
// that refused it and none after. Seeks are atomic: every target is
// validated first, and only a negative offset is refused, as Kafka's
// KafkaConsumer.seek throws IllegalArgumentException("seek offset must not
// be a negative number") and otherwise takes any offset (the next fetch
// resolves one past the end, see TestSeekBeyondTheEndResetsAtTheNextFetch).
func TestSeekAllPartitionsIsAtomic(t *testing.T) {
	r := newRig(t, 13, eventlog.Config{Partitions: 3})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	for p, n := range []int{5, 1, 5} {
		for i := 0; i < n; i++ {
			r.value(p, "k", "v")
		}
	}
	committed := func() string {
		var s []string
		for p := 0; p < 3; p++ {
			c, ok := g.Committed(p)
			s = append(s, fmt.Sprint(c, ok))
		}
		return strings.Join(s, ",")
	}
	// A refused seek changes nothing and traces nothing.
	if err := g.SeekOffset(eventlog.AllPartitions, -1); !errors.Is(err, eventlog.ErrOffsetOutOfRange) {
		t.Fatalf("seek to -1: %v", err)
	}
	if got := committed(); got != "0 false,0 false,0 false" || len(r.events(sim.KindSeeked)) != 0 {
		t.Errorf("a refused seek moved %s", got)
	}
	// Offset 3 is past the end of partition 1 (1 record): before the fix
	// partition 0 moved and the seek failed there; now all three move.
	if err := g.SeekOffset(eventlog.AllPartitions, 3); err != nil {
		t.Fatalf("seek to 3: %v", err)
	}
	if got := committed(); got != "3 true,3 true,3 true" || len(r.events(sim.KindSeeked)) != 3 {
		t.Errorf("committed %s after the seek, want 3 everywhere", got)
	}
	// Records 0..2 of partitions 0 and 2 were skipped; partition 1 is
	// resolved at the first fetch (earliest: its one record is read).
	r.member(g, eventlog.MemberConfig{Name: "a"})
	r.drain(g, 5)
	out := r.outcomes("g")
	var lost, applied int
	for _, o := range out {
		switch {
		case o.Verdict == sim.VerdictLost && o.Cause == sim.CauseSeek:
			lost++
		case o.Verdict == sim.VerdictApplied:
			applied++
		default:
			t.Errorf("%v: %s (%s)", o.Origin, o.Verdict, o.Cause)
		}
	}
	if lost != 6 || applied != 5 {
		t.Errorf("%d lost to the seek and %d applied, want 6 and 5", lost, applied)
	}
	r.refold()
}

// Kafka: a seek beyond the end is accepted, and the next fetch finds the
// position out of range and applies auto.offset.reset: Kafka's Fetcher logs
// "Fetch position {} is out of range for partition {}, resetting offset"
// and requests a reset by the default policy, or raises
// OffsetOutOfRangeException when there is none.
func TestSeekBeyondTheEndResetsAtTheNextFetch(t *testing.T) {
	for _, c := range []struct {
		reset   eventlog.Reset
		applied int // of the 6 records
		lost    int // skipped by the reset to latest
	}{
		{eventlog.ResetEarliest, 6, 0},
		{eventlog.ResetLatest, 4, 2},
		{eventlog.ResetNone, 6, 0}, // after an operator's seek to 4
	} {
		t.Run(c.reset.String(), func(t *testing.T) {
			r := newRig(t, 13, eventlog.Config{})
			g := r.group(eventlog.GroupConfig{Name: "g", Reset: c.reset})
			if err := g.SeekEarliest(0); err != nil { // so that every group starts at offset 0
				t.Fatal(err)
			}
			a := r.member(g, eventlog.MemberConfig{Name: "a", Batch: 4})
			r.publish(6, "k")
			_ = r.w.Run(1) // a reads and commits m1..m4
			if err := g.SeekOffset(0, 100); err != nil {
				t.Fatalf("seek past the end: %v", err)
			}
			if c, _ := g.Committed(0); c != 100 {
				t.Errorf("committed %d, want 100", c)
			}
			_ = r.w.Run(3)
			var resets, stuck int
			for _, e := range r.events(sim.KindSeeked) {
				if strings.Contains(e.Detail, "auto.offset.reset="+c.reset.String()+" from offset 100") {
					resets++
				}
			}
			for _, e := range r.events(sim.KindRejected) {
				if strings.Contains(e.Detail, "offset 100 out of range") {
					stuck++
				}
			}
			out := r.outcomes("g")
			applied, lost := 0, 0
			for _, o := range out {
				if o.Effects > 0 {
					applied++
				}
				if o.Verdict == sim.VerdictLost {
					lost++
					if o.Cause != sim.CauseOffsetReset {
						t.Errorf("%v lost with cause %s", o.Origin, o.Cause)
					}
				}
			}
			switch c.reset {
			case eventlog.ResetNone:
				// Stuck until an operator seeks, traced once.
				if resets != 0 || stuck != 1 || a.Outstanding() != 0 || applied != 4 {
					t.Errorf("%d resets, %d out-of-range rejections, %d applied", resets, stuck, applied)
				}
				if err := g.SeekOffset(0, 4); err != nil {
					t.Fatal(err)
				}
				r.drain(g, 5)
				applied = 0
				for _, o := range r.outcomes("g") {
					if o.Effects > 0 {
						applied++
					}
				}
			default:
				if resets != 1 {
					t.Errorf("%d resets from offset 100 traced, want 1", resets)
				}
			}
			if applied != c.applied || lost != c.lost {
				t.Errorf("%d applied and %d lost, want %d and %d", applied, lost, c.applied, c.lost)
			}
			r.refold()
		})
	}
}

// Kafka: a commit beyond the log end is accepted. The group coordinator's
// OffsetMetadataManager.commitOffset validates the member, its generation
// and the metadata size (OFFSET_METADATA_TOO_LARGE), never the offset
// against the log; the next owner's fetch then finds it out of range and
// resets by auto.offset.reset, or reads from it once the log has grown that
// far. The simulator refuses it instead (see Group.Commit): no member can
// have handled records that do not exist, and the records produced up to
// the offset would be booked lost to a commit nobody made for them. The
// resets Kafka would apply are still modelled, for a seek past the end
// (TestSeekBeyondTheEndResetsAtTheNextFetch).
func TestCommitBeyondTheEndIsRefused(t *testing.T) {
	for _, reset := range []eventlog.Reset{eventlog.ResetEarliest, eventlog.ResetLatest} {
		r := newRig(t, 13, eventlog.Config{})
		g := r.group(eventlog.GroupConfig{Name: "g", Reset: reset})
		if err := g.SeekEarliest(0); err != nil {
			t.Fatal(err)
		}
		a := r.member(g, eventlog.MemberConfig{Name: "a", Batch: 2})
		r.publish(4, "k")
		_ = r.w.Run(1) // a applied m1, m2 and committed 2
		if err := g.Commit("a", g.Generation(), 0, 10); !errors.Is(err, eventlog.ErrOffsetOutOfRange) {
			t.Fatalf("commit past the end: %v", err)
		}
		if c, _ := g.Committed(0); c != 2 || g.Metrics().Lag != 2 {
			t.Errorf("committed %d, metrics %+v", c, g.Metrics())
		}
		a.Leave()
		r.publish(8, "k") // end 12: offset 10 would be in range now
		r.member(g, eventlog.MemberConfig{Name: "b"})
		r.drain(g, 5)
		for id, o := range r.outcomes("g") {
			if o.Verdict != sim.VerdictApplied || o.Effects != 1 {
				t.Errorf("%s: %v %s applied %d times, want once", reset, id, o.Verdict, o.Effects)
			}
		}
		r.refold()
	}
}

// Kafka: auto.offset.reset is applied when the consumer needs a position,
// at its poll, not when the group is created: KafkaConsumer's
// updateFetchPositions fetches the committed offsets and then, "If there
// are partitions still needing a position and a reset policy is defined,
// request reset using the default policy" (ListOffsets latest at that
// moment). A latest group therefore skips what was produced before its
// first poll, and a committed offset, once there is one, wins.
func TestLatestIsResolvedAtTheFirstPoll(t *testing.T) {
	r := newRig(t, 13, eventlog.Config{Partitions: 2})
	g := r.group(eventlog.GroupConfig{Name: "g", Reset: eventlog.ResetLatest})
	for p := 0; p < 2; p++ {
		r.value(p, "k", "before") // m1 at p0/0, m2 at p1/0
	}
	r.member(g, eventlog.MemberConfig{Name: "a", Start: 3})
	r.w.At(1, "more", func() { r.value(0, "k", "before the first poll") }) // m3 at p0/1
	r.w.At(2, "an adapter commits p1", func() {
		// Nothing owns p1 yet, so commit through the group the way an
		// operator would: a seek, which is a commit.
		if err := g.SeekOffset(1, 0); err != nil {
			t.Fatal(err)
		}
	})
	r.w.At(5, "after", func() {
		r.value(0, "k", "after") // m4
		r.value(1, "k", "after") // m5
	})
	r.drain(g, 10)
	out := r.outcomes("g")
	for id, want := range map[sim.ID]string{1: "lost", 3: "lost", 2: "applied", 4: "applied", 5: "applied"} {
		if o := out[id]; o.Verdict.String() != want || want == "lost" && o.Cause != sim.CauseOffsetReset {
			t.Errorf("%v: %s (%s), want %s", id, o.Verdict, o.Cause, want)
		}
	}
	// The loss is booked at the first poll (t=3), not at the group's
	// creation.
	for _, x := range r.w.Ledger().Losses() {
		if x.Tick != 3 {
			t.Errorf("loss %+v booked at t=%d, want the first poll at t=3", x, x.Tick)
		}
	}
	resets := 0
	for _, e := range r.events(sim.KindSeeked) {
		if strings.Contains(e.Detail, "auto.offset.reset=latest: no committed offset") {
			resets++
			if e.Tick != 3 || e.Partition != 0 || e.Offset != 2 {
				t.Errorf("reset %s", sim.AppendText(nil, &e))
			}
		}
	}
	if resets != 1 {
		t.Errorf("%d resets to latest traced, want 1 (p1 had a committed offset)", resets)
	}
	r.refold()
}

// Lost acks: broker.ack_lost loses an offset commit on its way. The member
// believes it committed, the broker never got it, and after a rebalance
// the new owner reads again from the older committed offset. Kafka's docs
// (4.6 Message Delivery Semantics): if the consumer "crashes after
// processing messages but before saving its position ... when the new
// process takes over the first few messages it receives will already have
// been processed" (at-least-once).
func TestLostCommitRereadsAfterRebalance(t *testing.T) {
	r := newRig(t, 13, eventlog.Config{},
		faults.Rule{Name: "lost-commit", Point: faults.BrokerAckLost, Count: 1, Match: faults.Match{Consumer: "a"}})
	g := r.group(eventlog.GroupConfig{Name: "billing"})
	a := r.member(g, eventlog.MemberConfig{Name: "a", Pull: true})
	r.publish(4, "k")
	for _, rec := range a.Poll(10) {
		d := a.Delivery(rec)
		d.Apply("charge")
		if err := a.MarkProcessed(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Commit(); err != nil {
		t.Fatalf("Commit() = %v, want success as far as the member can tell", err)
	}
	if _, ok := g.Committed(0); ok {
		t.Error("the lost commit reached the broker")
	}
	if m := g.Metrics(); m.LostCommits != 1 || m.Commits != 0 {
		t.Errorf("metrics %+v", m)
	}
	faultsFired := 0
	for _, e := range r.events(sim.KindFault) {
		if e.Rule == "lost-commit" && e.Detail == string(faults.BrokerAckLost) {
			faultsFired++
		}
	}
	if faultsFired != 1 {
		t.Errorf("%d lost-commit faults traced", faultsFired)
	}
	a.Leave()
	r.member(g, eventlog.MemberConfig{Name: "b"})
	r.drain(g, 5)
	for id, o := range r.outcomes("billing") {
		if o.Verdict != sim.VerdictApplied || o.Effects != 2 {
			t.Errorf("%v: %s, %d effects, want applied twice", id, o.Verdict, o.Effects)
		}
	}
	if err := sim.Check(r.w.Ledger(), sim.AtLeastOnce("billing")); err != nil {
		t.Error(err)
	}
	r.refold()
}

// Lost acks: broker.unavailable fails commits too. Kafka's consumer
// (CommitRequestManager) handles COORDINATOR_NOT_AVAILABLE on an
// OffsetCommit by marking the coordinator unknown and retrying, and the
// commit fails with that error when it runs out of time: the committed
// offset does not change.
func TestUnavailableBrokerFailsCommits(t *testing.T) {
	// The poll is the first opportunity, the commit the second.
	r := newRig(t, 13, eventlog.Config{},
		faults.Rule{Name: "down", Point: faults.BrokerUnavailable, Nth: 2, Match: faults.Match{Consumer: "a"}})
	g := r.group(eventlog.GroupConfig{Name: "billing"})
	a := r.member(g, eventlog.MemberConfig{Name: "a", Pull: true})
	r.publish(2, "k")
	for _, rec := range a.Poll(10) {
		if err := a.MarkProcessed(a.Delivery(rec)); err != nil {
			t.Fatal(err)
		}
	}
	err := a.Commit()
	if !errors.Is(err, eventlog.ErrUnavailable) || !errors.Is(err, sim.ErrUnavailable) {
		t.Fatalf("Commit() = %v, want ErrUnavailable", err)
	}
	if _, ok := g.Committed(0); ok {
		t.Error("a refused commit was stored")
	}
	rejected := r.events(sim.KindRejected)
	if len(rejected) != 1 || rejected[0].Rule != "down" || !strings.Contains(rejected[0].Detail, "broker unavailable") {
		t.Errorf("rejections %v", rejected)
	}
	if m := g.Metrics(); m.RejectedCommits != 1 {
		t.Errorf("metrics %+v", m)
	}
	// The next commit goes through.
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	if c, _ := g.Committed(0); c != 2 {
		t.Errorf("committed %d, want 2", c)
	}
}

// Lost acks with commit before processing: the member's commit is lost,
// its handler fails on a record and the member moves on (at-most-once, as
// it believes). The record is not lost yet: the broker's committed offset
// is older, so a rebalance hands it to a reader again (Kafka's new owner
// resumes at the committed offset); without one, the member's next commit
// passes it and it is lost then, booked at that commit.
func TestLostCommitBeforeProcessing(t *testing.T) {
	for _, rebalance := range []bool{false, true} {
		t.Run(fmt.Sprintf("rebalance=%v", rebalance), func(t *testing.T) {
			r := newRig(t, 13, eventlog.Config{},
				faults.Rule{Name: "lost-commit", Point: faults.BrokerAckLost, Count: 1, Match: faults.Match{Consumer: "z"}})
			g := r.group(eventlog.GroupConfig{Name: "billing"})
			on := true
			z := r.member(g, eventlog.MemberConfig{Name: "z", Commit: eventlog.CommitBefore, Batch: 4, Handler: failOn(&on, 2)})
			r.publish(6, "k")
			_ = r.w.Run(1) // t=1: z polled m1..m4, its commit of 4 was lost; m1 applied, m2 failed
			if _, ok := g.Committed(0); ok {
				t.Fatal("the lost commit reached the broker")
			}
			if n := len(r.events(sim.KindLost)); n != 0 {
				t.Fatalf("%d losses booked at the failure, want none yet", n)
			}
			on = false
			if rebalance {
				z.Leave()
				r.member(g, eventlog.MemberConfig{Name: "a", Commit: eventlog.CommitBefore, Batch: 4})
			}
			r.drain(g, 10)
			out := r.outcomes("billing")
			if rebalance {
				// a re-read from offset 0: m2 applied after all, m1 twice.
				if o := out[2]; o.Verdict != sim.VerdictApplied || out[1].Effects != 2 {
					t.Errorf("m2 %s, m1 applied %d times", o.Verdict, out[1].Effects)
				}
				if len(r.events(sim.KindLost)) != 0 {
					t.Errorf("losses %v", r.w.Ledger().Losses())
				}
			} else {
				losses := r.w.Ledger().Losses()
				if len(losses) != 1 || losses[0].ID != 2 || losses[0].Cause != sim.CauseCommitBeforeProcess || losses[0].Tick != 2 {
					t.Errorf("losses %+v, want m2 at z's next commit (t=2)", losses)
				}
			}
			r.refold()
		})
	}
}
