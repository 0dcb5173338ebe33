package pubsub

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

func TestConfigValidate(t *testing.T) {
	w, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(nil, Config{Name: "x"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New without a world: %v", err)
	}
	if _, err := New(w, Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New without name: %v", err)
	}
	if _, err := New(w, Config{Name: "x", MaxDepth: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New with negative depth: %v", err)
	}
	b, err := New(w, Config{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(w, Config{Name: "x"}); !errors.Is(err, sim.ErrDuplicateName) {
		t.Errorf("a second broker of the same name: %v", err)
	}
	if got := w.Components(); !slices.Equal(got, []string{"pubsub:x", "pubsub:x/subscribers"}) {
		t.Errorf("components %v", got)
	}
	bad := []SubscriberConfig{
		{Pattern: "a"},
		{Name: "s", Pattern: "a..b"},
		{Name: "s", Pattern: "a", Buffer: -1},
		{Name: "s", Pattern: "a", Rate: -1},
		{Name: "s", Pattern: "a", Policy: Policy(7)},
		{Name: "s", Pattern: "a", Start: -1},
		{Name: "s", Pattern: "a", Emits: []Emit{{Subject: "b.*"}}},
		{Name: "s", Pattern: "a", Emits: []Emit{{Subject: "b", Count: -1}}},
		{Name: "s", Pattern: "a", Emits: []Emit{{Subject: "b", CascadeLimit: -1}}},
	}
	for _, c := range bad {
		if _, err := b.Subscribe(c); err == nil {
			t.Errorf("Subscribe(%+v) accepted", c)
		}
	}
	if _, err := b.Subscribe(SubscriberConfig{Name: "s", Pattern: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Subscribe(SubscriberConfig{Name: "s", Pattern: "b"}); !errors.Is(err, ErrDuplicateName) {
		t.Errorf("duplicate name: %v", err)
	}
	if err := b.PublishTo("a.*", sim.Message{ID: 1}); !errors.Is(err, ErrInvalidSubject) {
		t.Errorf("publish to a wildcard: %v", err)
	}
	if err := b.PublishTo("a", sim.Message{}); !errors.Is(err, ErrInvalidMessage) {
		t.Errorf("publish without ID: %v", err)
	}
	for _, p := range []Policy{DropNewest, DropOldest, Block} {
		var q Policy
		text, err := p.MarshalText()
		if err != nil || string(text) != p.String() || q.UnmarshalText(text) != nil || q != p {
			t.Errorf("Policy %q round trip = %q, %v, %v", p, text, q, err)
		}
	}
	var q Policy
	if err := q.UnmarshalText([]byte("drop-all")); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("UnmarshalText(drop-all): %v", err)
	}
}

// TestOfflineWindow publishes one message per tick and takes subscribers
// offline for ticks [5, 10): by hand, and by a subscriber.offline rule. Each
// misses exactly the publishes inside the window and gets every other one.
func TestOfflineWindow(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "outage", Point: faults.SubscriberOffline, From: 5, Until: 10, Match: faults.Match{Consumer: "faulty"}})
	var steady, flaky, faulty recorder
	r.sub(SubscriberConfig{Name: "steady", Pattern: "orders.>", Handler: &steady})
	fl := r.sub(SubscriberConfig{Name: "flaky", Pattern: "orders.*", Handler: &flaky})
	r.sub(SubscriberConfig{Name: "faulty", Pattern: "orders.created", Handler: &faulty})
	r.w.At(5, "flaky disconnects", fl.Disconnect)
	r.w.At(10, "flaky reconnects", func() {
		if err := fl.Connect(); err != nil {
			t.Error(err)
		}
	})
	byTick := map[sim.Tick]sim.ID{}
	r.producer(func(now sim.Tick) {
		if now <= 15 {
			byTick[now] = r.mustPublish("orders.created", "k").ID
		}
	})
	r.run(16)

	var inside, outside []sim.ID
	for tick := sim.Tick(1); tick <= 15; tick++ {
		if tick >= 5 && tick < 10 {
			inside = append(inside, byTick[tick])
		} else {
			outside = append(outside, byTick[tick])
		}
	}
	all := append(append([]sim.ID(nil), outside...), inside...)
	slices.Sort(all)
	if !slices.Equal(steady.got, all) {
		t.Errorf("steady got %v, want all %v", steady.got, all)
	}
	led := r.w.Ledger()
	for _, name := range []string{"flaky", "faulty"} {
		if got := ids(r.events(sim.KindMissed, name)); !slices.Equal(got, inside) {
			t.Errorf("%s missed %v, want exactly %v", name, got, inside)
		}
		c := led.Consumer(name)
		for _, id := range inside {
			if d := led.Entry(id, c); !d.Missed || d.Delivered != 0 || d.Applied != 0 {
				t.Errorf("%s: ledger for %v = %+v, want missed only", name, id, d)
			}
		}
		for _, id := range outside {
			if d := led.Entry(id, c); d.Missed || d.Delivered != 1 || d.Applied != 1 {
				t.Errorf("%s: ledger for %v = %+v, want delivered and applied once", name, id, d)
			}
		}
	}
	if !slices.Equal(flaky.got, outside) || !slices.Equal(faulty.got, outside) {
		t.Errorf("flaky got %v, faulty got %v, want %v", flaky.got, faulty.got, outside)
	}
	// Missed by design is not a loss: every delivery checker holds.
	if err := sim.Check(led, sim.NoLoss(), sim.ExactlyOnce("")); err != nil {
		t.Error(err)
	}
	if st := led.Stats(); st.Missed != 2*len(inside) || st.Lost != 0 {
		t.Errorf("stats: missed %d lost %d, want %d and 0", st.Missed, st.Lost, 2*len(inside))
	}
	if m := r.b.Metrics(); m.Missed != 2*len(inside) || m.Published != 15 || m.Handled != 3*15-2*len(inside) {
		t.Errorf("metrics %+v", m)
	}
}

// TestDisconnectLosesBuffer shows that copies still buffered when a
// subscriber disconnects are lost, with cause disconnect, and never handled
// later: they had reached the subscriber, unlike the publishes it misses
// while offline.
func TestDisconnectLosesBuffer(t *testing.T) {
	r := newRig(t, 1, 0)
	var h recorder
	s := r.sub(SubscriberConfig{Name: "s", Pattern: "x", Rate: 1, Handler: &h})
	var sent []sim.ID
	r.w.At(1, "burst", func() {
		for range 4 {
			sent = append(sent, r.mustPublish("x", "k").ID)
		}
	})
	r.w.At(3, "disconnect", s.Disconnect)
	r.w.At(4, "publish while offline", func() { sent = append(sent, r.mustPublish("x", "k").ID) })
	r.run(5)
	if !slices.Equal(h.got, sent[:2]) {
		t.Fatalf("handled %v, want %v", h.got, sent[:2])
	}
	var lost []sim.ID
	for _, e := range r.events(sim.KindLost, "s") {
		if e.Cause != sim.CauseDisconnect || e.Consumer != "s" {
			t.Errorf("lost event %s", sim.AppendText(nil, &e))
		}
		lost = append(lost, e.Msg)
	}
	if !slices.Equal(lost, sent[2:4]) {
		t.Errorf("lost %v, want %v", lost, sent[2:4])
	}
	if got := ids(r.events(sim.KindMissed, "s")); !slices.Equal(got, sent[4:]) {
		t.Errorf("missed %v, want %v", got, sent[4:])
	}
	for i, id := range sent {
		o, _ := r.verdict(id, "s")
		want := sim.VerdictApplied
		switch {
		case i >= 4:
			want = sim.VerdictMissed
		case i >= 2:
			want = sim.VerdictLost
		}
		if o.Verdict != want || want == sim.VerdictLost && o.Cause != sim.CauseDisconnect {
			t.Errorf("%v: verdict %v (%s), want %v", id, o.Verdict, o.Cause, want)
		}
	}
	err := sim.Check(r.w.Ledger(), sim.AtLeastOnce("s"), sim.NoLoss())
	var ce *sim.CheckError
	if !errors.As(err, &ce) || len(ce.Violations) != 4 {
		t.Errorf("at-least-once and no-loss should each report both discarded copies: %v", err)
	}
	if m := r.b.Metrics(); m.Discarded != 2 || m.Buffered != 0 || m.Missed != 1 || !r.b.Idle() {
		t.Errorf("metrics %+v", m)
	}
	r.refold()
}

// TestOverflowPolicies bursts six publishes into a buffer of three.
func TestOverflowPolicies(t *testing.T) {
	for _, p := range []Policy{DropNewest, DropOldest, Block} {
		t.Run(p.String(), func(t *testing.T) {
			r := newRig(t, 1, 0)
			var h recorder
			s := r.sub(SubscriberConfig{Name: "s", Pattern: "x", Buffer: 3, Rate: 1, Policy: p, Handler: &h})
			var sent []sim.ID
			var errs []error
			r.w.At(1, "burst", func() {
				for range 6 {
					m, err := r.publish("x", "k")
					sent = append(sent, m.ID)
					errs = append(errs, err)
				}
			})
			r.run(8)
			led := r.w.Ledger()
			var wantHandled, wantDropped []sim.ID
			switch p {
			case DropNewest:
				wantHandled, wantDropped = sent[:3], sent[3:]
			case DropOldest:
				wantHandled, wantDropped = sent[3:], sent[:3]
			case Block:
				wantHandled = sent[:3]
				for i, err := range errs {
					if want := i >= 3; errors.Is(err, ErrBackpressure) != want {
						t.Errorf("publish %d: err %v, back-pressure expected %v", i, err, want)
					}
				}
				if got := len(r.events(sim.KindRejected, "s")); got != 3 {
					t.Errorf("rejected events %d, want 3", got)
				}
			}
			if p != Block {
				for _, err := range errs {
					if err != nil {
						t.Errorf("publish: %v", err)
					}
				}
			}
			if !slices.Equal(h.got, wantHandled) {
				t.Errorf("handled %v, want %v", h.got, wantHandled)
			}
			if got := ids(r.events(sim.KindDropped, "s")); !slices.Equal(got, wantDropped) {
				t.Errorf("dropped %v, want %v", got, wantDropped)
			}
			var lost []sim.ID
			for _, l := range led.Losses() {
				if l.Cause != sim.CauseOverflow || l.Consumer != "s" {
					t.Errorf("unexpected loss %+v", l)
				}
				lost = append(lost, l.ID)
			}
			if !slices.Equal(lost, wantDropped) {
				t.Errorf("ledger lost %v, want %v", lost, wantDropped)
			}
			m := r.b.Metrics()
			if m.Dropped != len(wantDropped) || s.Metrics().Dropped != len(wantDropped) || led.Stats().Lost != len(wantDropped) {
				t.Errorf("dropped: broker %d, subscriber %d, ledger %d, want %d", m.Dropped, s.Metrics().Dropped, led.Stats().Lost, len(wantDropped))
			}
			if p == Block && (m.Backpressure != 3 || m.Published != 3) {
				t.Errorf("block metrics %+v", m)
			}
			if len(wantDropped) > 0 {
				err := sim.Check(led, sim.NoLoss())
				var ce *sim.CheckError
				if !errors.As(err, &ce) || len(ce.Violations) != len(wantDropped) {
					t.Errorf("NoLoss should report each drop: %v", err)
				}
			}
		})
	}
}

// TestBlockRetry shows the publisher waiting out back-pressure: it retries
// the refused message every tick until the slow subscriber made room.
func TestBlockRetry(t *testing.T) {
	r := newRig(t, 1, 0)
	var h recorder
	r.sub(SubscriberConfig{Name: "s", Pattern: "x", Buffer: 1, Rate: 1, Policy: Block, Handler: &h})
	var pending []sim.Message
	var sent []sim.ID
	refusals := 0
	r.producer(func(now sim.Tick) {
		if now <= 3 {
			for range 2 {
				m := r.env.NewMessage("k", nil, sim.Headers{Type: "x"})
				pending = append(pending, m)
				sent = append(sent, m.ID)
			}
		}
		for len(pending) > 0 {
			if err := r.b.Publish(pending[0]); err != nil {
				refusals++
				return
			}
			pending = pending[1:]
		}
	})
	r.run(10)
	if !slices.Equal(h.got, sent) {
		t.Errorf("handled %v, want every message in order %v", h.got, sent)
	}
	if refusals == 0 || r.b.Metrics().Dropped != 0 {
		t.Errorf("refusals %d, metrics %+v", refusals, r.b.Metrics())
	}
	if err := sim.Check(r.w.Ledger(), sim.NoLoss(), sim.ExactlyOnce("s"), sim.OrderedPerKey("s")); err != nil {
		t.Error(err)
	}
}

func TestFaultDuplicate(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "dup", Point: faults.BrokerDuplicate, Nth: 2, Match: faults.Match{Consumer: "a"}})
	var a, b recorder
	r.sub(SubscriberConfig{Name: "a", Pattern: "x", Handler: &a})
	r.sub(SubscriberConfig{Name: "b", Pattern: "x", Handler: &b})
	var sent []sim.ID
	r.w.At(1, "publish", func() {
		for range 3 {
			sent = append(sent, r.mustPublish("x", "k").ID)
		}
	})
	r.run(2)
	if want := []sim.ID{sent[0], sent[1], sent[1], sent[2]}; !slices.Equal(a.got, want) {
		t.Errorf("a got %v, want %v", a.got, want)
	}
	if !slices.Equal(b.got, sent) {
		t.Errorf("b got %v, want %v", b.got, sent)
	}
	led := r.w.Ledger()
	if led.Duplicates("a") != 1 || led.Duplicates("b") != 0 {
		t.Errorf("duplicates a=%d b=%d", led.Duplicates("a"), led.Duplicates("b"))
	}
	if err := sim.Check(led, sim.AtMostOnce("a")); err == nil {
		t.Error("at-most-once should fail for a")
	}
}

func TestFaultDelayAndReorder(t *testing.T) {
	r := newRig(t, 1, 0,
		faults.Rule{Name: "late", Point: faults.BrokerDelay, Nth: 1, Param: 3, Match: faults.Match{Consumer: "delayed"}},
		faults.Rule{Name: "swap", Point: faults.BrokerReorder, Nth: 1, Match: faults.Match{Consumer: "swapped"}},
		// "last" is first consulted at m3: "swap" wins at m1, and no copy is
		// consulted for reordering while another one is held.
		faults.Rule{Name: "last", Point: faults.BrokerReorder, Nth: 1, Match: faults.Match{Consumer: "swapped"}},
	)
	var d, s recorder
	r.sub(SubscriberConfig{Name: "delayed", Pattern: "x", Handler: &d})
	r.sub(SubscriberConfig{Name: "swapped", Pattern: "x", Handler: &s})
	var sent []sim.ID
	r.w.At(1, "publish", func() {
		for range 3 {
			sent = append(sent, r.mustPublish("x", "k").ID)
		}
	})
	r.run(6)
	if want := []sim.ID{sent[1], sent[2], sent[0]}; !slices.Equal(d.got, want) {
		t.Errorf("delayed got %v, want %v", d.got, want)
	}
	// m1 is held behind m2; m3 is held and, with nothing behind it,
	// released on the next tick.
	if want := []sim.ID{sent[1], sent[0], sent[2]}; !slices.Equal(s.got, want) {
		t.Errorf("swapped got %v, want %v", s.got, want)
	}
	if got := len(r.events(sim.KindDelayed, "")); got != 3 {
		t.Errorf("delayed events %d, want 3", got)
	}
	led := r.w.Ledger()
	if err := sim.Check(led, sim.ExactlyOnce(""), sim.NoLoss()); err != nil {
		t.Error(err)
	}
	if err := sim.Check(led, sim.OrderedPerKey("swapped")); err == nil {
		t.Error("ordered-per-key should fail for the reordered subscriber")
	}
	if m := r.b.Metrics(); m.InFlight != 0 || m.Buffered != 0 {
		t.Errorf("metrics %+v", m)
	}
}

func TestFaultUnavailable(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "down", Point: faults.BrokerUnavailable, From: 3, Until: 5})
	var h recorder
	r.sub(SubscriberConfig{Name: "s", Pattern: "x", Handler: &h})
	var ok []sim.ID
	failed := 0
	r.producer(func(now sim.Tick) {
		m, err := r.publish("x", "k")
		switch {
		case err == nil:
			ok = append(ok, m.ID)
		case errors.Is(err, ErrUnavailable) && errors.Is(err, sim.ErrUnavailable):
			failed++
		default:
			t.Error(err)
		}
	})
	r.run(6)
	if failed != 2 || len(ok) != 4 || !slices.Equal(h.got, ok) {
		t.Errorf("failed %d, ok %v, handled %v", failed, ok, h.got)
	}
	if got := len(r.events(sim.KindRejected, "")); got != 2 {
		t.Errorf("rejected events %d", got)
	}
}

