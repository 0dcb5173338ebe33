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
	// Sticky is Kafka's StickyAssignor (and CooperativeStickyAssignor) for
	// members with one subscription, its ConstrainedAssignmentBuilder:
	// every member keeps its previous partitions up to its quota (the lowest
	// first; maxQuota for as many members as the partitions left over by
	// minQuota allow, in name order), and the remaining partitions are
	// dealt in numeric order, round robin, to the members in name order
	// that are below minQuota, then one each to members at minQuota. A
	// fresh assignment is therefore the round robin one.
	Sticky
)

var strategyNames = [...]string{"range", "round_robin", "sticky"}

// String returns the strategy's name ("range", "round_robin", "sticky").
func (s Strategy) String() string {
	if s >= 0 && int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return "strategy(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText returns the strategy's name as String does; an unknown
// strategy is an error wrapping ErrInvalidConfig.
func (s Strategy) MarshalText() ([]byte, error) {
	return marshalName(strategyNames[:], int(s), "assignment strategy")
}

// UnmarshalText sets s from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (s *Strategy) UnmarshalText(text []byte) error {
	i, err := unmarshalName(strategyNames[:], text, "assignment strategy")
	if err == nil {
		*s = Strategy(i)
	}
	return err
}

// marshalName returns names[i], the text of an enum value, or an error for
// an index out of range; what names the enum in it.
func marshalName(names []string, i int, what string) ([]byte, error) {
	if i < 0 || i >= len(names) {
		return nil, fmt.Errorf("%w: unknown %s %d", ErrInvalidConfig, what, i)
	}
	return []byte(names[i]), nil
}

