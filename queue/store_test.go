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
	if got := len(s.chunks[0]); got != 1<<firstBits {
		t.Fatalf("first chunk holds %d slots", got)
	}
}