func TestFaultSlow(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "slow", Point: faults.SubscriberSlow, Param: 2, Match: faults.Match{Consumer: "slow"}})
	var fast, slow recorder
	r.sub(SubscriberConfig{Name: "fast", Pattern: "x", Handler: &fast})
	r.sub(SubscriberConfig{Name: "slow", Pattern: "x", Handler: &slow})
	r.w.At(1, "publish", func() {
		for range 4 {
			r.mustPublish("x", "k")
		}
	})
	var slowAt []sim.Tick
	r.run(10)
	for _, e := range r.events(sim.KindProcessed, "slow") {
		slowAt = append(slowAt, e.Tick)
	}
	if len(fast.got) != 4 || !slices.Equal(slowAt, []sim.Tick{1, 3, 5, 7}) {
		t.Errorf("fast handled %d; slow handled at %v, want t=1,3,5,7", len(fast.got), slowAt)
	}
}

func TestRateLimitsHandling(t *testing.T) {
	r := newRig(t, 1, 0)
	r.sub(SubscriberConfig{Name: "s", Pattern: "x", Rate: 2})
	r.w.At(1, "publish", func() {
		for range 5 {
			r.mustPublish("x", "k")
		}
	})
	var at []sim.Tick
	r.run(4)
	for _, e := range r.events(sim.KindProcessed, "s") {
		at = append(at, e.Tick)
	}
	if !slices.Equal(at, []sim.Tick{1, 1, 2, 2, 3}) {
		t.Errorf("handled at %v", at)
	}
}

