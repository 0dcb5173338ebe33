package sim_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/brokerlab/brokerlab/sim"
)

// A World steps its components in phase order every tick, after the timeline
// actions due at that tick. Every event lands in the trace, and the ledger
// is folded from those events: here a hand-made inbox sends with a
// "sent" event and a handler records its effect through the Delivery.
func ExampleWorld() {
	w, _ := sim.New(sim.Config{Seed: 42})
	env := w.Env()
	w.Trace().Attach(sim.NewTextWriter(os.Stdout))

	var inbox []sim.Message
	_ = w.AddFunc("shop", sim.PhaseProducer, func(now sim.Tick) {
		m := env.NewMessage("kunde-A", []byte("order"), sim.Headers{Type: "order.placed"})
		env.Emit(sim.Event{Kind: sim.KindSent, Where: "inbox", Actor: "shop", Consumer: "billing", Msg: m.ID, Key: m.Key, Type: m.Headers.Type})
		inbox = append(inbox, m)
	})
	billing := sim.Effect("charged")
	_ = w.AddFunc("billing", sim.PhaseConsumer, func(now sim.Tick) {
		for _, m := range inbox {
			env.Emit(sim.Event{Kind: sim.KindReceived, Where: "inbox", Actor: "billing", Consumer: "billing", Msg: m.ID, Key: m.Key, Attempt: 1})
			_ = billing.Handle(sim.NewDelivery(env, m, "inbox", "billing", "", 1))
			env.Emit(sim.Event{Kind: sim.KindAcked, Where: "inbox", Actor: "billing", Consumer: "billing", Msg: m.ID, Key: m.Key})
		}
		inbox = inbox[:0]
	})
	w.At(2, "say hello", nil)
	_ = w.Run(2)
	fmt.Println(sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("billing")))
	// Output:
	// t=1 sent inbox m1 key=kunde-A by=shop
	// t=1 received inbox m1 key=kunde-A by=billing try=1
	// t=1 processed inbox m1 key=kunde-A by=billing try=1 "charged"
	// t=1 acked inbox m1 key=kunde-A by=billing
	// t=2 action timeline - "say hello"
	// t=2 sent inbox m2 key=kunde-A by=shop
	// t=2 received inbox m2 key=kunde-A by=billing try=1
	// t=2 processed inbox m2 key=kunde-A by=billing try=1 "charged"
	// t=2 acked inbox m2 key=kunde-A by=billing
	// <nil>
}

// Checkers report every violation at once, with message IDs and ticks. The
// ledger here is folded from a recorded trace, as `brokerlab verify` does:
// m2 was acknowledged before processing and lost in a crash; m3 was
// redriven from the DLQ as m4 and charged twice over its lineage.
func ExampleCheck() {
	trace := `{"seq":1,"tick":1,"kind":"sent","where":"queue:pay","msg":"m1","key":"order-1","consumer":"billing"}
{"seq":2,"tick":1,"kind":"sent","where":"queue:pay","msg":"m2","key":"order-2","consumer":"billing"}
{"seq":3,"tick":1,"kind":"sent","where":"queue:pay","msg":"m3","key":"order-3","consumer":"billing"}
{"seq":4,"tick":2,"kind":"received","where":"queue:pay","msg":"m1","consumer":"billing"}
{"seq":5,"tick":2,"kind":"processed","where":"queue:pay","msg":"m1","consumer":"billing"}
{"seq":6,"tick":2,"kind":"acked","where":"queue:pay","msg":"m1","consumer":"billing"}
{"seq":7,"tick":2,"kind":"received","where":"queue:pay","msg":"m2","consumer":"billing"}
{"seq":8,"tick":2,"kind":"acked","where":"queue:pay","msg":"m2","consumer":"billing"}
{"seq":9,"tick":2,"kind":"lost","where":"queue:pay","msg":"m2","consumer":"billing","cause":"ack before processing"}
{"seq":10,"tick":3,"kind":"received","where":"queue:pay","msg":"m3","consumer":"billing"}
{"seq":11,"tick":3,"kind":"processed","where":"queue:pay","msg":"m3","consumer":"billing"}
{"seq":12,"tick":6,"kind":"dead_lettered","where":"queue:pay","msg":"m3"}
{"seq":13,"tick":9,"kind":"redriven","where":"queue:pay","msg":"m4","origin":"m3","key":"order-3","consumer":"billing"}
{"seq":14,"tick":10,"kind":"received","where":"queue:pay","msg":"m4","consumer":"billing"}
{"seq":15,"tick":10,"kind":"processed","where":"queue:pay","msg":"m4","consumer":"billing"}
{"seq":16,"tick":10,"kind":"acked","where":"queue:pay","msg":"m4","consumer":"billing"}
`
	l := sim.NewLedger()
	if err := sim.ReadJSONL(strings.NewReader(trace), l); err != nil {
		fmt.Println(err)
	}
	fmt.Println(sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("billing"), sim.MaxDuplicates("biling", 0)))
	// Output:
	// 4 delivery violation(s):
	// 	no-loss: m2 key=order-2 consumer=billing t=2: lost (ack before processing)
	// 	exactly-once: m2 key=order-2 consumer=billing t=2: lost (ack before processing)
	// 	exactly-once: m3 key=order-3 consumer=billing t=3: effect applied 2 times
	// 	max-duplicates: - consumer=biling t=10: the ledger knows no consumer "biling"; it knows: "billing"
}

// Streams are derived from (seed, component name): the same pair always
// draws the same numbers, whatever other components exist.
func ExampleNewStream() {
	a := sim.NewStream(1, "consumer/worker-1")
	b := sim.NewStream(1, "consumer/worker-1")
	fmt.Println(a.IntN(100) == b.IntN(100), a.IntN(100) == b.IntN(100))
	// Output: true true
}
