package eventlog

import (
	"fmt"
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