func TestCloseAndConnect(t *testing.T) {
	r := newRig(t, 1, 0)
	var h recorder
	s := r.sub(SubscriberConfig{Name: "s", Pattern: "x", Offline: true, Handler: &h})
	r.w.At(1, "first", func() { r.mustPublish("x", "k") })
	r.w.At(2, "connect", func() {
		if err := s.Connect(); err != nil {
			t.Error(err)
		}
	})
	r.w.At(2, "second", func() { r.mustPublish("x", "k") })
	r.w.At(3, "close", s.Close)
	r.w.At(3, "third", func() { r.mustPublish("x", "k") })
	r.run(4)
	if len(h.got) != 1 || h.got[0] != 2 {
		t.Errorf("handled %v, want [m2]", h.got)
	}
	if err := s.Connect(); !errors.Is(err, ErrClosed) {
		t.Errorf("connect after close: %v", err)
	}
	if _, ok := r.b.Subscriber("s"); ok {
		t.Error("closed subscriber still listed")
	}
	if m := r.b.Metrics(); m.Missed != 1 || m.Published != 3 {
		t.Errorf("metrics %+v", m)
	}
}

func TestContextOutsideHandler(t *testing.T) {
	r := newRig(t, 1, 0)
	var kept *Context
	r.sub(SubscriberConfig{Name: "s", Pattern: "x", Handler: HandlerFunc(func(ctx *Context, d *sim.Delivery) error {
		kept = ctx
		m := d.Msg
		if ctx.Subscriber() != "s" || ctx.Subject() != "x" || ctx.Depth() != 0 || ctx.Root() != m.ID || ctx.Corr() != "m1" || ctx.Now() != 1 {
			t.Errorf("context: %s %s %d %v %s %v", ctx.Subscriber(), ctx.Subject(), ctx.Depth(), ctx.Root(), ctx.Corr(), ctx.Now())
		}
		if ContextOf(d) != ctx {
			t.Error("ContextOf differs from the HandlerFunc's context")
		}
		if _, err := ctx.Publish("bad.*", "", nil); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("child to a wildcard: %v", err)
		}
		d.Apply("")
		return nil
	})})
	r.w.At(1, "publish", func() { r.mustPublish("x", "k") })
	r.run(1)
	if _, err := kept.Publish("y", "", nil); !errors.Is(err, ErrNoContext) {
		t.Errorf("publish through a kept context: %v", err)
	}
	if kept.Subject() != "" || kept.Root() != 0 || kept.Depth() != 0 || kept.Corr() != "" {
		t.Error("a kept context still describes a copy")
	}
	if ContextOf(nil) != nil || ContextOf(sim.NewDelivery(r.env, sim.Message{ID: 1}, "queue:q", "q", "", 1)) != nil {
		t.Error("ContextOf of a delivery that is not a pub/sub one")
	}
	err := HandlerFunc(func(*Context, *sim.Delivery) error { return nil }).Handle(sim.NewDelivery(r.env, sim.Message{ID: 1}, "queue:q", "q", "", 1))
	if !errors.Is(err, ErrNoContext) || sim.Classify(err) != sim.ClassPermanent {
		t.Errorf("HandlerFunc outside pub/sub: %v", err)
	}
	if _, ok := r.b.Cascade(99); ok {
		t.Error("cascade for an unknown root")
	}
	if r.b.Muted() {
		t.Error("muted")
	}
	r.b.Mute()
	r.b.Mute()
	r.b.Unmute()
	if !r.b.Muted() {
		t.Error("nested mute lost")
	}
	r.b.Unmute()
	r.b.Unmute()
	if r.b.Muted() {
		t.Error("still muted")
	}
}

