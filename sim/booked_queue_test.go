package sim

import (
	"fmt"
	"testing"
)

// A queue's sends, deliveries and acks, booked through the typed entry
// points when the ledger listens alone and emitted otherwise, fold to the
// same ledger and stop the run with the same budget error at the same
// event. Some sends name an origin, some copies are acked twice (a broker
// duplicate settling), and a consumer first named by a send, a delivery
// or an ack is made at the same point in both runs.
func TestBookQueueEqualsEmit(t *testing.T) {
	for _, b := range []Budget{{}, {Sends: 7}, {DeliveriesPerTick: 2}, {DeliveriesPerTick: 2, Sends: 9}} {
		run := func(listen bool) *typedRun {
			r := newTypedRun(t, listen, b)
			tr := r.tr
			var lc, other LedgerConsumer
			for tick := Tick(1); tick <= 4; tick++ {
				for i := range 3 {
					id := ID(tick)*10 + ID(i)
					var origin ID
					if i == 2 {
						origin = id - 1
					}
					consumer := "q"
					if i == 1 {
						consumer = "q2"
					}
					r.event(tr.BookSent(tick, id, origin, "queue:q", "k", "order", consumer), 1,
						Event{Tick: tick, Kind: KindSent, Where: "queue:q", Consumer: consumer, Msg: id, Origin: origin, Key: "k", Type: "order"})
				}
				if tick%2 == 0 {
					tr.Emit(Event{Tick: tick, Kind: KindDuplicated, Where: "queue:q", Consumer: "q", Msg: ID(tick) * 10})
				}
				for i := range 3 {
					id := ID(tick)*10 + ID(i)
					r.event(tr.BookDelivery(tick, id, "q", &lc), 1,
						Event{Tick: tick, Kind: KindReceived, Where: "queue:q", Consumer: "q", Msg: id})
					for range 1 + int(tick%2)*int(1-id%10%2) {
						r.event(tr.BookAcked(tick+1, id, "q", &lc), 1,
							Event{Tick: tick + 1, Kind: KindAcked, Where: "queue:q", Consumer: "q", Msg: id})
					}
				}
				r.event(tr.BookAcked(tick, ID(tick)*10+1, "late", &other), 1,
					Event{Tick: tick, Kind: KindAcked, Where: "queue:q", Consumer: "late", Msg: ID(tick)*10 + 1})
			}
			return r
		}
		typed, emitted := run(false), run(true)
		sameAsEmitted(t, b, typed, emitted)
		bl, el := typed.w.Ledger(), emitted.w.Ledger()
		for _, r := range el.Records() {
			for _, name := range el.Consumers() {
				if g, w := bl.Entry(r.ID, bl.Consumer(name)), el.Entry(r.ID, el.Consumer(name)); g != w {
					t.Fatalf("%+v: copy %v for %s: %+v, want %+v", b, r.ID, name, g, w)
				}
			}
		}
		if g, w := fmt.Sprint(bl.Consumers()), fmt.Sprint(el.Consumers()); g != w {
			t.Fatalf("%+v: consumers %s, want %s", b, g, w)
		}
	}
}
