package watermillsim_test

import (
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
)

// newBroker starts a broker for one run of the universal suite; every
// publisher and subscriber the suite makes shares it, as clients of one
// broker do.
func newBroker(t *testing.T, cfg watermillsim.Config) *watermillsim.Broker {
	t.Helper()
	b, err := watermillsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func constructors(t *testing.T, b *watermillsim.Broker) (tests.PubSubConstructor, tests.ConsumerGroupPubSubConstructor) {
	plain := func(t *testing.T) (message.Publisher, message.Subscriber) {
		s, err := b.Subscriber(watermillsim.SubscriberConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return b.Publisher(), s
	}
	grouped := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		s, err := b.Subscriber(watermillsim.SubscriberConfig{Group: group})
		if err != nil {
			t.Fatal(err)
		}
		return b.Publisher(), s
	}
	return plain, grouped
}

func TestPubSubQueue(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindQueue, Seed: 1})
	plain, _ := constructors(t, b)
	tests.TestPubSub(t, tests.Features{
		// A queue has one logical consumer: every subscriber competes for
		// its messages, there are no independent groups.
		ConsumerGroups: false,
		// At-least-once: a message left unacked past its visibility
		// timeout is delivered again, and so is one the broker.duplicate
		// fault copies.
		ExactlyOnceDelivery: false,
		// The queue hands out messages in send order and a subscription
		// takes the next one only after the previous one was acked, so a
		// single subscriber sees send order; competing subscribers do not.
		GuaranteedOrder:                     true,
		GuaranteedOrderWithSingleSubscriber: true,
		// Messages stay in the broker until acked, whichever client
		// (constructor call) published or received them.
		Persistent:            true,
		RequireSingleInstance: false,
		// An acked message is deleted: a new subscriber never sees it.
		NewSubscriberReceivesOldMessages: false,
		// A delivered message's context derives from the Subscribe
		// context, not from the publisher's.
		ContextPreserved: false,
	}, plain, nil)
}

func TestPubSubEphemeral(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindPubSub, Seed: 1})
	plain, _ := constructors(t, b)
	tests.TestPubSub(t, tests.Features{
		// Ephemeral pub/sub has no groups: every connection gets a copy.
		ConsumerGroups: false,
		// Without injected faults each connection gets one copy of every
		// publish made while it is open (again only after a Nack).
		ExactlyOnceDelivery: true,
		// A connection delivers in publish order, one message at a time.
		GuaranteedOrder: true,
		// Nothing is stored: a publish reaches the connections open at
		// that moment and no later ones.
		Persistent: false,
		// The connection lives in the Subscriber instance (opened by
		// SubscribeInitialize); another instance is another subscriber
		// that missed what was published before it connected.
		RequireSingleInstance:            true,
		NewSubscriberReceivesOldMessages: false,
		ContextPreserved:                 false,
	}, plain, nil)
}

func TestPubSubLog(t *testing.T) {
	b := newBroker(t, watermillsim.Config{Kind: watermillsim.KindLog, Seed: 1})
	plain, grouped := constructors(t, b)
	tests.TestPubSub(t, tests.Features{
		// Subscribers with the same group share committed offsets; each
		// group reads every record.
		ConsumerGroups: true,
		// At-least-once: a record is committed only after its Ack, so a
		// Nack, a subscription that ends before the Ack or a lost commit
		// (broker.duplicate) delivers it again.
		ExactlyOnceDelivery: false,
		// One partition by default, read in offset order one record at a
		// time; several subscribers in private groups each read in order.
		GuaranteedOrder:                     true,
		GuaranteedOrderWithSingleSubscriber: false,
		// Records stay in the log (no retention configured).
		Persistent:            true,
		RequireSingleInstance: false,
		// A subscriber without a group gets a private group that starts at
		// the beginning of the log.
		NewSubscriberReceivesOldMessages: true,
		ContextPreserved:                 false,
	}, plain, grouped)
}