// TestHandlerFailure shows that a failed ephemeral delivery is lost, with
// cause "handler failed": nothing redelivers it.
func TestHandlerFailure(t *testing.T) {
	r := newRig(t, 1, 0)
	r.sub(SubscriberConfig{Name: "s", Pattern: "x", Handler: sim.HandlerFunc(func(*sim.Delivery) error { return errors.New("boom") })})
	r.w.At(1, "publish", func() { r.mustPublish("x", "k") })
	r.run(2)
	if f := r.events(sim.KindFailed, "s"); len(f) != 1 || f[0].Detail != "boom" {
		t.Errorf("failed events %+v", f)
	}
	d := r.entry(1, "s")
	if d.Delivered != 1 || d.Applied != 0 || d.Lost != sim.CauseHandlerFailed {
		t.Errorf("ledger %+v", d)
	}
	if o, _ := r.verdict(1, "s"); o.Verdict != sim.VerdictLost || o.Cause != sim.CauseHandlerFailed {
		t.Errorf("outcome %+v", o)
	}
	if m := r.b.Metrics(); m.Failed != 1 || m.Handled != 0 {
		t.Errorf("metrics %+v", m)
	}
	r.refold()
}

// TestHandlerFaultPoints shows that the handler fault points apply to
// subscribers as to every model: the fault injector wraps the handler.
func TestHandlerFaultPoints(t *testing.T) {
	r := newRig(t, 1, 0,
		faults.Rule{Name: "bad", Point: faults.HandlerPermanent, Match: faults.Match{Consumer: "a", Key: "k1"}},
		faults.Rule{Name: "flaky", Point: faults.HandlerTransient, Match: faults.Match{Consumer: "b"}, Count: 1},
		faults.Rule{Name: "poison", Point: faults.HandlerPoison, Match: faults.Match{Consumer: "b", Key: "k3"}},
	)
	var a, b recorder
	r.sub(SubscriberConfig{Name: "a", Pattern: "x", Handler: &a})
	r.sub(SubscriberConfig{Name: "b", Pattern: "x", Handler: &b})
	var sent []sim.ID
	r.w.At(1, "publish", func() {
		for _, k := range []string{"k1", "k2", "k3"} {
			sent = append(sent, r.mustPublish("x", k).ID)
		}
	})
	r.run(2)
	if !slices.Equal(a.got, sent[1:]) || !slices.Equal(b.got, sent[1:2]) {
		t.Errorf("a handled %v, b handled %v", a.got, b.got)
	}
	want := map[string][]sim.Verdict{
		"a": {sim.VerdictLost, sim.VerdictApplied, sim.VerdictApplied},
		"b": {sim.VerdictLost, sim.VerdictApplied, sim.VerdictLost},
	}
	for name, vs := range want {
		for i, v := range vs {
			if o, _ := r.verdict(sent[i], name); o.Verdict != v || v == sim.VerdictLost && o.Cause != sim.CauseHandlerFailed {
				t.Errorf("%s %v: %v (%s), want %v", name, sent[i], o.Verdict, o.Cause, v)
			}
		}
	}
	if got := len(r.events(sim.KindFault, "")); got != 3 {
		t.Errorf("%d fault events, want 3", got)
	}
	r.refold()
}

