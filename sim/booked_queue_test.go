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
		run := func(listen bool) (w *World, at uint64, typed int) {
			w, _ = New(Config{Seed: 1})
			if listen {
				w.Trace().Attach(SinkFunc(func(*Event) {}))
			}
			w.SetBudget(b)
			tr := w.Trace()
			var lc, other LedgerConsumer
			note := func() {
				if at == 0 && w.Err() != nil {
					at = tr.Len()
				}
			}
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
					if tr.BookSent(tick, id, origin, "queue:q", "k", "order", consumer) {
						typed++
					} else {
						tr.Emit(Event{Tick: tick, Kind: KindSent, Where: "queue:q", Consumer: consumer, Msg: id, Origin: origin, Key: "k", Type: "order"})
					}
					note()
				}
				if tick%2 == 0 {
					tr.Emit(Event{Tick: tick, Kind: KindDuplicated, Where: "queue:q", Consumer: "q", Msg: ID(tick) * 10})
				}
				for i := range 3 {
					id := ID(tick)*10 + ID(i)
					if tr.BookDelivery(tick, id, "q", &lc) {
						typed++
					} else {
						tr.Emit(Event{Tick: tick, Kind: KindReceived, Where: "queue:q", Consumer: "q", Msg: id})
					}
					note()
					for range 1 + int(tick%2)*int(1-id%10%2) {
						if tr.BookAcked(tick+1, id, "q", &lc) {
							typed++
						} else {
							tr.Emit(Event{Tick: tick + 1, Kind: KindAcked, Where: "queue:q", Consumer: "q", Msg: id})
						}
					}
				}
				if tr.BookAcked(tick, ID(tick)*10+1, "late", &other) {
					typed++
				} else {
					tr.Emit(Event{Tick: tick, Kind: KindAcked, Where: "queue:q", Consumer: "late", Msg: ID(tick)*10 + 1})
				}
			}
			return w, at, typed
		}
		bw, bat, typed := run(false)
		ew, eat, none := run(true)
		if typed == 0 || none != 0 {
			t.Fatalf("%+v: %d events booked by the typed run, %d by the listening one; want some and none", b, typed, none)
		}
		if fmt.Sprint(bw.Err()) != fmt.Sprint(ew.Err()) || bat != eat || (bw.Err() == nil) != (b == Budget{}) {
			t.Fatalf("%+v: typed run stopped at event %d with %v, emitted at %d with %v", b, bat, bw.Err(), eat, ew.Err())
		}
		if bw.Trace().Len() != ew.Trace().Len() || bw.Ledger().Dump() != ew.Ledger().Dump() {
			t.Fatalf("%+v: the ledgers differ:\n%s\n%s", b, bw.Ledger().Dump(), ew.Ledger().Dump())
		}
		bl, el := bw.Ledger(), ew.Ledger()
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
