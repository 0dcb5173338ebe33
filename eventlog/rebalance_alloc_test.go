package eventlog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// Once a group has rebalanced with as many members and partitions as it
// has now, a Range or RoundRobin rebalance builds its assignment in the
// storage the group keeps and allocates nothing.
func TestRebalanceReusesTheAssignment(t *testing.T) {
	for _, s := range []Strategy{Range, RoundRobin} {
		w, g := sixPartitionGroup(t, GroupConfig{Name: "g", Strategy: s})
		for _, name := range []string{"c", "a", "b"} {
			if _, err := NewMember(w, g, MemberConfig{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		want := Assign(s, []string{"a", "b", "c"}, 6, nil)
		g.rebalance("again", "") // both buffers have room for three members now
		if n := testing.AllocsPerRun(10, func() { g.rebalance("again", "") }); n != 0 {
			t.Errorf("%v: a rebalance allocated %v times, want none", s, n)
		}
		if got := g.Assignment(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: assignment %v after the rebalances, want %v", s, got, want)
		}
	}
}

// After every rebalance of a group whose members join, leave, crash and
// come back, under every strategy, each partition's owner is the member
// the assignment lists it for, and no partition has an owner once no
// member is left: a rebalance stores an owner only where it changes.
func TestRebalanceSetsEveryOwner(t *testing.T) {
	for _, s := range []Strategy{Range, RoundRobin, Sticky} {
		w, g := sixPartitionGroup(t, GroupConfig{Name: "g", Strategy: s})
		var ms []*Member
		for _, name := range []string{"c", "a", "b", "d", "e", "f", "h"} {
			m, err := NewMember(w, g, MemberConfig{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		check := func(step int) {
			t.Helper()
			want := make([]*Member, len(g.parts))
			for _, a := range g.asg {
				for _, p := range a.Partitions {
					want[p] = g.Member(a.Member)
				}
			}
			name := func(m *Member) string {
				if m == nil {
					return "none"
				}
				return m.cfg.Name
			}
			for p := range g.parts {
				if got := g.parts[p].owner; got != want[p] {
					t.Fatalf("%v, step %d: partition %d is owned by %s, the assignment %v says %s", s, step, p, name(got), g.asg, name(want[p]))
				}
			}
		}
		rng := rand.New(rand.NewPCG(uint64(s), 9))
		for step := range 400 {
			m := ms[rng.IntN(len(ms))]
			switch rng.IntN(3) {
			case 0:
				m.Leave()
			case 1:
				m.Crash("")
			default:
				_ = m.Rejoin()
			}
			if step%50 == 49 { // now and then every member leaves
				for _, m := range ms {
					m.Leave()
				}
				check(step)
			}
			check(step)
			w.Tick()
			check(step)
		}
	}
}

// A group's two assignment buffers, made together at its first
// rebalance, never share storage: under every strategy, as members join
// one by one past the room the buffers start with and leave again, each
// assignment is what Assign computes from the one before (which Sticky
// reads from the other buffer while it builds the new one). A group
// growing to groupFirst members under Range or RoundRobin allocates for
// its assignments twice in all.
func TestAssignmentBuffersApart(t *testing.T) {
	for _, s := range []Strategy{Range, RoundRobin, Sticky} {
		w, g := sixPartitionGroup(t, GroupConfig{Name: "g", Strategy: s})
		var ms []*Member
		var prev []Assignment
		check := func(what string) {
			t.Helper()
			var names []string
			for _, m := range g.mems {
				names = append(names, m.cfg.Name)
			}
			want := Assign(s, names, len(g.parts), prev)
			if got := g.Assignment(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%v, %s: assignment %v, want %v", s, what, got, want)
			}
			prev = g.Assignment()
		}
		for _, name := range []string{"e", "b", "f", "a", "d", "c"} {
			m, err := NewMember(w, g, MemberConfig{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
			check(name + " joined")
		}
		for _, m := range ms[:4] {
			m.Leave()
			check(m.cfg.Name + " left")
		}
		// A rebalance that changes no member (a partition added) flips
		// the parity of members to buffers that joins and leaves alone
		// keep, so that a buffer is built from one holding groupFirst
		// members: an overlap of one entry would show only then.
		w, g = sixPartitionGroup(t, GroupConfig{Name: "g", Strategy: s})
		ms, prev = ms[:0], nil
		for i, name := range []string{"a", "b", "c", "d", "e"} {
			m, err := NewMember(w, g, MemberConfig{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
			check(name + " joined")
			if i == 0 || i == 3 {
				if err := g.t.AddPartitions(1); err != nil {
					t.Fatal(err)
				}
				check("a partition added")
			}
		}
		for _, m := range ms {
			m.Leave()
			check(m.cfg.Name + " left")
		}
		if s == Sticky {
			continue
		}
		// Mallocs counts the whole process's allocations, so a goroutine
		// another test left running can add to one measurement: the
		// fewest of five fresh groups is the joins' own count.
		least := uint64(math.MaxUint64)
		for range 5 {
			w, g = sixPartitionGroup(t, GroupConfig{Name: "g", Strategy: s})
			ms = ms[:0]
			for _, name := range []string{"d", "c", "b", "a"} {
				m, err := NewMember(w, g, MemberConfig{Name: name, Start: 5}) // joins later
				if err != nil {
					t.Fatal(err)
				}
				ms = append(ms, m)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for _, m := range ms {
				g.add(m, "joined")
			}
			runtime.ReadMemStats(&after)
			least = min(least, after.Mallocs-before.Mallocs)
		}
		// The buffers' two allocations, and the first member's list of
		// the six partitions it owns alone (Member.own).
		if least > 3 {
			t.Errorf("%v: four members joining allocated %d times, want 3", s, least)
		}
		check("four joined")
	}
}

// reserve leaves room for n more records in both of a member's buffers,
// whichever of them lacks it: the batch, the outstanding records, both or
// neither.
func TestReserveMakesRoomInBoth(t *testing.T) {
	for _, c := range []struct{ got, out int }{{0, 0}, {10, 0}, {0, 10}, {10, 10}, {3, 8}, {8, 3}} {
		for n := 1; n <= 12; n++ {
			_, g := sixPartitionGroup(t, GroupConfig{Name: "g"})
			m := &Member{g: g, cfg: MemberConfig{Name: "m", Batch: DefaultBatch}}
			m.got = make([]held, 2, c.got+2)
			m.out = make([]outRec, 2, c.out+2)
			m.outBuf = m.out[:0]
			m.reserve(n)
			if len(m.got)+n > cap(m.got) || len(m.out)+n > cap(m.out) {
				t.Fatalf("room %v, reserve(%d): batch %d/%d, outstanding %d/%d", c, n, len(m.got), cap(m.got), len(m.out), cap(m.out))
			}
		}
	}
}