// TestSlowHandlerOverflows shows that processing time is the subscriber's
// own: while its handler works it reads nothing, its buffer fills and the
// overflow policy drops what does not fit. The effect lands when the work
// ends.
func TestSlowHandlerOverflows(t *testing.T) {
	r := newRig(t, 1, 0)
	s := r.sub(SubscriberConfig{Name: "s", Pattern: "x", Buffer: 2, Handler: &sim.Script{Ticks: 3, Note: "slow"}})
	var sent []sim.ID
	r.w.At(1, "burst", func() {
		for range 3 {
			sent = append(sent, r.mustPublish("x", "k").ID)
		}
	})
	r.w.At(2, "more", func() {
		for range 2 {
			sent = append(sent, r.mustPublish("x", "k").ID)
		}
	})
	r.run(12)
	var at []sim.Tick
	for _, e := range r.events(sim.KindProcessed, "s") {
		at = append(at, e.Tick)
	}
	// The burst fills the buffer (m3 does not fit); m1 is taken at t=1 and
	// applied at t=4. m4 takes m1's place at t=2, and m5 does not fit:
	// the subscriber is still working on m1 and reads nothing.
	if !slices.Equal(at, []sim.Tick{4, 7, 10}) {
		t.Errorf("applied at %v, want t=4,7,10", at)
	}
	if got := ids(r.events(sim.KindDropped, "s")); !slices.Equal(got, []sim.ID{sent[2], sent[4]}) {
		t.Errorf("dropped %v, want %v", got, []sim.ID{sent[2], sent[4]})
	}
	if m := s.Metrics(); m.Handled != 3 || m.Dropped != 2 || m.Handling != 0 {
		t.Errorf("metrics %+v", m)
	}
	r.refold()
}

