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
