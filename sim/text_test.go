package sim_test

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestEnumText checks the one spelling of Behaviour and IdempotencyKey:
// String, MarshalText and UnmarshalText agree, and unknown values are
// errors wrapping ErrInvalidConfig.
func TestEnumText(t *testing.T) {
	for b, w := range map[sim.Behaviour]string{sim.Succeed: "succeed", sim.Transient: "transient", sim.Permanent: "permanent", sim.Poison: "poison", sim.Slow: "slow"} {
		var got sim.Behaviour
		txt, err := b.MarshalText()
		if b.String() != w || string(txt) != w || err != nil || got.UnmarshalText([]byte(w)) != nil || got != b {
			t.Errorf("behaviour %d: String %q, MarshalText %q %v, UnmarshalText %d; want %q", b, b.String(), txt, err, got, w)
		}
	}
	for k, w := range map[sim.IdempotencyKey]string{sim.NotIdempotent: "none", sim.KeyByMessageID: "message_id", sim.KeyByBusinessKey: "business_key"} {
		var got sim.IdempotencyKey
		txt, err := k.MarshalText()
		if k.String() != w || string(txt) != w || err != nil || got.UnmarshalText([]byte(w)) != nil || got != k {
			t.Errorf("idempotency key %d: String %q, MarshalText %q %v, UnmarshalText %d; want %q", k, k.String(), txt, err, got, w)
		}
	}
	var b sim.Behaviour
	var k sim.IdempotencyKey
	for _, err := range []error{b.UnmarshalText([]byte("Slow")), k.UnmarshalText([]byte("message-id")),
		func() error { _, err := sim.Behaviour(9).MarshalText(); return err }(),
		func() error { _, err := sim.IdempotencyKey(9).MarshalText(); return err }(),
		(&sim.Script{Behaviour: sim.Slow}).Validate(), (&sim.Script{Behaviour: 9}).Validate()} {
		if !errors.Is(err, sim.ErrInvalidConfig) {
			t.Errorf("got %v, want ErrInvalidConfig", err)
		}
	}
}

// TestIdempotencyKeyWrap checks what each key absorbs: nothing for
// NotIdempotent (the handler comes back as it is), a repeat of the same
// message ID for KeyByMessageID, a re-sent copy under a new ID for
// KeyByBusinessKey.
func TestIdempotencyKeyWrap(t *testing.T) {
	h := &sim.Script{}
	if sim.NotIdempotent.Wrap(h) != sim.Handler(h) {
		t.Error("NotIdempotent wrapped the handler")
	}
	first := sim.Message{ID: 1, Key: "order-1", Body: []byte("42")}
	again := first
	again.ID = 2 // a redriven copy: same business change, new ID
	for _, c := range []struct {
		key  sim.IdempotencyKey
		want []int // effects of first, first again, the copy
	}{
		{sim.NotIdempotent, []int{1, 1, 1}},
		{sim.KeyByMessageID, []int{1, 0, 1}},
		{sim.KeyByBusinessKey, []int{1, 0, 0}},
	} {
		w := c.key.Wrap(&sim.Script{})
		for i, m := range []sim.Message{first, first, again} {
			d := sim.NewDelivery(nil, m, "queue:q", "c", "", 1)
			if err := w.Handle(d); err != nil || d.Effects() != c.want[i] {
				t.Errorf("%v: delivery %d: effects %d, err %v; want %d", c.key, i+1, d.Effects(), err, c.want[i])
			}
		}
	}
}
