package pubsub

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// Context is the broker's side of one delivery to a subscriber: it tells
// where the copy stands in its cascade (subject, depth, correlation, root)
// and publishes child events, which inherit the cascade. A handler gets it
// from its delivery with ContextOf, or is written as a HandlerFunc. A
// Context is valid only during the handler call it belongs to; kept
// beyond it, its Publish methods return ErrNoContext and its accessors
// return zero values.
type Context struct {
	sub    *Subscriber
	parent *envelope
}

// ContextOf returns the cascade context of d, a delivery a pub/sub
// subscriber is handing to its handler, or nil when d is not one (a queue
// delivery, or a pub/sub delivery whose handler call has ended). It works
// through every handler wrapper that passes the delivery on
// (Injector.Handler, sim.Idempotent), and costs a type assertion.
func ContextOf(d *sim.Delivery) *Context {
	if d == nil {
		return nil
	}
	c, _ := d.Ext.(*Context)
	if c == nil || c.parent == nil {
		return nil
	}
	return c
}

// HandlerFunc is a cascade-aware subscriber handler: a function of the
// delivery's Context and the delivery. It implements sim.Handler, so it
// can be wrapped like any other handler; called with a delivery that has no
// pub/sub context, it fails with an error wrapping ErrNoContext and
// sim.ErrPermanent.
type HandlerFunc func(ctx *Context, d *sim.Delivery) error

// Handle calls f with the context of d.
func (f HandlerFunc) Handle(d *sim.Delivery) error {
	c := ContextOf(d)
	if c == nil {
		return fmt.Errorf("%w: %s is not a pub/sub delivery in its handler call: %w", ErrNoContext, d.Msg.ID, sim.ErrPermanent)
	}
	return f(c, d)
}

// Subscriber returns the name of the subscriber whose handler runs.
func (c *Context) Subscriber() string { return c.sub.name }

// Now returns the current tick.
func (c *Context) Now() sim.Tick { return c.sub.b.env.Now() }

// Subject returns the subject the message was published to.
func (c *Context) Subject() string {
	if c.parent == nil {
		return ""
	}
	return c.parent.subject
}

// Depth returns the message's depth in its cascade (0 for a root event).
func (c *Context) Depth() int {
	if c.parent == nil {
		return 0
	}
	return int(c.parent.depth)
}

// Corr returns the cascade's correlation ID.
func (c *Context) Corr() string {
	if c.parent == nil {
		return ""
	}
	return c.parent.corr
}

// Root returns the ID of the cascade's root event.
func (c *Context) Root() sim.ID {
	switch {
	case c.parent == nil:
		return 0
	case c.parent.cascade != nil:
		return c.parent.cascade.Root
	}
	return c.parent.msg.ID
}

// Publish publishes a child event to subject: a new message from
// Env.NewMessage with Type subject, the handled message as CausationID, the
// cascade's correlation ID and the handled message's Source. It returns the
// child and the error of Broker.PublishTo, or, creating no message,
// ErrCascadeLimit when the child would be deeper than the broker's
// MaxDepth, and the world's budget error (sim.ErrBudget) once the run's
// budget is spent; a cascade that has caused sim.Budget.CascadePerRoot
// copies spends it.
func (c *Context) Publish(subject, key string, body []byte) (sim.Message, error) {
	return c.publish(subject, key, body, sim.Headers{}, 0)
}

// PublishHeaders is Publish with headers: an empty Type becomes subject, an
// empty Source the handled message's Source; CorrelationID and CausationID
// are always set by the cascade.
func (c *Context) PublishHeaders(subject, key string, body []byte, h sim.Headers) (sim.Message, error) {
	return c.publish(subject, key, body, h, 0)
}

// publish is PublishHeaders with a further depth limit (0: none beyond the
// broker's MaxDepth). A refused child is traced as "cascade_limited", with
// the parent as Msg.
func (c *Context) publish(subject, key string, body []byte, h sim.Headers, limit int) (sim.Message, error) {
	if c == nil || c.parent == nil {
		return sim.Message{}, fmt.Errorf("%w: a Context is valid only during its handler call", ErrNoContext)
	}
	s, b, p := c.sub, c.sub.b, c.parent
	if err := ValidSubject(subject); err != nil {
		return sim.Message{}, err
	}
	max := b.maxDepth
	if limit > 0 && limit < max {
		max = limit
	}
	if depth := int(p.depth) + 1; depth > max {
		cas := b.cascadeOf(p)
		cas.Limited++
		b.m.CascadeLimited++
		ev := sim.Event{Kind: KindCascadeLimited, Where: "topic:" + subject, Actor: s.name, Consumer: s.consumer, Msg: p.msg.ID, Key: key, Corr: p.corr}
		if b.detailed() {
			ev.Detail = "depth " + strconv.Itoa(depth) + " exceeds the limit of " + strconv.Itoa(max) + "; root " + cas.Root.String() + "; publish refused"
		}
		b.env.Emit(ev)
		return sim.Message{}, fmt.Errorf("%w: depth %d exceeds %d (root %s)", ErrCascadeLimit, depth, max, cas.Root)
	}
	if lim := b.env.BudgetOf().CascadePerRoot; lim > 0 {
		if cas := b.cascadeOf(p); cas.Deliveries >= lim {
			b.env.Exceed(fmt.Errorf("%w: root %s caused %d copies (cap cascade_per_root %d)", sim.ErrBudget, cas.Root, cas.Deliveries, lim))
		}
	}
	if err := b.env.Exceeded(); err != nil {
		return sim.Message{}, err
	}
	if h.Type == "" {
		h.Type = subject
	}
	if h.Source == "" {
		h.Source = p.msg.Headers.Source
	}
	h.CorrelationID = p.corr
	h.CausationID = p.msg.ID
	m := b.env.NewMessage(key, body, h)
	return m, b.publish(subject, m, p)
}

// Muted runs f with the broker's supervisor switch on, so whatever f
// publishes (a worker's save) reaches no ephemeral subscriber. The switch is
// restored even when f fails.
func (c *Context) Muted(f func() error) error {
	b := c.sub.b
	b.Mute()
	defer b.Unmute()
	return f()
}
