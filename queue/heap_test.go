package queue

import (
	"math/rand/v2"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestHeapMatchesASortedSet drives a theap with random pushes, removals
// from anywhere (as an ack or a purge does, by the entry's index), re-keys
// and pops of the least item, and checks after every step what the queue
// relies on: every entry's hidx names its item, every node is no less than
// its parent, and a pop takes the least key of a plain set kept beside it,
// found without the heap, so items leave in the order of their keys. Heaps of up to a few hundred items have full levels of
// heapArity children, which the queue's own tests rarely build.
func TestHeapMatchesASortedSet(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 0))
		var s slab
		h := theap{s: &s}
		in := map[uint32]hitem{} // slot -> its item, the reference
		var free []uint32
		check := func(step int, op string) {
			t.Helper()
			if h.len() != len(in) {
				t.Fatalf("seed %d step %d (%s): %d items, want %d", seed, step, op, h.len(), len(in))
			}
			for i := range h.a {
				it := h.a[i]
				if want, ok := in[it.slot]; !ok || want != it {
					t.Fatalf("seed %d step %d (%s): item %d is %+v, want %+v", seed, step, op, i, it, want)
				}
				if got := s.at(it.slot).hidx; int(got) != i {
					t.Fatalf("seed %d step %d (%s): slot %d has index %d, is at %d", seed, step, op, it.slot, got, i)
				}
				if i > 0 && it.less(&h.a[(i-1)/heapArity]) {
					t.Fatalf("seed %d step %d (%s): item %d is less than its parent", seed, step, op, i)
				}
			}
		}
		for step := range 3000 {
			var op string
			switch k := r.IntN(10); {
			case k < 5 || len(in) == 0: // push; few distinct dues and IDs, so ties go to the next key
				op = "push"
				var slot uint32
				if n := len(free); n > 0 && r.IntN(2) == 0 {
					slot, free = free[n-1], free[:n-1]
				} else {
					slot = s.alloc()
				}
				s.at(slot).msg.ID = sim.ID(r.IntN(40) + 1)
				due := sim.Tick(r.IntN(30))
				h.push(slot, due)
				in[slot] = hitem{due: due, id: s.at(slot).msg.ID, slot: slot}
			case k < 7: // pop the least
				op = "pop"
				var least hitem // the least key of the reference set, found without the heap
				found := false
				for _, it := range in {
					if !found || it.less(&least) {
						least, found = it, true
					}
				}
				slot := h.remove(0)
				if slot != least.slot {
					t.Fatalf("seed %d step %d: popped slot %d, the set's least is %+v", seed, step, slot, least)
				}
				delete(in, slot)
				free = append(free, slot)
			case k < 9: // remove any
				op = "remove"
				i := r.IntN(h.len())
				slot := h.remove(i)
				if s.at(slot).hidx != -1 {
					t.Fatalf("seed %d step %d: removed slot %d keeps index %d", seed, step, slot, s.at(slot).hidx)
				}
				delete(in, slot)
				free = append(free, slot)
			default: // re-key any
				op = "fix"
				i := r.IntN(h.len())
				it := h.a[i]
				it.due = sim.Tick(r.IntN(30))
				h.fix(i, it.due)
				in[it.slot] = it
			}
			check(step, op)
		}
	}
}
