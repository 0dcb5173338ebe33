package pubsub

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// Policy says what a full subscriber buffer does with one more copy.
type Policy int

// The overflow policies. Every drop is traced as "dropped", which the
// ledger books as lost with cause sim.CauseOverflow.
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

var policyNames = [...]string{"drop_newest", "drop_oldest", "block"}

// String returns the policy's name: "drop_newest", "drop_oldest" or
// "block", as scenario files write it.
func (p Policy) String() string {
	if p >= 0 && int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "policy(" + strconv.Itoa(int(p)) + ")"
}

// MarshalText returns the policy's name as String does; a policy that is
// none of the three is an error wrapping ErrInvalidConfig.
func (p Policy) MarshalText() ([]byte, error) {
	if p < 0 || int(p) >= len(policyNames) {
		return nil, fmt.Errorf("%w: unknown overflow policy %d", ErrInvalidConfig, int(p))
	}
	return []byte(policyNames[p]), nil
}

// UnmarshalText sets p from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (p *Policy) UnmarshalText(text []byte) error {
	for i, n := range policyNames {
		if n == string(text) {
			*p = Policy(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown overflow policy %q", ErrInvalidConfig, text)
}

// DefaultBuffer is the buffer capacity when SubscriberConfig.Buffer is 0.
const DefaultBuffer = 256

// Emit is a child event a subscriber publishes for every copy its handler
// handled (applied, or failed on nothing): Count messages to Subject, each
// a child of the handled message in its cascade.
type Emit struct {
	// Subject is where the child is published; it must be a valid subject.
	Subject string
	// Count is how many children are published per handled copy; 0 means 1.
	Count int
	// Type is the children's Type header; "" keeps the handled message's.
	Type string
	// CascadeLimit refuses a child deeper than this many hops from its
	// root (traced as "cascade_limited", and the rest of this emit's Count
	// is not tried); 0 leaves only the broker's MaxDepth.
	CascadeLimit int
}

// SubscriberConfig configures a subscriber: its subscription, its buffer
// and its behaviour. A copy the subscriber takes from its buffer goes
// through these steps, in order:
//
//  1. While the subscriber is muted (Subscriber.Mute), the copy is
//     ignored: the delivery records a skip ("skipped") and nothing else
//     happens.
//  2. With SourceCheck, a copy whose Source header is the subscriber's
//     source is ignored the same way: it is the subscriber's own change
//     coming back.
//  3. The handler (wrapped by the broker's fault injector, so the handler
//     fault points apply) takes sim.DurationOf ticks, during which the
//     subscriber reads nothing, and then handles the copy. With
//     Supervisor, the broker's supervisor switch is on while it does, so
//     whatever it publishes reaches no ephemeral subscriber.
//  4. When the handler succeeded and did not skip the copy as a duplicate,
//     the Emits are published, under the supervisor switch as well.
//
// A handler error loses the copy for this subscriber (ephemeral delivery
// has no retry): it is traced as "failed" and "lost" with cause
// sim.CauseHandlerFailed.
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
	// Handler handles each copy and records its effects through the
	// delivery (sim.Delivery.Apply); a cascade-aware handler gets the
	// broker's context with ContextOf or is written as a HandlerFunc. nil
	// applies one effect per copy (sim.Effect("")).
	Handler sim.Handler
	// Offline starts the subscriber disconnected.
	Offline bool
	// Start is the first tick the subscriber reads its buffer; before it,
	// copies wait there (and may overflow).
	Start sim.Tick
	// Emits are published for every copy handled (step 4 above).
	Emits []Emit
	// SourceCheck ignores copies whose Source header is Source (step 2),
	// which breaks sync loops.
	SourceCheck bool
	// Source is the name SourceCheck looks for; "" means Name.
	Source string
	// Supervisor handles every copy with the broker's supervisor switch
	// on: the subscriber's own publishes (its handler's and its Emits) are
	// published and reach durable fan-outs, but no ephemeral subscriber.
	Supervisor bool
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
	case c.Start < 0:
		return fmt.Errorf("%w: subscriber %q: Start %d is negative", ErrInvalidConfig, c.Name, c.Start)
	case c.Policy < DropNewest || c.Policy > Block:
		return fmt.Errorf("%w: subscriber %q: unknown policy %d", ErrInvalidConfig, c.Name, int(c.Policy))
	}
	if _, err := ParsePattern(c.Pattern); err != nil {
		return sim.Also(fmt.Errorf("subscriber %q: %w", c.Name, err), ErrInvalidConfig)
	}
	for i, e := range c.Emits {
		if err := ValidSubject(e.Subject); err != nil {
			return sim.Also(fmt.Errorf("subscriber %q: emit %d: %w", c.Name, i+1, err), ErrInvalidConfig)
		}
		if e.Count < 0 || e.CascadeLimit < 0 {
			return fmt.Errorf("%w: subscriber %q: emit %d: Count %d and CascadeLimit %d must not be negative",
				ErrInvalidConfig, c.Name, i+1, e.Count, e.CascadeLimit)
		}
	}
	return nil
}

