package sim

import (
	"math"
	"testing"
)

// TestArrivalStampsCreatedAndChanged checks what an arrival of a new copy
// records, at ticks a tick32 holds and at ticks past it (kept in full
// aside): the copy is created and changed at the event's tick, sent once,
// in the state its kind gives it, at its component, under its key and
// type, and expected by the consumer the event names.
func TestArrivalStampsCreatedAndChanged(t *testing.T) {
	for _, at := range []Tick{3, math.MaxInt32, math.MaxInt32 + 7, math.MinInt32 - 7, math.MaxInt64} {
		for _, k := range []Kind{KindSent, KindPublished, KindProduced, KindStored} {
			l := NewLedger()
			l.Emit(&Event{Kind: k, Tick: at, Msg: 1, Key: "order-1", Type: "OrderPlaced", Where: "queue:orders", Consumer: "billing"})
			r, ok := l.Record(1)
			want := Record{ID: 1, Key: "order-1", Type: "OrderPlaced", Where: "queue:orders", Created: at, Changed: at, Sends: 1, State: StatePending}
			if k == KindPublished {
				want.State = StateDelivered
			}
			if !ok || r != want {
				t.Errorf("%s at %d: %+v, want %+v", k, at, r, want)
			}
			if e := l.Entry(1, l.Consumer("billing")); !e.Expected {
				t.Errorf("%s at %d: not expected by its consumer", k, at)
			}
		}
	}
}
