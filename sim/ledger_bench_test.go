package sim

import (
	"strconv"
	"testing"
)

// seedEvents returns the events a sweep seed's ledger folds: n messages
// over 10 keys sent to a queue routed to one consumer, each received,
// applied and acked, with about 5% of the handlings failing once and
// redelivered and 2% duplicated by the broker, the shape of the queue
// sweep in bench/.
func seedEvents(n int) []Event {
	r := NewStream(1, "seed")
	var evs []Event
	const where, consumer = "queue:orders", "workers"
	keys := make([]string, 10)
	for i := range keys {
		keys[i] = "order-" + strconv.Itoa(i)
	}
	for i := 1; i <= n; i++ {
		id, t := ID(i), Tick(i/10+1)
		key := keys[i%len(keys)]
		evs = append(evs, Event{Tick: t, Kind: KindSent, Where: where, Consumer: consumer, Msg: id, Key: key, Type: "order.created"})
		if r.Chance(0.02) {
			evs = append(evs, Event{Tick: t, Kind: KindDuplicated, Where: where, Msg: id, Key: key})
		}
		evs = append(evs, Event{Tick: t + 1, Kind: KindReceived, Where: where, Consumer: consumer, Actor: "workers-1", Msg: id, Key: key, Attempt: 1})
		if r.Chance(0.05) {
			evs = append(evs, Event{Tick: t + 1, Kind: KindFailed, Where: where, Consumer: consumer, Actor: "workers-1", Msg: id, Key: key, Attempt: 1},
				Event{Tick: t + 3, Kind: KindRedelivered, Where: where, Consumer: consumer, Actor: "workers-1", Msg: id, Key: key, Attempt: 2})
		}
		evs = append(evs, Event{Tick: t + 3, Kind: KindProcessed, Where: where, Consumer: consumer, Actor: "workers-1", Msg: id, Key: key},
			Event{Tick: t + 3, Kind: KindAcked, Where: where, Consumer: consumer, Actor: "workers-1", Msg: id, Key: key})
	}
	return evs
}

// BenchmarkLedgerSeed is the ledger's share of a sweep seed: a new ledger
// folds the events of 100 messages (seedEvents), then NoLoss and
// AtLeastOnce judge it. It measures the fold and the checks without any
// model.
func BenchmarkLedgerSeed(b *testing.B) {
	evs := seedEvents(100)
	b.ReportAllocs()
	for b.Loop() {
		l := NewLedger()
		for i := range evs {
			l.Emit(&evs[i])
		}
		if err := Check(l, NoLoss(), AtLeastOnce("workers")); err != nil {
			b.Fatal(err)
		}
	}
}
