package queue

import (
	"strconv"
	"testing"
)

// TestDefaultBodyCounts checks the producer's default bodies against
// strconv across carries, jumps and negative numbers.
func TestDefaultBodyCounts(t *testing.T) {
	var p Producer
	check := func(i int) {
		t.Helper()
		if got, want := string(p.defaultBody(i)), "msg-"+strconv.Itoa(i); got != want {
			t.Fatalf("body %d = %q, want %q", i, got, want)
		}
	}
	for i := 0; i < 12_000; i++ {
		check(i)
	}
	for _, i := range []int{99_999, 100_000, 100_001, 5, -1, 0, 1, -10, -9, 999, 1000} {
		check(i)
	}
	bodies := [][]byte{p.defaultBody(7), p.defaultBody(8)}
	bodies[0] = append(bodies[0], 'x')
	if string(bodies[1]) != "msg-8" {
		t.Fatalf("appending to one body changed the next: %q", bodies[1])
	}
}
