package eventlog_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

func fmtAssign(a []eventlog.Assignment) string { return fmt.Sprint(a) }

func TestAssignRange(t *testing.T) {
	cases := []struct {
		members []string
		parts   int
		want    string
	}{
		// Kafka's documented example: two consumers, three partitions.
		{[]string{"C1", "C0"}, 3, "[C0=[0 1] C1=[2]]"},
		{[]string{"a", "b", "c"}, 7, "[a=[0 1 2] b=[3 4] c=[5 6]]"},
		{[]string{"a", "b", "c"}, 2, "[a=[0] b=[1] c=[]]"},
		{[]string{"b", "a", "b"}, 4, "[a=[0 1] b=[2 3]]"},
		{nil, 3, "[]"},
	}
	for _, c := range cases {
		if got := fmtAssign(eventlog.Assign(eventlog.Range, c.members, c.parts, nil)); got != c.want {
			t.Errorf("range %v/%d = %s, want %s", c.members, c.parts, got, c.want)
		}
	}
}

func TestAssignRoundRobin(t *testing.T) {
	got := fmtAssign(eventlog.Assign(eventlog.RoundRobin, []string{"c", "a", "b"}, 7, nil))
	if want := "[a=[0 3 6] b=[1 4] c=[2 5]]"; got != want {
		t.Errorf("roundrobin = %s, want %s", got, want)
	}
}

// A fresh sticky assignment is the round robin one, as Kafka's: the
// StickyAssignor javadoc (Example 1) says "the assignment with both sticky
// and round robin assignors will be" C0: [t0p0, t1p1, t3p0], C1: [t0p1,
// t2p0, t3p1], C2: [t1p0, t2p1], and AbstractStickyAssignor's
// ConstrainedAssignmentBuilder.assignRoundRobin deals the sorted
// unassigned partitions round robin to the sorted members below minQuota.
// The partitions of several topics are numbered here in Kafka's order
// (topic, then partition).
func TestAssignStickyFreshIsRoundRobin(t *testing.T) {
	cases := []struct {
		members []string
		parts   int
		want    string
	}{
		// StickyAssignor javadoc, Example 1: t0p0..t3p1 are 0..7.
		{[]string{"C0", "C1", "C2"}, 8, "[C0=[0 3 6] C1=[1 4 7] C2=[2 5]]"},
		// AbstractStickyAssignorTest.testTwoConsumersTwoTopicsSixPartitions:
		// consumer1 gets [t1p0, t1p2, t2p1], consumer2 [t1p1, t2p0, t2p2].
		{[]string{"consumer2", "consumer1"}, 6, "[consumer1=[0 2 4] consumer2=[1 3 5]]"},
		// More members than partitions: one each, in name order.
		{[]string{"c", "a", "b", "d"}, 3, "[a=[0] b=[1] c=[2] d=[]]"},
	}
	for _, c := range cases {
		got := fmtAssign(eventlog.Assign(eventlog.Sticky, c.members, c.parts, nil))
		if got != c.want {
			t.Errorf("sticky %v/%d = %s, want %s", c.members, c.parts, got, c.want)
		}
		if rr := fmtAssign(eventlog.Assign(eventlog.RoundRobin, c.members, c.parts, nil)); rr != got {
			t.Errorf("fresh sticky %s differs from round robin %s", got, rr)
		}
	}
}

// A rebalance keeps each member's previous partitions up to its quota and
// deals the rest round robin, as Kafka's ConstrainedAssignmentBuilder:
// AbstractStickyAssignorTest.testAddRemoveConsumerOneTopic has consumer1
// own tp0..tp2, and when consumer2 joins only tp2 transfers ownership (to
// consumer2).
func TestAssignSticky(t *testing.T) {
	one := eventlog.Assign(eventlog.Sticky, []string{"consumer1"}, 3, nil)
	two := eventlog.Assign(eventlog.Sticky, []string{"consumer1", "consumer2"}, 3, one)
	if got, want := fmtAssign(two), "[consumer1=[0 1] consumer2=[2]]"; got != want {
		t.Errorf("consumer2 joins = %s, want %s", got, want)
	}
	first := eventlog.Assign(eventlog.Sticky, []string{"a", "b", "c"}, 6, nil)
	if got, want := fmtAssign(first), "[a=[0 3] b=[1 4] c=[2 5]]"; got != want {
		t.Fatalf("initial sticky = %s, want %s", got, want)
	}
	// b leaves: a and c keep what they had and split b's partitions, dealt
	// round robin in name order.
	second := eventlog.Assign(eventlog.Sticky, []string{"a", "c"}, 6, first)
	if got, want := fmtAssign(second), "[a=[0 1 3] c=[2 4 5]]"; got != want {
		t.Errorf("after leave = %s, want %s", got, want)
	}
	// d joins: a and c keep their lowest two (Kafka keeps the first
	// minQuota of the owned partitions, sorted); d gets the others.
	third := eventlog.Assign(eventlog.Sticky, []string{"a", "c", "d"}, 6, second)
	if got, want := fmtAssign(third), "[a=[0 1] c=[2 4] d=[3 5]]"; got != want {
		t.Errorf("after join = %s, want %s", got, want)
	}
	if got := moved(second, third); got != 2 {
		t.Errorf("sticky moved %d partitions on join, want 2", got)
	}
	if got := moved(second, eventlog.Assign(eventlog.Range, []string{"a", "c", "d"}, 6, nil)); got <= 2 {
		t.Errorf("range moved only %d partitions on join", got)
	}
	// A partition two members claim is revoked from both and dealt anew,
	// as Kafka does for partitionsWithMultiplePreviousOwners.
	dup := []eventlog.Assignment{{Member: "a", Partitions: []int{0, 1}}, {Member: "b", Partitions: []int{1, 2}}}
	if got, want := fmtAssign(eventlog.Assign(eventlog.Sticky, []string{"a", "b"}, 4, dup)), "[a=[0 1] b=[2 3]]"; got != want {
		t.Errorf("doubly claimed = %s, want %s", got, want)
	}
}

