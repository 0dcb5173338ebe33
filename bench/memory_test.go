package bench

import (
	"runtime"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

const (
	memMessages = 100_000
	memBody     = 64
)

// heapPerMessage runs fill, which must create and keep n messages with
// memBody-byte bodies, and returns the heap bytes it left live per message
// (bodies included), from runtime.MemStats after a collection.
func heapPerMessage(n int, fill func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// reportResident reports bytes per resident message and the overhead beyond
// the body.
func reportResident(b *testing.B, perMsg float64) {
	b.ReportMetric(perMsg, "B/msg")
	b.ReportMetric(perMsg-memBody, "overhead-B/msg")
}

// memWorld returns a world and its environment. Every world folds its
// trace into a ledger; without the ledger (on false) the world's trace is
// replaced by one with no sink before any model is built, as no model can
// do, so the model's own bytes are measured alone.
func memWorld(on bool) (*sim.World, *sim.Env) {
	w, _ := sim.New(sim.Config{Seed: 1})
	if !on {
		w.Env().Trace = sim.NewTrace()
	}
	return w, w.Env()
}

func ledgerName(on bool) string {
	if on {
		return "ledger"
	}
	return "no-ledger"
}

// BenchmarkResidentQueue reports the heap bytes per message resident in a
// queue: memMessages messages with 64-byte bodies and a shared key, sent
// and never received. "ledger" counts the ground-truth ledger too, as every
// simulation keeps it; "no-ledger" is the queue alone (see memWorld).
func BenchmarkResidentQueue(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(ledgerName(on), func(b *testing.B) {
			var per float64
			for b.Loop() {
				per = heapPerMessage(memMessages, func() any {
					w, env := memWorld(on)
					q, _ := queue.New(w, queue.Config{Name: "mem"})
					for range memMessages {
						if err := q.Send(env.NewMessage("kunde-1", make([]byte, memBody), sim.Headers{}), 0); err != nil {
							b.Fatal(err)
						}
					}
					return q
				})
			}
			reportResident(b, per)
		})
	}
}

// BenchmarkResidentLog reports the heap bytes per record resident in a
// 4-partition log (no retention, no group), as BenchmarkResidentQueue does
// for the queue.
func BenchmarkResidentLog(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(ledgerName(on), func(b *testing.B) {
			var per float64
			for b.Loop() {
				per = heapPerMessage(memMessages, func() any {
					w, env := memWorld(on)
					t, _ := eventlog.New(w, eventlog.Config{Name: "mem", Partitions: 4})
					for range memMessages {
						if _, err := t.Produce(env.NewMessage("kunde-1", make([]byte, memBody), sim.Headers{})); err != nil {
							b.Fatal(err)
						}
					}
					return t
				})
			}
			reportResident(b, per)
		})
	}
}

// settledMessages is the size of the run BenchmarkLedgerSettled measures.
const settledMessages = 200_000

// BenchmarkLedgerSettled reports the heap bytes the ledger keeps per
// settled message after a whole run (the generated scenario of
// BenchmarkWholeRun1M with settledMessages messages): the run's models are
// dropped and the ledger alone is kept, as a long run keeps it for its
// checks. The target is at most 64 B/msg.
func BenchmarkLedgerSettled(b *testing.B) {
	var per float64
	for b.Loop() {
		per = heapPerMessage(settledMessages, func() any {
			r := newWholeRun(b, settledMessages)
			r.run(b)
			if got := r.settled(); got < settledMessages {
				b.Fatalf("%d of %d messages settled", got, settledMessages)
			}
			return r.w.Ledger()
		})
	}
	b.ReportMetric(per, "B/msg")
}
