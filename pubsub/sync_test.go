package pubsub

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestSyncLoop mirrors one customer change between two systems. Without a
// source header the echo runs until the depth limit refuses it and says so
// in the trace; with source tracking it stops after one round trip.
func TestSyncLoop(t *testing.T) {
	for _, tracking := range []bool{false, true} {
		name := "no-source-header"
		if tracking {
			name = "source-tracking"
		}
		t.Run(name, func(t *testing.T) {
			const limit = 10
			r := newRig(t, 1, limit)
			s, err := NewSync(r.b, SyncConfig{Subject: "customer.updated", Systems: [2]string{"commerce", "operations"}, SourceTracking: tracking})
			if err != nil {
				t.Fatal(err)
			}
			var root sim.Message
			r.w.At(1, "customer edits address", func() {
				if root, err = s.Change("commerce", "customer-7", []byte("new address")); err != nil {
					t.Error(err)
				}
			})
			r.run(limit + 5)
			c, ok := r.b.Cascade(root.ID)
			if !ok {
				t.Fatal("no cascade record")
			}
			limited := r.events(KindCascadeLimited, "")
			if !tracking {
				// Every hop is one message; the loop reaches the cap and
				// the refusal is traced once.
				if c.Depth() != limit || c.Messages() != limit+1 || c.Limited != 1 || len(limited) != 1 {
					t.Errorf("cascade %+v, %d limit events; want depth %d, %d messages, 1 refusal", c, len(limited), limit, limit+1)
				}
				if s.Applied("commerce")+s.Applied("operations") != limit+1 || s.Ignored("commerce") != 0 {
					t.Errorf("applied %d+%d ignored %d", s.Applied("commerce"), s.Applied("operations"), s.Ignored("commerce"))
				}
				return
			}
			// commerce -> operations (applied, echoed) -> commerce (ignored).
			if c.Depth() != 1 || c.Messages() != 2 || c.Limited != 0 || len(limited) != 0 {
				t.Errorf("cascade %+v, %d limit events; want one round trip", c, len(limited))
			}
			if s.Applied("operations") != 1 || s.Applied("commerce") != 0 || s.Ignored("commerce") != 1 {
				t.Errorf("applied ops=%d com=%d ignored com=%d", s.Applied("operations"), s.Applied("commerce"), s.Ignored("commerce"))
			}
			for _, rec := range r.w.Ledger().Records() {
				if rec.Type == "" {
					t.Errorf("%v has no type", rec.ID)
				}
			}
		})
	}
}

func TestSyncConfig(t *testing.T) {
	w, _ := sim.New(sim.Config{})
	b, _ := New(w, Config{Name: "x"})
	for _, c := range []SyncConfig{
		{Subject: "s", Systems: [2]string{"a", ""}},
		{Subject: "s", Systems: [2]string{"a", "a"}},
		{Subject: "s.*", Systems: [2]string{"a", "b"}},
		{Subject: "s", Systems: [2]string{"a", "b"}, Buffer: -1},
	} {
		if _, err := NewSync(b, c); err == nil {
			t.Errorf("NewSync(%+v) accepted", c)
		}
	}
	s, err := NewSync(b, SyncConfig{Subject: "s", Systems: [2]string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Change("c", "k", nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("change in an unknown system: %v", err)
	}
	if _, err := NewStorm(b, StormConfig{Subject: "p", Subscribers: 0}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("storm without subscribers: %v", err)
	}
}
