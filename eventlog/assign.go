package eventlog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Strategy decides which member of a group reads which partition.
type Strategy int

// The assignment strategies.
const (
	// Range gives each member a contiguous range of partitions: partitions in
	// numeric order, members in lexicographic order, and the first
	// (partitions % members) members get one extra partition. Default.
	Range Strategy = iota
	// RoundRobin deals partitions in numeric order to members in
	// lexicographic order, one at a time.
	RoundRobin
	// Sticky keeps as many previous assignments as a balanced assignment
	// allows and hands the rest to the members with the fewest partitions.
	Sticky
)

var strategyNames = [...]string{"range", "roundrobin", "sticky"}

// String returns the strategy's name ("range", "roundrobin", "sticky").
func (s Strategy) String() string {
	if s >= 0 && int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return "strategy(" + strconv.Itoa(int(s)) + ")"
}

// ParseStrategy parses a strategy name as String returns it; "round-robin"
// is accepted too.
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "range", "":
		return Range, nil
	case "roundrobin", "round-robin":
		return RoundRobin, nil
	case "sticky":
		return Sticky, nil
	}
	return 0, fmt.Errorf("%w: unknown assignment strategy %q", ErrInvalidConfig, s)
}

// Assignment is the partitions one member owns, in numeric order.
type Assignment struct {
	Member     string
	Partitions []int
}

// String formats the assignment as "name=[0 1]".
func (a Assignment) String() string {
	var b strings.Builder
	b.WriteString(a.Member)
	b.WriteString("=[")
	for i, p := range a.Partitions {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(p))
	}
	b.WriteByte(']')
	return b.String()
}

// Assign computes the assignment of partitions 0..partitions-1 to members
// under strategy s. prev is the previous assignment (used by Sticky only;
// partitions that no longer exist and members that left are ignored). The
// result has one entry per distinct member, sorted by name; every partition
// has exactly one owner when there is at least one member. O(P log P + M log M).
func Assign(s Strategy, members []string, partitions int, prev []Assignment) []Assignment {
	names := slices.Clone(members)
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]Assignment, len(names))
	for i, n := range names {
		out[i].Member = n
	}
	m := len(names)
	if m == 0 || partitions <= 0 {
		return out
	}
	switch s {
	case RoundRobin:
		for p := 0; p < partitions; p++ {
			out[p%m].Partitions = append(out[p%m].Partitions, p)
		}
	case Sticky:
		sticky(out, partitions, prev)
	default:
		base, extra := partitions/m, partitions%m
		p := 0
		for i := range out {
			n := base
			if i < extra {
				n++
			}
			for j := 0; j < n; j++ {
				out[i].Partitions = append(out[i].Partitions, p)
				p++
			}
		}
	}
	return out
}

func sticky(out []Assignment, partitions int, prev []Assignment) {
	m := len(out)
	base, extra := partitions/m, partitions%m
	owner := make([]int, partitions)
	for i := range owner {
		owner[i] = -1
	}
	index := func(name string) int {
		i, ok := slices.BinarySearchFunc(out, name, func(a Assignment, n string) int { return strings.Compare(a.Member, n) })
		if !ok {
			return -1
		}
		return i
	}
	// Previous partitions per current member, each claimed only once.
	kept := make([][]int, m)
	for _, a := range prev {
		i := index(a.Member)
		if i < 0 {
			continue
		}
		for _, p := range a.Partitions {
			if p >= 0 && p < partitions && owner[p] == -1 {
				owner[p] = i
				kept[i] = append(kept[i], p)
			}
		}
	}
	for i := range kept {
		slices.Sort(kept[i])
	}
	// Keep up to base each; then one more for the members with the most
	// previous partitions, while extra slots remain.
	for i := range owner {
		owner[i] = -1
	}
	counts := make([]int, m)
	for i := range kept {
		for _, p := range kept[i][:min(base, len(kept[i]))] {
			owner[p] = i
			counts[i]++
		}
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(kept[b]) - len(kept[a]) })
	for _, i := range order {
		if extra == 0 {
			break
		}
		if len(kept[i]) > base {
			owner[kept[i][base]] = i
			counts[i]++
			extra--
		}
	}
	// Hand out the rest in partition order, filling members in name order
	// up to their targets: base, or base+1 for the members that already
	// hold an extra and then for the first ones while extras remain.
	target := make([]int, m)
	for i := range target {
		target[i] = base
		if counts[i] > base {
			target[i] = base + 1
		}
	}
	for i := 0; i < m && extra > 0; i++ {
		if target[i] == base {
			target[i]++
			extra--
		}
	}
	i := 0
	for p := 0; p < partitions; p++ {
		if owner[p] != -1 {
			continue
		}
		for counts[i] >= target[i] {
			i++
		}
		owner[p] = i
		counts[i]++
	}
	for p, i := range owner {
		out[i].Partitions = append(out[i].Partitions, p)
	}
}
