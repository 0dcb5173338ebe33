package queue

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

// Tests for the SQS bullets of issue 13. Each cites the documented SQS
// behaviour it checks.

// faultRig is a rig with a fault injector for the rules.
func faultRig(t *testing.T, rules ...faults.Rule) (*rig, *faults.Injector) {
	t.Helper()
	r := newRig(t)
	in, err := faults.New(r.w, faults.Config{Plan: faults.Plan{Rules: rules}})
	if err != nil {
		t.Fatal(err)
	}
	return r, in
}

// ids returns the message IDs of the deliveries, in order.
func ids(ds []Delivery) []sim.ID {
	out := make([]sim.ID, len(ds))
	for i, d := range ds {
		out[i] = d.Message.ID
	}
	return out
}

func sameIDs(got []sim.ID, want ...sim.ID) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// textOf formats events as the text trace.
func textOf(evs []sim.Event) string {
	var b []byte
	for i := range evs {
		b = sim.AppendText(b, &evs[i])
		b = append(b, '\n')
	}
	return string(b)
}

// kinds returns "tick kind actor" for every event of the given kinds.
func kinds(evs []sim.Event, ks ...sim.Kind) string {
	var b []string
	for _, e := range evs {
		for _, k := range ks {
			if e.Kind == k {
				b = append(b, e.Tick.String()+" "+string(e.Kind)+" "+e.Msg.String()+" "+e.Actor)
			}
		}
	}
	return strings.Join(b, "\n")
}

// TestFIFOOrderUnderBrokerDelay is the first bug of issue 13: a
// broker.delay on m1 let m2 of the same group overtake it. Over 1000 seeds
// of FIFO runs with broker delays, a queue-level delay, crashes, transient
// failures, slow handlers, broker duplicates, outages and lost acks, with
// several competing instances taking batches, every group is first applied
// in send order.
//
// SQS (developer guide, "FIFO queue delivery logic"): within each message
// group ID, all messages are sent and received in strict order.
func TestFIFOOrderUnderBrokerDelay(t *testing.T) {
	delayed, runs := 0, 0
	for seed := uint64(1); seed <= 1000; seed++ {
		r := sim.NewStream(seed, "fifo-order")
		prob := func() float64 { return float64(1+r.IntN(30)) / 100 }
		rules := []faults.Rule{{Name: "delay", Point: faults.BrokerDelay, Probability: float64(1+r.IntN(50)) / 100, Param: int64(1 + r.IntN(6))}}
		maybe := func(p float64, rule faults.Rule) {
			if r.Chance(p) {
				rule.Probability = prob()
				rules = append(rules, rule)
			}
		}
		maybe(0.3, faults.Rule{Name: "crash-before", Point: faults.ConsumerCrashBeforeProcess})
		maybe(0.3, faults.Rule{Name: "crash-after", Point: faults.ConsumerCrashAfterEffect})
		maybe(0.4, faults.Rule{Name: "transient", Point: faults.HandlerTransient, Param: int64(1 + r.IntN(2))})
		maybe(0.3, faults.Rule{Name: "slow", Point: faults.HandlerSlow, Param: int64(1 + r.IntN(8))})
		maybe(0.3, faults.Rule{Name: "ack-lost", Point: faults.BrokerAckLost})
		if r.Chance(0.3) {
			from := sim.Tick(1 + r.IntN(20))
			rules = append(rules, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, From: from, Until: from + sim.Tick(1+r.IntN(5))})
		}
		qc := Config{Name: "orders", FIFO: true, VisibilityTimeout: sim.Tick(3 + r.IntN(6)), Delay: sim.Tick(r.IntN(3))}
		if r.Chance(0.5) {
			// Broker duplicates only with deduplication, as SQS FIFO always
			// has it (past a short window the copies get in).
			qc.DedupWindow = sim.Tick(1 + r.IntN(10))
			maybe(0.6, faults.Rule{Name: "dup", Point: faults.BrokerDuplicate})
		}
		w := newWorld(t, seed, rules, qc)
		retry := NoRetry()
		if r.Chance(0.5) {
			retry = FixedRetry(sim.Tick(1 + r.IntN(3)))
		}
		w.consumer(ConsumerConfig{Name: "w", Instances: 1 + r.IntN(3), Batch: 1 + r.IntN(4), Retry: retry, WaitTime: sim.Tick(r.IntN(3))})
		w.producer(producer.Config{Name: "p", Count: 20 + r.IntN(20), Rate: 1 + r.IntN(3), KeyPattern: "k-%d", KeyCount: 1 + r.IntN(4)})
		if err := w.w.RunUntil(w.drained, 2000); err != nil {
			t.Fatalf("seed %d (rules %+v): %v\ntrace:\n%s", seed, rules, err, textOf(w.rec.Events()))
		}
		if err := sim.Check(w.env.Ledger, sim.OrderedPerKey("orders"), sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
			t.Fatalf("seed %d (rules %+v): %v\ntrace:\n%s", seed, rules, err, textOf(w.rec.Events()))
		}
		delayed += w.count(sim.KindDelayed)
		runs++
	}
	if delayed == 0 {
		t.Fatal("no message was delayed")
	}
	t.Logf("%d runs, %d delayed sends, per-key order held in all", runs, delayed)
}

