package sim

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomEvent returns an event of a kind the ledger folds, about one of n
// copies, with random consumers, origins, causes and keys: hostile traces
// included (unknown copies, origins that are not older, repeats).
func randomEvent(r *rand.Rand, n int, tick Tick) Event {
	kinds := []Kind{KindSent, KindProduced, KindPublished, KindStored, KindRedriven, KindDeduplicated,
		KindReceived, KindRedelivered, KindPolled, KindDelivered, KindProcessed, KindSkipped, KindFailed,
		KindDuplicated, KindAcked, KindDeadLettered, KindExpired, KindPurged, KindMissed, KindDropped,
		KindLost, KindPhantom, KindSubscribed, KindAction}
	consumers := []string{"", "billing", "audit", "mail"}
	causes := []Cause{"", CauseRetention, CauseDualWrite, CauseOverflow, CauseDisconnect}
	wheres := []string{"queue:orders", "log:orders", "topic:prices", "outbox:shop"}
	e := Event{Tick: tick, Kind: kinds[r.IntN(len(kinds))], Msg: ID(1 + r.IntN(n)),
		Consumer: consumers[r.IntN(len(consumers))], Where: wheres[r.IntN(len(wheres))],
		Key: "k" + string(rune('a'+r.IntN(5)))}
	if r.IntN(4) == 0 {
		e.Origin = ID(r.IntN(n + 1))
	}
	if e.Kind == KindLost || e.Kind == KindExpired {
		e.Cause = causes[r.IntN(len(causes))]
	}
	if e.Kind == KindSubscribed && r.IntN(2) == 0 {
		e.Detail = "earliest"
	}
	return e
}

// TestStatsKeptEqualsTheScan folds random traces and compares the summary
// the ledger keeps with a scan over every record, outcome and loss, at
// random points of every trace, so every chunk is refolded after every
// kind of change (a new lineage, a loss before any consumer, a
// subscription reading the log from its start).
func TestStatsKeptEqualsTheScan(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1))
		l := NewLedger()
		n := 50 + r.IntN(400) // across several chunks of IDs
		events := 200 + r.IntN(3000)
		asked := false
		for i := range events {
			e := randomEvent(r, n, Tick(i/7))
			l.Emit(&e)
			if r.IntN(40) == 0 || i == events-1 {
				got, want := l.Stats(), l.statsByScan()
				asked = true
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, after event %d (%+v):\nkept %+v\nscan %+v", seed, i, e, got, want)
				}
			}
		}
		if !asked {
			t.Fatalf("seed %d: never compared", seed)
		}
	}
}

// TestStatsKeptAfterAnEarliestSubscription: a group that reads a log
// from its start expects every record still in it, in every chunk, though
// its subscription event names none of them.
func TestStatsKeptAfterAnEarliestSubscription(t *testing.T) {
	l := NewLedger()
	for i := 1; i <= 3*tableChunk; i++ {
		l.Emit(&Event{Tick: 1, Kind: KindProduced, Where: "log:orders", Msg: ID(i), Key: "k"})
	}
	if got := l.Stats(); got.Pending != 3*tableChunk || got.Lost != 0 {
		t.Fatalf("before: %+v", got)
	}
	l.Emit(&Event{Tick: 2, Kind: KindSubscribed, Where: "log:orders", Consumer: "billing", Detail: "earliest"})
	l.Emit(&Event{Tick: 3, Kind: KindExpired, Where: "log:orders", Msg: 1})
	got, want := l.Stats(), l.statsByScan()
	if !reflect.DeepEqual(got, want) || got.Lost != 1 {
		t.Fatalf("kept %+v\nscan %+v", got, want)
	}
	l.Emit(&Event{Tick: 4, Kind: KindPurged, Where: "log:orders", Msg: 2*tableChunk + 5})
	if got, want := l.Stats(), l.statsByScan(); !reflect.DeepEqual(got, want) || got.Lost != 2 {
		t.Fatalf("kept %+v\nscan %+v", got, want)
	}
}

