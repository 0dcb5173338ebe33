package goroutine

import "testing"

func TestID(t *testing.T) {
	here := ID()
	if here == 0 || ID() != here {
		t.Fatalf("ID %d, then %d", here, ID())
	}
	other := make(chan uint64)
	go func() { other <- ID() }()
	if id := <-other; id == 0 || id == here {
		t.Fatalf("another goroutine's id %d, this one's %d", id, here)
	}
}