// SubscriberMetrics are one subscriber's counters.
type SubscriberMetrics struct {
	Delivered  int // copies placed in the buffer
	Missed     int // copies missed while offline (by design)
	Dropped    int // copies dropped by the overflow policy
	Suppressed int // copies kept away by the supervisor switch
	Handled    int // copies handled successfully
	Skipped    int // copies ignored: muted, own source, or skipped by the handler as duplicates
	Failed     int // copies whose handler failed
	Discarded  int // copies a disconnect threw away (buffered or in the handler)
	Emitted    int // children of its Emits the broker accepted
	Buffered   int // copies in the buffer now
	Handling   int // copies its handler is working on now (0 or 1)
}

type slot struct {
	env     *envelope
	gen     uint64 // the broker's handling generation when the copy entered the buffer
	attempt int32  // the delivery number of this copy
}

// Subscriber is an ephemeral subscription with a bounded buffer. Its
// broker steps it in sim.PhaseConsumer; it hands eligible copies to its
// handler, one at a time.
type Subscriber struct {
	b           *Broker
	name        string
	consumer    string
	where       string // "topic:"+pattern, for connect events
	pattern     Pattern
	policy      Policy
	rate        int
	start       sim.Tick
	h           sim.Handler // the configured handler, wrapped by the fault injector
	timed       sim.Timed   // h when it is Timed (sim.DurationOf), else nil; asked once at Subscribe
	emits       []Emit
	sourceCheck bool
	source      string
	supervisor  bool
	online      bool
	closed      bool
	muted       bool
	effect      bool // h is sim.Effect's own (no injector), with no Emits, Supervisor or SourceCheck: see begin

	ring []slot // grows by doubling up to size, so an idle wide buffer costs little
	head int
	n    int
	size int // the buffer's capacity

	held         *envelope // a copy broker.reorder holds behind the next one
	heldAt       sim.Tick
	heldAttempt  int32
	heldDup      bool     // broker.duplicate fired for the held copy: it is placed twice
	listed       bool     // in the broker's list of subscribers holding a copy
	reconnecting bool     // a connect was refused; the step tries again every tick
	reconnectAt  sim.Tick // the tick of the next try
	restUntil    sim.Tick // subscriber.slow: reads nothing before this tick

	working bool     // a Timed handler is working on work
	work    slot     // the copy in the handler
	doneAt  sim.Tick // when the handler's work ends

	d   sim.Delivery       // reused for every copy
	lc  sim.LedgerConsumer // the consumer's ledger handle, for the delivered events the broker books
	ctx Context
	m   SubscriberMetrics
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
	source := cfg.Source
	if source == "" {
		source = cfg.Name
	}
	h := cfg.Handler
	if h == nil {
		h = sim.Effect("")
	}
	s := &Subscriber{
		b: b, name: cfg.Name, consumer: consumer, where: "topic:" + p.text, pattern: p, policy: cfg.Policy,
		rate: cfg.Rate, start: cfg.Start, h: b.faults.Handler(h), emits: append([]Emit(nil), cfg.Emits...),
		sourceCheck: cfg.SourceCheck, source: source, supervisor: cfg.Supervisor,
		online: !cfg.Offline, ring: make([]slot, min(size, initialRing)), size: size,
	}
	s.timed, _ = s.h.(sim.Timed)
	s.effect = sim.IsEffect(s.h) && len(cfg.Emits) == 0 && !cfg.Supervisor && !cfg.SourceCheck
	s.ctx.sub = s
	b.names[cfg.Name] = true
	b.subs = append(b.subs, s)
	b.invalidate()
	return s, nil
}

