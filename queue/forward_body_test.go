package queue

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// capture is a sim.Publisher that keeps what it is handed, as a log or a
// projection would.
type capture struct{ got []sim.Message }

func (c *capture) Publish(m sim.Message) error { c.got = append(c.got, m); return nil }

// TestForwardedBodyIsItsOwn: a forwarded message's body is a copy, not
// the delivered body, a view into the source queue's arena, so a target that keeps it (a log
// with a long retention) does not keep the arena's whole chunk alive.
func TestForwardedBodyIsItsOwn(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "orders"})
	out := &capture{}
	var seen []byte
	if _, err := NewConsumer(r.w, ConsumerConfig{Queue: q, Name: "billing", Forward: &Forward{To: out},
		Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
			seen = d.Msg.Body
			d.Apply("")
			return nil
		})}); err != nil {
		t.Fatal(err)
	}
	r.send(q, "kunde-1", 0)
	r.to(3)
	if len(out.got) != 1 || seen == nil {
		t.Fatalf("forwarded %d messages, handled %q", len(out.got), seen)
	}
	if b := out.got[0].Body; string(b) != "body-kunde-1" || &b[0] == &seen[0] {
		t.Errorf("forwarded body %q shares the delivered body's memory, a view into the queue's arena", b)
	}
}
