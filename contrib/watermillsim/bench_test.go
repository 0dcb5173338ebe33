package watermillsim_test

import (
	"context"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
)

// roundTrip publishes one message per iteration and receives and acks it
// through sub: the cost a handler test pays per message.
func roundTrip(b *testing.B, pub message.Publisher, sub message.Subscriber) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := sub.Subscribe(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte("payload")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := pub.Publish("bench", message.NewMessage(watermill.NewUUID(), payload)); err != nil {
			b.Fatal(err)
		}
		m := <-ch
		m.Ack()
	}
	b.StopTimer()
	_ = sub.Close()
}

// BenchmarkGoChannelRoundTrip is the baseline: Watermill's own in-memory
// GoChannel doing the same work.
func BenchmarkGoChannelRoundTrip(b *testing.B) {
	g := gochannel.NewGoChannel(gochannel.Config{}, watermill.NopLogger{})
	defer g.Close()
	roundTrip(b, g, g)
}

func benchKind(b *testing.B, k watermillsim.Kind) {
	br, err := watermillsim.New(watermillsim.Config{Kind: k})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	sub, err := br.Subscriber(watermillsim.SubscriberConfig{})
	if err != nil {
		b.Fatal(err)
	}
	roundTrip(b, br.Publisher(), sub)
}

func BenchmarkQueueRoundTrip(b *testing.B)  { benchKind(b, watermillsim.KindQueue) }
func BenchmarkPubSubRoundTrip(b *testing.B) { benchKind(b, watermillsim.KindPubSub) }
func BenchmarkLogRoundTrip(b *testing.B)    { benchKind(b, watermillsim.KindLog) }
