package outbox_test

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/sim"
)

// inbox is a sim.Publisher that keeps what it gets, without a trace of its
// own: the ledger sees only the outbox's events.
type inbox struct{ got []sim.Message }

func (b *inbox) Publish(m sim.Message) error { b.got = append(b.got, m); return nil }

// An order and its event are written in one transaction; the relay
// publishes the row and marks it sent.
func Example() {
	w, _ := sim.New(sim.Config{Seed: 1})
	svc, _ := outbox.New(w, outbox.Config{Name: "shop"})
	order, row, _ := svc.PlaceOrder("kunde-A", 100)
	rec, _ := w.Ledger().Record(row.Msg)
	fmt.Println("order", order.ID, "row", row.ID, row.State, "ledger:", rec.State, "at", rec.Where)

	target := &inbox{}
	relay, _ := outbox.NewRelay(w, outbox.RelayConfig{Service: svc, Target: target})
	_ = relay.Poll()

	ev, _ := outbox.DecodeOrderPlaced(target.got[0].Body)
	sent, _ := svc.Row(row.ID)
	fmt.Printf("published %s key=%s order_id=%d amount=%d\n", target.got[0].ID, target.got[0].Key, ev.OrderID, ev.Amount)
	fmt.Println("row", sent.ID, sent.State, "at", sent.Processed)
	// Output:
	// order 1 row 1 pending ledger: pending at outbox:shop
	// published m1 key=kunde-A order_id=1 amount=100
	// row 1 sent at t=0
}

// A relay that crashes after publishing and before marking publishes the
// same message again: at least once, never lost.
func ExampleRelay_crash() {
	w, _ := sim.New(sim.Config{Seed: 1})
	svc, _ := outbox.New(w, outbox.Config{Name: "shop"})
	_, _, _ = svc.PlaceOrder("kunde-A", 100)
	in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash", Point: faults.RelayCrashAfterPublish, Nth: 1},
	}}})
	target := &inbox{}
	relay, _ := outbox.NewRelay(w, outbox.RelayConfig{Service: svc, Target: target, Faults: in})
	fmt.Println(relay.Poll())
	fmt.Println(relay.Poll())
	fmt.Println(target.got[0].ID, target.got[1].ID, "duplicates:", svc.Metrics().Duplicates())
	// Output:
	// outbox: relay relay after publishing row 1: outbox: crashed
	// <nil>
	// m1 m1 duplicates: 1
}

// Three writer modes under the same crash between commit and publish: the
// ledger books the dual write's loss with its cause.
func ExampleWriter() {
	for _, mode := range []outbox.Mode{outbox.CommitThenPublish, outbox.PublishThenCommit, outbox.Outbox} {
		w, _ := sim.New(sim.Config{Seed: 1})
		svc, _ := outbox.New(w, outbox.Config{Name: "shop"})
		in, _ := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
			{Name: "crash", Point: faults.WriterCrashAfterCommit, Nth: 1},
		}}})
		target := &inbox{}
		wr, _ := outbox.NewWriter(w, outbox.WriterConfig{Service: svc, Mode: mode, Target: target, Faults: in})
		_, err := wr.PlaceOrder("kunde-A", 100)
		relay, _ := outbox.NewRelay(w, outbox.RelayConfig{Service: svc, Target: target})
		_ = relay.Poll()
		st := w.Ledger().Stats()
		fmt.Printf("%-20s crashed=%v orders=%d events=%d lost=%v\n", mode, err != nil, len(svc.Orders()), len(target.got), st.LostBy)
	}
	// Output:
	// commit_then_publish  crashed=true orders=1 events=0 lost=[{dual write 1}]
	// publish_then_commit  crashed=true orders=1 events=1 lost=[]
	// outbox               crashed=true orders=1 events=1 lost=[]
}

// A Commander places a workload of commands with a writer; the relay
// drains the outbox as the commands come in.
func ExampleCommander() {
	w, _ := sim.New(sim.Config{Seed: 1})
	svc, _ := outbox.New(w, outbox.Config{Name: "shop"})
	wr, _ := outbox.NewWriter(w, outbox.WriterConfig{Service: svc, Mode: outbox.Outbox})
	c, _ := outbox.NewCommander(w, outbox.CommanderConfig{Name: "client", Writer: wr, Count: 4, Rate: 2, Start: 3,
		Keys: []string{"kunde-A", "kunde-B"}})
	target := &inbox{}
	_, _ = outbox.NewRelay(w, outbox.RelayConfig{Service: svc, Target: target})
	err := w.RunUntil(c.Done, 10)
	for _, m := range target.got {
		fmt.Println(m.ID, m.Key, "created at", m.Created)
	}
	fmt.Println(err, svc.Metrics().Sent)
	// Output:
	// m1 kunde-A created at t=3
	// m2 kunde-B created at t=3
	// m3 kunde-A created at t=4
	// m4 kunde-B created at t=4
	// <nil> 4
}

// An idempotent consumer records the event ID with its effect in one
// transaction and skips the duplicate; it is a sim.Handler, so any model
// can deliver to it.
func ExampleConsumer() {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	db, _ := memdb.NewMemDB(outbox.ConsumerSchema())
	total := 0
	var h sim.Handler
	h, _ = outbox.NewConsumer(w, outbox.ConsumerConfig{Name: "billing", DB: db,
		Effect: func(txn *memdb.Txn, d *sim.Delivery) error {
			ev, err := outbox.DecodeOrderPlaced(d.Msg.Body)
			total += int(ev.Amount)
			return err
		}})
	m := env.NewMessage("kunde-A", []byte(`{"order_id":1,"customer":"kunde-A","amount":100}`), sim.Headers{Type: outbox.EventOrderPlaced})
	for i := 1; i <= 2; i++ {
		d := sim.NewDelivery(env, m, "queue:billing", "billing", "", i)
		err := h.Handle(d)
		fmt.Println("effects", d.Effects(), "skipped", d.Skipped(), err)
	}
	fmt.Println("charged", total)
	// Output:
	// effects 1 skipped false <nil>
	// effects 0 skipped true <nil>
	// charged 100
}
