package faults

// Minimize shrinks a failing schedule by delta debugging (Zeller's ddmin):
// it calls fails with subsets of s's decisions, in their original order,
// and returns a subset that still fails and is 1-minimal: removing any
// single decision of it makes fails report false. s itself is assumed to
// fail; when even the empty schedule fails, the empty schedule is
// returned. The search is deterministic (the same s and the same answers
// give the same calls and result) and never asks about the same subset
// twice; it makes O(n²) calls at worst and O(log n) for a single culprit.
// The result's decisions are s's own, with s's ticks: to turn it into a
// Plan, re-run it with Config.Replay and take the run's Fired.
func Minimize(s Schedule, fails func(Schedule) bool) Schedule {
	if fails == nil || len(s.Decisions) == 0 {
		return Schedule{Decisions: append([]Decision(nil), s.Decisions...)}
	}
	seen := map[string]bool{}
	test := func(idx []int) bool {
		k := make([]byte, 0, 4*len(idx))
		for _, i := range idx {
			k = append(k, byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
		}
		if v, ok := seen[string(k)]; ok {
			return v
		}
		sub := Schedule{Decisions: make([]Decision, len(idx))}
		for j, i := range idx {
			sub.Decisions[j] = s.Decisions[i]
		}
		v := fails(sub)
		seen[string(k)] = v
		return v
	}
	build := func(idx []int) Schedule {
		out := Schedule{Decisions: make([]Decision, len(idx))}
		for j, i := range idx {
			out.Decisions[j] = s.Decisions[i]
		}
		return out
	}
	if test(nil) {
		return Schedule{}
	}
	c := make([]int, len(s.Decisions))
	for i := range c {
		c[i] = i
	}
	n := 2
	for len(c) >= 2 {
		chunks := split(c, n)
		reduced := false
		for _, ch := range chunks {
			if test(ch) {
				c, n, reduced = ch, 2, true
				break
			}
		}
		if !reduced && n > 2 {
			for i := range chunks {
				comp := complement(chunks, i)
				if test(comp) {
					c, n, reduced = comp, max(n-1, 2), true
					break
				}
			}
		}
		if !reduced {
			if n >= len(c) {
				break
			}
			n = min(2*n, len(c))
		}
	}
	return build(c)
}

// split cuts c into n chunks of nearly equal length, in order.
func split(c []int, n int) [][]int {
	out := make([][]int, 0, n)
	start := 0
	for i := 0; i < n; i++ {
		end := start + (len(c)-start)/(n-i)
		out = append(out, c[start:end])
		start = end
	}
	return out
}

// complement returns every chunk but chunks[skip], concatenated.
func complement(chunks [][]int, skip int) []int {
	var out []int
	for i, ch := range chunks {
		if i != skip {
			out = append(out, ch...)
		}
	}
	return out
}
