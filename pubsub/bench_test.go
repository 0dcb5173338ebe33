package pubsub

import (
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

const (
	benchSubs  = 16
	benchBatch = 64 // publishes between two subscriber steps
)

func benchMessage() sim.Message {
	return sim.Message{ID: 1, Key: "order-1", Body: make([]byte, 64), Headers: sim.Headers{Type: "orders.created", CorrelationID: "c1"}, Created: 1}
}

// BenchmarkPubSubFanout16 publishes to 16 subscribers of a wildcard pattern
// and lets them drain their buffers every 64 publishes (one world tick):
// routing, 16 buffer copies with their trace events, and 16 handler calls,
// each applying an effect, per operation. The world's ledger folds every
// event, as it always does; no other sink listens.
func BenchmarkPubSubFanout16(b *testing.B) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	br, err := New(w, Config{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchSubs {
		if _, err := br.Subscribe(SubscriberConfig{Name: "s" + strconv.Itoa(i), Pattern: "orders.>", Buffer: benchBatch}); err != nil {
			b.Fatal(err)
		}
	}
	env := w.Env()
	m := benchMessage()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.ID = env.IDs.Next()
		if err := br.PublishTo("orders.created", m); err != nil {
			b.Fatal(err)
		}
		if i%benchBatch == benchBatch-1 {
			w.Tick()
		}
	}
	b.StopTimer()
	if got := br.Metrics().Delivered; got != benchSubs*b.N {
		b.Fatalf("delivered %d, want %d", got, benchSubs*b.N)
	}
}

// BenchmarkFanoutLoopBaseline is the simplest structure doing the same
// fan-out: copy each message into 16 slices, emptied every 64 messages.
func BenchmarkFanoutLoopBaseline(b *testing.B) {
	bufs := make([][]sim.Message, benchSubs)
	for i := range bufs {
		bufs[i] = make([]sim.Message, 0, benchBatch)
	}
	m := benchMessage()
	handled := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range bufs {
			bufs[j] = append(bufs[j], m)
		}
		if i%benchBatch == benchBatch-1 {
			for j := range bufs {
				for k := range bufs[j] {
					if bufs[j][k].ID != 0 {
						handled++
					}
				}
				bufs[j] = bufs[j][:0]
			}
		}
	}
	b.StopTimer()
	if handled > benchSubs*b.N {
		b.Fatal("impossible count")
	}
}
