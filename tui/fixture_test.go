package tui

import (
	"errors"
	"fmt"
	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"

	"github.com/brokerlab/brokerlab/sim"
)

// fixture returns the fixed snapshot the render tests draw: one model of
// each kind, series, a trace with every highlighted kind, and narration.
func fixture() lab.Snapshot {
	s := lab.Snapshot{
		Header: lab.Header{Title: "Poison message goes to the DLQ", Lesson: "poison-dlq", Tick: 42, Seed: 7, Speed: 4, State: lab.StatePlaying},
		Queues: []lab.QueueView{{
			Name: "orders", Visible: 120, InFlight: 3, Delayed: 2, DLQName: "orders-dlq", DLQDepth: 2,
			OldestAge: 14, Redeliveries: 5,
		}},
		Topics: []lab.TopicView{{Name: "prices", Published: 88, Subscribers: []lab.SubscriberView{
			{Name: "dashboard", Online: true, Buffered: 3, Delivered: 85},
			{Name: "mobile-app", Online: false, Delivered: 60, Missed: 28},
			{Name: "slow-report", Online: true, Buffered: 16, Delivered: 70, Dropped: 2},
		}}},
		Logs: []lab.LogView{{Name: "payments",
			Partitions: []lab.PartitionView{{Index: 0, Start: 0, End: 30}, {Index: 1, Start: 4, End: 22}, {Index: 2, Start: 0, End: 41}},
			Groups: []lab.GroupView{
				{Name: "billing", Generation: 3, Committed: []int64{30, 20, 35}, Lag: []int64{0, 2, 6}, Members: []string{"b1", "b2"}},
				{Name: "audit", Generation: 1, Committed: []int64{10, 4, 41}, Lag: []int64{20, 18, 0}, Members: []string{"a1"}},
			}}},
		Outboxes: []lab.OutboxView{{Service: "shop", Writer: "outbox", Rows: 354, Published: 343, Pending: 12, Sent: 340, Dead: 2, Relays: []lab.RelayView{
			{Name: "relay-1", Claims: []int64{101, 102, 103}},
			{Name: "relay-2", Crashed: true},
		}}},
		Narration: lab.Narration{Index: 3, Total: 7, Text: "Message m9 fails every time it is handled. After the third receive the redrive policy moves it to the dead-letter queue, where it waits for a human. The other messages keep flowing."},
		Ledger:    lab.LedgerSummary{Messages: 211, Lost: 1, Duplicates: 5, DeadLettered: 2, Missed: 28},
	}
	for i := 1; i <= 12; i++ {
		rc := 0
		if i%5 == 0 {
			rc = 2
		}
		s.Queues[0].Chips = append(s.Queues[0].Chips, lab.Chip{ID: sim.ID(100 + i), ReceiveCount: rc, Where: lab.WhereVisible})
	}
	s.Queues[0].Chips = append(s.Queues[0].Chips,
		lab.Chip{ID: 7, ReceiveCount: 1, Where: lab.WhereInFlight}, lab.Chip{ID: 8, ReceiveCount: 3, Where: lab.WhereInFlight},
		lab.Chip{ID: 11, ReceiveCount: 1, Where: lab.WhereInFlight},
		lab.Chip{ID: 20, Where: lab.WhereDelayed}, lab.Chip{ID: 21, Where: lab.WhereDelayed},
		lab.Chip{ID: 9, ReceiveCount: 3, Where: lab.WhereDLQ}, lab.Chip{ID: 13, ReceiveCount: 3, Where: lab.WhereDLQ})
	var pub, lag1, lag2, dlq, dup, lost []float64
	for t := 0; t < 42; t++ {
		pub = append(pub, float64((t*7)%5+1))
		lag1 = append(lag1, float64(t%9))
		lag2 = append(lag2, float64(t/2))
		dlq = append(dlq, float64(t/20))
		dup = append(dup, float64(t/8))
		lost = append(lost, float64(t/40))
	}
	s.Series = []lab.Series{{Kind: lab.SeriesPublishRate, Values: pub}, {Kind: lab.SeriesLag, Group: "billing", Values: lag1},
		{Kind: lab.SeriesLag, Group: "audit", Values: lag2}, {Kind: lab.SeriesDLQDepth, Values: dlq},
		{Kind: lab.SeriesDuplicates, Values: dup}, {Kind: lab.SeriesLost, Values: lost}}
	kinds := []sim.Event{
		{Kind: sim.KindSent, Where: "queue:orders", Msg: 120, Key: "kunde-A", Corr: "c7"},
		{Kind: sim.KindReceived, Where: "queue:orders", Msg: 9, Key: "kunde-B", Actor: "worker-1", Attempt: 3},
		{Kind: sim.KindFailed, Where: "queue:orders", Msg: 9, Key: "kunde-B", Actor: "worker-1", Detail: "poison"},
		{Kind: sim.KindDeadLettered, Where: "queue:orders", Msg: 9, Key: "kunde-B", Detail: "maxReceiveCount 3"},
		{Kind: sim.KindRedelivered, Where: "queue:orders", Msg: 8, Key: "kunde-A", Actor: "worker-2", Attempt: 3},
		{Kind: sim.KindFault, Where: "queue:orders", Actor: "worker-2", Rule: "crash-before-ack"},
		{Kind: sim.KindMissed, Where: "topic:prices", Msg: 77, Actor: "mobile-app", Corr: "c9"},
		{Kind: sim.KindDropped, Where: "topic:prices", Msg: 78, Actor: "slow-report", Detail: "buffer full"},
		{Kind: sim.KindProduced, Where: "log:payments", Msg: 200, Key: "kunde-C", HasPos: true, Partition: 2, Offset: 40},
		{Kind: sim.KindLost, Where: "outbox:shop", Msg: 150, Detail: "dual_write"},
		{Kind: sim.KindNarration, Where: "lesson", Detail: "step 3"},
		{Kind: sim.KindAcked, Where: "queue:orders", Msg: 7, Key: "kunde-A", Actor: "worker-1", Corr: "c7"},
	}
	var seq uint64
	for t := sim.Tick(30); t <= 42; t++ {
		for _, e := range kinds[int(t)%len(kinds):] {
			seq++
			e.Seq, e.Tick = seq, t
			s.Trace = append(s.Trace, e)
			if len(s.Trace)%4 == 0 {
				break
			}
		}
	}
	return s
}

