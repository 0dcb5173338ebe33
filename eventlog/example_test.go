package eventlog_test

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// Keys pick the partition with crc32 % 3, so every event of one customer
// lands in one partition, in order.
func Example() {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	orders, err := eventlog.New(w, eventlog.Config{Name: "orders", Partitions: 3})
	if err != nil {
		panic(err)
	}
	for _, ev := range []struct{ key, what string }{
		{"kunde-A", "bestellt"}, {"kunde-B", "bestellt"}, {"kunde-A", "bezahlt"},
		{"kunde-C", "bestellt"}, {"kunde-A", "versendet"}, {"kunde-B", "bezahlt"},
	} {
		pos, err := orders.Produce(env.NewMessage(ev.key, []byte(ev.what), sim.Headers{}))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %s -> (%d, %d)\n", ev.key, ev.what, pos.Partition, pos.Offset)
	}
	// Output:
	// kunde-A bestellt -> (0, 0)
	// kunde-B bestellt -> (1, 0)
	// kunde-A bezahlt -> (0, 1)
	// kunde-C bestellt -> (2, 0)
	// kunde-A versendet -> (0, 2)
	// kunde-B bezahlt -> (1, 1)
}

// Kafka's documented range example: two members, three partitions; the
// first member in name order gets the extra partition.
func ExampleAssign() {
	for _, s := range []eventlog.Strategy{eventlog.Range, eventlog.RoundRobin} {
		fmt.Println(s, eventlog.Assign(s, []string{"c2", "c1"}, 3, nil))
	}
	// Output:
	// range [c1=[0 1] c2=[2]]
	// round_robin [c1=[0 2] c2=[1]]
}

// A group member commits after processing; the group's lag drops to zero.
// The handler records its effect with Apply, which is what the checkers
// count.
func ExampleGroup() {
	w, _ := sim.New(sim.Config{Seed: 7})
	t, _ := eventlog.New(w, eventlog.Config{Name: "orders", Partitions: 2})
	g, _ := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "billing"})
	_, _ = eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "b1", Batch: 2, Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
		d.Apply("charged " + d.Msg.Key)
		return nil
	})})
	for _, k := range []string{"kunde-A", "kunde-D", "kunde-A"} {
		_ = t.Publish(w.Env().NewMessage(k, []byte("x"), sim.Headers{}))
	}
	fmt.Println("lag before:", g.Metrics().Lag)
	_ = w.Run(3)
	for _, p := range g.Metrics().Partitions {
		fmt.Printf("p%d end=%d committed=%d lag=%d owner=%s\n", p.Partition, p.End, p.Committed, p.Lag, p.Owner)
	}
	fmt.Println(sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("billing")))
	// Output:
	// lag before: 3
	// p0 end=1 committed=1 lag=0 owner=b1
	// p1 end=2 committed=2 lag=0 owner=b1
	// <nil>
}

// A run that stops once the group has caught up reads the lag every tick:
// Lag sums it without building the metrics.
func ExampleGroup_Lag() {
	w, _ := sim.New(sim.Config{Seed: 7})
	t, _ := eventlog.New(w, eventlog.Config{Name: "orders", Partitions: 3})
	g, _ := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "billing"})
	_, _ = eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "b1", Batch: 2})
	for i := range 7 {
		_ = t.Publish(w.Env().NewMessage("kunde-"+strconv.Itoa(i), nil, sim.Headers{}))
	}
	fmt.Println("lag:", g.Lag())
	err := w.RunUntil(func() bool { return g.Lag() == 0 }, 100)
	fmt.Println("caught up at", w.Now(), err, g.Lag() == g.Metrics().Lag)
	// Output:
	// lag: 7
	// caught up at t=4 <nil> true
}

