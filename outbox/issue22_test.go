package outbox

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// slowSuccess is a target whose first publish takes until tick after and
// then succeeds; meanwhile runs while it hangs.
type slowSuccess struct {
	env       *sim.Env
	next      sim.Publisher
	after     sim.Tick
	meanwhile func()
	calls     int
}

func (p *slowSuccess) Publish(m sim.Message) error {
	p.calls++
	if p.calls == 1 {
		p.env.Clock.Set(p.after)
		p.meanwhile()
	}
	return p.next.Publish(m)
}

// TestSlowPublishPastTheLeaseIsPublishedTwice: leases keep two relays
// from claiming a row at once, not from publishing it twice. Relay A's
// publish outlasts its lease; relay B claims the row meanwhile and
// publishes it, and then A's publish succeeds too. The doc says so.
//
// The FOR UPDATE SKIP LOCKED pattern this models holds a row lock only as
// long as the transaction, and a lease only as long as its timeout: a
// publish that outlives either is not fenced, which is why the outbox
// gives at-least-once delivery and consumers must be idempotent.
func TestSlowPublishPastTheLeaseIsPublishedTwice(t *testing.T) {
	w := mustWorld(t, 1)
	env := w.Env()
	s := mustService(t, w, false)
	sink := newSink(w)
	slow := &slowSuccess{env: env, next: sink, after: 10}
	a := mustRelay(t, w, RelayConfig{Name: "A", Service: s, Target: slow, Lease: 5})
	b := mustRelay(t, w, RelayConfig{Name: "B", Service: s, Target: slow, Lease: 5})
	slow.meanwhile = func() {
		if err := b.Poll(); err != nil {
			t.Errorf("B's poll: %v", err)
		}
	}
	env.Clock.Set(1)
	_, row, err := s.PlaceOrder("kunde-A", 10)
	if err != nil {
		t.Fatal(err)
	}
	_ = a.Poll()
	if n := sink.count(row.Msg); n != 2 {
		t.Fatalf("published %d times, want twice: A's slow publish and B's", n)
	}
}
