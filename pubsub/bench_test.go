package pubsub

import (
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
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
func BenchmarkPubSubFanout16(b *testing.B) { benchFanout(b, true, nil) }

// BenchmarkPubSubFanout16Model is BenchmarkPubSubFanout16 without the
// ledger: the world's trace has no sink, so events are numbered but not
// built, and what is left is the model's own share of a fan-out.
func BenchmarkPubSubFanout16Model(b *testing.B) { benchFanout(b, false, nil) }

// BenchmarkPubSubFanout16Unarmed is BenchmarkPubSubFanout16Model under a
// fault injector whose one rule (broker.unavailable, for a window that
// never comes) no copy consults: the copies take the same path as without
// an injector, and each publish pays one consultation.
func BenchmarkPubSubFanout16Unarmed(b *testing.B) {
	benchFanout(b, false, []faults.Rule{{Name: "later", Point: faults.BrokerUnavailable, From: 1 << 40}})
}

func benchFanout(b *testing.B, ledger bool, rules []faults.Rule) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if !ledger {
		w.Env().Trace = sim.NewTrace()
	}
	var in *faults.Injector
	if rules != nil {
		if in, err = faults.New(w, faults.Config{Plan: faults.Plan{Rules: rules}}); err != nil {
			b.Fatal(err)
		}
	}
	br, err := New(w, Config{Name: "bench", Faults: in})
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
	if got := br.Metrics().Handled; got < benchSubs*(b.N-benchBatch) {
		b.Fatalf("handled %d, want at least %d", got, benchSubs*(b.N-benchBatch))
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
