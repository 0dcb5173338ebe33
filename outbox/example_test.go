package outbox_test

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/sim"
)

// inbox is a sim.Publisher that keeps what it gets.
type inbox struct{ got []sim.Message }

func (b *inbox) Publish(m sim.Message) error { b.got = append(b.got, m); return nil }

// An order and its event are written in one transaction; the relay
// publishes the row and marks it sent.
func Example() {
	env := sim.NewEnv(1)
	svc, _ := outbox.New(outbox.Config{Name: "shop", Env: env})
	order, row, _ := svc.PlaceOrder("kunde-A", 100)
	fmt.Println("order", order.ID, "row", row.ID, row.State)

	target := &inbox{}
	relay, _ := outbox.NewRelay(outbox.RelayConfig{Service: svc, Target: target})
	_ = relay.Poll()

	ev, _ := outbox.DecodeOrderPlaced(target.got[0].Body)
	sent, _ := svc.Row(row.ID)
	fmt.Printf("published %s key=%s order_id=%d amount=%d\n", target.got[0].ID, target.got[0].Key, ev.OrderID, ev.Amount)
	fmt.Println("row", sent.ID, sent.State, "at", sent.Processed)
	// Output:
	// order 1 row 1 pending
	// published m1 key=kunde-A order_id=1 amount=100
	// row 1 sent at t=0
}

// A relay that crashes after publishing and before marking publishes the
// same message again: at least once, never lost.
func ExampleRelay_crash() {
	env := sim.NewEnv(1)
	svc, _ := outbox.New(outbox.Config{Name: "shop", Env: env})
	_, _, _ = svc.PlaceOrder("kunde-A", 100)
	in, _ := faults.New(faults.Config{Env: env, Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash", Point: faults.RelayCrashAfterPublish, Nth: 1},
	}}})
	target := &inbox{}
	relay, _ := outbox.NewRelay(outbox.RelayConfig{Service: svc, Target: target, Faults: in})
	fmt.Println(relay.Poll())
	fmt.Println(relay.Poll())
	fmt.Println(target.got[0].ID, target.got[1].ID, "duplicates:", svc.Metrics().Duplicates())
	// Output:
	// outbox: relay relay after publishing row 1: outbox: crashed
	// <nil>
	// m1 m1 duplicates: 1
}

// Three writer modes under the same crash between commit and publish.
func ExampleWriter() {
	for _, mode := range []outbox.Mode{outbox.CommitThenPublish, outbox.PublishThenCommit, outbox.Outbox} {
		env := sim.NewEnv(1)
		svc, _ := outbox.New(outbox.Config{Name: "shop", Env: env})
		in, _ := faults.New(faults.Config{Env: env, Plan: faults.Plan{Rules: []faults.Rule{
			{Name: "crash", Point: faults.WriterCrashAfterCommit, Nth: 1},
		}}})
		target := &inbox{}
		w, _ := outbox.NewWriter(outbox.WriterConfig{Service: svc, Mode: mode, Target: target, Faults: in})
		_, err := w.PlaceOrder("kunde-A", 100)
		relay, _ := outbox.NewRelay(outbox.RelayConfig{Service: svc, Target: target})
		_ = relay.Poll()
		st := env.Ledger.Stats()
		fmt.Printf("%-20s crashed=%v orders=%d events=%d lost=%d\n", mode, err != nil, len(svc.Orders()), len(target.got), st.Lost)
	}
	// Output:
	// commit-then-publish  crashed=true orders=1 events=0 lost=1
	// publish-then-commit  crashed=true orders=1 events=1 lost=0
	// outbox               crashed=true orders=1 events=1 lost=0
}

// An idempotent consumer records the event ID with its effect in one
// transaction and skips the duplicate.
func ExampleConsumer() {
	env := sim.NewEnv(1)
	db, _ := memdb.NewMemDB(outbox.ConsumerSchema())
	total := 0
	c, _ := outbox.NewConsumer(outbox.ConsumerConfig{Name: "billing", Env: env, DB: db,
		Effect: func(txn *memdb.Txn, m sim.Message) error {
			ev, err := outbox.DecodeOrderPlaced(m.Body)
			total += int(ev.Amount)
			return err
		}})
	m := env.NewMessage("kunde-A", []byte(`{"order_id":1,"customer":"kunde-A","amount":100}`), sim.Headers{Type: outbox.EventOrderPlaced})
	for i := 0; i < 2; i++ {
		applied, err := c.Handle(m)
		fmt.Println(applied, err)
	}
	fmt.Println("charged", total)
	// Output:
	// true <nil>
	// false <nil>
	// charged 100
}
