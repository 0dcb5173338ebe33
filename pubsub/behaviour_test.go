package pubsub

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// TestEmits shows a subscriber's Emits: Count children per handled copy,
// with the configured type (or the handled one's), the cascade's
// correlation and causation, and an emit's own CascadeLimit, which stops
// the rest of that emit's count at the first refusal.
func TestEmits(t *testing.T) {
	r := newRig(t, 1, 0)
	r.sub(SubscriberConfig{Name: "fan", Pattern: "order.placed", Emits: []Emit{
		{Subject: "invoice.due", Count: 2, Type: "invoice.requested"},
		{Subject: "audit.log"},
	}})
	r.sub(SubscriberConfig{Name: "echo", Pattern: "audit.log", Emits: []Emit{{Subject: "audit.log", Count: 3, CascadeLimit: 2}}})
	var got []sim.Message
	r.sub(SubscriberConfig{Name: "sink", Pattern: "invoice.due", Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
		got = append(got, d.Msg)
		d.Apply("")
		return nil
	})})
	var root sim.Message
	r.w.At(1, "order", func() {
		root = r.env.NewMessage("order-1", []byte("body"), sim.Headers{Type: "order.placed", CorrelationID: "req-1", Source: "shop"})
		if err := r.b.Publish(root); err != nil {
			t.Fatal(err)
		}
	})
	r.run(5)
	if len(got) != 2 {
		t.Fatalf("sink got %d children, want 2", len(got))
	}
	for _, m := range got {
		h := m.Headers
		if h.Type != "invoice.requested" || h.CorrelationID != "req-1" || h.CausationID != root.ID || h.Source != "shop" || m.Key != "order-1" || string(m.Body) != "body" {
			t.Errorf("child %+v", m)
		}
	}
	// audit.log at depth 1 (from fan), depth 2 (echo's three copies of it,
	// within its limit of 2); echo's children of those would be depth 3:
	// refused once per handled copy, and the rest of the count not tried.
	if n := r.b.PublishedTo("audit.log"); n != 1+3 {
		t.Errorf("audit.log published %d times, want 4", n)
	}
	if n := len(r.events(KindCascadeLimited, "echo")); n != 3 {
		t.Errorf("%d cascade_limited events, want 3:\n%s", n, r.dump())
	}
	for _, e := range r.events(sim.KindPublished, "") {
		if strings.HasPrefix(e.Where, "topic:audit") && e.Type != "order.placed" {
			t.Errorf("an emit without a type should keep the handled one's: %s", sim.AppendText(nil, &e))
		}
	}
	c, _ := r.b.Cascade(root.ID)
	if !slices.Equal(c.Published, []int{1, 3, 3}) || c.Limited != 3 {
		t.Errorf("cascade %+v", c)
	}
	if m := r.b.Metrics(); m.Emitted != 3+3 || m.CascadeLimited != 3 {
		t.Errorf("metrics %+v", m)
	}
	if err := sim.Check(r.w.Ledger(), sim.ExactlyOnce(""), sim.NoLoss()); err != nil {
		t.Error(err)
	}
	r.refold()
}

