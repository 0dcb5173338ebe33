package pubsub_test

import (
	"fmt"
	"os"

	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/sim"
)

// Example fans one publish out to three subscribers, then publishes again
// while one of them is offline: that subscriber misses the second message,
// by design, and the ledger says so.
func Example() {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	w.Trace().Attach(sim.NewTextWriter(os.Stdout))
	b, _ := pubsub.New(w, pubsub.Config{Name: "shop"})
	for _, name := range []string{"billing", "shipping", "mailer"} {
		_, _ = b.Subscribe(pubsub.SubscriberConfig{Name: name, Pattern: "orders.>"})
	}
	mailer, _ := b.Subscriber("mailer")

	w.At(1, "order placed", func() {
		_ = b.Publish(env.NewMessage("order-1", nil, sim.Headers{Type: "orders.placed"}))
	})
	w.At(2, "mailer disconnects", mailer.Disconnect)
	w.At(2, "order paid", func() {
		_ = b.PublishTo("orders.eu.paid", env.NewMessage("order-1", nil, sim.Headers{Type: "order.paid"}))
	})
	_ = w.Run(2)

	st := w.Ledger().Stats()
	fmt.Printf("delivered %d, applied %d, missed %d, lost %d\n", st.Delivered, st.Applied, st.Missed, st.Lost)
	// Output:
	// t=1 action timeline - "order placed"
	// t=1 published topic:orders.placed m1 key=order-1 corr=m1
	// t=1 delivered topic:orders.placed m1 key=order-1 by=billing try=1 corr=m1
	// t=1 delivered topic:orders.placed m1 key=order-1 by=shipping try=1 corr=m1
	// t=1 delivered topic:orders.placed m1 key=order-1 by=mailer try=1 corr=m1
	// t=1 processed topic:orders.placed m1 key=order-1 by=billing try=1 corr=m1
	// t=1 processed topic:orders.placed m1 key=order-1 by=shipping try=1 corr=m1
	// t=1 processed topic:orders.placed m1 key=order-1 by=mailer try=1 corr=m1
	// t=2 action timeline - "mailer disconnects"
	// t=2 disconnected topic:orders.> - by=mailer "0 buffered"
	// t=2 action timeline - "order paid"
	// t=2 published topic:orders.eu.paid m2 key=order-1 corr=m2
	// t=2 delivered topic:orders.eu.paid m2 key=order-1 by=billing try=1 corr=m2
	// t=2 delivered topic:orders.eu.paid m2 key=order-1 by=shipping try=1 corr=m2
	// t=2 missed topic:orders.eu.paid m2 key=order-1 by=mailer corr=m2 "subscriber offline"
	// t=2 processed topic:orders.eu.paid m2 key=order-1 by=billing try=1 corr=m2
	// t=2 processed topic:orders.eu.paid m2 key=order-1 by=shipping try=1 corr=m2
	// delivered 5, applied 5, missed 1, lost 0
}

// Example_storm shows an event storm of one product save with eight
// subscribers, without and with the supervisor switch.
func Example_storm() {
	for _, supervisor := range []bool{false, true} {
		w, _ := sim.New(sim.Config{Seed: 1})
		b, _ := pubsub.New(w, pubsub.Config{Name: "shop", MaxDepth: 2})
		storm, _ := pubsub.NewStorm(b, pubsub.StormConfig{Subject: "product.saved", Subscribers: 8, Supervisor: supervisor})
		root, _ := storm.Save("product-1", nil)
		_ = w.Run(4)
		c, _ := b.Cascade(root.ID)
		fmt.Printf("supervisor %-5v messages per depth %v, suppressed %d, refused by the depth limit %d\n",
			supervisor, c.Published, c.Suppressed, c.Limited)
	}
	// Output:
	// supervisor false messages per depth [1 8 64], suppressed 0, refused by the depth limit 512
	// supervisor true  messages per depth [1 8], suppressed 64, refused by the depth limit 0
}

// ExampleNewSync mirrors one change between two systems with source
// tracking: the change goes to the other system and its echo comes back
// once, where it is ignored.
func ExampleNewSync() {
	w, _ := sim.New(sim.Config{Seed: 1})
	b, _ := pubsub.New(w, pubsub.Config{Name: "sync"})
	s, _ := pubsub.NewSync(b, pubsub.SyncConfig{Subject: "customer.updated", Systems: [2]string{"commerce", "operations"}, SourceTracking: true})
	root, _ := s.Change("commerce", "customer-7", []byte("new address"))
	_ = w.Run(5)
	c, _ := b.Cascade(root.ID)
	fmt.Println("messages:", c.Messages(), "applied by operations:", s.Applied("operations"), "ignored by commerce:", s.Ignored("commerce"))
	// Output:
	// messages: 2 applied by operations: 1 ignored by commerce: 1
}
