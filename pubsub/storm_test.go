package pubsub

import (
	"slices"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestStorm shows the event storm of one product save with eight
// subscribers: 1 -> 8 -> 64 messages without the supervisor (stopped by a
// depth limit of 2), 1 -> 8 with it.
func TestStorm(t *testing.T) {
	tests := []struct {
		supervisor bool
		published  []int
		deliveries int
		suppressed int
		limited    int
	}{
		{supervisor: false, published: []int{1, 8, 64}, deliveries: 8 + 64 + 512, limited: 512},
		{supervisor: true, published: []int{1, 8}, deliveries: 8, suppressed: 64},
	}
	for _, tt := range tests {
		name := "without-supervisor"
		if tt.supervisor {
			name = "with-supervisor"
		}
		t.Run(name, func(t *testing.T) {
			r := newRig(t, 1, 2)
			st, err := NewStorm(r.b, StormConfig{Subject: "product.saved", Subscribers: 8, Supervisor: tt.supervisor})
			if err != nil {
				t.Fatal(err)
			}
			var root sim.Message
			r.w.At(1, "save product", func() {
				if root, err = st.Save("product-1", nil); err != nil {
					t.Error(err)
				}
			})
			r.run(6)
			c, ok := r.b.Cascade(root.ID)
			if !ok {
				t.Fatal("no cascade record")
			}
			if !slices.Equal(c.Published, tt.published) || c.Deliveries != tt.deliveries || c.Suppressed != tt.suppressed || c.Limited != tt.limited {
				t.Errorf("cascade %+v, want published %v deliveries %d suppressed %d limited %d", c, tt.published, tt.deliveries, tt.suppressed, tt.limited)
			}
			if c.Depth() != len(tt.published)-1 || c.Messages() != sumInts(tt.published) {
				t.Errorf("depth %d messages %d", c.Depth(), c.Messages())
			}
			if got := len(r.events(KindCascadeLimited, "")); got != tt.limited {
				t.Errorf("cascade_limited events %d, want %d", got, tt.limited)
			}
			if got := len(r.events(KindSuppressed, "")); got != tt.suppressed {
				t.Errorf("suppressed events %d, want %d", got, tt.suppressed)
			}
			// One generation per tick: the root is published and handled at
			// t=1, so depth d is published at t=max(1, d).
			for _, e := range r.events(sim.KindPublished, "") {
				d := 0
				if i := strings.Index(e.Detail, "depth "); i >= 0 {
					d = int(e.Detail[i+6] - '0')
				}
				if e.Tick != sim.Tick(max(1, d)) {
					t.Errorf("depth %d published at %v", d, e.Tick)
				}
			}
			if err := sim.Check(r.w.Ledger(), sim.ExactlyOnce(""), sim.NoLoss()); err != nil {
				t.Error(err)
			}
			if cs := r.b.Cascades(); len(cs) != 1 || cs[0].Root != root.ID {
				t.Errorf("cascades %+v", cs)
			}
		})
	}
}

func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestCorrelationEveryHop checks that every message of a cascade carries
// the root's correlation ID and its parent as causation, and that filtering
// the trace by the correlation ID keeps every hop and nothing else.
func TestCorrelationEveryHop(t *testing.T) {
	r := newRig(t, 1, 3)
	parent := map[sim.ID]sim.ID{}
	corr := map[sim.ID]string{}
	hop := func(next string) sim.Handler {
		return HandlerFunc(func(ctx *Context, d *sim.Delivery) error {
			m := d.Msg
			corr[m.ID] = m.Headers.CorrelationID
			d.Apply("")
			if next == "" {
				return nil
			}
			c, err := ctx.Publish(next, m.Key, nil)
			if err == nil {
				parent[c.ID] = m.ID
			}
			return err
		})
	}
	r.sub(SubscriberConfig{Name: "billing", Pattern: "order.placed", Handler: hop("invoice.created")})
	r.sub(SubscriberConfig{Name: "stock", Pattern: "order.placed", Handler: hop("stock.reserved")})
	r.sub(SubscriberConfig{Name: "mailer", Pattern: "invoice.*", Handler: hop("mail.sent")})
	r.sub(SubscriberConfig{Name: "audit", Pattern: ">", Handler: hop("")})
	var root1, root2 sim.Message
	r.w.At(1, "orders", func() {
		root1 = r.env.NewMessage("order-1", nil, sim.Headers{Type: "order.placed", CorrelationID: "req-42"})
		root2 = r.env.NewMessage("order-2", nil, sim.Headers{Type: "order.placed"})
		for _, m := range []sim.Message{root1, root2} {
			if err := r.b.Publish(m); err != nil {
				t.Fatal(err)
			}
		}
	})
	r.run(5)
	// Each root: itself, invoice.created, stock.reserved, mail.sent.
	want := map[string]int{"req-42": 4, root2.ID.String(): 4}
	got := map[string]int{}
	for _, rec := range r.w.Ledger().Records() {
		m := rec.ID
		if m == root1.ID || m == root2.ID {
			got[r.corrOfRoot(m, root1)]++
			continue
		}
		c, ok := corr[m]
		if !ok {
			t.Errorf("%v was never handled by audit", m)
			continue
		}
		got[c]++
		p := parent[m]
		if p == 0 {
			t.Errorf("%v has no recorded parent", m)
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("correlation %q: %d messages, want %d (got %v)", k, got[k], n, got)
		}
	}
	// Every pubsub event about a message carries a correlation ID, and
	// filtering by one keeps exactly its cascade.
	for _, e := range r.rec.Events() {
		if e.Msg != 0 && e.Corr == "" {
			t.Errorf("event without correlation: %s", sim.AppendText(nil, &e))
		}
	}
	evs := sim.Filter(r.rec.Events(), sim.ByCorr("req-42"))
	msgs := map[sim.ID]bool{}
	for _, e := range evs {
		msgs[e.Msg] = true
	}
	if len(msgs) != 4 || !msgs[root1.ID] {
		t.Errorf("filter by req-42 kept messages %v", msgs)
	}
	for m := range msgs {
		for p := m; p != 0 && p != root1.ID; p = parent[p] {
			if !msgs[parent[p]] {
				t.Errorf("%v: parent %v is outside the filtered cascade", m, parent[p])
			}
		}
	}
	// A FilterSink sees the same events while the run goes on.
	var live sim.Recorder
	r2 := newRig(t, 1, 3)
	r2.w.Trace().Attach(sim.FilterSink{Keep: sim.ByCorr("c-9"), Next: &live})
	r2.sub(SubscriberConfig{Name: "a", Pattern: "x", Emits: []Emit{{Subject: "y"}}})
	r2.sub(SubscriberConfig{Name: "b", Pattern: "y"})
	r2.w.At(1, "publish", func() {
		_ = r2.b.Publish(r2.env.NewMessage("", nil, sim.Headers{Type: "x", CorrelationID: "c-9"}))
		_ = r2.b.Publish(r2.env.NewMessage("", nil, sim.Headers{Type: "x", CorrelationID: "c-10"}))
	})
	r2.run(3)
	if n := len(live.Events()); n != 6 {
		t.Errorf("live filter kept %d events, want 6 (published, delivered, processed for 2 hops):\n%s", n, r2.dump())
	}
	for _, e := range live.Events() {
		if e.Corr != "c-9" {
			t.Errorf("live filter let through %s", sim.AppendText(nil, &e))
		}
	}
}

func (r *rig) corrOfRoot(id sim.ID, withCorr sim.Message) string {
	if id == withCorr.ID {
		return withCorr.Headers.CorrelationID
	}
	return id.String()
}