// unmarshalName returns the index of text in names, or an error wrapping
// ErrInvalidConfig that lists them.
func unmarshalName(names []string, text []byte, what string) (int, error) {
	for i, n := range names {
		if n == string(text) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown %s %q; allowed: %s", ErrInvalidConfig, what, text, strings.Join(names, ", "))
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
	return assign(s, slices.Clone(members), partitions, prev, &assignBuf{})
}

// assignBuf is the storage an assignment is built in: its entries, and
// the slice the Range and RoundRobin assignments carve every member's
// partitions out of. Building an assignment in it overwrites the one built
// there before, so whatever is built in it must not be referenced then: a
// group keeps two and builds each rebalance's assignment in the one the
// current assignment is not in, which the Sticky assignment reads as the
// previous one, and it hands callers copies (cloneAssignment).
type assignBuf struct {
	entries []Assignment
	parts   []int
}

// assign is Assign on members, which it sorts and compacts in place,
// built in buf, which must not hold prev. The Range and RoundRobin
// assignments carve every member's partitions out of one slice, each with
// its exact capacity, so appending to one never touches another's. It
// allocates only when buf has less room than the members or partitions
// need (Sticky: its scratch and the members' partitions, always).
func assign(s Strategy, names []string, partitions int, prev []Assignment, buf *assignBuf) []Assignment {
	slices.Sort(names)
	names = slices.Compact(names)
	if cap(buf.entries) < len(names) {
		buf.entries = make([]Assignment, len(names))
	}
	out := buf.entries[:len(names)]
	clear(out)
	for i, n := range names {
		out[i].Member = n
	}
	m := len(names)
	if m == 0 || partitions <= 0 {
		return out
	}
	if s == Sticky {
		sticky(out, partitions, prev)
		return out
	}
	if cap(buf.parts) < partitions {
		buf.parts = make([]int, partitions)
	}
	all := buf.parts[:partitions]
	base, extra := partitions/m, partitions%m
	for i := range out {
		n := base
		if i < extra {
			n++
		}
		if n == 0 {
			continue // no partition: Partitions stays nil
		}
		ps := all[:n:n]
		all = all[n:]
		for j := range ps {
			if s == RoundRobin {
				ps[j] = i + j*m // partition p goes to member p%m
			} else {
				ps[j] = i*base + min(i, extra) + j // a contiguous range
			}
		}
		out[i].Partitions = ps
	}
	return out
}

// cloneAssignment returns a copy of asg that shares no storage with it:
// its entries and one slice the members' partitions are carved out of,
// each with its exact capacity. O(members + partitions); two allocations.
func cloneAssignment(asg []Assignment) []Assignment {
	out := make([]Assignment, len(asg))
	n := 0
	for _, a := range asg {
		n += len(a.Partitions)
	}
	all := make([]int, 0, n)
	for i, a := range asg {
		out[i].Member = a.Member
		if a.Partitions != nil {
			k := len(all)
			all = append(all, a.Partitions...)
			out[i].Partitions = all[k:len(all):len(all)]
		}
	}
	return out
}

// sticky fills out (members sorted by name) as Kafka's
// AbstractStickyAssignor.ConstrainedAssignmentBuilder does for members that
// share one subscription (assignOwnedPartitions, then assignRoundRobin),
// with the members in name order where Kafka iterates a hash map.
// O(P + M).
func sticky(out []Assignment, partitions int, prev []Assignment) {
	m := len(out)
	minQuota, maxQuota := partitions/m, (partitions+m-1)/m
	expectedOver, over := partitions%m, 0 // members to get maxQuota when it exceeds minQuota
	index := func(name string) int {
		i, ok := slices.BinarySearchFunc(out, name, func(a Assignment, n string) int { return strings.Compare(a.Member, n) })
		if !ok {
			return -1
		}
		return i
	}
	// Previously owned partitions per current member. A partition claimed
	// by two members is revoked from both, as Kafka does for a partition
	// with multiple previous owners in one generation.
	claim := make([]int, partitions) // 0 unclaimed, i+1 member i, -1 claimed twice
	for _, a := range prev {
		i := index(a.Member)
		if i < 0 {
			continue
		}
		for _, p := range a.Partitions {
			switch {
			case p < 0 || p >= partitions || claim[p] == i+1 || claim[p] == -1:
			case claim[p] == 0:
				claim[p] = i + 1
			default:
				claim[p] = -1
			}
		}
	}
	owned := make([][]int, m)
	for p, c := range claim {
		if c > 0 {
			owned[c-1] = append(owned[c-1], p) // ascending: Kafka sorts owned partitions by partition
		}
	}
	assigned := make([]bool, partitions)
	var underMin, atMin []int
	for i := range out {
		own := owned[i]
		keep := len(own)
		switch {
		case len(own) < minQuota:
			underMin = append(underMin, i)
		case len(own) >= maxQuota && over < expectedOver:
			over++
			if over == expectedOver {
				atMin = atMin[:0]
			}
			keep = maxQuota
		default:
			keep = minQuota
			if over < expectedOver {
				atMin = append(atMin, i)
			}
		}
		for _, p := range own[:keep] {
			out[i].Partitions = append(out[i].Partitions, p)
			assigned[p] = true
		}
	}
	// Round robin over the members below minQuota; once none is left, one
	// more each to the members at minQuota, in order.
	it := 0
	for p := 0; p < partitions; p++ {
		if assigned[p] {
			continue
		}
		var c int
		fromIter := true
		switch {
		case it < len(underMin):
			c = underMin[it]
			it++
		case len(underMin) == 0 && len(atMin) == 0:
			// Unreachable: the quotas add up to the partitions (Kafka throws
			// IllegalStateException here). Stay total: the first member
			// with the fewest partitions takes it.
			c, fromIter = 0, false
			for i := range out {
				if len(out[i].Partitions) < len(out[c].Partitions) {
					c = i
				}
			}
		case len(underMin) == 0:
			c, atMin, fromIter = atMin[0], atMin[1:], false
		default:
			c, it = underMin[0], 1
		}
		out[c].Partitions = append(out[c].Partitions, p)
		switch n := len(out[c].Partitions); {
		case n == minQuota && fromIter:
			it--
			underMin = slices.Delete(underMin, it, it+1)
			atMin = append(atMin, c)
		case n == maxQuota:
			over++
		}
	}
	for i := range out {
		slices.Sort(out[i].Partitions)
	}
}
