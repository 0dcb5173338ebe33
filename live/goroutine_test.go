package live

import "testing"

func TestGoroutineID(t *testing.T) {
	here := GoroutineID()
	if here == 0 || GoroutineID() != here {
		t.Fatalf("GoroutineID %d, then %d", here, GoroutineID())
	}
	other := make(chan uint64)
	go func() { other <- GoroutineID() }()
	if id := <-other; id == 0 || id == here {
		t.Fatalf("another goroutine's id %d, this one's %d", id, here)
	}
}