// TestSourceCheck shows that a SourceCheck subscriber skips its own change
// coming back: the copy is absorbed (skipped), not an effect, and nothing
// is emitted for it.
func TestSourceCheck(t *testing.T) {
	r := newRig(t, 1, 0)
	s := r.sub(SubscriberConfig{Name: "crm", Pattern: "customer.>", SourceCheck: true, Emits: []Emit{{Subject: "crm.saved"}}})
	r.sub(SubscriberConfig{Name: "other", Pattern: "customer.>", SourceCheck: true, Source: "erp"})
	var own, foreign sim.Message
	r.w.At(1, "changes", func() {
		own = r.env.NewMessage("c1", nil, sim.Headers{Type: "customer.changed", Source: "crm"})
		foreign = r.env.NewMessage("c2", nil, sim.Headers{Type: "customer.changed", Source: "erp"})
		for _, m := range []sim.Message{own, foreign} {
			if err := r.b.Publish(m); err != nil {
				t.Fatal(err)
			}
		}
	})
	r.run(2)
	for _, c := range []struct {
		id   sim.ID
		sub  string
		want sim.Verdict
	}{{own.ID, "crm", sim.VerdictAbsorbed}, {foreign.ID, "crm", sim.VerdictApplied}, {own.ID, "other", sim.VerdictApplied}, {foreign.ID, "other", sim.VerdictAbsorbed}} {
		if o, _ := r.verdict(c.id, c.sub); o.Verdict != c.want || o.Effects != 0 && c.want == sim.VerdictAbsorbed {
			t.Errorf("%v for %s: %+v, want %v", c.id, c.sub, o, c.want)
		}
	}
	if sk := r.events(sim.KindSkipped, "crm"); len(sk) != 1 || sk[0].Msg != own.ID || !strings.Contains(sk[0].Detail, "source check") {
		t.Errorf("skipped events %+v", sk)
	}
	if m := s.Metrics(); m.Skipped != 1 || m.Handled != 1 || m.Emitted != 1 {
		t.Errorf("metrics %+v", m)
	}
	r.refold()
}

// TestSupervisor shows a supervisor subscriber: what it publishes while it
// handles a copy (its handler's publishes and its Emits) reaches durable
// fan-outs but no ephemeral subscriber.
func TestSupervisor(t *testing.T) {
	r := newRig(t, 1, 0)
	q := r.newQueue(queue.Config{Name: "search-index"})
	if err := r.b.FanOut("search-index", "product.saved", q); err != nil {
		t.Fatal(err)
	}
	r.sub(SubscriberConfig{Name: "worker", Pattern: "product.saved", Supervisor: true, Emits: []Emit{{Subject: "product.saved"}},
		Handler: HandlerFunc(func(ctx *Context, d *sim.Delivery) error {
			d.Apply("thumbnail")
			_, err := ctx.Publish("product.saved", d.Msg.Key, nil)
			return err
		})})
	watcher := r.sub(SubscriberConfig{Name: "watcher", Pattern: "product.saved"})
	r.w.At(1, "save", func() { r.mustPublish("product.saved", "p1") })
	r.run(3)
	if n := r.b.PublishedTo("product.saved"); n != 3 {
		t.Errorf("published %d, want the save and the worker's two", n)
	}
	if m := watcher.Metrics(); m.Delivered != 1 || m.Suppressed != 2 {
		t.Errorf("watcher %+v: it should get only the user's save", m)
	}
	if q.Len() != 3 || r.b.Muted() {
		t.Errorf("queue holds %d, muted %v: the fan-out gets every save", q.Len(), r.b.Muted())
	}
	r.refold()
}

// TestMuteAndStart shows a subscriber muted for a while (its copies are
// skipped, it emits nothing) and one that starts reading late (its copies
// wait in the buffer, and overflow).
func TestMuteAndStart(t *testing.T) {
	r := newRig(t, 1, 0)
	m := r.sub(SubscriberConfig{Name: "muted", Pattern: "x", Emits: []Emit{{Subject: "y"}}})
	late := r.sub(SubscriberConfig{Name: "late", Pattern: "x", Start: 4, Buffer: 2})
	var sent []sim.ID
	r.producer(func(now sim.Tick) {
		if now <= 3 {
			sent = append(sent, r.mustPublish("x", "k").ID)
		}
	})
	r.w.At(2, "mute", m.Mute)
	r.w.At(3, "unmute", m.Unmute)
	r.run(5)
	want := []sim.Verdict{sim.VerdictApplied, sim.VerdictAbsorbed, sim.VerdictApplied}
	for i, id := range sent {
		if o, _ := r.verdict(id, "muted"); o.Verdict != want[i] {
			t.Errorf("muted %v: %v, want %v", id, o.Verdict, want[i])
		}
	}
	if m.Muted() || r.b.PublishedTo("y") != 2 {
		t.Errorf("muted %v, children %d", m.Muted(), r.b.PublishedTo("y"))
	}
	var at []sim.Tick
	for _, e := range r.events(sim.KindProcessed, "late") {
		at = append(at, e.Tick)
	}
	if !slices.Equal(at, []sim.Tick{4, 4}) || late.Metrics().Dropped != 1 {
		t.Errorf("late handled at %v, metrics %+v", at, late.Metrics())
	}
	r.refold()
}

