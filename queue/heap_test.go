package queue

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// at returns the live item at hidx i, or nil when i names none.
func (h *theap) at(i int32) *hitem {
	switch {
	case i >= 0 && int(i) < len(h.a):
		return &h.a[i]
	case i <= -2 && h.run != nil && runAt(i) >= h.run.rh && runAt(i) < len(h.run.items) && !h.run.items[runAt(i)].gone:
		return &h.run.items[runAt(i)]
	}
	return nil
}

// verify checks what a theap relies on: every live item's entry records
// where it is, every heap node is no less than its parent, the run from
// rh on is in the order of the keys, gone items included, n counts its
// live items, its first and last items are live when it has any, and it
// holds at most twice its live items plus 64.
func (h *theap) verify() error {
	for i := range h.a {
		it := &h.a[i]
		if got := h.s.at(it.slot).hidx; int(got) != i {
			return fmt.Errorf("heap: slot %d has index %d, is at %d", it.slot, got, i)
		}
		if it.gone {
			return fmt.Errorf("heap: item %d is gone", i)
		}
		if i > 0 && it.less(&h.a[(i-1)/heapArity]) {
			return fmt.Errorf("heap: item %d is less than its parent", i)
		}
	}
	r := h.run
	if r == nil {
		return nil
	}
	live := 0
	for i := r.rh; i < len(r.items); i++ {
		it := &r.items[i]
		if i > r.rh && it.less(&r.items[i-1]) {
			return fmt.Errorf("run: item %d is less than the one before it", i)
		}
		if it.gone {
			continue
		}
		live++
		if got := h.s.at(it.slot).hidx; got != runIdx(i) {
			return fmt.Errorf("run: slot %d has index %d, is at %d", it.slot, got, runIdx(i))
		}
	}
	switch {
	case live != r.n:
		return fmt.Errorf("run: %d live items, counted %d", live, r.n)
	case r.n > 0 && (r.items[r.rh].gone || r.items[len(r.items)-1].gone):
		return fmt.Errorf("run: its first or last item is gone")
	case r.n == 0 && (len(r.items) != 0 || r.rh != 0):
		return fmt.Errorf("run: empty, but holds %d items from %d", len(r.items), r.rh)
	case len(r.items) > 2*r.n+64:
		return fmt.Errorf("run: %d items for %d live", len(r.items), r.n)
	}
	return nil
}

// TestHeapMatchesASortedSet drives a theap with pushes, removals from
// anywhere (as an ack or a purge does, by the entry's hidx), re-keys and
// pops of the least item, and checks after every step what the queue
// relies on (see verify), and that a pop takes the least key of a plain
// set kept beside it, found without the theap, so items leave in the
// order of their keys. Half the seeds push keys that mostly grow, as a
// queue's are, so most items go to the run and leave it from its front,
// its middle and its end; the other half push keys at random, so most go
// to the heap, whose levels of heapArity children fill up, which the
// queue's own tests rarely build.
func TestHeapMatchesASortedSet(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 0))
		ordered := seed%2 == 0
		var s slab
		h := theap{s: &s}
		in := map[uint32]hitem{} // slot -> its item, the reference
		var slots []uint32       // the slots in the theap, in no order
		var free []uint32
		var clock sim.Tick
		var nextID sim.ID
		check := func(step int, op string) {
			t.Helper()
			if h.len() != len(in) {
				t.Fatalf("seed %d step %d (%s): %d items, want %d", seed, step, op, h.len(), len(in))
			}
			for slot, want := range in {
				if it := h.at(s.at(slot).hidx); it == nil || *it != want {
					t.Fatalf("seed %d step %d (%s): slot %d's item is %+v, want %+v", seed, step, op, slot, it, want)
				}
			}
			if err := h.verify(); err != nil {
				t.Fatalf("seed %d step %d (%s): %v", seed, step, op, err)
			}
		}
		drop := func(slot uint32) {
			delete(in, slot)
			for k, x := range slots {
				if x == slot {
					slots[k] = slots[len(slots)-1]
					slots = slots[:len(slots)-1]
					break
				}
			}
			free = append(free, slot)
		}
		key := func() (sim.Tick, sim.ID) {
			if ordered && r.IntN(8) != 0 { // mostly growing, sometimes out of order
				clock += sim.Tick(r.IntN(2))
				nextID++
				return clock + 10, nextID
			}
			// Few distinct dues and IDs, so ties go to the next key.
			return sim.Tick(r.IntN(30)), sim.ID(r.IntN(40) + 1)
		}
		for step := range 4000 {
			var op string
			switch k := r.IntN(10); {
			case k < 5 || len(in) == 0: // push
				op = "push"
				var slot uint32
				if n := len(free); n > 0 && r.IntN(2) == 0 {
					slot, free = free[n-1], free[:n-1]
				} else {
					slot = s.alloc()
				}
				due, id := key()
				s.at(slot).msg.ID = id
				h.push(slot, due)
				in[slot] = hitem{due: due, id: id, slot: slot}
				slots = append(slots, slot)
			case k < 7: // pop the least
				op = "pop"
				var least hitem // the least key of the reference set, found without the theap
				found := false
				for _, it := range in {
					if !found || it.less(&least) {
						least, found = it, true
					}
				}
				if got := h.peekDue(); got != least.due {
					t.Fatalf("seed %d step %d: the least is due %d, the set's least is %+v", seed, step, got, least)
				}
				slot := h.pop()
				if slot != least.slot {
					t.Fatalf("seed %d step %d: popped slot %d, the set's least is %+v", seed, step, slot, least)
				}
				drop(slot)
			case k < 9: // remove any
				op = "remove"
				slot := slots[r.IntN(len(slots))]
				if got := h.remove(s.at(slot).hidx); got != slot {
					t.Fatalf("seed %d step %d: removed slot %d, want %d", seed, step, got, slot)
				}
				if s.at(slot).hidx != -1 {
					t.Fatalf("seed %d step %d: removed slot %d keeps index %d", seed, step, slot, s.at(slot).hidx)
				}
				drop(slot)
			default: // re-key any
				op = "fix"
				slot := slots[r.IntN(len(slots))]
				it := in[slot]
				it.due, _ = key()
				h.fix(s.at(slot).hidx, it.due)
				in[slot] = it
			}
			check(step, op)
		}
	}
}

// TestHeapRunInOrder checks the case the run is for: slots pushed and
// removed in the order of their keys, as a consumer receives and acks a
// batch, never reach the heap, and the run starts again from the start
// of its array each time it empties.
func TestHeapRunInOrder(t *testing.T) {
	var s slab
	h := theap{s: &s}
	slots := make([]uint32, 300)
	for round := range 3 {
		for i := range slots {
			slots[i] = s.alloc()
			s.at(slots[i]).msg.ID = sim.ID(round*1000 + i + 1)
			h.push(slots[i], sim.Tick(round+10))
		}
		if len(h.a) != 0 || h.run.n != len(slots) {
			t.Fatalf("round %d: %d in the heap, %d in the run, want 0 and %d", round, len(h.a), h.run.n, len(slots))
		}
		for _, slot := range slots {
			h.remove(s.at(slot).hidx)
			if err := h.verify(); err != nil {
				t.Fatal(err)
			}
			s.release(slot)
		}
		if len(h.run.items) != 0 || cap(h.run.items) > 512 {
			t.Fatalf("round %d: an empty run holds %d items, room for %d", round, len(h.run.items), cap(h.run.items))
		}
	}
}
