package pubsub

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Policy says what a full subscriber buffer does with one more copy.
type Policy int

// The overflow policies. Every drop is traced as "dropped" and recorded in
// the ledger as lost with cause sim.CauseOverflow.
const (
	// DropNewest drops the incoming copy and keeps the buffer as it is.
	DropNewest Policy = iota
	// DropOldest drops the oldest buffered copy to make room.
	DropOldest
	// Block refuses the publish: Publish returns ErrBackpressure and no
	// subscriber gets the message, so the publisher sees back-pressure and
	// may retry.
	Block
)

var policyNames = [...]string{"drop-newest", "drop-oldest", "block"}

// String returns the policy's name: "drop-newest", "drop-oldest" or
// "block".
func (p Policy) String() string {
	if p >= 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "policy(" + strconv.Itoa(int(p)) + ")"
}

// ParsePolicy parses the String form of a policy.
func ParsePolicy(s string) (Policy, error) {
	for i, n := range policyNames {
		if n == s {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown overflow policy %q", ErrInvalidConfig, s)
}

// DefaultBuffer is the buffer capacity when SubscriberConfig.Buffer is 0.
const DefaultBuffer = 256

// Handler handles one copy of a message in the subscriber's Step. It may
// publish further events through ctx. A nil error counts as applied in the
// ledger; an error is traced as "failed" and the copy is gone (ephemeral
// delivery has no retry).
type Handler func(ctx *Context, m sim.Message) error

// SubscriberConfig configures a subscriber.
type SubscriberConfig struct {
	// Name identifies the subscriber in the trace; unique per broker.
	Name string
	// Consumer is the subscriber's logical consumer in the ledger; ""
	// means Name.
	Consumer string
	// Pattern selects the subjects (see the package doc for the syntax).
	Pattern string
	// Buffer is the buffer capacity in copies; 0 means DefaultBuffer.
	Buffer int
	// Policy is what a full buffer does.
	Policy Policy
	// Rate caps the copies handled per tick; 0 means every eligible copy.
	Rate int
	// Handler handles each copy; nil accepts every copy without effect.
	Handler Handler
	// Offline starts the subscriber disconnected.
	Offline bool
}

// Validate reports a configuration error.
func (c SubscriberConfig) Validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: a subscriber needs a name", ErrInvalidConfig)
	case c.Buffer < 0:
		return fmt.Errorf("%w: subscriber %q: Buffer %d is negative", ErrInvalidConfig, c.Name, c.Buffer)
	case c.Rate < 0:
		return fmt.Errorf("%w: subscriber %q: Rate %d is negative", ErrInvalidConfig, c.Name, c.Rate)
	case c.Policy < DropNewest || c.Policy > Block:
		return fmt.Errorf("%w: subscriber %q: unknown policy %d", ErrInvalidConfig, c.Name, int(c.Policy))
	}
	if _, err := ParsePattern(c.Pattern); err != nil {
		return fmt.Errorf("subscriber %q: %w", c.Name, err)
	}
	return nil
}

// SubscriberMetrics are one subscriber's counters.
type SubscriberMetrics struct {
	Delivered  int // copies placed in the buffer
	Missed     int // copies missed while offline, at publish or at disconnect
	Dropped    int // copies dropped by the overflow policy
	Suppressed int // copies kept away by the supervisor switch
	Handled    int // copies handled successfully
	Failed     int // copies whose handler failed
	Buffered   int // copies in the buffer now
}

type slot struct {
	env *envelope
	gen uint64 // the broker's handling generation when the copy entered the buffer
}

// Subscriber is an ephemeral subscription with a bounded buffer. It is a
// sim.Actor for sim.PhaseConsumer: Step hands eligible copies to the
// handler. Broker.Attach steps every subscriber; a subscriber is never
// stepped twice per tick.
type Subscriber struct {
	b        *Broker
	name     string
	consumer sim.ConsumerRef
	pattern  Pattern
	policy   Policy
	rate     int
	handler  Handler
	online   bool
	closed   bool

	ring []slot // fixed capacity
	head int
	n    int

	held      *envelope // a copy broker.reorder holds behind the next one
	heldAt    sim.Tick
	listed    bool // in the broker's list of subscribers holding a copy
	busyUntil sim.Tick
	ctx       Context
	m         SubscriberMetrics
}

