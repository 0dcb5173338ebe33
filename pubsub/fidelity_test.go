package pubsub

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// Tests for the pub/sub bullets of issue 13 (broker fidelity).

// TestIssue13DuplicateOnceUnderBlock is the livelock of issue 13: a Block
// subscriber with a buffer of 1 and broker.duplicate firing on every
// copy. The duplicate that does not fit is held by the broker and
// re-offered on the next tick; it used to roll the duplicate again at
// every re-offer, so one publish was handled 40 times in 40 ticks and the
// publisher was refused (back-pressure) for good. Now the duplicate is
// decided once, when the copy is first offered: every publish is handled
// exactly twice (deliveries 1 and 2) and the publisher gets every other
// tick.
//
// Real behaviour: core NATS delivers a message to each interested
// subscriber at most once (NATS docs, "Core NATS": at-most-once quality of
// service), so a broker-side duplicate is one extra delivery of one
// publish, never a stream of them.
func TestIssue13DuplicateOnceUnderBlock(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "dup", Point: faults.BrokerDuplicate})
	var h recorder
	r.sub(SubscriberConfig{Name: "s", Pattern: "x", Buffer: 1, Policy: Block, Handler: &h})
	var next *sim.Message
	var sent []sim.ID
	refused := 0
	r.producer(func(sim.Tick) {
		if next == nil {
			m := r.env.NewMessage(fmt.Sprintf("k%d", len(sent)), nil, sim.Headers{Type: "x"})
			next = &m
		}
		if err := r.b.Publish(*next); err != nil {
			if !errors.Is(err, ErrBackpressure) {
				t.Fatal(err)
			}
			refused++
			return // retry the same message next tick
		}
		sent = append(sent, next.ID)
		next = nil
	})
	r.run(40)
	if len(sent) < 19 {
		t.Fatalf("the publisher got %d publishes through in 40 ticks (%d refused): starved", len(sent), refused)
	}
	count := map[sim.ID]int{}
	for _, id := range h.got {
		count[id]++
	}
	for i, id := range sent {
		if want := 2; count[id] != want && !(i == len(sent)-1 && count[id] == 1) {
			t.Errorf("%v handled %d times, want %d (the copy and one duplicate)", id, count[id], want)
		}
	}
	fired := 0
	for _, e := range r.events(sim.KindFault, "s") {
		if e.Detail == string(faults.BrokerDuplicate) {
			fired++
		}
	}
	if fired != len(sent) || r.b.Metrics().Duplicated != len(sent) {
		t.Errorf("broker.duplicate fired %d times (metrics %+v) for %d publishes; want once per publish", fired, r.b.Metrics(), len(sent))
	}
	for _, e := range r.events(sim.KindDelivered, "s") {
		if e.Attempt != 1 && e.Attempt != 2 {
			t.Errorf("delivery %d of %v: a held duplicate bred another", e.Attempt, e.Msg)
		}
	}
	r.refold()
}

// TestIssue13DisconnectDropsHeldCopies is issue 13's delayed copy that
// survived a disconnect: a copy held back by broker.delay (and, likewise,
// one held by broker.reorder or waiting for room in a full Block buffer)
// was delivered on the new connection after a disconnect and a reconnect.
// Disconnect now throws every copy the broker holds for the subscriber
// away with the buffer, booked as the buffered ones are: "lost" with cause
// disconnect.
//
// Real behaviour: the NATS server keeps no per-client state; a
// subscription exists only as long as its connection, and the client
// re-sends its subscriptions after reconnecting (NATS docs, "Connection
// lifecycle"), so messages routed to the dropped connection never reach
// the new one (core NATS is at-most-once).
func TestIssue13DisconnectDropsHeldCopies(t *testing.T) {
	r := newRig(t, 1, 0,
		faults.Rule{Name: "late", Point: faults.BrokerDelay, Nth: 1, Param: 4, Match: faults.Match{Consumer: "delayed"}},
		faults.Rule{Name: "swap", Point: faults.BrokerReorder, Nth: 1, Match: faults.Match{Consumer: "swapped"}},
		faults.Rule{Name: "dup", Point: faults.BrokerDuplicate, Nth: 1, Match: faults.Match{Consumer: "blocked"}},
	)
	var d, s, b recorder
	subs := []*Subscriber{
		r.sub(SubscriberConfig{Name: "delayed", Pattern: "x", Handler: &d}),
		r.sub(SubscriberConfig{Name: "swapped", Pattern: "x", Handler: &s}),
		r.sub(SubscriberConfig{Name: "blocked", Pattern: "x", Handler: &b, Buffer: 1, Policy: Block, Start: 5}),
	}
	var m1 sim.ID
	r.w.At(1, "publish", func() { m1 = r.mustPublish("x", "k").ID })
	for _, sub := range subs {
		r.w.At(2, "disconnect "+sub.Name(), sub.Disconnect)
		r.w.At(3, "connect "+sub.Name(), func() {
			if err := sub.Connect(); err != nil {
				t.Error(err)
			}
		})
	}
	r.run(1)
	if m := r.b.Metrics(); m.InFlight != 3 {
		t.Fatalf("metrics %+v after the publish, want 3 copies held (delay, reorder, Block duplicate)", m)
	}
	r.run(9)
	if len(d.got)+len(s.got)+len(b.got) != 0 {
		t.Errorf("handled after the reconnect: delayed %v, swapped %v, blocked %v; want nothing", d.got, s.got, b.got)
	}
	for _, name := range []string{"delayed", "swapped", "blocked"} {
		o, ok := r.verdict(m1, name)
		if !ok || o.Verdict != sim.VerdictLost || o.Cause != sim.CauseDisconnect {
			t.Errorf("%s: outcome %+v, want lost with cause disconnect", name, o)
		}
	}
	lost := r.events(sim.KindLost, "")
	if len(lost) != 4 { // delayed, swapped, and the blocked subscriber's buffered copy and held duplicate
		t.Errorf("lost events %+v, want 4", lost)
	}
	if m := r.b.Metrics(); m.Discarded != 4 || m.InFlight != 0 || !r.b.Idle() {
		t.Errorf("metrics %+v", m)
	}
	r.refold()
}