// A dead letter whose broker duplicate is acked after the redrive was
// redriven all the same: Stats.Redriven counts the copies ever redriven,
// not those whose latest state is redriven, so the ack does not hide it
// and "0 in a DLQ" is never printed without the redrive beside it.
func TestStatsRedrivenSurvivesAnAckOfADuplicate(t *testing.T) {
	l := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:orders", Consumer: "billing", Msg: 1, Key: "order-1"},
		Event{Tick: 2, Kind: KindDuplicated, Where: "queue:orders", Msg: 1},
		Event{Tick: 2, Kind: KindReceived, Consumer: "billing", Msg: 1},
		Event{Tick: 2, Kind: KindFailed, Consumer: "billing", Msg: 1},
		Event{Tick: 3, Kind: KindDeadLettered, Where: "queue:orders", Msg: 1},
		Event{Tick: 4, Kind: KindRedriven, Where: "queue:orders", Consumer: "billing", Msg: 2, Origin: 1, Key: "order-1"},
	)
	if s := l.Stats(); s.Redriven != 1 || s.DeadLettered != 0 {
		t.Fatalf("after the redrive: %+v", s)
	}
	tr := NewTrace(l)
	for _, e := range []Event{
		{Tick: 5, Kind: KindReceived, Consumer: "billing", Msg: 1},
		{Tick: 5, Kind: KindProcessed, Consumer: "billing", Msg: 1},
		{Tick: 5, Kind: KindAcked, Consumer: "billing", Msg: 1},
	} {
		tr.Emit(e)
	}
	if r, _ := l.Record(1); r.State == StateRedriven {
		t.Fatalf("the ack of the duplicate left m1 %v; the test no longer shows the case", r.State)
	}
	if s, scan := l.Stats(), l.statsByScan(); s.Redriven != 1 || scan.Redriven != 1 {
		t.Fatalf("after the duplicate's ack: kept %d, scan %d redriven, want 1", s.Redriven, scan.Redriven)
	}
}

// A hostile trace cannot make Stats.Redriven miss a redrive or fall: a
// redriven event whose new copy is not above its origin (so no lineage
// link is made), and a second redriven event naming no new copy, leave
// the copy counted once, by the kept summary and by the scan alike.
func TestStatsRedrivenOnAHostileTrace(t *testing.T) {
	low := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "c", Msg: 5, Key: "k"},
		Event{Tick: 2, Kind: KindDeadLettered, Where: "queue:q", Msg: 5},
		Event{Tick: 3, Kind: KindRedriven, Where: "queue:q", Consumer: "c", Msg: 3, Origin: 5, Key: "k"},
	)
	if ids := low.linkedIDs(); len(ids) != 0 {
		t.Fatalf("a carrier below its origin linked %v; the test no longer shows the case", ids)
	}
	if s, scan := low.Stats(), low.statsByScan(); s.Redriven != 1 || scan.Redriven != 1 {
		t.Errorf("a carrier below its origin: kept %d, scan %d redriven, want 1", s.Redriven, scan.Redriven)
	}
	again := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "c", Msg: 1, Key: "k"},
		Event{Tick: 2, Kind: KindDeadLettered, Where: "queue:q", Msg: 1},
		Event{Tick: 3, Kind: KindRedriven, Where: "queue:q", Consumer: "c", Msg: 2, Origin: 1, Key: "k"},
	)
	before := again.Stats().Redriven
	NewTrace(again).Emit(Event{Tick: 4, Kind: KindRedriven, Where: "queue:q", Consumer: "c", Origin: 1, Key: "k"})
	if s, scan := again.Stats(), again.statsByScan(); before != 1 || s.Redriven != 1 || scan.Redriven != 1 {
		t.Errorf("a second redrive naming no copy: before %d, kept %d, scan %d redriven, want 1", before, s.Redriven, scan.Redriven)
	}
}