// TestEmitRefused shows that an emit the broker refuses is given up and
// booked as lost before any consumer, with its cause.
func TestEmitRefused(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, From: 2, Match: faults.Match{Where: "topic:y"}})
	r.sub(SubscriberConfig{Name: "a", Pattern: "x", Emits: []Emit{{Subject: "y"}}})
	r.sub(SubscriberConfig{Name: "b", Pattern: "y"})
	r.w.At(1, "first", func() { r.mustPublish("x", "k1") })
	r.w.At(2, "second", func() { r.mustPublish("x", "k2") })
	r.run(3)
	losses := r.w.Ledger().Losses()
	if len(losses) != 1 || losses[0].Consumer != "" || losses[0].Cause != sim.CauseBrokerUnavailable {
		t.Fatalf("losses %+v", losses)
	}
	if rec, _ := r.w.Ledger().Record(losses[0].ID); rec.Key != "k2" || rec.Type != "x" || rec.State != sim.StateLost {
		t.Errorf("lost emit %+v", rec)
	}
	if m := r.b.Metrics(); m.EmitsLost != 1 || m.Emitted != 1 {
		t.Errorf("metrics %+v", m)
	}
	r.refold()
}

// TestContextThroughWrappers shows that a cascade-aware handler keeps its
// context under any wrapper that passes the delivery on: the fault
// injector (which the broker adds) and sim.Idempotent.
func TestContextThroughWrappers(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "slow", Point: faults.HandlerSlow, Param: 2, Match: faults.Match{Consumer: "dedup"}})
	var depths []int
	h := HandlerFunc(func(ctx *Context, d *sim.Delivery) error {
		depths = append(depths, ctx.Depth())
		d.Apply("")
		_, err := ctx.Publish("child", d.Msg.Key, nil)
		if errors.Is(err, ErrCascadeLimit) {
			return nil
		}
		return err
	})
	r.sub(SubscriberConfig{Name: "dedup", Pattern: ">", Handler: sim.Idempotent(h, sim.ByMessageID)})
	r.w.At(1, "root", func() { r.mustPublish("root", "k") })
	r.run(12)
	if len(depths) < 3 {
		t.Errorf("depths %v", depths)
	}
	for i, d := range depths {
		if d != i {
			t.Errorf("depths %v, want 0, 1, 2, ...", depths)
			break
		}
	}
	var at []sim.Tick
	for _, e := range r.events(sim.KindProcessed, "dedup") {
		at = append(at, e.Tick)
	}
	if len(at) < 2 || at[0] != 3 || at[1] != 6 {
		t.Errorf("processed at %v: handler.slow should make each take 2 more ticks", at)
	}
	r.refold()
}

// TestCascadeBudget shows the world's budget stopping an event storm: once
// one root has caused CascadePerRoot copies, the next child publish spends
// the budget and the run stops with it.
func TestCascadeBudget(t *testing.T) {
	r := newRig(t, 1, 0)
	r.w.SetBudget(sim.Budget{CascadePerRoot: 100})
	st, err := NewStorm(r.b, StormConfig{Subject: "product.saved", Subscribers: 4})
	if err != nil {
		t.Fatal(err)
	}
	root, err := st.Save("p1", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = r.w.Run(10)
	if !errors.Is(err, sim.ErrBudget) || !strings.Contains(err.Error(), "cascade_per_root") {
		t.Fatalf("run: %v", err)
	}
	c, _ := r.b.Cascade(root.ID)
	if c.Deliveries < 100 || c.Deliveries > 100+4*4 || r.w.Now() > 4 {
		t.Errorf("cascade %+v at t=%d", c, r.w.Now())
	}
	if err := r.b.Publish(r.env.NewMessage("p2", nil, sim.Headers{Type: "product.saved"})); !errors.Is(err, sim.ErrBudget) {
		t.Errorf("publish after the budget is spent: %v", err)
	}
}