// Name returns the subscriber's name.
func (s *Subscriber) Name() string { return s.name }

// Consumer returns the subscriber's logical consumer in the ledger.
func (s *Subscriber) Consumer() string { return s.consumer }

// Pattern returns the subscriber's pattern.
func (s *Subscriber) Pattern() Pattern { return s.pattern }

// Policy returns the subscriber's overflow policy.
func (s *Subscriber) Policy() Policy { return s.policy }

// Online reports whether the subscriber is connected.
func (s *Subscriber) Online() bool { return s.online }

// Len returns the number of copies in the buffer.
func (s *Subscriber) Len() int { return s.n }

// Cap returns the buffer capacity.
func (s *Subscriber) Cap() int { return s.size }

// initialRing is the slots a buffer starts with; it doubles as copies
// arrive, up to its capacity, so memory follows the copies held, not the
// configured buffer (1,024 subscribers with buffers of 100,000 would
// otherwise take gigabytes before the first publish).
const initialRing = 64

// Metrics returns the subscriber's counters.
func (s *Subscriber) Metrics() SubscriberMetrics {
	m := s.m
	m.Buffered = s.n
	if s.working {
		m.Handling = 1
	}
	return m
}

// Mute makes the subscriber ignore what it takes from its buffer until
// Unmute: each copy is recorded as skipped, its handler does not run and
// it emits nothing. This is the subscriber's own switch, unlike
// Broker.Mute (the supervisor switch), which keeps copies away from every
// subscriber.
func (s *Subscriber) Mute() { s.muted = true }

// Unmute ends Mute.
func (s *Subscriber) Unmute() { s.muted = false }

// Muted reports whether the subscriber ignores its copies.
func (s *Subscriber) Muted() bool { return s.muted }

func (s *Subscriber) full() bool { return s.n == s.size }

func (s *Subscriber) push(x slot) {
	if s.n == len(s.ring) {
		s.growRing()
	}
	i := s.head + s.n
	if i >= len(s.ring) {
		i -= len(s.ring)
	}
	s.ring[i] = x
	s.n++
}