// TestFIFORedriveSkipsOnlyTheBlockedGroup is the second bug of issue 13: a
// FIFO dead-letter queue whose group A starts with a message that has no
// source queue (sent to the DLQ directly) keeps group A, head and all, but
// redrives group B behind it.
//
// SQS (developer guide, "FIFO queue delivery logic"): ordering applies per
// message group ID; messages with different message group IDs might be
// received or processed out of order, so one group never holds back
// another.
func TestFIFORedriveSkipsOnlyTheBlockedGroup(t *testing.T) {
	r := newRig(t)
	dlq := r.queue(Config{Name: "orders-dlq.fifo", FIFO: true})
	q := r.queue(Config{Name: "orders.fifo", FIFO: true, DeadLetter: dlq})
	direct := r.send(dlq, "A", 0) // no source: it cannot be redriven
	a := r.send(q, "A", 0)
	b := r.send(q, "B", 0)
	for _, d := range r.recv(q, 10) {
		if err := q.DeadLetter(d.Receipt, "by hand"); err != nil {
			t.Fatal(err)
		}
	}
	if dlq.Len() != 3 {
		t.Fatalf("dlq holds %d", dlq.Len())
	}
	n, err := dlq.Redrive(10)
	if err != nil || n != 1 {
		t.Fatalf("redrive moved %d (%v), want 1: only group B", n, err)
	}
	ds := r.recv(q, 10)
	if len(ds) != 1 || ds[0].Message.Origin != b.ID {
		t.Fatalf("redriven %+v, want a copy of %v", ds, b.ID)
	}
	// Group A waits behind its sourceless head, in order.
	got := dlq.AppendResidents(nil, 10)
	if len(got) != 2 || got[0].Msg != direct.ID || got[1].Msg != a.ID {
		t.Fatalf("dlq residents %+v", got)
	}
	if n, _ := dlq.Redrive(10); n != 0 {
		t.Fatalf("a second redrive moved %d", n)
	}
}

// TestAckLostRedelivers: broker.ack_lost loses an ack on its way; the
// consumer believes it deleted the message, the broker keeps it in flight
// and delivers it again when its visibility timeout runs out. A naive
// handler applies it twice; an idempotent one skips the repeat.
//
// SQS (developer guide, "Amazon SQS at-least-once delivery"): if a server
// holding a copy is unavailable when you delete a message, the copy isn't
// deleted, and you might get that message copy again when you receive
// messages; design your applications to be idempotent.
func TestAckLostRedelivers(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		w := newWorld(t, 1, []faults.Rule{{Name: "lost", Point: faults.BrokerAckLost, Nth: 1}}, Config{Name: "orders", VisibilityTimeout: 4})
		h := sim.Effect("")
		if idempotent {
			h = sim.Idempotent(h, sim.ByMessageID)
		}
		c := w.consumer(ConsumerConfig{Name: "w", Handler: h})
		w.producer(producer.Config{Name: "p", Count: 1})
		w.run(30)
		want := "t=1 received m1 w\nt=1 fault m1 w\nt=5 visibility_expired m1 w\nt=5 redelivered m1 w\nt=5 acked m1 w"
		if got := kinds(w.rec.Events(), sim.KindReceived, sim.KindFault, sim.KindVisibilityExpired, sim.KindRedelivered, sim.KindAcked); got != want {
			t.Fatalf("trace\n%s\nwant\n%s", got, want)
		}
		if m := w.q.Metrics(); m.AcksLost != 1 || m.Acks != 1 {
			t.Fatalf("metrics %+v", m)
		}
		if s := c.Stats(); s.AckFailed != 0 || s.StaleAcks != 0 {
			t.Fatalf("the consumer saw the lost ack: %+v", s)
		}
		err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders"))
		if idempotent != (err == nil) {
			t.Fatalf("idempotent=%v: %v", idempotent, err)
		}
	}
}

// TestLostAckBreaksAtMostOnce: acking before processing does not make a
// consumer at-most-once when an ack can be lost: the message comes back
// and is processed again.
//
// SQS (developer guide, "Amazon SQS at-least-once delivery"): a copy whose
// delete did not reach every server might be received again.
func TestLostAckBreaksAtMostOnce(t *testing.T) {
	w := newWorld(t, 1, []faults.Rule{{Name: "lost", Point: faults.BrokerAckLost, Nth: 1}}, Config{Name: "orders", VisibilityTimeout: 3})
	w.consumer(ConsumerConfig{Name: "w", AckMode: AckBeforeProcess})
	w.producer(producer.Config{Name: "p", Count: 1})
	w.run(30)
	if err := sim.Check(w.env.Ledger, sim.AtMostOnce("orders")); err == nil || !strings.Contains(err.Error(), "effect applied 2 times") {
		t.Fatalf("at-most-once: %v", err)
	}
}