// Subscribe adds a subscriber. Subscribing costs O(subscriptions) once per
// subject afterwards, when the route cache is rebuilt.
func (b *Broker) Subscribe(cfg SubscriberConfig) (*Subscriber, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if b.names[cfg.Name] {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateName, cfg.Name)
	}
	p, _ := ParsePattern(cfg.Pattern)
	size := cfg.Buffer
	if size == 0 {
		size = DefaultBuffer
	}
	consumer := cfg.Consumer
	if consumer == "" {
		consumer = cfg.Name
	}
	s := &Subscriber{
		b: b, name: cfg.Name, consumer: b.env.Ledger.Consumer(consumer), pattern: p, policy: cfg.Policy,
		rate: cfg.Rate, handler: cfg.Handler, online: !cfg.Offline, ring: make([]slot, size),
	}
	s.ctx.sub = s
	b.names[cfg.Name] = true
	b.subs = append(b.subs, s)
	b.invalidate()
	return s, nil
}

// Name returns the subscriber's name.
func (s *Subscriber) Name() string { return s.name }

// Pattern returns the subscriber's pattern.
func (s *Subscriber) Pattern() Pattern { return s.pattern }

// Policy returns the subscriber's overflow policy.
func (s *Subscriber) Policy() Policy { return s.policy }

// Online reports whether the subscriber is connected.
func (s *Subscriber) Online() bool { return s.online }

// Len returns the number of copies in the buffer.
func (s *Subscriber) Len() int { return s.n }

// Cap returns the buffer capacity.
func (s *Subscriber) Cap() int { return len(s.ring) }

// Metrics returns the subscriber's counters.
func (s *Subscriber) Metrics() SubscriberMetrics {
	m := s.m
	m.Buffered = s.n
	return m
}

func (s *Subscriber) full() bool { return s.n == len(s.ring) }

func (s *Subscriber) push(x slot) {
	i := s.head + s.n
	if i >= len(s.ring) {
		i -= len(s.ring)
	}
	s.ring[i] = x
	s.n++
}

func (s *Subscriber) pop() slot {
	x := s.ring[s.head]
	s.ring[s.head] = slot{}
	s.head++
	if s.head == len(s.ring) {
		s.head = 0
	}
	s.n--
	return x
}

// Connect brings the subscriber online: it gets copies of publishes from
// now on, never of earlier ones. Connecting a closed subscriber returns
// ErrClosed.
func (s *Subscriber) Connect() error {
	if s.closed {
		return fmt.Errorf("%w: %q", ErrClosed, s.name)
	}
	if !s.online {
		s.online = true
		s.b.env.Emit(sim.Event{Kind: KindConnected, Where: "topic:" + s.pattern.text, Actor: s.name})
	}
	return nil
}

// Disconnect takes the subscriber offline. Copies still in its buffer (and
// one held back by broker.reorder) are thrown away and recorded as missed,
// as a client's pending messages are when its connection goes. It costs
// O(buffered copies).
func (s *Subscriber) Disconnect() {
	if !s.online {
		return
	}
	s.online = false
	b := s.b
	b.env.Emit(sim.Event{Kind: KindDisconnected, Where: "topic:" + s.pattern.text, Actor: s.name, Detail: strconv.Itoa(s.n) + " buffered"})
	for s.n > 0 {
		x := s.pop()
		b.m.Buffered--
		b.m.Discarded++
		b.miss(s, x.env, "", "discarded from the buffer at disconnect")
		b.unref(x.env)
	}
	if h := s.held; h != nil {
		s.held = nil
		b.m.InFlight--
		b.miss(s, h, "", "subscriber offline (disconnected while the broker held the copy back)")
		b.unref(h)
	}
}

// Close disconnects the subscriber and removes it from the broker; its name
// stays taken. Copies the broker still holds for it are recorded as missed
// when they come due.
func (s *Subscriber) Close() {
	if s.closed {
		return
	}
	s.Disconnect()
	s.closed = true
	b := s.b
	for i, x := range b.subs {
		if x == s {
			b.subs = append(b.subs[:i:i], b.subs[i+1:]...)
			break
		}
	}
	b.invalidate()
}

