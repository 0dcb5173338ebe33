package watermillsim_test

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/brokerlab/brokerlab/contrib/watermillsim"
	"github.com/brokerlab/brokerlab/sim"
)

// A work queue behind Watermill: publish, receive, ack, and let the
// ledger judge the handler. The Ack records the handler's effect (a
// handler that recognises a duplicate calls Broker.Skip before acking);
// closing the subscriber settles the Acks made before it.
func Example() {
	b, _ := watermillsim.New(watermillsim.Config{Kind: watermillsim.KindQueue, Seed: 1})
	defer b.Close()

	_ = b.Publisher().Publish("orders", message.NewMessage("order-1", []byte("42")))

	sub, _ := b.Subscriber(watermillsim.SubscriberConfig{Name: "worker"})
	msgs, _ := sub.Subscribe(context.Background(), "orders")
	msg := <-msgs
	fmt.Println(msg.UUID, string(msg.Payload))
	msg.Ack() // the effect took hold
	_ = sub.Close()

	fmt.Println(sub.Consumer("orders"), b.Check(sim.ExactlyOnce(sub.Consumer("orders")), sim.NoLoss()))
	// Output:
	// order-1 42
	// orders <nil>
}

// Consumer groups on the log: each group reads every record.
func Example_log() {
	b, _ := watermillsim.New(watermillsim.Config{Kind: watermillsim.KindLog})
	defer b.Close()
	_ = b.Publisher().Publish("events", message.NewMessage("e1", nil), message.NewMessage("e2", nil))

	for _, group := range []string{"billing", "audit"} {
		sub, _ := b.Subscriber(watermillsim.SubscriberConfig{Group: group})
		msgs, _ := sub.Subscribe(context.Background(), "events")
		for range 2 {
			m := <-msgs
			fmt.Println(group, m.UUID)
			m.Ack()
		}
		_ = sub.Close()
		gm, _ := b.LogMetrics("events", group)
		fmt.Println(group, "committed", gm.Partitions[0].Committed)
	}
	fmt.Println(b.Check(sim.ExactlyOnce("billing"), sim.ExactlyOnce("audit")))
	// Output:
	// billing e1
	// billing e2
	// billing committed 2
	// audit e1
	// audit e2
	// audit committed 2
	// <nil>
}
