package pubsub

import (
	"errors"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// TestEphemeralVersusDurable sends the same publishes to an ephemeral
// subscriber and, through a fan-out, to a durable queue, while both
// consumers are disconnected for ticks [5, 10). The ephemeral subscriber
// misses the publishes of the outage for good; the queue keeps them and its
// consumer gets them after reconnecting.
func TestEphemeralVersusDurable(t *testing.T) {
	r := newRig(t, 1, 0)
	q, err := queue.New(queue.Config{Name: "mail", Env: r.env})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.w.Add(sim.PhaseBroker, "queue:mail", q); err != nil {
		t.Fatal(err)
	}
	if err := r.b.FanOut("mail", "orders.>", q); err != nil {
		t.Fatal(err)
	}
	var eph recorder
	sub := r.sub(SubscriberConfig{Name: "mailer", Pattern: "orders.>", Handler: eph.handle})

	durableOnline := true
	var durable []sim.ID
	appliedAt := map[sim.ID]sim.Tick{}
	led := r.env.Ledger
	if err := r.w.Add(sim.PhaseConsumer, "durable-mailer", sim.ActorFunc(func(now sim.Tick) {
		if !durableOnline {
			return
		}
		ds, err := q.Receive("durable-mailer", 10)
		if err != nil {
			t.Error(err)
			return
		}
		for _, d := range ds {
			durable = append(durable, d.Message.ID)
			appliedAt[d.Message.ID] = now
			led.Applied(d.Message.ID, led.Consumer("mail"), now)
			if err := q.Ack(d.Receipt); err != nil {
				t.Error(err)
			}
		}
	})); err != nil {
		t.Fatal(err)
	}
	r.w.At(5, "both consumers disconnect", func() {
		sub.Disconnect()
		durableOnline = false
	})
	r.w.At(10, "both consumers reconnect", func() {
		if err := sub.Connect(); err != nil {
			t.Error(err)
		}
		durableOnline = true
	})
	var all, inside, outside []sim.ID
	if err := r.w.Add(sim.PhaseProducer, "shop", sim.ActorFunc(func(now sim.Tick) {
		if now > 15 {
			return
		}
		id := r.mustPublish("orders.placed", "order").ID
		all = append(all, id)
		if now >= 5 && now < 10 {
			inside = append(inside, id)
		} else {
			outside = append(outside, id)
		}
	})); err != nil {
		t.Fatal(err)
	}
	r.run(16)

	if !slices.Equal(eph.got, outside) {
		t.Errorf("ephemeral got %v, want only the publishes outside the outage %v", eph.got, outside)
	}
	if got := ids(r.events(sim.KindMissed, "mailer")); !slices.Equal(got, inside) {
		t.Errorf("ephemeral missed %v, want %v", got, inside)
	}
	if !slices.Equal(durable, all) {
		t.Errorf("durable got %v, want every publish %v", durable, all)
	}
	for _, id := range inside {
		if appliedAt[id] < 10 {
			t.Errorf("durable applied %v at %v, during the outage", id, appliedAt[id])
		}
	}
	// Both consumers keep their guarantee: the ephemeral one by design
	// (missed is not lost), the durable one exactly once.
	if err := sim.Check(led, sim.NoLoss(), sim.AtLeastOnce("mailer"), sim.ExactlyOnce("mail")); err != nil {
		t.Error(err)
	}
	if m := r.b.Metrics(); m.Forwarded != 15 || m.Missed != len(inside) {
		t.Errorf("metrics %+v", m)
	}
}

// failing is a durable target that refuses every message.
type failing struct{}

func (failing) Publish(sim.Message) error { return errors.New("queue: broker unavailable") }

func TestFanOutFailureIsALoss(t *testing.T) {
	r := newRig(t, 1, 0)
	if err := r.b.FanOut("archive", ">", failing{}); err != nil {
		t.Fatal(err)
	}
	if err := r.b.FanOut("archive", ">", failing{}); !errors.Is(err, ErrDuplicateName) {
		t.Errorf("second fan-out with the same name: %v", err)
	}
	if err := r.b.FanOut("x", "a..b", failing{}); !errors.Is(err, ErrInvalidSubject) {
		t.Errorf("bad pattern: %v", err)
	}
	if err := r.b.FanOut("y", "a", nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("nil target: %v", err)
	}
	m := r.mustPublish("a", "k")
	losses := r.env.Ledger.Losses()
	if len(losses) != 1 || losses[0].ID != m.ID || losses[0].Cause != sim.CauseBrokerUnavailable || losses[0].Consumer != "archive" {
		t.Errorf("losses %+v", losses)
	}
	if r.b.Metrics().ForwardFailed != 1 {
		t.Errorf("metrics %+v", r.b.Metrics())
	}
}

// TestFanOutWithQueueFaults checks that a queue refusing a forward while
// it is down shows up as a loss of the queue's consumer, and the ephemeral
// side is unaffected.
func TestFanOutWithQueueFaults(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	in, err := faults.New(faults.Config{Env: env, Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "queue-down", Point: faults.BrokerUnavailable, Nth: 2, Match: faults.Match{Where: "queue:*"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(Config{Name: "bus", Env: env, Faults: in})
	q, err := queue.New(queue.Config{Name: "audit", Env: env, Faults: in})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.FanOut("audit", "x", q); err != nil {
		t.Fatal(err)
	}
	var h recorder
	if _, err := b.Subscribe(SubscriberConfig{Name: "live", Pattern: "x", Handler: h.handle}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := b.Publish(env.NewMessage("k", nil, sim.Headers{Type: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	b.StepSubscribers(env.Clock.Advance())
	if len(h.got) != 3 {
		t.Errorf("ephemeral handled %v", h.got)
	}
	losses := env.Ledger.Losses()
	if len(losses) != 1 || losses[0].ID != 2 || losses[0].Consumer != "audit" || losses[0].Cause != sim.CauseBrokerUnavailable {
		t.Errorf("losses %+v", losses)
	}
	if q.Len() != 2 {
		t.Errorf("queue holds %d, want 2", q.Len())
	}
}