// TestOutageFailsAcksDeletesAndVisibilityChanges: while the broker is
// unavailable, acks (deletes), nacks, visibility changes and dead-letter
// moves fail with ErrUnavailable (and sim.ErrUnavailable), each traced as
// rejected with the call and the worker; nothing changes, so the message
// comes back when its visibility timeout runs out.
//
// NServiceBus's SQS transport documentation: if the connection to Amazon
// SQS is lost before a message can be deleted, even if it was processed,
// it becomes available to other consumers when the visibility timeout
// expires.
func TestOutageFailsAcksDeletesAndVisibilityChanges(t *testing.T) {
	r, in := faultRig(t, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, From: 2, Until: 3})
	dlq := r.queue(Config{Name: "dlq"})
	q := r.queue(Config{Name: "orders", Faults: in, VisibilityTimeout: 4, DeadLetter: dlq})
	m := r.send(q, "a", 0)
	r.to(1)
	d := r.recv(q, 1)[0]
	r.to(2)
	for op, call := range map[string]func() error{
		"ack":               func() error { return q.Ack(d.Receipt) },
		"nack":              func() error { return q.Nack(d.Receipt, 0) },
		"change visibility": func() error { return q.ChangeVisibility(d.Receipt, 10) },
		"dead-letter":       func() error { return q.DeadLetter(d.Receipt, "x") },
	} {
		err := call()
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, sim.ErrUnavailable) || !errors.Is(err, ErrConnection) {
			t.Fatalf("%s while down: %v", op, err)
		}
		if !strings.Contains(err.Error(), "queue:orders: "+op+" (rule down)") {
			t.Fatalf("%s: the error does not name the call: %v", op, err)
		}
	}
	rej := r.events(sim.KindRejected)
	if len(rej) != 4 {
		t.Fatalf("rejections:\n%s", r.text())
	}
	for _, e := range rej {
		if e.Msg != m.ID || e.Actor != "w1" {
			t.Fatalf("rejection %+v", e)
		}
	}
	if mt := q.Metrics(); mt.InFlight != 1 || mt.Acks != 0 || mt.Nacks != 0 || mt.DeadLettered != 0 || dlq.Len() != 0 {
		t.Fatalf("something changed while down: %+v", mt)
	}
	r.to(5)
	if ds := r.recv(q, 1); len(ds) != 1 || ds[0].ReceiveCount != 2 {
		t.Fatalf("the message did not come back after its timeout: %+v", ds)
	}
}

