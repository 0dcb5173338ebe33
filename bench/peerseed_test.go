package bench

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// A peer seed is a brokerlab seed's work done by another in-process
// broker: set it up, produce 100 messages, consume and acknowledge every
// one, tear it down. No faults, no checks: the peers have neither. Every
// wait is bounded (peerWait), so a broken peer fails the benchmark instead
// of hanging it, and nothing listens on a network port: NATS is reached
// through its in-process connection.

// peerWait bounds every wait of a peer seed.
const peerWait = 10 * time.Second

// peerBody is the body of every peer message, a brokerlab default body's
// size.
var peerBody = []byte("payload-0000000")

// goChannelSeed is one seed on watermill's gochannel: a pub/sub, one
// subscription, 100 times publish, receive and ack (as
// BenchmarkPeerGoChannelPublishAck does one at a time), close.
func goChannelSeed(tb testing.TB) {
	ps := gochannel.NewGoChannel(gochannel.Config{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), peerWait)
	defer cancel()
	ch, err := ps.Subscribe(ctx, "orders")
	if err != nil {
		tb.Fatal(err)
	}
	for i := range sweepMessages {
		if err := ps.Publish("orders", message.NewMessage(strconv.Itoa(i), peerBody)); err != nil {
			tb.Fatal(err)
		}
		select {
		case m := <-ch:
			m.Ack()
		case <-ctx.Done():
			tb.Fatal("gochannel: timed out")
		}
	}
	if err := ps.Close(); err != nil {
		tb.Fatal(err)
	}
}

// natsServer starts an embedded NATS server that listens on no port, with
// JetStream (memory storage only, its store directory under dir) when js
// is set, and connects to it in-process.
func natsServer(tb testing.TB, js bool, dir string) (*server.Server, *nats.Conn) {
	opts := &server.Options{DontListen: true, NoLog: true, NoSigs: true, JetStream: js, StoreDir: dir, JetStreamMaxStore: 1}
	ns, err := server.NewServer(opts)
	if err != nil {
		tb.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(peerWait) {
		tb.Fatal("nats: server not ready")
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Timeout(peerWait))
	if err != nil {
		tb.Fatal(err)
	}
	return ns, nc
}

func natsShutdown(ns *server.Server, nc *nats.Conn) {
	nc.Close()
	ns.Shutdown()
	ns.WaitForShutdown()
}

// natsCoreSeed is one seed on core NATS: a server, a connection, a
// synchronous subscription, 100 publishes, 100 messages received (core
// NATS has no acknowledgement), shutdown.
func natsCoreSeed(tb testing.TB) {
	ns, nc := natsServer(tb, false, "")
	defer natsShutdown(ns, nc)
	sub, err := nc.SubscribeSync("orders")
	if err != nil {
		tb.Fatal(err)
	}
	for range sweepMessages {
		if err := nc.Publish("orders", peerBody); err != nil {
			tb.Fatal(err)
		}
	}
	for range sweepMessages {
		if _, err := sub.NextMsg(peerWait); err != nil {
			tb.Fatal(err)
		}
	}
}

// natsJetStreamSeed is one seed on NATS JetStream: a server with
// JetStream, a stream in memory storage, 100 publishes each confirmed by
// the stream, a durable pull consumer fetching them in batches and
// acknowledging each (the last one synchronously, so every ack has
// arrived), shutdown.
func natsJetStreamSeed(tb testing.TB) {
	dir, err := os.MkdirTemp("", "brokerlab-bench-js-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ns, nc := natsServer(tb, true, dir)
	defer natsShutdown(ns, nc)
	js, err := nc.JetStream(nats.MaxWait(peerWait))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "ORDERS", Subjects: []string{"orders"}, Storage: nats.MemoryStorage}); err != nil {
		tb.Fatal(err)
	}
	for range sweepMessages {
		if _, err := js.Publish("orders", peerBody); err != nil {
			tb.Fatal(err)
		}
	}
	sub, err := js.PullSubscribe("orders", "billing", nats.AckExplicit())
	if err != nil {
		tb.Fatal(err)
	}
	for got := 0; got < sweepMessages; {
		msgs, err := sub.Fetch(sweepMessages-got, nats.MaxWait(peerWait))
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range msgs {
			got++
			ack := m.Ack
			if got == sweepMessages {
				ack = func(...nats.AckOpt) error { return m.AckSync() }
			}
			if err := ack(); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// BenchmarkPeerSeed runs one peer seed per operation; compare cpu-ns/op
// with BenchmarkSweepQueue/api, a brokerlab seed of the same size (which
// also draws faults and runs checks).
func BenchmarkPeerSeed(b *testing.B) {
	for _, p := range []struct {
		name string
		seed func(testing.TB)
	}{{"gochannel", goChannelSeed}, {"nats-core", natsCoreSeed}, {"nats-jetstream", natsJetStreamSeed}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				p.seed(b)
			}
			reportCPU(b, cpu)
		})
	}
}

// Every peer seed completes: 100 messages in, 100 out.
func TestPeerSeeds(t *testing.T) {
	goChannelSeed(t)
	natsCoreSeed(t)
	natsJetStreamSeed(t)
}
