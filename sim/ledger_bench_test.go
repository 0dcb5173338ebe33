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
	cpu := cpuTime()
	for b.Loop() {
		l := NewLedger()
		for i := range evs {
			l.Emit(&evs[i])
		}
		if err := Check(l, NoLoss(), AtLeastOnce("workers")); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkLedgerFanout16 is the ledger's share of bench's
// BenchmarkPubSubFanout16: per operation a copy is published and
// delivered to 16 subscribers, and every 64 operations each subscriber
// applies the 64 copies it buffered. It measures the fold alone, per
// publish of 16 copies, over a ledger that grows with b.N; plain is the
// same with packing off.
func BenchmarkLedgerFanout16(b *testing.B) {
	b.Run("packed", func(b *testing.B) { ledgerFanout16(b, false) })
	b.Run("plain", func(b *testing.B) { ledgerFanout16(b, true) })
}

func ledgerFanout16(b *testing.B, noPack bool) {
	const subs, batch = 16, 64
	names := make([]string, subs)
	for i := range names {
		names[i] = "s" + strconv.Itoa(i)
	}
	var pub []Event  // one batch: published and delivered, per copy
	var proc []Event // then processed, per subscriber and copy
	for k := range batch {
		pub = append(pub, Event{Kind: KindPublished, Where: "bench", Msg: ID(k), Key: "order-1", Type: "orders.created"})
		for _, s := range names {
			pub = append(pub, Event{Kind: KindDelivered, Where: "bench", Actor: s, Consumer: s, Msg: ID(k), Key: "order-1", Attempt: 1})
		}
	}
	for _, s := range names {
		for k := range batch {
			proc = append(proc, Event{Kind: KindProcessed, Where: "bench", Actor: s, Consumer: s, Msg: ID(k), Key: "order-1", Attempt: 1})
		}
	}
	l := NewLedger()
	if noPack {
		l = newPlainLedger()
	}
	b.ReportAllocs()
	var base ID
	tick := Tick(1)
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		if i%batch != 0 {
			continue
		}
		for j := range pub {
			e := pub[j]
			e.Msg += base + 1
			e.Tick = tick
			l.Emit(&e)
		}
		tick++
		for j := range proc {
			e := proc[j]
			e.Msg += base + 1
			e.Tick = tick
			l.Emit(&e)
		}
		base += batch
	}
	reportCPU(b, cpu)
}
