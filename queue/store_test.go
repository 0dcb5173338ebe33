package queue

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestSlabChunksStayPut allocates slots across the small chunks and well
// into the full ones, and checks that every slot has an entry of its own
// that never moves while the slab grows.
func TestSlabChunksStayPut(t *testing.T) {
	var s slab
	const n = 5*chunkSize + 17
	ptrs := make([]*entry, n)
	seen := map[*entry]uint32{}
	for i := range uint32(n) {
		if got := s.alloc(); got != i {
			t.Fatalf("alloc %d returned slot %d", i, got)
		}
		if s.n > s.capacity() {
			t.Fatalf("%d slots handed out, capacity %d", s.n, s.capacity())
		}
		e := s.at(i)
		if j, dup := seen[e]; dup {
			t.Fatalf("slots %d and %d share an entry", j, i)
		}
		seen[e] = i
		ptrs[i] = e
		e.sentAt = sim.Tick(i)
	}
	for i := range uint32(n) {
		if s.at(i) != ptrs[i] || s.at(i).sentAt != sim.Tick(i) {
			t.Fatalf("slot %d moved or lost its entry", i)
		}
	}
	if got := len(s.chunks[0]); got != smallSize {
		t.Fatalf("first chunk holds %d slots", got)
	}
}

// TestSlabReusesFreedSlotsLastInFirstOut frees slots in a known order and
// checks that alloc hands them back last freed first, each as a new life
// with its heap index, actor, source and flags reset, before it opens
// fresh slots, and that a free slot's tag reads as not live.
func TestSlabReusesFreedSlotsLastInFirstOut(t *testing.T) {
	var s slab
	for range 40 {
		s.alloc()
	}
	freed := []uint32{3, 17, 0, 39, 16}
	lives := map[uint32]uint32{}
	for _, i := range freed {
		e := s.at(i)
		e.actor, e.src, e.flags = 2, 1, fDup|fNacked
		lives[i] = e.life
		s.release(i)
		if s.live(mkref(i, lives[i])) {
			t.Fatalf("slot %d is live after release", i)
		}
	}
	for k := len(freed) - 1; k >= 0; k-- {
		i := s.alloc()
		if i != freed[k] {
			t.Fatalf("alloc returned slot %d, want %d (freed last)", i, freed[k])
		}
		e := s.at(i)
		if e.life == lives[i] || e.hidx != -1 || e.actor != -1 || e.src != 0 || e.flags != 0 || e.state != stFree {
			t.Fatalf("slot %d came back as %+v", i, *e)
		}
	}
	if i := s.alloc(); i != 40 {
		t.Fatalf("with no free slot alloc returned %d, want 40", i)
	}
}
