package sim_test

import (
	"bytes"
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
// ledger here is folded from a recorded JSON Lines trace, as `brokerlab
// verify` does: m2 was acknowledged before processing and lost in a crash;
// m3 was redriven from the DLQ as m4 and charged twice over its lineage.
// The writer chains a hash through the lines and closes the trace with a
// count, so the reader refuses a trace that was edited or cut short.
func ExampleCheck() {
	var jsonl bytes.Buffer
	tr := sim.NewTrace(sim.NewJSONWriter(&jsonl))
	q, w := "queue:pay", "billing"
	for _, e := range []sim.Event{
		{Tick: 1, Kind: sim.KindSent, Where: q, Msg: 1, Key: "order-1", Consumer: w},
		{Tick: 1, Kind: sim.KindSent, Where: q, Msg: 2, Key: "order-2", Consumer: w},
		{Tick: 1, Kind: sim.KindSent, Where: q, Msg: 3, Key: "order-3", Consumer: w},
		{Tick: 2, Kind: sim.KindReceived, Where: q, Msg: 1, Consumer: w},
		{Tick: 2, Kind: sim.KindProcessed, Where: q, Msg: 1, Consumer: w},
		{Tick: 2, Kind: sim.KindAcked, Where: q, Msg: 1, Consumer: w},
		{Tick: 2, Kind: sim.KindReceived, Where: q, Msg: 2, Consumer: w},
		{Tick: 2, Kind: sim.KindAcked, Where: q, Msg: 2, Consumer: w},
		{Tick: 2, Kind: sim.KindLost, Where: q, Msg: 2, Consumer: w, Cause: "ack before processing"},
		{Tick: 3, Kind: sim.KindReceived, Where: q, Msg: 3, Consumer: w},
		{Tick: 3, Kind: sim.KindProcessed, Where: q, Msg: 3, Consumer: w},
		{Tick: 6, Kind: sim.KindDeadLettered, Where: q, Msg: 3},
		{Tick: 9, Kind: sim.KindRedriven, Where: q, Msg: 4, Origin: 3, Key: "order-3", Consumer: w},
		{Tick: 10, Kind: sim.KindReceived, Where: q, Msg: 4, Consumer: w},
		{Tick: 10, Kind: sim.KindProcessed, Where: q, Msg: 4, Consumer: w},
		{Tick: 10, Kind: sim.KindAcked, Where: q, Msg: 4, Consumer: w},
	} {
		tr.Emit(e)
	}
	if err := tr.Close(); err != nil {
		fmt.Println(err)
	}
	lines := strings.Split(strings.TrimSpace(jsonl.String()), "\n")
	fmt.Println(lines[0])
	fmt.Println(lines[len(lines)-1])
	l := sim.NewLedger()
	if err := sim.ReadJSONL(&jsonl, l); err != nil {
		fmt.Println(err)
	}
	fmt.Println(sim.Check(l, sim.NoLoss(), sim.ExactlyOnce("billing"), sim.MaxDuplicates("biling", 0)))
	// Output:
	// {"seq":1,"tick":1,"kind":"sent","where":"queue:pay","msg":"m1","key":"order-1","consumer":"billing","hash":"c04a2a9b51e60cbd"}
	// {"end":true,"events":16,"hash":"a1d20639f8fcb25a"}
	// 4 delivery violation(s):
	// 	no-loss: m2 key=order-2 consumer=billing t=2: lost (ack before processing)
	// 	exactly-once: m2 key=order-2 consumer=billing t=2: lost (ack before processing)
	// 	exactly-once: m3 key=order-3 consumer=billing t=10: effect applied 2 times
	// 	max-duplicates: - consumer=biling t=10: the ledger knows no consumer "biling"; it knows: "billing"
}

// A trace cut short, or with a line deleted, is refused with the line it
// went wrong on, so no verdict is judged from it.
func ExampleReadJSONL() {
	var jsonl bytes.Buffer
	tr := sim.NewTrace(sim.NewJSONWriter(&jsonl))
	for i := 1; i <= 3; i++ {
		tr.Emit(sim.Event{Tick: 1, Kind: sim.KindSent, Where: "queue:pay", Msg: sim.ID(i), Consumer: "billing"})
	}
	_ = tr.Close()
	lines := strings.SplitAfter(jsonl.String(), "\n")
	cut := strings.Join(lines[:3], "")            // no closing record
	gap := lines[0] + strings.Join(lines[2:], "") // the second event deleted
	fmt.Println(sim.ReadJSONL(strings.NewReader(jsonl.String()), sim.NewLedger()))
	fmt.Println(sim.ReadJSONL(strings.NewReader(cut), sim.NewLedger()))
	fmt.Println(sim.ReadJSONL(strings.NewReader(gap), sim.NewLedger()))
	// Output:
	// <nil>
	// sim: bad trace: truncated: the run did not finish: no closing record after line 3 (seq 3)
	// sim: bad trace: line 2: seq 3, but seq 2 comes next (a gap: event 2 is missing)
}

// Streams are derived from (seed, component name): the same pair always
// draws the same numbers, whatever other components exist.
func ExampleNewStream() {
	a := sim.NewStream(1, "consumer/worker-1")
	b := sim.NewStream(1, "consumer/worker-1")
	fmt.Println(a.IntN(100) == b.IntN(100), a.IntN(100) == b.IntN(100))
	// Output: true true
}
