package eventlog_test

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// TestHistoryJudgesAValueAtItsLastAppearance: a value sent at offsets 1
// and 3 (a producer retry appended it again), with offset 2 the highest
// read, is a duplicate and not a lost write: it may still be read at 3.
//
// Jepsen (jepsen.tests.kafka, lost-write-cases): a write is lost when a
// consumer read past the value's position in the log without reading it;
// with duplicates the checker takes the value's last position, so only
// the duplicate is reported.
func TestHistoryJudgesAValueAtItsLastAppearance(t *testing.T) {
	h := &eventlog.History{}
	h.Send(1, "producer", 0, 0, 1)
	h.Send(1, "producer", 0, 1, 2)
	h.Send(1, "producer", 0, 2, 3)
	h.Send(2, "producer", 0, 3, 2) // the retry
	h.Poll(3, "g", "a", rd(0, 0, 1))
	h.Poll(4, "g", "a", rdE(0, 2, 3, 1)) // a new session, after a seek past offset 1
	rep := eventlog.CheckHistory(h)
	if rep.Count(eventlog.LostWrite) != 0 || rep.Count(eventlog.Duplicate) != 1 {
		t.Fatalf("want only the duplicate:\n%v", rep)
	}
	// Read past the last appearance too, and it is lost.
	h.Poll(5, "g", "a", rdE(0, 4, 4, 2))
	h.Send(5, "producer", 0, 4, 4)
	if rep := eventlog.CheckHistory(h); rep.Count(eventlog.LostWrite) != 1 {
		t.Fatalf("read past both positions, want one lost write:\n%v", rep)
	}
}

// TestPullFetchReturnsARefusedCommit: under CommitBefore, Fetch returns
// the refused commit's error and no records, and puts the batch back:
// the next fetch reads the same records, commits and hands them out.
//
// Kafka (KafkaConsumer javadoc, commitSync): it throws when the commit
// fails, so the poll-commit-process loop does not process the batch.
func TestPullFetchReturnsARefusedCommit(t *testing.T) {
	r, g, m := pullRig(t, eventlog.CommitBefore, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, Nth: 2, Match: faults.Match{Consumer: "p1"}})
	_ = r.w.Run(1)
	recs, err := m.Fetch(3)
	if !errors.Is(err, eventlog.ErrUnavailable) || len(recs) != 0 || m.Outstanding() != 0 {
		t.Fatalf("fetch with the commit refused: %d records, %d outstanding, err %v", len(recs), m.Outstanding(), err)
	}
	if c, _ := g.Committed(0); c > 0 {
		t.Fatalf("committed %d", c)
	}
	recs, err = m.Fetch(3)
	if err != nil || len(recs) != 3 || recs[0].Offset != 0 {
		t.Fatalf("fetch again: %v %v", recs, err)
	}
	for _, x := range recs {
		handle(t, m, x)
	}
	if out := r.outcomes("g"); out[1].Effects != 1 {
		t.Fatalf("%+v", out[1])
	}
	r.refold()
}

// keyIn returns a key that lands in partition p of n.
func keyIn(p, n int) string {
	for i := 0; ; i++ {
		if k := "k" + string(rune('a'+i%26)) + string(rune('a'+i/26)); eventlog.PartitionFor(k, n) == p {
			return k
		}
	}
}

// TestLatestResolvesEveryPartitionAtTheFirstPoll: a "latest" group whose
// first poll fills its batch from one partition still resolves the other
// partitions' positions at that poll, so a record produced after it is
// read, not booked lost (offset reset) when the partition is fetched
// later.
//
// Kafka (KafkaConsumer, updateFetchPositions): every assigned partition
// without a position is reset by auto.offset.reset when poll is called,
// before any fetch, whatever max.poll.records allows the poll to return.
func TestLatestResolvesEveryPartitionAtTheFirstPoll(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 2})
	g := r.group(eventlog.GroupConfig{Name: "g", Reset: eventlog.ResetLatest})
	m := r.member(g, eventlog.MemberConfig{Name: "p1", Pull: true, Commit: eventlog.CommitAfter})
	_ = r.w.Run(1)
	k0, k1 := keyIn(0, 2), keyIn(1, 2)
	r.publish(2, k0)
	if err := g.SeekEarliest(0); err != nil { // partition 0 has a position, partition 1 none
		t.Fatal(err)
	}
	recs, err := m.Fetch(1)
	if err != nil || len(recs) != 1 || recs[0].Partition != 0 {
		t.Fatalf("first poll: %v %v", recs, err)
	}
	handle(t, m, recs[0])
	r.publish(1, k1) // after the first poll: partition 1 was reset to its end before it
	var got []eventlog.Record
	for range 3 {
		rs, err := m.Fetch(10)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range rs {
			handle(t, m, x)
			got = append(got, x)
		}
	}
	var p1 int
	for _, x := range got {
		if x.Partition == 1 {
			p1++
		}
	}
	if p1 != 1 {
		t.Fatalf("the record produced on partition 1 after the first poll was read %d times\n%s", p1, r.traceText())
	}
	for id, o := range r.outcomes("g") {
		if o.Verdict == sim.VerdictLost {
			t.Errorf("%v lost (%s)", id, o.Cause)
		}
	}
}