// TestSlowHandlerUnfinished shows that a copy in a slow handler at the end
// of a run is pending, and that a disconnect loses it.
func TestSlowHandlerUnfinished(t *testing.T) {
	r := newRig(t, 1, 0)
	s := r.sub(SubscriberConfig{Name: "s", Pattern: "x", Handler: &sim.Script{Ticks: 5}})
	r.w.At(1, "publish", func() { r.mustPublish("x", "k") })
	r.run(3)
	if o, _ := r.verdict(1, "s"); o.Verdict != sim.VerdictPending || r.b.Idle() || r.b.Metrics().Handling != 1 {
		t.Errorf("outcome %+v, metrics %+v", o, r.b.Metrics())
	}
	if err := sim.Check(r.w.Ledger(), sim.NoLoss()); err == nil || !strings.Contains(err.Error(), "still pending") {
		t.Errorf("no-loss on a copy in the handler: %v", err)
	}
	s.Disconnect()
	if o, _ := r.verdict(1, "s"); o.Verdict != sim.VerdictLost || o.Cause != sim.CauseDisconnect || !r.b.Idle() {
		t.Errorf("outcome after disconnect %+v", o)
	}
	r.refold()
}

// A copy broker.reorder holds is released behind the next copy even when
// the rule was disabled in between: with no fault point armed the broker
// takes its fast fan-out, which must still hand the held copy on.
func TestReorderHeldCopyOutlivesItsRule(t *testing.T) {
	r := newRig(t, 1, 0, faults.Rule{Name: "swap", Point: faults.BrokerReorder, Nth: 1})
	var h recorder
	r.sub(SubscriberConfig{Name: "s", Pattern: "x", Handler: &h})
	var sent []sim.ID
	r.w.At(1, "publish", func() {
		sent = append(sent, r.mustPublish("x", "k").ID)
		r.Must(r.in.Disable("swap"))
		sent = append(sent, r.mustPublish("x", "k").ID)
	})
	r.run(3)
	if want := []sim.ID{sent[1], sent[0]}; !slices.Equal(h.got, want) {
		t.Errorf("got %v, want %v (the held copy behind the next one)", h.got, want)
	}
	delivered := r.events(sim.KindDelivered, "s")
	if len(delivered) != 2 || delivered[0].Tick != 1 || delivered[1].Tick != 1 {
		t.Errorf("delivered %v, want both at tick 1", delivered)
	}
}

// A broker with an injector whose rules target no copy point fans out as
// one without an injector: the same events, numbered the same.
func TestUnarmedFaultsFanOutAsNone(t *testing.T) {
	trace := func(rules ...faults.Rule) string {
		r := newRig(t, 7, 0, rules...)
		for i := range 3 {
			r.sub(SubscriberConfig{Name: "s" + strconv.Itoa(i), Pattern: "x.>", Buffer: 2, Policy: Policy(i)})
		}
		r.producer(func(now sim.Tick) {
			for range 3 {
				_, _ = r.publish("x.y", "k")
			}
		})
		r.run(4)
		return r.dump()
	}
	// A rule for a point no copy consults, which never fires.
	want := trace()
	got := trace(faults.Rule{Name: "never", Point: faults.BrokerUnavailable, From: 1000})
	if got != want {
		t.Errorf("trace with an unarmed injector differs:\n%s\nwant:\n%s", got, want)
	}
}
