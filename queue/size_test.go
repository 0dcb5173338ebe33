package queue

import (
	"testing"
	"unsafe"
)

// A queue and a consumer pool are allocated once per world, so a sweep
// allocates them once per seed. An object with pointers above 512 bytes
// carries an 8-byte allocation header, so a Queue of at most 1144 bytes
// takes the 1152-byte size class (its store's body arena, which saves 16
// bytes per resident message, took it past 1024) and a Consumer of at
// most 632 the 640-byte one (the Delivery it holds caches its ledger
// handle, 32 bytes, which took it past 576); a field added to either moves
// it to the next class, 128 and 64 bytes more per seed.
func TestStructSizes(t *testing.T) {
	const header = 8
	if n := unsafe.Sizeof(Queue{}) + header; n > 1152 {
		t.Errorf("a Queue takes %d bytes with its header, above its 1152-byte size class", n)
	}
	if n := unsafe.Sizeof(Consumer{}) + header; n > 640 {
		t.Errorf("a Consumer takes %d bytes with its header, above its 640-byte size class", n)
	}
}

// TestChunkSizeClasses checks that a chunk's tags ride in the size class
// its entries take anyway (see smallChunk): with the allocation header, a
// small chunk fits 1,152 bytes and a big one 18,432, the classes of their
// entries alone, and opening a chunk is one allocation.
func TestChunkSizeClasses(t *testing.T) {
	const header = 8
	if n := unsafe.Sizeof(smallChunk{}) + header; n > 1152 || unsafe.Sizeof([smallSize]entry{})+header <= 1024 {
		t.Errorf("a small chunk takes %d bytes with its header, its entries alone %d", n, unsafe.Sizeof([smallSize]entry{})+header)
	}
	if n := unsafe.Sizeof(bigChunk{}) + header; n > 18432 || unsafe.Sizeof([chunkSize]entry{})+header <= 16384 {
		t.Errorf("a big chunk takes %d bytes with its header, its entries alone %d", n, unsafe.Sizeof([chunkSize]entry{})+header)
	}
	// Each chunk is opened on its own, not through a slab, so that a
	// growth of the slab's table of chunk headers is never counted.
	for _, k := range []int{0, smallCount} {
		if got := testing.AllocsPerRun(10, func() { openedChunk = newChunk(k) }); got != 1 {
			t.Errorf("opening chunk %d took %v allocations, want 1", k, got)
		}
	}
	if openedChunk.big == nil || openedChunk.small != nil || newChunk(0).small == nil || newChunk(0).big != nil {
		t.Errorf("chunk 0 is not small or chunk %d not big", smallCount)
	}
	// The table of the first 8 chunk headers is one 128-byte allocation.
	if n := unsafe.Sizeof([8]chunk{}); n != 128 {
		t.Errorf("8 chunk headers take %d bytes, want 128", n)
	}
}

// openedChunk keeps the chunk TestChunkSizeClasses opens reachable, so
// the compiler cannot keep it off the heap.
var openedChunk chunk