// TestIssue13FanOutRetriesWithBackoff is the SNS-to-SQS retry of issue
// 13: a forward the queue refuses is retried, first at once, then with a
// doubling backoff, and lost (cause forward failed, before any consumer)
// only when every attempt was refused.
//
// Real behaviour: SNS's delivery policy for SQS endpoints retries a failed
// delivery 3 times without delay, twice 1 second apart, 10 times with
// exponential backoff from 1 to 20 seconds and then 100,000 times 20
// seconds apart; only when the policy is exhausted does SNS discard the
// message, unless a dead-letter queue is attached (Amazon SNS Developer
// Guide, "Amazon SNS message delivery retries").
func TestIssue13FanOutRetriesWithBackoff(t *testing.T) {
	type attempt struct {
		tick sim.Tick
		try  int
	}
	run := func(t *testing.T, outage sim.Tick, retry *ForwardRetry) (*rig, []attempt, sim.ID) {
		r := newRig(t, 1, 0, faults.Rule{Name: "queue-down", Point: faults.BrokerUnavailable, From: 1, Until: outage, Match: faults.Match{Where: "queue:mail"}})
		q := r.newQueue(queue.Config{Name: "mail"})
		r.newConsumer(queue.ConsumerConfig{Queue: q, Name: "mailer"})
		if err := r.b.FanOutWith(FanOutConfig{Name: "mail", Pattern: "orders.>", Target: q, Retry: retry}); err != nil {
			t.Fatal(err)
		}
		var m sim.ID
		r.w.At(1, "publish", func() { m = r.mustPublish("orders.placed", "o-1").ID })
		r.run(40)
		var tries []attempt
		for _, e := range r.events(sim.KindRejected, "mail") {
			tries = append(tries, attempt{e.Tick, e.Attempt})
		}
		r.refold()
		return r, tries, m
	}
	t.Run("default policy outlasts a short outage", func(t *testing.T) {
		r, tries, m := run(t, 6, nil)
		// 1 + 3 immediate at t=1, backoff retries at t=2 and t=4 refused, t=8 accepted.
		want := []attempt{{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 5}, {4, 6}}
		if !slices.Equal(tries, want) {
			t.Errorf("refused attempts %v, want %v", tries, want)
		}
		fw := r.events(KindForwarded, "mail")
		if len(fw) != 1 || fw[0].Tick != 8 || fw[0].Origin != m {
			t.Errorf("forwarded %+v, want the copy of %v at tick 8", fw, m)
		}
		if err := sim.Check(r.w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("mail")); err != nil {
			t.Error(err)
		}
		if met := r.b.Metrics(); met.ForwardRetries != 6 || met.ForwardFailed != 0 || met.Retrying != 0 || !r.b.Idle() {
			t.Errorf("metrics %+v", met)
		}
	})
	t.Run("default policy gives up after nine attempts", func(t *testing.T) {
		r, tries, m := run(t, 100, nil)
		if len(tries) != DefaultForwardRetry.Attempts() || tries[len(tries)-1] != (attempt{24, 9}) {
			t.Errorf("refused attempts %v, want 9, the last at tick 24 (1+1+2+4+8+8 ticks)", tries)
		}
		losses := r.w.Ledger().Losses()
		// Lost for the queue's logical consumer, which never got the copy.
		if len(losses) != 1 || losses[0].Cause != sim.CauseForwardFailed || losses[0].Consumer != "mail" || losses[0].Tick != 24 ||
			r.w.Ledger().Root(losses[0].ID) != m {
			t.Errorf("losses %+v, want the copy of %v lost at tick 24 (forward failed)", losses, m)
		}
		if err := sim.Check(r.w.Ledger(), sim.NoLoss()); err == nil || !strings.Contains(err.Error(), "forward failed") {
			t.Errorf("no-loss: %v, want the forward failure reported", err)
		}
	})
	t.Run("custom policy", func(t *testing.T) {
		r, tries, _ := run(t, 100, &ForwardRetry{Immediate: 1, Backoff: 3, Delay: 3, MaxDelay: 5})
		want := []attempt{{1, 1}, {1, 2}, {4, 3}, {9, 4}, {14, 5}}
		if !slices.Equal(tries, want) {
			t.Errorf("refused attempts %v, want %v", tries, want)
		}
		if met := r.b.Metrics(); met.ForwardFailed != 1 || met.ForwardRetries != 4 {
			t.Errorf("metrics %+v", met)
		}
	})
	t.Run("no retry", func(t *testing.T) {
		r, tries, _ := run(t, 100, &NoForwardRetry)
		if !slices.Equal(tries, []attempt{{1, 1}}) || r.b.Metrics().ForwardFailed != 1 {
			t.Errorf("refused attempts %v, metrics %+v", tries, r.b.Metrics())
		}
	})
}

