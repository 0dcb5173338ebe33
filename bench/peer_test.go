package bench

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"

	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// BenchmarkQueueLifecycle is queue.BenchmarkQueueLifecycle built with the
// public API, so the peer and the whole run compare with it in the same
// process: create a message (ledger on), send, receive, ack, with the
// trace writing its text form to io.Discard.
func BenchmarkQueueLifecycle(b *testing.B) { queueLifecycle(b, true) }

// BenchmarkQueueLifecycleHeadless is the same lifecycle with no trace sink
// but the ledger, as in a headless run: the closest to the work of the peer,
// which keeps no trace.
func BenchmarkQueueLifecycleHeadless(b *testing.B) { queueLifecycle(b, false) }

func queueLifecycle(b *testing.B, text bool) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	env := w.Env()
	if text {
		w.Trace().Attach(sim.NewTextWriter(io.Discard))
	}
	q, err := queue.New(w, queue.Config{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte("payload")
	var buf []queue.Delivery
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		m := env.NewMessage("k", body, sim.Headers{})
		if err := q.Send(m, 0); err != nil {
			b.Fatal(err)
		}
		buf, err = q.AppendReceive(buf[:0], "w", 1)
		if err != nil || len(buf) != 1 {
			b.Fatal(err)
		}
		if err := q.Ack(buf[0].Receipt); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkPeerGoChannelPublishAck does the same publish-and-ack work with
// watermill's in-memory gochannel pub/sub: publish one message, receive it
// from the subscription, ack it. The UUID is a counter, so the peer is not
// charged for random UUIDs.
func BenchmarkPeerGoChannelPublishAck(b *testing.B) {
	ps := gochannel.NewGoChannel(gochannel.Config{}, nil)
	defer ps.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := ps.Subscribe(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	body := []byte("payload")
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		m := message.NewMessage(strconv.Itoa(i), body)
		m.Metadata.Set("key", "k")
		if err := ps.Publish("bench", m); err != nil {
			b.Fatal(err)
		}
		got := <-ch
		got.Ack()
	}
	reportCPU(b, cpu)
}
