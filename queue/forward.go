package queue

import (
	"bytes"
	"fmt"

	"github.com/brokerlab/brokerlab/sim"
)

// Forward makes a consumer publish one outgoing message for every message
// it handles, as a service in a chain does (billing charges, then
// publishes invoice.created). The outgoing message keeps the incoming
// one's key and body, carries its correlation ID (the incoming message's
// own ID when it has none) and names it as its cause.
//
// It is published after the handler succeeded and after the
// consumer.crash_after_effect fault point, before the ack: a crash there
// leaves the effect applied and the outgoing message unsent, and the
// incoming message comes back. An idempotent handler then skips the
// redelivery as a duplicate. Without Resend a skipped delivery publishes
// nothing, so the outgoing message is never sent; with Resend the
// consumer publishes it again on every skipped delivery (downstream must
// be idempotent in turn, since it may get it twice).
type Forward struct {
	// To is where the outgoing messages go; required.
	To sim.Publisher
	// Type is the outgoing message type; "" keeps the incoming one's.
	Type string
	// Resend publishes the outgoing message again for a delivery the
	// handler skipped as a duplicate.
	Resend bool
}

// Validate reports a Forward without a target, wrapping ErrInvalidConfig.
func (f *Forward) Validate() error {
	if f != nil && f.To == nil {
		return fmt.Errorf("%w: a forward needs a target", ErrInvalidConfig)
	}
	return nil
}

// forward publishes the outgoing message for delivery d when the handler
// applied an effect, or skipped a duplicate and Resend is on. A refused
// publish is counted (ForwardFailed); the outgoing message is then lost,
// as it is for a service that does not retry its publish.
func (x *instance) forward(d *sim.Delivery) {
	f := x.c.cfg.Forward
	if f == nil {
		return
	}
	resend := d.Effects() == 0 && d.Skipped()
	if d.Effects() == 0 && !(resend && f.Resend) {
		return
	}
	in := &d.Msg
	h := sim.Headers{Type: in.Headers.Type, CorrelationID: in.Headers.CorrelationID, CausationID: in.ID, Source: x.c.cfg.Name}
	if f.Type != "" {
		h.Type = f.Type
	}
	if h.CorrelationID == "" {
		h.CorrelationID = in.ID.String()
	}
	// The delivered body is a view into the queue's body arena: the
	// outgoing message gets its own copy, so a log or subscriber that
	// keeps it does not keep the arena's whole chunk alive.
	m := x.c.q.env.NewMessage(in.Key, bytes.Clone(in.Body), h)
	if err := f.To.Publish(m); err != nil {
		x.stats.ForwardFailed++
		return
	}
	x.stats.Forwarded++
	if resend {
		x.stats.Resent++
	}
}
