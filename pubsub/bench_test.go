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
// and lets them drain their buffers every 64 publishes: routing, 16 buffer
// copies with their trace events, and 16 handler calls per operation. The
// ledger is left out (its cost is measured in sim); the trace numbers every
// event but has no sink.
func BenchmarkPubSubFanout16(b *testing.B) {
	env := &sim.Env{Trace: sim.NewTrace()}
	br, err := New(Config{Name: "bench", Env: env})
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchSubs {
		if _, err := br.Subscribe(SubscriberConfig{Name: "s" + strconv.Itoa(i), Pattern: "orders.>", Buffer: benchBatch}); err != nil {
			b.Fatal(err)
		}
	}
	m := benchMessage()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := br.PublishTo("orders.created", m); err != nil {
			b.Fatal(err)
		}
		if i%benchBatch == benchBatch-1 {
			br.StepSubscribers(env.Clock.Advance())
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