// A pull member is driven by an adapter: Poll, hand the record to the
// application, mark it processed, commit. Here the application fails once
// on m2; with commit after processing the record is read again.
func ExampleMember_Poll() {
	w, _ := sim.New(sim.Config{Seed: 1})
	t, _ := eventlog.New(w, eventlog.Config{Name: "orders"})
	g, _ := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "adapter"})
	m, _ := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "sub-1", Pull: true})
	for i := 0; i < 3; i++ {
		_ = t.Publish(w.Env().NewMessage("kunde-A", nil, sim.Headers{}))
	}
	failed := false
	for !g.CaughtUp() {
		w.Tick()
		for _, r := range m.Poll(1) {
			d := m.Delivery(r)
			if r.Message.ID == 2 && !failed {
				failed = true
				fmt.Printf("t=%d %v try=%d: nack\n", w.Now(), r.Message.ID, d.Attempt)
				_ = m.MarkFailed(d, errors.New("downstream busy"))
				continue
			}
			d.Apply("")
			_ = m.MarkProcessed(d)
			_ = m.CommitRecords(r)
			fmt.Printf("t=%d %v try=%d: ack, committed %d\n", w.Now(), r.Message.ID, d.Attempt, r.Offset+1)
		}
	}
	fmt.Println(sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("adapter")))
	// Output:
	// t=1 m1 try=1: ack, committed 1
	// t=2 m2 try=1: nack
	// t=3 m2 try=2: ack, committed 2
	// t=4 m3 try=1: ack, committed 3
	// <nil>
}

// A handler member busy with a slow record refuses a poll from outside:
// the batch it is working through stays, and it handles every record of
// it once, two ticks each.
func ExampleMember_Fetch_busy() {
	w, _ := sim.New(sim.Config{Seed: 1})
	t, _ := eventlog.New(w, eventlog.Config{Name: "orders"})
	g, _ := eventlog.NewGroup(w, t, eventlog.GroupConfig{Name: "billing"})
	m, _ := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: "b1", Batch: 3, Handler: &sim.Script{Behaviour: sim.Slow, Ticks: 2}})
	for i := 0; i < 3; i++ {
		_ = t.Publish(w.Env().NewMessage("kunde-A", nil, sim.Headers{}))
	}
	w.Tick()
	recs, err := m.Fetch(10)
	fmt.Println(len(recs), errors.Is(err, eventlog.ErrBusy), m.Outstanding())
	fmt.Println(err)
	_ = w.RunUntil(g.CaughtUp, 20)
	fmt.Println(w.Now(), sim.Check(w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("billing")))
	// Output:
	// 0 true 3
	// eventlog: member is busy with a slow record: "b1" in group billing handles partition 0 offset 0 until t=3
	// t=7 <nil>
}

// The history checker names the offending offsets.
func ExampleCheckHistory() {
	var h eventlog.History
	h.Send(1, "producer", 0, 0, 1)
	h.Send(1, "producer", 0, 1, 2)
	h.Send(1, "producer", 0, 2, 3)
	h.Poll(2, "g", "a", eventlog.Read{Partition: 0, Offset: 0, Value: 1}, eventlog.Read{Partition: 0, Offset: 2, Value: 3})
	for _, a := range eventlog.CheckHistory(&h).Anomalies {
		fmt.Println(a)
	}
	// Output:
	// lost-write by=producer p=0 offsets=[1] values=[m2] t=1: acknowledged write never read by any consumer, although g/a read offset 2 of the partition
	// poll-skip group=g by=a p=0 offsets=[1] values=[m2] t=2: read offset 2 after offset 0 within one poll, skipping 1 offset(s) holding values
}

// The per-group reading also counts a position a group read twice (here
// after a rebalance) as a duplicate; Jepsen's reading does not.
func ExampleCheckHistoryWith() {
	var h eventlog.History
	h.Send(1, "producer", 0, 0, 1)
	h.Poll(2, "g", "a", eventlog.Read{Partition: 0, Offset: 0, Value: 1})
	h.Poll(3, "g", "b", eventlog.Read{Partition: 0, Offset: 0, Value: 1, Epoch: 1})
	fmt.Println(len(eventlog.CheckHistory(&h).Anomalies))
	for _, a := range eventlog.CheckHistoryWith(&h, eventlog.CheckOptions{PerGroup: true}).Anomalies {
		fmt.Println(a)
	}
	// Output:
	// 0
	// duplicate group=g p=0 offsets=[0] values=[m1] t=3: read 2 times by the group
}