// Step hands eligible copies to the handler, at most Rate of them, in
// buffer order. A copy is eligible once a tick's first subscriber step has
// begun after it entered the buffer: a publish made before the consumer
// phase is handled in the same tick, a child published by a handler in the
// next one, so a cascade advances one generation per tick. A subscriber.slow firing
// lets it handle one copy and then rest for the rule's Param ticks
// (default 1). Each handled copy costs O(1) plus the handler.
func (s *Subscriber) Step(now sim.Tick) {
	b := s.b
	if b.genTick != now {
		b.gen++
		b.genTick = now
	}
	if !s.online || now < s.busyUntil {
		return
	}
	in := b.faults
	for handled := 0; s.online && s.n > 0 && (s.rate == 0 || handled < s.rate); handled++ {
		x := s.ring[s.head]
		if x.gen >= b.gen {
			break
		}
		slow := false
		if in != nil && in.Has(faults.SubscriberSlow) {
			if f, ok := b.faults.Check(faults.SubscriberSlow, faultCtx(s, x.env)); ok {
				d := sim.Tick(f.Param)
				if d <= 0 {
					d = 1
				}
				s.busyUntil = now + d
				slow = true
			}
		}
		s.ring[s.head] = slot{}
		if s.head++; s.head == len(s.ring) {
			s.head = 0
		}
		s.n--
		b.m.Buffered--
		e := x.env
		var err error
		if s.handler != nil {
			err = s.handle(e)
		}
		if err != nil {
			b.m.Failed++
			s.m.Failed++
			b.env.Emit(sim.Event{Kind: sim.KindFailed, Where: e.where, Actor: s.name, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr, Detail: err.Error()})
		} else {
			b.m.Handled++
			s.m.Handled++
			if led := b.env.Ledger; led != nil {
				led.Applied(e.msg.ID, s.consumer, now)
			}
			if tr := b.env.Trace; tr.Enabled() {
				b.emitCopySlow(sim.KindProcessed, s.name, e, 0, s.ctx.note)
			} else {
				tr.Skip()
			}
		}
		b.unref(e)
		if slow {
			break
		}
	}
}

// handle runs the handler on a copy of e with a fresh Context.
func (s *Subscriber) handle(e *envelope) error {
	c := &s.ctx
	c.note = ""
	c.parent = e
	err := s.handler(c, e.msg)
	c.parent = nil
	return err
}

// Context is what a handler gets besides the message: it publishes child
// events that inherit the cascade's correlation ID, and switches the
// supervisor. A Context is valid only during the handler call.
type Context struct {
	sub    *Subscriber
	parent *envelope
	note   string
}

// Subscriber returns the name of the subscriber whose handler runs.
func (c *Context) Subscriber() string { return c.sub.name }

// Now returns the current tick.
func (c *Context) Now() sim.Tick { return c.sub.b.env.Now() }

// Subject returns the subject the message was published to.
func (c *Context) Subject() string { return c.parent.subject }

// Depth returns the message's depth in its cascade (0 for a root event).
func (c *Context) Depth() int { return int(c.parent.depth) }

// Corr returns the cascade's correlation ID.
func (c *Context) Corr() string { return c.parent.corr }

// Root returns the ID of the cascade's root event.
func (c *Context) Root() sim.ID {
	if c.parent.cascade != nil {
		return c.parent.cascade.Root
	}
	return c.parent.msg.ID
}

// Note sets the Detail of the "processed" event traced when the handler
// returns nil, e.g. why it ignored the message.
func (c *Context) Note(detail string) { c.note = detail }

// Publish publishes a child event to subject: a new message from
// env.NewMessage with Type subject, the handled message as CausationID, the
// cascade's correlation ID and the handled message's Source. It returns the
// child and the error of Broker.PublishTo, or ErrCascadeLimit (no message
// is created then) when the child would be deeper than the broker's
// MaxDepth.
func (c *Context) Publish(subject, key string, body []byte) (sim.Message, error) {
	return c.PublishHeaders(subject, key, body, sim.Headers{})
}

// PublishHeaders is Publish with headers: an empty Type becomes subject, an
// empty Source the handled message's Source; CorrelationID and CausationID
// are always set by the cascade.
func (c *Context) PublishHeaders(subject, key string, body []byte, h sim.Headers) (sim.Message, error) {
	if c.parent == nil {
		return sim.Message{}, fmt.Errorf("%w: a Context is valid only during its handler call", ErrInvalidMessage)
	}
	s, b, p := c.sub, c.sub.b, c.parent
	if err := ValidSubject(subject); err != nil {
		return sim.Message{}, err
	}
	if depth := int(p.depth) + 1; depth > b.maxDepth {
		cas := b.cascadeOf(p)
		cas.Limited++
		b.m.CascadeLimited++
		b.env.Emit(sim.Event{Kind: KindCascadeLimited, Where: "topic:" + subject, Actor: s.name, Msg: p.msg.ID, Key: key, Corr: p.corr,
			Detail: "depth " + strconv.Itoa(depth) + " exceeds the limit of " + strconv.Itoa(b.maxDepth) + "; root " + cas.Root.String() + "; publish refused"})
		return sim.Message{}, fmt.Errorf("%w: depth %d exceeds %d (root %s)", ErrCascadeLimit, depth, b.maxDepth, cas.Root)
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
