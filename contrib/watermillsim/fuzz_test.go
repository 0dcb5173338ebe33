package watermillsim_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
)

// FuzzPublishReceive publishes untrusted topic names, UUIDs, payloads and
// metadata: every kind either refuses the topic with an error or delivers
// the message unchanged.
func FuzzPublishReceive(f *testing.F) {
	f.Add("orders", "u1", []byte("body"), "k", "v")
	f.Add("a.b.c", "", []byte{}, "", "")
	f.Add("orders.*", "u2", []byte{0, 1}, "correlation_id", "c")
	f.Add("has space", "u3", []byte(nil), "x", "y")
	f.Add("", "u4", []byte("x"), "k", "v")
	f.Fuzz(func(t *testing.T, topic, uuid string, payload []byte, key, value string) {
		for _, k := range []watermillsim.Kind{watermillsim.KindQueue, watermillsim.KindPubSub, watermillsim.KindLog} {
			b, err := watermillsim.New(watermillsim.Config{Kind: k, KeyMetadata: "k"})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			sub, err := b.Subscriber(watermillsim.SubscriberConfig{})
			if err != nil {
				t.Fatal(err)
			}
			ch, err := sub.Subscribe(context.Background(), topic)
			if err != nil {
				_ = sub.Close()
				continue // refused topic
			}
			in := message.NewMessage(uuid, payload)
			in.Metadata.Set(key, value)
			if err := b.Publisher().Publish(topic, in); err != nil {
				t.Fatalf("%v: subscribed to %q but cannot publish: %v", k, topic, err)
			}
			select {
			case out := <-ch:
				if out.UUID != uuid || !bytes.Equal(out.Payload, payload) || out.Metadata.Get(key) != value {
					t.Fatalf("%v: sent %q %q %q=%q, got %q %q %v", k, uuid, payload, key, value, out.UUID, out.Payload, out.Metadata)
				}
				out.Ack()
			case <-time.After(10 * time.Second):
				t.Fatalf("%v: nothing delivered on %q", k, topic)
			}
			_ = sub.Close()
		}
	})
}
