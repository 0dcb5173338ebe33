package sim

import (
	"reflect"
	"testing"
)

// LedgerOnly reports whether t's events would be booked by the typed
// entry points (Trace.BookDelivery, Trace.BookEffect): the ledger is its
// only sink.
func LedgerOnly(t *Trace) bool { return t.ledgerOnly() != nil }

// A Delivery reused for another consumer books its effects for that
// consumer: the handle it caches is keyed by the name as well as the
// ledger. With a listening sink the same calls go through Emit; both
// ledgers must agree.
func TestBookEffectFollowsTheConsumer(t *testing.T) {
	run := func(listen bool) *Ledger {
		w, err := New(Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if listen {
			w.Trace().Attach(SinkFunc(func(*Event) {}))
		}
		if LedgerOnly(w.Trace()) == listen {
			t.Fatalf("ledger only %v with a listening sink %v", !listen, listen)
		}
		m := w.Env().NewMessage("k", nil, Headers{})
		d := NewDelivery(w.Env(), m, "queue:q", "a", "", 1)
		d.Apply("")
		d.Reset(w.Env(), m, "queue:q", "b", "", 1)
		d.Apply("")
		d.Apply("")
		d.Reset(w.Env(), m, "queue:q", "a", "", 2)
		d.Apply("")
		return w.Ledger()
	}
	for _, l := range []*Ledger{run(false), run(true)} {
		if a, b := l.Entry(1, l.Consumer("a")).Applied, l.Entry(1, l.Consumer("b")).Applied; a != 2 || b != 2 {
			t.Fatalf("applied a %d, b %d; want 2 and 2", a, b)
		}
		if got := l.Consumers(); !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Fatalf("consumers %v", got)
		}
	}
}

// A fan-out books one copy for many consumers in a row, and the ledger
// remembers the copy it last found registered. Booking must still refuse
// a copy it has no record of, however often it is asked, and ID 0, and
// change nothing when it refuses.
func TestBookDeliveryRefusesUnknownCopies(t *testing.T) {
	l := NewLedger()
	a, b := l.ref("a"), l.ref("b")
	for range 2 {
		for _, id := range []ID{0, 5} {
			if l.bookDelivery(id, a, 3) || l.bookDelivery(id, b, 3) {
				t.Fatalf("copy %d booked before it was registered", id)
			}
		}
	}
	if l.events != 0 || l.last != 0 || l.recs.len() != 0 {
		t.Fatalf("a refused booking changed the ledger: %d events, last tick %d, %d records", l.events, l.last, l.recs.len())
	}
	l.Emit(&Event{Tick: 4, Kind: KindSent, Where: "q", Msg: 5, Key: "k"})
	if !l.bookDelivery(5, a, 5) || !l.bookDelivery(5, b, 5) || l.bookDelivery(6, a, 5) || l.bookDelivery(0, a, 5) {
		t.Fatal("booking after registration: want copy 5 booked for both consumers, 6 and 0 refused")
	}
	if l.Entry(5, a).Delivered != 1 || l.Entry(5, b).Delivered != 1 {
		t.Fatalf("entries %+v and %+v, want one delivery each", l.Entry(5, a), l.Entry(5, b))
	}
}