// growRing doubles the ring, up to the buffer's capacity, keeping the
// copies in order from index 0. It costs O(copies held), amortised O(1)
// per push.
func (s *Subscriber) growRing() {
	r := make([]slot, min(max(2*len(s.ring), 1), s.size))
	for i := 0; i < s.n; i++ {
		j := s.head + i
		if j >= len(s.ring) {
			j -= len(s.ring)
		}
		r[i] = s.ring[j]
	}
	s.ring, s.head = r, 0
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
// now on, never of earlier ones. While broker.unavailable fires for the
// connect (Where "topic:"+pattern, Consumer the subscriber's name), the
// broker refuses it: Connect returns an error wrapping ErrUnavailable, the
// refusal is traced as "rejected", and the subscriber tries again once per
// tick in its step, as a NATS client reconnects by itself, until a try
// succeeds or Disconnect or Close gives up; copies published meanwhile are
// missed. Connecting a closed subscriber returns ErrClosed.
func (s *Subscriber) Connect() error {
	if s.closed {
		return fmt.Errorf("%w: %q", ErrClosed, s.name)
	}
	if s.online {
		return nil
	}
	if err := s.b.connectRefused(s); err != nil {
		s.reconnecting, s.reconnectAt = true, s.b.env.Now()+1
		return err
	}
	s.reconnecting = false
	s.online = true
	s.b.env.Emit(sim.Event{Kind: KindConnected, Where: s.where, Actor: s.name, Consumer: s.consumer})
	return nil
}

// Reconnecting reports whether a refused connect is being retried.
func (s *Subscriber) Reconnecting() bool { return s.reconnecting }

// Disconnect takes the subscriber offline. Every copy routed to it and
// not yet handled is thrown away: the copies still in its buffer, the one
// its handler is working on, and those the broker still holds for it (held
// back by broker.delay or broker.reorder, or waiting for room in a full
// Block buffer). Each is traced as "lost" with cause sim.CauseDisconnect,
// as a client's pending messages are when its connection goes: core NATS
// keeps no per-client state once the socket dies, so a copy on its way to
// the old connection never reaches the new one. A pending automatic
// reconnect (see Connect) is cancelled. It costs O(buffered copies + copies
// the broker holds).
func (s *Subscriber) Disconnect() {
	s.reconnecting = false
	if !s.online {
		return
	}
	s.online = false
	b := s.b
	ev := sim.Event{Kind: KindDisconnected, Where: s.where, Actor: s.name, Consumer: s.consumer}
	if b.detailed() {
		ev.Detail = strconv.Itoa(s.n) + " buffered"
	}
	b.env.Emit(ev)
	if s.working {
		s.working = false
		b.m.Handling--
		s.discard(s.work.env, "discarded from the handler at disconnect")
		s.work = slot{}
	}
	for s.n > 0 {
		x := s.pop()
		b.m.Buffered--
		s.discard(x.env, "discarded from the buffer at disconnect")
	}
	if h := s.held; h != nil {
		dup := s.heldDup
		s.held, s.heldDup = nil, false
		b.m.InFlight--
		s.discardHeld(h, dup, "reordered copy the broker held back, discarded at disconnect")
	}
	b.dropHeld(s)
}

// discardHeld traces that a disconnect threw away a copy of e the broker
// held for s (and its duplicate when dup), and releases the broker's
// reference to it.
func (s *Subscriber) discardHeld(e *envelope, dup bool, detail string) {
	if dup {
		e.refs++ // discard releases one reference per copy
		s.discard(e, detail)
	}
	s.discard(e, detail)
}

// discard traces that a disconnect threw away s's copy of e, and releases it.
func (s *Subscriber) discard(e *envelope, detail string) {
	b := s.b
	b.m.Discarded++
	s.m.Discarded++
	ev := sim.Lost(e.where, s.name, s.consumer, &e.msg, sim.CauseDisconnect)
	ev.Corr = e.corr
	if b.detailed() {
		ev.Detail = detail
	}
	b.env.Emit(ev)
	b.unref(e)
}

// Close disconnects the subscriber (throwing away every copy routed to it
// and not yet handled, see Disconnect) and removes it from the broker; its
// name stays taken.
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

// step hands eligible copies to the handler, at most Rate of them per
// tick, in buffer order. A copy is eligible once a tick's subscriber step
// has begun after it entered the buffer: a publish made before the
// consumer phase is handled in the same tick, a child published by a
// handler in the next one, so a cascade advances one generation per tick.
// A Timed handler keeps the subscriber busy with one copy for its
// duration, and the copy is handled when the time is up; a subscriber.slow
// firing lets it take one copy and then rest for the rule's Param ticks
// (default 1). A subscriber whose connect was refused first tries to
// connect again. Once the world's budget is spent it takes nothing more.
// Each copy costs O(1) plus the handler.
func (s *Subscriber) step(now sim.Tick) {
	if s.reconnecting && now >= s.reconnectAt {
		_ = s.Connect() // refused again: traced, and tried again next tick
	}
	if !s.online || now < s.start {
		return
	}
	b := s.b
	handled := 0
	var er sim.EffectRun
	if s.effect {
		er = b.env.Trace.Effects(now, s.consumer, &s.lc)
	}
	if s.working {
		if now < s.doneAt {
			return
		}
		x := s.work
		s.working, s.work = false, slot{}
		b.m.Handling--
		s.run(x.env)
		handled++
	}
	if now < s.restUntil {
		return
	}
	for s.online && s.n > 0 && (s.rate == 0 || handled < s.rate) {
		x := s.ring[s.head]
		if x.gen >= b.gen || b.env.Exceeded() != nil {
			break
		}
		rest := false
		if b.faults != nil && b.fSlow.Armed() { // Armed is a call; a broker without faults skips it
			c := faultCtx(s, x.env)
			if f := b.fSlow.Check(&c); f != nil {
				s.restUntil = now + sim.Tick(max(f.Param, 1))
				rest = true
			}
		}
		s.pop()
		b.m.Buffered--
		handled++
		if s.begin(x, now, &er) || rest {
			break
		}
	}
}

// begin takes copy x from the buffer: it is ignored at once (mute, source
// check), handled at once, or, when the handler takes time, kept in the
// handler until doneAt. It reports whether the handler is busy with it.
// When the handler is the plain effect (s.effect) and the trace would not
// build the processed event, er (the step's EffectRun, taken when
// s.effect) numbers or books that event, as the handler's Apply would,
// and no delivery is prepared: the trace, the ledger and the counters
// come out as the handler's would, without copying the message into s.d
// and calling the handler. er is not read otherwise.
func (s *Subscriber) begin(x slot, now sim.Tick, er *sim.EffectRun) bool {
	b, e := s.b, x.env
	if s.effect && !s.muted && er.Book(e.msg.ID) {
		// The plain effect's one processed event was numbered or
		// booked: nothing reads a delivery, so none is prepared.
		b.m.Handled++
		s.m.Handled++
		b.unref(e)
		return false
	}
	d := &s.d
	d.ResetFrom(b.env, &e.msg, e.where, s.consumer, s.name, int(x.attempt))
	d.Corr = e.corr
	switch {
	case s.muted:
		s.ignore(e, "muted: ignored")
		return false
	case s.sourceCheck && e.msg.Headers.Source == s.source:
		s.ignore(e, "own change ignored (source check)")
		return false
	}
	if s.timed != nil {
		d.Ext = &s.ctx
		s.ctx.parent = e
		t := s.timed.Duration(d)
		s.ctx.parent = nil
		if t > 0 {
			s.working, s.work, s.doneAt = true, x, now+t
			b.m.Handling++
			return true
		}
	}
	s.run(e)
	return false
}

// ignore records that the subscriber skipped its copy of e without
// handling it, and releases the copy.
func (s *Subscriber) ignore(e *envelope, why string) {
	s.b.m.Skipped++
	s.m.Skipped++
	s.d.Skip(why)
	s.b.unref(e)
}

// run calls the handler on the copy of e prepared in s.d, publishes the
// emits when it succeeded, and settles the copy.
func (s *Subscriber) run(e *envelope) {
	b, d, c := s.b, &s.d, &s.ctx
	c.parent = e
	d.Ext = c
	if s.supervisor {
		b.Mute()
	}
	err := s.h.Handle(d)
	skipped := err == nil && d.Effects() == 0 && d.Skipped()
	if err == nil && !skipped && len(s.emits) > 0 {
		s.emit(e)
	}
	if s.supervisor {
		b.Unmute()
	}
	c.parent = nil
	switch {
	case err != nil:
		b.m.Failed++
		s.m.Failed++
		ev := d.Event(sim.KindFailed)
		if b.detailed() {
			ev.Detail = err.Error()
		}
		b.env.Trace.EmitRef(&ev)
		ev = sim.Lost(e.where, s.name, s.consumer, &e.msg, sim.CauseHandlerFailed)
		ev.Tick, ev.Corr = b.env.Now(), e.corr
		if b.detailed() {
			ev.Detail = sim.Classify(err).String() + " failure; ephemeral delivery has no retry"
		}
		b.env.Trace.EmitRef(&ev)
	case skipped:
		b.m.Skipped++
		s.m.Skipped++
	default:
		b.m.Handled++
		s.m.Handled++
	}
	b.unref(e)
}

// emit publishes the subscriber's Emits for its handled copy of e. A child
// the broker refuses is given up and traced as lost before any consumer:
// with cause sim.CauseBrokerUnavailable while the broker is unavailable,
// sim.CauseOverflow when a Block subscriber's full buffer refused it.
func (s *Subscriber) emit(e *envelope) {
	b, c := s.b, &s.ctx
	for i := range s.emits {
		em := &s.emits[i]
		typ := em.Type
		if typ == "" {
			typ = e.msg.Headers.Type
		}
		for range max(em.Count, 1) {
			m, err := c.publish(em.Subject, e.msg.Key, e.msg.Body, sim.Headers{Type: typ}, em.CascadeLimit)
			if err == nil {
				b.m.Emitted++
				s.m.Emitted++
				continue
			}
			if errors.Is(err, ErrCascadeLimit) || m.ID == 0 {
				break
			}
			cause := sim.CauseBrokerUnavailable
			if errors.Is(err, ErrBackpressure) {
				cause = sim.CauseOverflow
			}
			b.m.EmitsLost++
			ev := sim.Lost("topic:"+em.Subject, s.name, "", &m, cause)
			ev.Type, ev.Corr = m.Headers.Type, e.corr
			if b.detailed() {
				ev.Detail = "emit given up: " + err.Error()
			}
			b.env.Emit(ev)
		}
	}
}