// TestIssue13ConnectDuringOutage checks broker.unavailable on the
// subscriber side: a connect during an outage is refused (the error wraps
// ErrUnavailable and sim.ErrUnavailable), the subscriber retries by itself
// every tick, misses what is published meanwhile, and gets copies again
// once it is connected.
//
// Real behaviour: NATS clients reconnect on their own, re-dialling and
// re-sending their subscriptions until a server takes them, and a core
// NATS subscriber that is not connected when a message is published never
// sees it (NATS docs, "Core NATS" and "Connection lifecycle").
func TestIssue13ConnectDuringOutage(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "server-down", Point: faults.BrokerUnavailable, From: 2, Until: 5, Match: faults.Match{Consumer: "s"}})
	var h recorder
	s := r.sub(SubscriberConfig{Name: "s", Pattern: "x", Handler: &h, Offline: true})
	r.w.At(2, "connect", func() {
		err := s.Connect()
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, sim.ErrUnavailable) {
			t.Errorf("connect during the outage: %v", err)
		}
	})
	var sent []sim.ID
	r.producer(func(now sim.Tick) {
		if now >= 2 && now <= 7 {
			sent = append(sent, r.mustPublish("x", fmt.Sprint(now)).ID) // publishers are not affected: the rule names s
		}
	})
	r.run(4)
	if s.Online() || !s.Reconnecting() {
		t.Fatalf("during the outage: online %v, reconnecting %v", s.Online(), s.Reconnecting())
	}
	r.run(4)
	// The step reconnects at t=5 after that tick's publish: t=6 and t=7 are handled.
	if !s.Online() || s.Reconnecting() || !slices.Equal(h.got, sent[4:]) {
		t.Errorf("after the outage: online %v, handled %v, want %v", s.Online(), h.got, sent[4:])
	}
	if refused := r.events(sim.KindRejected, "s"); len(refused) != 3 || r.b.Metrics().ConnectRefused != 3 {
		t.Errorf("refused connects %d (metrics %+v), want 3: ticks 2, 3 and 4", len(refused), r.b.Metrics())
	}
	for _, id := range sent[:4] {
		if o, _ := r.verdict(id, "s"); o.Verdict != sim.VerdictMissed {
			t.Errorf("%v published during the outage: %+v, want missed", id, o)
		}
	}
	r.refold()
}

// TestIssue13AckLostDoesNotApply checks that broker.ack_lost, which makes
// queue and log models lose acks and commits, is never consulted by
// pub/sub: a rule that would fire on every opportunity changes nothing.
//
// Real behaviour: core NATS has no acknowledgements at all; a message goes
// to whoever is subscribed at that moment and the server stores nothing
// (NATS docs, "Core NATS": no broker queue, no storage, no
// acknowledgment), so there is no ack to lose.
func TestIssue13AckLostDoesNotApply(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "ack-lost", Point: faults.BrokerAckLost})
	var h recorder
	r.sub(SubscriberConfig{Name: "s", Pattern: "x", Handler: &h})
	r.producer(func(now sim.Tick) {
		if now <= 3 {
			r.mustPublish("x", "k")
		}
	})
	r.run(5)
	if len(h.got) != 3 || len(r.events(sim.KindFault, "")) != 0 {
		t.Errorf("handled %v, fault events %v", h.got, r.events(sim.KindFault, ""))
	}
	if st := r.in.Stats(); st[0].Opportunities != 0 {
		t.Errorf("broker.ack_lost was consulted: %+v", st)
	}
	if err := sim.Check(r.w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("s")); err != nil {
		t.Error(err)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "broker.ack_lost") {
		t.Error("the package doc does not say that broker.ack_lost does not apply")
	}
}