// moved counts partitions whose owner changed.
func moved(a, b []eventlog.Assignment) int {
	owner := map[int]string{}
	for _, x := range a {
		for _, p := range x.Partitions {
			owner[p] = x.Member
		}
	}
	n := 0
	for _, x := range b {
		for _, p := range x.Partitions {
			if owner[p] != x.Member {
				n++
			}
		}
	}
	return n
}

// Every strategy assigns each partition exactly once and balances counts
// within one, for random memberships, across a chain of rebalances.
func TestAssignBalanced(t *testing.T) {
	s := sim.NewStream(1, "assign")
	for _, strat := range []eventlog.Strategy{eventlog.Range, eventlog.RoundRobin, eventlog.Sticky} {
		var prev []eventlog.Assignment
		for round := 0; round < 300; round++ {
			var members []string
			for i, n := 0, 1+s.IntN(6); i < n; i++ {
				members = append(members, "m"+strconv.Itoa(s.IntN(9)))
			}
			parts := s.IntN(13)
			got := eventlog.Assign(strat, members, parts, prev)
			seen := make([]int, parts)
			lo, hi := parts+1, -1
			for _, a := range got {
				lo, hi = min(lo, len(a.Partitions)), max(hi, len(a.Partitions))
				for i, p := range a.Partitions {
					seen[p]++
					if i > 0 && a.Partitions[i-1] >= p {
						t.Fatalf("%s: partitions not sorted: %v", strat, got)
					}
				}
			}
			for p, n := range seen {
				if n != 1 {
					t.Fatalf("%s %v/%d: partition %d assigned %d times: %v", strat, members, parts, p, n, got)
				}
			}
			if hi-lo > 1 {
				t.Fatalf("%s %v/%d: unbalanced %v", strat, members, parts, got)
			}
			prev = got
		}
	}
}

// In a running group, stickiness keeps the survivors' partitions across a
// rebalance caused by a crash.
func TestStickyAcrossRebalance(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 6})
	g := r.group(eventlog.GroupConfig{Name: "g", Strategy: eventlog.Sticky})
	a := r.member(g, eventlog.MemberConfig{Name: "a"})
	b := r.member(g, eventlog.MemberConfig{Name: "b"})
	c := r.member(g, eventlog.MemberConfig{Name: "c", RestartAfter: 5})
	before := fmtAssign(g.Assignment())
	// Each join kept what the others had: c got one partition from each.
	if before != "[a=[0 1] b=[3 4] c=[2 5]]" {
		t.Fatalf("assignment %s", before)
	}
	gen := g.Generation()
	c.Crash("")
	if g.Generation() != gen+1 {
		t.Errorf("generation %d, want %d", g.Generation(), gen+1)
	}
	if got := fmtAssign(g.Assignment()); got != "[a=[0 1 2] b=[3 4 5]]" {
		t.Errorf("after crash %s", got)
	}
	_ = r.w.Run(6) // c restarts and rejoins
	if got := fmtAssign(g.Assignment()); got != before {
		t.Errorf("after rejoin %s", got)
	}
	if a.Generation() != g.Generation() || b.Generation() != g.Generation() || c.Crashes() != 1 {
		t.Errorf("generations a=%d b=%d group=%d", a.Generation(), b.Generation(), g.Generation())
	}
	if ev := r.events(sim.KindRebalanced); len(ev) != 5 {
		t.Errorf("%d rebalances traced, want 5", len(ev))
	}
}

