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
