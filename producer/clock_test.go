package producer_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/producer"
)

// A producer with a skewed clock writes its clock reading, not the
// simulation's tick, into every message; one without skew writes none.
func TestClockSkewHeader(t *testing.T) {
	w := newWorld(t)
	behind, ahead, exact := &sink{}, &sink{}, &sink{}
	for _, c := range []producer.Config{
		{Name: "phone", Target: behind, Count: 2, Start: 4, ClockSkew: -3},
		{Name: "web", Target: ahead, Count: 1, Start: 4, ClockSkew: 2},
		{Name: "shop", Target: exact, Count: 1, Start: 4},
	} {
		if _, err := producer.New(w, c); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Run(6)
	var got []string
	for _, m := range append(append(behind.got, ahead.got...), exact.got...) {
		v, ok := m.Headers.Get(producer.HeaderClock)
		if !ok {
			v = "-"
		}
		got = append(got, v)
	}
	want := []string{"1", "2", "6", "-"}
	if len(got) != len(want) {
		t.Fatalf("clock headers %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("clock headers %v, want %v", got, want)
		}
	}
}
