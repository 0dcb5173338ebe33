package tui

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// The trace filter matches a message ID exactly, and a key, correlation
// ID or component by a part of it.
func TestMatchEvent(t *testing.T) {
	e := sim.Event{Msg: 12, Key: "order-3", Corr: "c-7f", Where: "queue:a-shared"}
	for _, c := range []struct {
		f    string
		want bool
	}{
		{"", true}, {"m12", true}, {"12", true}, {"m1", false}, {"m120", false},
		{"order-3", true}, {"order", true}, {"order-4", false},
		{"c-7f", true}, {"7f", true},
		{"queue:a-shared", true}, {"a-shared", true}, {"b-orders", false},
	} {
		id, _ := sim.ParseID(c.f)
		if got := matchEvent(&e, c.f, id); got != c.want {
			t.Errorf("filter %q: %v, want %v", c.f, got, c.want)
		}
	}
}
