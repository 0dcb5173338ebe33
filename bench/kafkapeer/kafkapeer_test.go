package kafkapeer

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	seedMessages = 100
	peerWait     = 10 * time.Second
)

var peerBody = []byte("payload-0000000")

// cpuTime returns the process's user plus system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// kfakeSeed is one seed on kfake with franz-go: a one-broker fake cluster
// on a loopback port with a 6-partition topic, a producer client and a
// consumer-group client, 100 records produced and flushed, polled until
// all 100 arrived, their offsets committed synchronously (Kafka's
// acknowledgement), both clients closed, the cluster closed. Every wait is
// bounded by peerWait.
func kfakeSeed(tb testing.TB) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "orders"), kfake.Ports(0))
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), peerWait)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		tb.Fatal(err)
	}
	defer prod.Close()
	for i := range seedMessages {
		prod.Produce(ctx, &kgo.Record{Key: []byte("order-" + strconv.Itoa(i%10)), Value: peerBody}, func(_ *kgo.Record, err error) {
			if err != nil {
				tb.Error(err)
			}
		})
	}
	if err := prod.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		tb.Fatal(err)
	}
	defer cons.Close()
	for got := 0; got < seedMessages; {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			tb.Fatalf("kfake: %d of %d records: %v", got, seedMessages, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { tb.Fatal(err) })
		got += fs.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPeerSeed/kfake runs one kfake seed per operation and reports
// cpu-ns/op beside wall time.
func BenchmarkPeerSeed(b *testing.B) {
	b.Run("kfake", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime()
		for b.Loop() {
			kfakeSeed(b)
		}
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		}
	})
}

// A kfake seed completes: 100 records in, 100 polled and committed.
func TestKfakeSeed(t *testing.T) { kfakeSeed(t) }