// assignReference is the plain Range and RoundRobin assignment, one append
// at a time, that Assign must equal.
func assignReference(s eventlog.Strategy, members []string, partitions int) string {
	names := slices.Clone(members)
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]eventlog.Assignment, len(names))
	for i, n := range names {
		out[i].Member = n
	}
	m := len(names)
	if m == 0 || partitions <= 0 {
		return fmtAssign(out)
	}
	if s == eventlog.RoundRobin {
		for p := 0; p < partitions; p++ {
			out[p%m].Partitions = append(out[p%m].Partitions, p)
		}
		return fmtAssign(out)
	}
	base, extra, p := partitions/m, partitions%m, 0
	for i := range out {
		n := base
		if i < extra {
			n++
		}
		for range n {
			out[i].Partitions = append(out[i].Partitions, p)
			p++
		}
	}
	return fmtAssign(out)
}

// Range and RoundRobin equal the plain algorithm for every member and
// partition count up to 12, a member without a partition gets nil, and the
// members' partition slices share no room: appending to one leaves the
// others alone.
func TestAssignEqualsReference(t *testing.T) {
	for _, s := range []eventlog.Strategy{eventlog.Range, eventlog.RoundRobin} {
		for m := 0; m <= 12; m++ {
			members := make([]string, m)
			for i := range members {
				members[i] = "m" + strconv.Itoa(m-i) // unsorted
			}
			for p := 0; p <= 12; p++ {
				got := eventlog.Assign(s, members, p, nil)
				if want := assignReference(s, members, p); fmtAssign(got) != want {
					t.Fatalf("%v %d members, %d partitions: %s, want %s", s, m, p, fmtAssign(got), want)
				}
				before := make([][]int, len(got))
				for i := range got {
					if len(got[i].Partitions) == 0 && got[i].Partitions != nil {
						t.Errorf("%v %d/%d: %s has an empty, non-nil slice", s, m, p, got[i].Member)
					}
					before[i] = slices.Clone(got[i].Partitions)
					got[i].Partitions = append(got[i].Partitions, -1)
				}
				for i := range got {
					if want := append(before[i], -1); !slices.Equal(got[i].Partitions, want) {
						t.Errorf("%v %d/%d: %s = %v after appending, want %v: a neighbour's append overwrote it", s, m, p, got[i].Member, got[i].Partitions, want)
					}
				}
			}
		}
	}
}

// Assignment returns the caller's own copy: changing it leaves the group's
// assignment, and the sticky one built from it at the next rebalance,
// alone, and the group's rebalances leave a copy taken before them alone.
func TestAssignmentIsACopy(t *testing.T) {
	for _, s := range []eventlog.Strategy{eventlog.Range, eventlog.RoundRobin, eventlog.Sticky} {
		r := newRig(t, 1, eventlog.Config{Partitions: 6})
		g := r.group(eventlog.GroupConfig{Name: "g", Strategy: s})
		r.member(g, eventlog.MemberConfig{Name: "a"})
		b := r.member(g, eventlog.MemberConfig{Name: "b", RestartAfter: 5})
		r.member(g, eventlog.MemberConfig{Name: "c"})
		held := g.Assignment()
		want := fmtAssign(held)

		mine := g.Assignment()
		mine[0].Member = "zz"
		mine[0].Partitions[0], mine[1].Partitions[0] = mine[1].Partitions[0], mine[0].Partitions[0]
		mine[2].Partitions = append(mine[2].Partitions[:1], 0, 1, 2, 3)
		_ = append(mine[:1], eventlog.Assignment{Member: "x", Partitions: []int{4}})
		if got := fmtAssign(g.Assignment()); got != want {
			t.Errorf("%v: the group's assignment is %s after the caller changed its copy, want %s", s, got, want)
		}
		if got := fmt.Sprint(g.Members()); got != "[a b c]" {
			t.Errorf("%v: members %s after the caller changed its copy", s, got)
		}

		b.Crash("")
		after := map[eventlog.Strategy]string{
			eventlog.Range:      "[a=[0 1 2] c=[3 4 5]]",
			eventlog.RoundRobin: "[a=[0 2 4] c=[1 3 5]]",
			eventlog.Sticky:     "[a=[0 1 3] c=[2 4 5]]", // a and c keep theirs; b's are dealt in turn
		}[s]
		crashed := g.Assignment()
		if got := fmtAssign(crashed); got != after {
			t.Errorf("%v: after b crashed %s, want %s", s, got, after)
		}
		_ = r.w.Run(6) // b restarts and rejoins
		if got, want := fmtAssign(g.Assignment()), fmtAssign(eventlog.Assign(s, []string{"a", "b", "c"}, 6, crashed)); got != want {
			t.Errorf("%v: after b rejoined %s, want %s", s, got, want)
		}
		if got := fmtAssign(held); got != want {
			t.Errorf("%v: a copy taken before the rebalances is %s now, want %s", s, got, want)
		}
	}
}
