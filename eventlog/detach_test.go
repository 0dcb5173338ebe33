package eventlog

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// detachRig is a world with a one-partition topic holding three records,
// a group and the member cfg of it.
func detachRig(t *testing.T, cfg MemberConfig) (*sim.World, *Log, *Member) {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(w, Config{Name: "orders", Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(w, l, GroupConfig{Name: "g"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMember(w, g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"a", "b", "c"} {
		if err := l.Publish(w.Env().NewMessage("k", []byte(body), sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	return w, l, m
}

// The records Poll hands out are the caller's copies, so the member holds
// none of the log's entries after it: retention and compaction copy
// nothing for a pull member. A handler member in the middle of its batch
// (busy with a slow record) does get copies of the records it has not
// handled, which the detach below must keep making.
func TestDetachCopiesOnlyForABatchInProgress(t *testing.T) {
	_, l, pull := detachRig(t, MemberConfig{Name: "p", Pull: true})
	if recs := pull.Poll(10); len(recs) != 3 {
		t.Fatalf("polled %d records, want 3", len(recs))
	}
	if n := testing.AllocsPerRun(10, func() { l.detach(0, 0, 3) }); n != 0 {
		t.Errorf("detach copied %v entries for a pull member after its Poll, want none", n)
	}

	w, l, busy := detachRig(t, MemberConfig{Name: "h", Batch: 3, Handler: &sim.Script{Behaviour: sim.Slow, Ticks: 2}})
	if err := w.Run(1); err != nil {
		t.Fatal(err)
	}
	if !busy.Busy() {
		t.Fatal("the handler member is not busy")
	}
	if n := testing.AllocsPerRun(10, func() { l.detach(0, 0, 3) }); n != 3 {
		t.Errorf("detach copied %v entries for a busy handler member, want its 3", n)
	}
}

// TestDetachSkipsACrashedOrLeftMember: a member that crashed or left in
// the middle of a batch dropped those records, so retention copies no
// entries for it, however long it stays out of the group.
func TestDetachSkipsACrashedOrLeftMember(t *testing.T) {
	for _, how := range []string{"crash", "leave"} {
		w, l, m := detachRig(t, MemberConfig{Name: "h", Batch: 3, Handler: &sim.Script{Behaviour: sim.Slow, Ticks: 2}})
		if err := w.Run(1); err != nil {
			t.Fatal(err)
		}
		if !m.Busy() {
			t.Fatalf("%s: the handler member is not busy", how)
		}
		if how == "crash" {
			m.Crash("")
		} else {
			m.Leave()
		}
		if n := testing.AllocsPerRun(10, func() { l.detach(0, 0, 3) }); n != 0 {
			t.Errorf("%s: detach copied %v entries for a member out of the group, want none", how, n)
		}
	}
}
