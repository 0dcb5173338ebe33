package eventlog_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// compactedRig produces a=1, b=1, a=2, a tombstone of b, a keyless record
// and c=1 (m1..m6 at offsets 0..5) to a compacted topic that records its
// history, and runs it until compaction removed m1, m2 and m4.
func compactedRig(t *testing.T) (*rig, *eventlog.Group) {
	t.Helper()
	r := newRig(t, 1, eventlog.Config{Partitions: 1, Compact: true, CompactEvery: 3, History: true})
	g := r.group(eventlog.GroupConfig{Name: "late"})
	for _, kv := range []struct {
		k string
		v []byte
	}{{"a", []byte("1")}, {"b", []byte("1")}, {"a", []byte("2")}, {"b", nil}, {"", []byte("x")}, {"c", []byte("1")}} {
		if _, err := r.topic.Produce(r.env.NewMessage(kv.k, kv.v, sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	_ = r.w.Run(4)
	if got := r.topic.Metrics().Compacted; got != 3 {
		t.Fatalf("compacted %d records, want 3", got)
	}
	return r, g
}

// A member that reads a compacted topic after compaction reads offsets 2,
// 4 and 5: the offsets compaction removed hold no values any more, so
// reading past them is no skip, and the values compaction superseded are
// no lost writes, in either reading of the checker.
func TestHistoryCompactionIsNoAnomaly(t *testing.T) {
	r, g := compactedRig(t)
	r.member(g, eventlog.MemberConfig{Name: "m"})
	_ = r.w.Run(5)
	h := r.topic.History()
	if !strings.Contains(h.String(), "remove compaction p0/1=m2") {
		t.Errorf("history does not show the removal:\n%s", h)
	}
	for _, opts := range []eventlog.CheckOptions{{}, {PerGroup: true}} {
		rep := eventlog.CheckHistoryWith(h, opts)
		if err := rep.Err(); err != nil {
			t.Errorf("%+v: %v", opts, err)
		}
		if rep.Compacted != 3 || rep.Unseen != 3 || rep.Reads != 3 {
			t.Errorf("%+v: report %+v, want 3 compacted, 3 unseen, 3 reads", opts, rep)
		}
	}
}

// Compaction excuses only what it removed before a reader passed it: a
// skip over a live record and a write nobody read before compaction
// removed it are still anomalies.
func TestHistoryCompactionKeepsRealAnomalies(t *testing.T) {
	r, _ := compactedRig(t)
	h := r.topic.History()
	// A reader that skipped the live m5 at offset 4.
	h.Poll(10, "g", "x", rd(0, 2, 3), rd(0, 5, 6))
	rep := eventlog.CheckHistory(h)
	got := fmt.Sprint(rep.Anomalies)
	if rep.Count(eventlog.PollSkip) != 1 || !strings.Contains(got, "poll-skip group=g by=x p=0 offsets=[4] values=[m5]") {
		t.Errorf("skip of a live record: %s", got)
	}
	if rep.Count(eventlog.LostWrite) != 1 || !strings.Contains(got, "lost-write by=producer p=0 offsets=[4] values=[m5]") {
		t.Errorf("lost live record: %s", got)
	}

	// A reader that passed m1 before compaction removed it: m1 was lost
	// before compaction could explain it, and the skip is one.
	var h2 eventlog.History
	sends(&h2, 3)
	h2.Poll(2, "g", "x", rd(0, 1, 2), rd(0, 2, 3))
	h2.Remove(3, sim.CauseCompaction, 0, 0, 1)
	rep = eventlog.CheckHistory(&h2)
	if rep.Count(eventlog.LostWrite) != 1 || rep.Compacted != 0 {
		t.Errorf("a write lost before compaction: %v, compacted %d", rep.Anomalies, rep.Compacted)
	}
	var h3 eventlog.History
	sends(&h3, 3)
	h3.Poll(2, "g", "x", rd(0, 0, 1))
	h3.Poll(3, "g", "x", rd(0, 2, 3))
	h3.Remove(4, sim.CauseCompaction, 0, 1, 2)
	rep = eventlog.CheckHistoryWith(&h3, eventlog.CheckOptions{PerGroup: true})
	if rep.Count(eventlog.LostWrite) != 1 || rep.Count(eventlog.PollSkip) != 1 {
		t.Errorf("a skip before compaction: %v", rep.Anomalies)
	}
}
