package sim

import (
	"reflect"
	"testing"
)

// The typed forms of a group's committed, rebalanced and crashed events
// must leave the trace and the ledger exactly as emitting the events does:
// the same count, the same last tick, the same fold and the same kept
// stats, between and after copies that the ledger folds. With a listening
// sink they must refuse, so that the event is built for the sink.
func TestBookedGroupEventsEqualEmitted(t *testing.T) {
	books := []struct {
		kind Kind
		book func(*Trace, Tick) bool
	}{
		{KindCommitted, (*Trace).BookCommitted},
		{KindRebalanced, (*Trace).BookRebalanced},
		{KindCrashed, (*Trace).BookCrashed},
	}
	// run sends three copies at ticks 1, 4 and 9 (the second delivered
	// and applied) and, after each, at tick+1, one group event of every
	// kind: booked when booked is set, else emitted. stats keeps the
	// ledger's summary from the start, so what booking touches is
	// compared too.
	run := func(booked, stats bool) (*Trace, *Ledger) {
		l := NewLedger()
		if stats {
			l.Stats()
		}
		tr := NewTrace(l)
		// The last copy is in a later chunk of the tables than copy 0,
		// which the group events touch.
		ids := []ID{1, 2, 3*tableChunk + 1}
		for i, at := range []Tick{1, 4, 9} {
			id := ids[i]
			tr.Emit(Event{Tick: at, Kind: KindSent, Where: "log:orders", Msg: id, Key: "k"})
			if i == 1 {
				tr.Emit(Event{Tick: at, Kind: KindPolled, Where: "log:orders", Consumer: "g", Msg: id, HasPos: true})
				tr.Emit(Event{Tick: at, Kind: KindProcessed, Where: "log:orders", Consumer: "g", Msg: id})
			}
			for _, b := range books {
				if booked {
					if !b.book(tr, at+1) {
						t.Fatalf("%s not booked with the ledger the only sink", b.kind)
					}
					continue
				}
				tr.Emit(Event{Tick: at + 1, Kind: b.kind, Where: "log:orders", Actor: "m", Consumer: "g", HasPos: b.kind == KindCommitted, Offset: 3})
			}
		}
		return tr, l
	}
	for _, stats := range []bool{false, true} {
		bt, bl := run(true, stats)
		et, el := run(false, stats)
		if bt.Len() != et.Len() || bl.LastTick() != el.LastTick() || bl.events != el.events {
			t.Fatalf("stats %v: booked %d events (%d folded) to tick %d, emitted %d (%d) to tick %d",
				stats, bt.Len(), bl.events, bl.LastTick(), et.Len(), el.events, el.LastTick())
		}
		if bd, ed := bl.Dump(), el.Dump(); bd != ed {
			t.Fatalf("stats %v: dumps differ:\n%s\nwant\n%s", stats, bd, ed)
		}
		if !reflect.DeepEqual(bl.stats, el.stats) {
			t.Fatalf("stats %v: kept stats differ: %+v, want %+v", stats, bl.stats, el.stats)
		}
		if bs, es := bl.Stats(), el.Stats(); !reflect.DeepEqual(bs, es) {
			t.Fatalf("stats %v: stats %+v, want %+v", stats, bs, es)
		}
	}

	// A listening sink, or no ledger, refuses the typed form and changes
	// nothing.
	l := NewLedger()
	listened := NewTrace(l, SinkFunc(func(*Event) {}))
	bare := NewTrace()
	var none *Trace
	for _, b := range books {
		for _, tr := range []*Trace{listened, bare, none} {
			if b.book(tr, 5) {
				t.Fatalf("%s booked with a sink listening or no ledger", b.kind)
			}
		}
	}
	if listened.Len() != 0 || bare.Len() != 0 || l.LastTick() != 0 {
		t.Fatalf("a refused booking numbered %d and %d events, last tick %d", listened.Len(), bare.Len(), l.LastTick())
	}
}
