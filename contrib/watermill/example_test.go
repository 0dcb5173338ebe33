package watermill_test

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"

	wm "github.com/brokerlab/brokerlab/contrib/watermill"
	"github.com/brokerlab/brokerlab/sim"
)

// A work queue behind Watermill: publish, receive, book the effect, ack,
// and let the ledger judge the handler.
func Example() {
	b, _ := wm.New(wm.Config{Kind: wm.KindQueue, Seed: 1})
	defer b.Close()

	_ = b.Publisher().Publish("orders", message.NewMessage("order-1", []byte("42")))

	sub, _ := b.Subscriber(wm.SubscriberConfig{Name: "worker"})
	defer sub.Close()
	msgs, _ := sub.Subscribe(context.Background(), "orders")
	msg := <-msgs
	fmt.Println(msg.UUID, string(msg.Payload))
	_ = b.Applied(msg) // the handler's effect took hold
	msg.Ack()

	fmt.Println(sub.Consumer("orders"), b.Check(sim.ExactlyOnce(sub.Consumer("orders"))))
	// Output:
	// order-1 42
	// orders <nil>
}

// Consumer groups on the log: each group reads every record.
func Example_log() {
	b, _ := wm.New(wm.Config{Kind: wm.KindLog})
	defer b.Close()
	_ = b.Publisher().Publish("events", message.NewMessage("e1", nil), message.NewMessage("e2", nil))

	for _, group := range []string{"billing", "audit"} {
		sub, _ := b.Subscriber(wm.SubscriberConfig{Group: group})
		msgs, _ := sub.Subscribe(context.Background(), "events")
		for range 2 {
			m := <-msgs
			fmt.Println(group, m.UUID)
			m.Ack()
		}
		_ = sub.Close()
	}
	// Output:
	// billing e1
	// billing e2
	// audit e1
	// audit e2
}
