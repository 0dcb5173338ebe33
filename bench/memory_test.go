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

func ledgerName(on bool) string {
	if on {
		return "ledger"
	}
	return "no-ledger"
}

// BenchmarkResidentQueue reports the heap bytes per message resident in a
// queue: memMessages messages with 64-byte bodies and a shared key, sent
// and never received. "ledger" counts the ground-truth ledger too, as every
// simulation keeps it; "no-ledger" is the queue alone.
func BenchmarkResidentQueue(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(ledgerName(on), func(b *testing.B) {
			var per float64
			for b.Loop() {
				per = heapPerMessage(memMessages, func() any {
					env := sim.NewEnv(1)
					if !on {
						env.Ledger = nil
					}
					q, _ := queue.New(queue.Config{Name: "mem", Env: env})
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
					env := sim.NewEnv(1)
					if !on {
						env.Ledger = nil
					}
					t, _ := eventlog.New(eventlog.Config{Name: "mem", Env: env, Partitions: 4})
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