// TestConsumerHandlesFailedAck: the broker is down exactly when a consumer
// acks (after a slow handler). The consumer counts the refusal and carries
// on; the queue traces it; the message comes back after its visibility
// timeout and is processed again (a naive handler applies it twice, which
// exactly-once reports, and at-least-once holds). With acks before
// processing, a message whose ack failed is not processed then, so
// at-most-once holds.
//
// NServiceBus's SQS transport documentation: a message processed but not
// deleted becomes available to other consumers when the visibility timeout
// expires, so endpoints may process the same message more than once.
func TestConsumerHandlesFailedAck(t *testing.T) {
	// The rule matches only the worker's calls: its 2nd is the ack.
	down := faults.Rule{Name: "down", Point: faults.BrokerUnavailable, Nth: 2, Match: faults.Match{Consumer: "w"}}
	t.Run("after-process", func(t *testing.T) {
		w := newWorld(t, 1, []faults.Rule{down}, Config{Name: "orders", VisibilityTimeout: 5})
		c := w.consumer(ConsumerConfig{Name: "w", Handler: timed{sim.Effect(""), 2}})
		w.producer(producer.Config{Name: "p", Count: 1})
		w.run(30)
		want := "t=1 received m1 w\nt=3 processed m1 w\nt=3 rejected m1 w\nt=6 visibility_expired m1 w\nt=6 redelivered m1 w\nt=8 processed m1 w\nt=8 acked m1 w"
		if got := kinds(w.rec.Events(), sim.KindReceived, sim.KindProcessed, sim.KindRejected, sim.KindVisibilityExpired, sim.KindRedelivered, sim.KindAcked); got != want {
			t.Fatalf("trace\n%s\nwant\n%s", got, want)
		}
		if rej := w.events(sim.KindRejected); !strings.Contains(rej[0].Detail, "queue:orders: ack (rule down)") {
			t.Fatalf("rejection %+v", rej[0])
		}
		if s := c.Stats(); s.AckFailed != 1 || s.StaleAcks != 0 || s.Processed != 2 {
			t.Fatalf("stats %+v", s)
		}
		l := w.env.Ledger
		if err := sim.Check(l, sim.NoLoss(), sim.AtLeastOnce("orders")); err != nil {
			t.Fatal(err)
		}
		if err := sim.Check(l, sim.ExactlyOnce("orders")); err == nil {
			t.Fatal("exactly-once passed a message applied twice")
		}
	})
	t.Run("before-process", func(t *testing.T) {
		w := newWorld(t, 1, []faults.Rule{down}, Config{Name: "orders", VisibilityTimeout: 5})
		c := w.consumer(ConsumerConfig{Name: "w", AckMode: AckBeforeProcess})
		w.producer(producer.Config{Name: "p", Count: 1})
		w.run(30)
		if s := c.Stats(); s.AckFailed != 1 || s.Processed != 1 || s.Lost != 0 {
			t.Fatalf("stats %+v", s)
		}
		if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders")); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDLQKeepsEnqueueTimeStandardResetsFIFO: a standard dead letter keeps
// its enqueue time, so the DLQ's retention counts from the first send,
// while its age (OldestAge) counts from the move; a FIFO dead letter is
// enqueued anew. Two standard dead letters moved in the opposite order of
// their sends expire in the order of their sends.
//
// SQS (developer guide, "Setting-up dead-letter queue retention"): for
// standard queues the expiration of a message is always based on its
// original enqueue timestamp, which a move to a dead-letter queue leaves
// unchanged (ApproximateAgeOfOldestMessage tells when it moved); for FIFO
// queues the enqueue timestamp resets when the message is moved.
func TestDLQKeepsEnqueueTimeStandardResetsFIFO(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		r := newRig(t)
		dlq := r.queue(Config{Name: "dlq", FIFO: fifo, Retention: 10})
		q := r.queue(Config{Name: "orders", FIFO: fifo, DeadLetter: dlq, VisibilityTimeout: 100})
		r.to(1)
		m1 := r.send(q, "a", 0)
		r.to(5)
		m2 := r.send(q, "b", 0)
		ds := r.recv(q, 10)
		r.to(6)
		if err := q.DeadLetter(ds[1].Receipt, "m2 first"); err != nil {
			t.Fatal(err)
		}
		r.to(8)
		if err := q.DeadLetter(ds[0].Receipt, "then m1"); err != nil {
			t.Fatal(err)
		}
		r.to(9)
		if age := dlq.Metrics().OldestAge; age != 3 {
			t.Fatalf("fifo=%v: the DLQ's oldest age %d, want 3 (since m2 moved)", fifo, age)
		}
		res := dlq.AppendResidents(nil, 10)
		wantEnq := map[bool][2]sim.Tick{false: {5, 1}, true: {6, 8}}[fifo]
		if len(res) != 2 || res[0].Msg != m2.ID || res[0].Entered != 6 || res[0].Enqueued != wantEnq[0] || res[1].Enqueued != wantEnq[1] {
			t.Fatalf("fifo=%v: residents %+v", fifo, res)
		}
		expiredAt := map[sim.ID]sim.Tick{}
		for r.w.Now() < 30 {
			r.to(r.w.Now() + 1)
			for _, e := range r.events(sim.KindExpired) {
				if _, ok := expiredAt[e.Msg]; !ok {
					expiredAt[e.Msg] = e.Tick
				}
			}
		}
		want := map[bool]map[sim.ID]sim.Tick{false: {m1.ID: 11, m2.ID: 15}, true: {m2.ID: 16, m1.ID: 18}}[fifo]
		if expiredAt[m1.ID] != want[m1.ID] || expiredAt[m2.ID] != want[m2.ID] {
			t.Fatalf("fifo=%v: expired at %v, want %v", fifo, expiredAt, want)
		}
		for _, e := range r.events(sim.KindExpired) {
			if e.Cause != sim.CauseRetention || e.Where != dlq.Where() {
				t.Fatalf("expired %+v", e)
			}
		}
		if dlq.Len() != 0 {
			t.Fatalf("fifo=%v: dlq len %d", fifo, dlq.Len())
		}
	}
}

// TestReceiveVisibilityTimeoutOverride: a receive's own visibility timeout
// applies to the messages it returns, and only to them; a consumer pool
// can set it for all its receives.
//
// SQS (API reference, ReceiveMessage): the VisibilityTimeout parameter is
// applied to the messages Amazon SQS returns in the response; without it
// the queue's visibility timeout is used.
func TestReceiveVisibilityTimeoutOverride(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", VisibilityTimeout: 10})
	r.send(q, "a", 0)
	ds, err := q.ReceiveWith("w1", ReceiveOptions{Max: 5, VisibilityTimeout: 3})
	if err != nil || len(ds) != 1 {
		t.Fatal(ds, err)
	}
	r.to(2)
	if len(r.recv(q, 1)) != 0 {
		t.Fatal("visible before its own timeout of 3")
	}
	r.to(3)
	if d := r.recv(q, 1); len(d) != 1 || d[0].ReceiveCount != 2 {
		t.Fatalf("at 3: %+v", d)
	}
	r.to(12)
	if len(r.recv(q, 1)) != 0 {
		t.Fatal("the override outlived its receive")
	}
	r.to(13)
	if len(r.recv(q, 1)) != 1 {
		t.Fatal("the queue's timeout of 10 did not apply")
	}
	if _, err := q.ReceiveWith("w1", ReceiveOptions{VisibilityTimeout: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	// A consumer pool's override.
	w := newWorld(t, 1, nil, Config{Name: "orders", VisibilityTimeout: 20})
	w.consumer(ConsumerConfig{Name: "w", VisibilityTimeout: 2, Handler: timed{sim.Effect(""), 5}})
	w.producer(producer.Config{Name: "p", Count: 1})
	_ = w.w.Run(4)
	if exp := w.events(sim.KindVisibilityExpired); len(exp) != 1 || exp[0].Tick != 3 {
		t.Fatalf("the pool's timeout of 2 did not apply:\n%s", textOf(w.rec.Events()))
	}
}

// TestQueueLevelDelay: a queue's Delay hides every new message for that
// long; on a standard queue a per-message delay replaces it, on a FIFO
// queue it applies to every message and keeps the order.
//
// SQS (developer guide, "Amazon SQS delay queues"): any message sent to a
// delay queue remains invisible to consumers for the duration of the delay
// period; SendMessage's DelaySeconds: if you don't specify a value, the
// default value for the queue applies.
func TestQueueLevelDelay(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", Delay: 4})
	a := r.send(q, "a", 0)
	b := r.send(q, "b", 2)
	if err := q.Publish(r.env.NewMessage("c", nil, sim.Headers{})); err != nil {
		t.Fatal(err)
	}
	if m := q.Metrics(); m.Delayed != 3 || m.Visible != 0 {
		t.Fatalf("%+v", m)
	}
	r.to(2)
	if ds := r.recv(q, 10); !sameIDs(ids(ds), b.ID) {
		t.Fatalf("at 2: %v", ids(ds))
	}
	r.to(4)
	if ds := r.recv(q, 10); len(ds) != 2 || ds[0].Message.ID != a.ID {
		t.Fatalf("at 4: %v", ids(ds))
	}
	f := r.queue(Config{Name: "orders.fifo", FIFO: true, Delay: 3})
	x1, x2 := r.send(f, "A", 0), r.send(f, "A", 0)
	r.to(6)
	if len(r.recv(f, 10)) != 0 {
		t.Fatal("a FIFO message visible before the queue's delay")
	}
	r.to(7)
	if ds := r.recv(f, 10); !sameIDs(ids(ds), x1.ID, x2.ID) {
		t.Fatalf("FIFO at 7: %v", ids(ds))
	}
	if _, err := New(r.w, Config{Name: "bad", Delay: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatal(err)
	}
}

// TestLongPolling: a long-polling consumer keeps one receive call open up
// to WaitTime ticks and gets a message the tick it becomes visible; it
// makes far fewer calls, and far fewer empty ones, than a short-polling
// one. The queue's ReceiveWaitTime is the default wait; ShortPoll opts out.
//
// SQS (developer guide, "Using the appropriate polling mode"): long polling
// lets you consume messages as soon as they become available and
// decreases the number of empty receives; short polling returns responses
// immediately, even if the queue is empty.
func TestLongPolling(t *testing.T) {
	polls := func(qc Config, cc ConsumerConfig) (ConsumerStats, Metrics, []sim.Event) {
		w := newWorld(t, 1, nil, qc)
		c := w.consumer(cc)
		w.producer(producer.Config{Name: "p", Count: 2, Rate: 1})
		w.w.At(13, "late", func() { _ = w.q.Send(w.env.NewMessage("late", nil, sim.Headers{}), 0) })
		if err := w.w.Run(20); err != nil {
			t.Fatal(err)
		}
		return c.Stats(), w.q.Metrics(), w.events(sim.KindReceived)
	}
	short, sm, sr := polls(Config{Name: "orders"}, ConsumerConfig{Name: "w"})
	long, lm, lr := polls(Config{Name: "orders"}, ConsumerConfig{Name: "w", WaitTime: 5})
	if short.Polls != 20 || short.EmptyPolls != 17 || sm.EmptyReceives != 17 {
		t.Fatalf("short polling: %+v %+v", short, sm)
	}
	// Calls: t=1 and t=2 (answered at once), t=3..8 (empty), t=9..14
	// (answered at 13 by the late message), t=14..19 (empty), t=20..25
	// (still open at the end).
	if long.Polls != 6 || long.EmptyPolls != 2 || lm.EmptyReceives != 2 {
		t.Fatalf("long polling: %+v %+v", long, lm)
	}
	if len(sr) != 3 || len(lr) != 3 || lr[2].Tick != 13 || sr[2].Tick != 13 {
		t.Fatalf("receives short %v long %v", sr, lr)
	}
	queueWait, _, _ := polls(Config{Name: "orders", ReceiveWaitTime: 5}, ConsumerConfig{Name: "w"})
	optOut, _, _ := polls(Config{Name: "orders", ReceiveWaitTime: 5}, ConsumerConfig{Name: "w", WaitTime: ShortPoll})
	if queueWait != long || optOut != short {
		t.Fatalf("queue wait %+v, short-poll opt-out %+v", queueWait, optOut)
	}
	for _, bad := range []ConsumerConfig{{WaitTime: -2}, {WaitTime: MaxDuration + 1}, {VisibilityTimeout: -1}} {
		bad.Name, bad.Queue = "x", newWorld(t, 1, nil, Config{Name: "q"}).q
		if err := bad.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestInFlightLimit: at the in-flight cap a receive is refused and traced:
// a short poll on a standard queue fails with ErrOverLimit, a FIFO receive
// and a long poll return nothing without an error, and a receive that
// reaches the cap returns what it took. A strict queue's cap is SQS's.
//
// SQS (developer guide, "Amazon SQS standard queue quotas"): if you reach
// the in-flight quota while using short polling, Amazon SQS returns the
// OverLimit error; with long polling it returns no error. ("Amazon SQS
// FIFO queue quotas"): if the FIFO limit is reached, Amazon SQS does not
// return an error.
func TestInFlightLimit(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders", MaxInFlight: 2})
	for i := 0; i < 4; i++ {
		r.send(q, "k", 0)
	}
	if ds := r.recv(q, 5); len(ds) != 2 {
		t.Fatalf("took %d at a cap of 2", len(ds))
	}
	ds, err := q.Receive("w1", 1)
	if !errors.Is(err, ErrOverLimit) || len(ds) != 0 {
		t.Fatalf("a short poll at the cap: %v %v", ds, err)
	}
	rej := r.events(sim.KindRejected)
	if len(rej) != 2 || rej[1].Actor != "w1" || !strings.Contains(rej[1].Detail, "2 messages in flight") {
		t.Fatalf("refusals:\n%s", r.text())
	}
	if m := q.Metrics(); m.OverLimit != 2 || m.InFlight != 2 || m.Visible != 2 {
		t.Fatalf("%+v", m)
	}
	// A long poll at the cap waits without an error.
	if ds, err := q.receive(nil, "w1", ReceiveOptions{}, true, false); err != nil || len(ds) != 0 {
		t.Fatalf("a long poll at the cap: %v %v", ds, err)
	}
	f := r.queue(Config{Name: "orders.fifo", FIFO: true, MaxInFlight: 1})
	r.send(f, "A", 0)
	r.send(f, "B", 0)
	if ds, err := f.Receive("w1", 5); err != nil || len(ds) != 1 {
		t.Fatalf("fifo: %v %v", ds, err)
	}
	if ds, err := f.Receive("w1", 5); err != nil || len(ds) != 0 {
		t.Fatalf("fifo at the cap: %v %v", ds, err)
	}
	if got := r.queue(Config{Name: "strict", Strict: true}).Config().MaxInFlight; got != StrictInFlightLimit {
		t.Fatalf("strict cap %d", got)
	}
	if _, err := New(r.w, Config{Name: "bad", MaxInFlight: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatal(err)
	}
	// Consumers at the cap wait, and drain once acks free it.
	w := newWorld(t, 1, nil, Config{Name: "orders", MaxInFlight: 1})
	c := w.consumer(ConsumerConfig{Name: "w", Instances: 3, Handler: timed{sim.Effect(""), 2}})
	w.producer(producer.Config{Name: "p", Count: 4, Rate: 4})
	w.run(50)
	if c.Stats().Processed != 4 || w.q.Metrics().OverLimit == 0 {
		t.Fatalf("stats %+v metrics %+v", c.Stats(), w.q.Metrics())
	}
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders")); err != nil {
		t.Fatal(err)
	}
}

// TestStrictBatchCap: a strict queue refuses receives of more than 10
// messages, and consumers that would make them; the default is
// permissive.
//
// SQS (API reference, ReceiveMessage): MaxNumberOfMessages, the maximum
// number of messages to return, has valid values 1 to 10.
func TestStrictBatchCap(t *testing.T) {
	r := newRig(t)
	strict := r.queue(Config{Name: "strict", Strict: true})
	loose := r.queue(Config{Name: "loose"})
	for i := 0; i < 12; i++ {
		r.send(strict, "k", 0)
		r.send(loose, "k", 0)
	}
	if _, err := strict.Receive("w", 11); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("11 from a strict queue: %v", err)
	}
	if ds, err := strict.Receive("w", 10); err != nil || len(ds) != 10 {
		t.Fatalf("10 from a strict queue: %d %v", len(ds), err)
	}
	if ds, err := loose.Receive("w", 12); err != nil || len(ds) != 12 {
		t.Fatalf("12 from a permissive queue: %d %v", len(ds), err)
	}
	if _, err := NewConsumer(r.w, ConsumerConfig{Queue: strict, Name: "big", Batch: 11}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a consumer with batch 11 on a strict queue: %v", err)
	}
	if _, err := NewConsumer(r.w, ConsumerConfig{Queue: strict, Name: "ok", Batch: 10}); err != nil {
		t.Fatal(err)
	}
}

// TestFIFOBrokerDuplicateSuppressedInWindow: on a FIFO queue a
// broker.duplicate is suppressed while the message's deduplication ID is
// in the window (traced as deduplicated, no copy), so even a naive handler
// applies every message once; past the window the copy gets in.
//
// SQS (developer guide, "Amazon SQS FIFO queue key terms"): messages with
// the same deduplication ID sent within the deduplication interval are
// treated as duplicates and only one copy is delivered, which ensures
// exactly-once delivery.
func TestFIFOBrokerDuplicateSuppressedInWindow(t *testing.T) {
	w := newWorld(t, 1, []faults.Rule{{Name: "twice", Point: faults.BrokerDuplicate}}, Config{Name: "orders", FIFO: true, DedupWindow: 50})
	c := w.consumer(ConsumerConfig{Name: "w", Batch: 3})
	w.producer(producer.Config{Name: "p", Count: 6, KeyPattern: "k-%d", KeyCount: 2})
	w.run(60)
	m := w.q.Metrics()
	if m.Duplicated != 0 || m.Deduplicated != 6 || w.count(sim.KindDeduplicated) != 6 || w.count(sim.KindFault) != 6 {
		t.Fatalf("metrics %+v", m)
	}
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders"), sim.OrderedPerKey("orders")); err != nil {
		t.Fatal(err)
	}
	if c.Stats().Processed != 6 {
		t.Fatalf("%+v", c.Stats())
	}
	// Past the window the broker's copy is delivered.
	r, in := faultRig(t, faults.Rule{Name: "twice", Point: faults.BrokerDuplicate, Count: 2})
	q := r.queue(Config{Name: "o.fifo", FIFO: true, DedupWindow: 5, Faults: in})
	r.send(q, "A", 0)
	r.to(4)
	d := r.recv(q, 1) // age 4: suppressed
	_ = q.Ack(d[0].Receipt)
	if q.Len() != 0 {
		t.Fatal("a copy inside the window")
	}
	r.send(q, "B", 0)
	r.to(9)
	d = r.recv(q, 1) // age 5: the window is over
	_ = q.Ack(d[0].Receipt)
	if q.Len() != 1 || q.Metrics().Duplicated != 1 {
		t.Fatalf("len %d metrics %+v", q.Len(), q.Metrics())
	}
}

// TestFIFOContentBasedDedup: with content-based deduplication the body's
// SHA-256 is the deduplication ID: a new message with the same body is
// absorbed into the first, another body is accepted, and an explicit
// deduplication ID overrides the hash.
//
// SQS (API reference, SendMessage MessageDeduplicationId): with
// ContentBasedDeduplication Amazon SQS uses a SHA-256 hash of the body
// (not the attributes) as the deduplication ID; an explicit
// MessageDeduplicationId overrides the generated one.
func TestFIFOContentBasedDedup(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "o.fifo", FIFO: true, DedupWindow: 10, ContentBasedDedup: true})
	send := func(body string, h sim.Headers) sim.Message {
		m := r.env.NewMessage("A", []byte(body), h)
		if err := q.Send(m, 0); err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := send("order 1", sim.Headers{})
	again := send("order 1", sim.Headers{Type: "other attributes"})
	send("order 2", sim.Headers{})
	send("order 1", sim.Headers{}.With(DedupHeader, "explicit"))
	sum := sha256.Sum256([]byte("order 3"))
	send("order 3", sim.Headers{})
	byHash := send("order 4", sim.Headers{}.With(DedupHeader, hex.EncodeToString(sum[:])))
	if q.Len() != 4 || q.Metrics().Deduplicated != 2 {
		t.Fatalf("len %d %+v\n%s", q.Len(), q.Metrics(), r.text())
	}
	l := r.env.Ledger
	if rec, _ := l.Record(again.ID); rec.State != sim.StateAbsorbed || rec.Origin != first.ID {
		t.Fatalf("same body: %+v", rec)
	}
	if rec, _ := l.Record(byHash.ID); rec.State != sim.StateAbsorbed {
		t.Fatalf("explicit id equal to a hash: %+v", rec)
	}
	for _, bad := range []Config{{Name: "x", ContentBasedDedup: true}, {Name: "y", FIFO: true, ContentBasedDedup: true}} {
		if _, err := New(r.w, bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestFIFOPerMessageDelayRefused: a FIFO queue refuses a per-message
// delay: the send fails with ErrInvalidArgument, is traced as rejected,
// and nothing is enqueued.
//
// SQS (API reference, SendMessage DelaySeconds): when you set FifoQueue,
// you can't set DelaySeconds per message; you can set this parameter only
// on a queue level.
func TestFIFOPerMessageDelayRefused(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "o.fifo", FIFO: true})
	m := r.env.NewMessage("A", nil, sim.Headers{Source: "shop"})
	if err := q.Send(m, 3); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "per-message delay") {
		t.Fatal(err)
	}
	if rej := r.events(sim.KindRejected); len(rej) != 1 || rej[0].Msg != m.ID || rej[0].Actor != "shop" {
		t.Fatalf("trace:\n%s", r.text())
	}
	if q.Len() != 0 || len(r.events(sim.KindSent)) != 0 {
		t.Fatal("the message was accepted")
	}
	if err := q.Send(m, 0); err != nil || q.Len() != 1 {
		t.Fatal(err)
	}
}

// TestFIFOReceiveReturnsRunOfOneGroup: one FIFO receive returns the
// visible messages at the head of a group, in order, before it moves to
// the next group; a delayed message holds back the ones behind it; while
// any message of a group is in flight nobody receives from it. A consumer
// processes such a batch in order, and when a message fails, hands the
// rest of its group back unprocessed while other groups go on.
//
// SQS (developer guide, "FIFO queue delivery logic"): Amazon SQS attempts
// to return as many messages with the same message group ID as possible in
// a single call, and you can't receive more messages of that group until
// they are deleted or visible again. Powertools for AWS Lambda's SQS FIFO
// batch processor (skip group on error): when a record fails, only the
// records of the same message group are failed.
func TestFIFOReceiveReturnsRunOfOneGroup(t *testing.T) {
	r, in := faultRig(t, faults.Rule{Name: "late", Point: faults.BrokerDelay, Match: faults.Match{Key: "B"}, Nth: 2, Param: 3})
	q := r.queue(Config{Name: "o.fifo", FIFO: true, Faults: in})
	a1, b1, a2 := r.send(q, "A", 0), r.send(q, "B", 0), r.send(q, "A", 0)
	b2, a3, b3 := r.send(q, "B", 0), r.send(q, "A", 0), r.send(q, "B", 0) // b2 is delayed to t=3
	ds := r.recv(q, 4)
	if !sameIDs(ids(ds), a1.ID, a2.ID, a3.ID, b1.ID) {
		t.Fatalf("batch %v", ids(ds))
	}
	if ds2, _ := q.Receive("w2", 10); len(ds2) != 0 {
		t.Fatalf("a second receiver got %v from busy groups", ids(ds2))
	}
	for _, d := range ds {
		_ = q.Ack(d.Receipt)
	}
	if ds := r.recv(q, 10); len(ds) != 0 {
		t.Fatalf("b3 overtook the delayed b2: %v", ids(ds))
	}
	r.to(3)
	if ds := r.recv(q, 10); !sameIDs(ids(ds), b2.ID, b3.ID) {
		t.Fatalf("after the delay %v", ids(ds))
	}
	// A consumer: A's second message fails, so A's third is handed back;
	// group B goes on; the order of both groups holds.
	w := newWorld(t, 1, []faults.Rule{{Name: "flaky", Point: faults.HandlerTransient, Nth: 2, Match: faults.Match{Key: "A"}}},
		Config{Name: "orders", FIFO: true, VisibilityTimeout: 10})
	c := w.consumer(ConsumerConfig{Name: "w", Batch: 10, Handler: timed{sim.Effect(""), 1}, Retry: FixedRetry(2)})
	for _, k := range []string{"A", "A", "A", "B", "B"} {
		_ = w.q.Send(w.env.NewMessage(k, nil, sim.Headers{}), 0)
	}
	w.run(50)
	var got []string
	for _, e := range w.events(sim.KindProcessed) {
		got = append(got, e.Tick.String()+" "+e.Msg.String())
	}
	// One at a time (1 tick each): m1 at 2, m2 fails at 3 (nacked with a
	// delay of 2; m3 handed back), m4 at 4, m5 at 5; then the batch
	// [m2 m3] received at 5: m2 at 6, m3 at 7.
	if want := "t=2 m1 t=4 m4 t=5 m5 t=6 m2 t=7 m3"; strings.Join(got, " ") != want {
		t.Fatalf("processed %v, want %s\n%s", got, want, textOf(w.rec.Events()))
	}
	if s := c.Stats(); s.Released != 1 || s.Failed != 1 {
		t.Fatalf("stats %+v", s)
	}
	if err := sim.Check(w.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("orders"), sim.OrderedPerKey("orders")); err != nil {
		t.Fatal(err)
	}
}

// TestDedupWindowBoundary: a deduplication ID is remembered while its age
// is below the window and forgotten from the tick its age equals the
// window, for sends and for broker duplicates alike, whether or not the
// queue's step has already expired the entry.
//
// SQS (API reference, SendMessage MessageDeduplicationId): messages sent
// with the same deduplication ID are accepted but not delivered during
// the 5-minute deduplication interval, the interval that starts with the
// first successful send.
func TestDedupWindowBoundary(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "o.fifo", FIFO: true, DedupWindow: 5})
	r.to(2)
	m := r.send(q, "A", 0)
	r.to(6) // age 4
	_ = q.Send(m, 0)
	if q.Len() != 1 || q.Metrics().Deduplicated != 1 {
		t.Fatalf("age 4: len %d %+v", q.Len(), q.Metrics())
	}
	r.to(7) // age 5
	_ = q.Send(m, 0)
	if q.Len() != 2 {
		t.Fatalf("age 5: len %d: the ID was still remembered", q.Len())
	}
	// The same boundary without the step's expiry: a send in the tick
	// before the queue steps (a timeline action at tick 12 for a send at
	// 7 runs before the broker phase).
	w := newWorld(t, 1, nil, Config{Name: "orders", FIFO: true, DedupWindow: 5})
	x := w.env.NewMessage("B", nil, sim.Headers{})
	var n []int
	for _, at := range []sim.Tick{7, 11, 12} {
		w.w.At(at, "send", func() { _ = w.q.Send(x, 0); n = append(n, w.q.Len()) })
	}
	_ = w.w.Run(12)
	if len(n) != 3 || n[0] != 1 || n[1] != 1 || n[2] != 2 {
		t.Fatalf("lengths after the sends at 7, 11 (age 4) and 12 (age 5): %v", n)
	}
}