// bigSnapshot returns a snapshot of a system holding n messages, built the
// way a runner would (exact counts, capped chips, trace and history).
func bigSnapshot(n int) lab.Snapshot {
	s := fixture()
	q := &s.Queues[0]
	q.Visible, q.InFlight, q.Delayed, q.DLQDepth = n*6/10, n/10, n/20, n/20
	q.Chips = nil
	for a, count := range []int{q.Visible, q.InFlight, q.Delayed, q.DLQDepth} {
		for i := 0; i < count && i < lab.MaxChips; i++ {
			q.Chips = append(q.Chips, lab.Chip{ID: sim.ID(a*n + i + 1), ReceiveCount: i % 4, Where: lab.Where(a)})
		}
	}
	per := int64(n / 10 / 3)
	s.Logs[0].Partitions = []lab.PartitionView{{Index: 0, Start: 100, End: per}, {Index: 1, Start: 0, End: per + 7}, {Index: 2, Start: 50, End: per - 3}}
	s.Logs[0].Groups[0].Committed = []int64{per - 10, per, per / 2}
	s.Logs[0].Groups[1].Committed = []int64{per / 3, 200, per - 3}
	for i := 0; i < 40; i++ {
		s.Topics[0].Subscribers = append(s.Topics[0].Subscribers, lab.SubscriberView{
			Name: fmt.Sprintf("sub-%02d", i), Online: i%3 != 0, Delivered: n / 100, Missed: i})
	}
	s.Outboxes[0].Pending = n / 10
	s.Trace = s.Trace[:0:0]
	for i := 0; i < lab.MaxTrace; i++ {
		s.Trace = append(s.Trace, sim.Event{Seq: uint64(i + 1), Tick: sim.Tick(1000 + i/5), Kind: sim.KindReceived,
			Where: "queue:orders", Msg: sim.ID(i + 1), Key: fmt.Sprintf("kunde-%d", i%7), Actor: "worker-1", Attempt: i%3 + 1})
	}
	for i := range s.Series {
		vs := make([]float64, lab.MaxHistory)
		for j := range vs {
			vs[j] = float64((j * (i + 3)) % 17)
		}
		s.Series[i].Values = vs
	}
	return s
}

// fakeDriver is a Driver over a synthetic scenario: every tick adds a trace
// event; narration points are every 5 ticks; the run ends at tick end.
type fakeDriver struct {
	tick    sim.Tick
	seed    uint64
	end     sim.Tick
	actions []lab.Action
	steps   int
}

func newFakeDriver(seed uint64) *fakeDriver { return &fakeDriver{seed: seed, end: 20} }

func (d *fakeDriver) snap() lab.Snapshot {
	s := fixture()
	s.Header.Tick, s.Header.Seed = d.tick, d.seed
	s.Header.Speed, s.Header.State = 0, lab.StatePaused
	s.Narration.Index = int(d.tick/5) + 1
	s.Narration.Total = int(d.end/5) + 1
	return s
}

func (d *fakeDriver) Snapshot() lab.Snapshot { return d.snap() }
func (d *fakeDriver) Step() lab.Snapshot {
	if d.tick < d.end {
		d.tick++
		d.steps++
	}
	return d.snap()
}
func (d *fakeDriver) Restart(seed uint64) lab.Snapshot {
	d.tick, d.seed = 0, seed
	return d.snap()
}
func (d *fakeDriver) Do(a lab.Action) (lab.Snapshot, error) {
	if a.Action == scenario.ActionRedrive && d.tick == 0 {
		return d.snap(), errors.New("nothing to redrive")
	}
	d.actions = append(d.actions, a)
	return d.snap(), nil
}
func (d *fakeDriver) Done() bool { return d.tick >= d.end }
