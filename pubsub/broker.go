package pubsub

import (
	"container/heap"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package pubsub.
var (
	ErrInvalidConfig  = errors.New("pubsub: invalid config")
	ErrInvalidSubject = errors.New("pubsub: invalid subject")
	ErrInvalidMessage = errors.New("pubsub: invalid message")
	ErrDuplicateName  = errors.New("pubsub: duplicate subscriber name")
	ErrUnavailable    = errors.New("pubsub: broker unavailable")
	ErrBackpressure   = errors.New("pubsub: back-pressure")
	ErrCascadeLimit   = errors.New("pubsub: cascade depth limit")
	ErrClosed         = errors.New("pubsub: subscriber closed")
)

// errConnection is what an unavailable broker reports when the fault rule
// states no error text.
var errConnection = errors.New("connection refused")

// The trace kinds pubsub adds to sim's.
const (
	KindSuppressed     sim.Kind = "suppressed"      // the supervisor switch kept a copy from a subscriber
	KindCascadeLimited sim.Kind = "cascade_limited" // a child publish was refused by the cascade depth limit
	KindConnected      sim.Kind = "connected"       // a subscriber connected
	KindDisconnected   sim.Kind = "disconnected"    // a subscriber disconnected
)

// DefaultMaxDepth is the cascade depth limit when Config.MaxDepth is 0.
const DefaultMaxDepth = 16

// freeMax bounds the number of settled envelopes kept for reuse.
const freeMax = 1024

// routeCacheMax bounds the number of cached subject routes; the cache is
// cleared when it is full, so memory stays bounded with many subjects.
const routeCacheMax = 4096

// Config configures a Broker.
type Config struct {
	// Name identifies the broker; Attach registers its actors as
	// "pubsub:"+Name and "pubsub:"+Name+"/subscribers". Required.
	Name string
	// Env is the shared environment; nil means a private one.
	Env *sim.Env
	// Faults is consulted at the points subscriber.offline,
	// subscriber.slow, broker.duplicate, broker.delay, broker.reorder and
	// broker.unavailable; nil means no faults.
	Faults *faults.Injector
	// MaxDepth refuses a child publish deeper than this many hops from its
	// root event (the root is depth 0); 0 means DefaultMaxDepth.
	MaxDepth int
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: Name is required", ErrInvalidConfig)
	case c.MaxDepth < 0:
		return fmt.Errorf("%w: MaxDepth %d is negative", ErrInvalidConfig, c.MaxDepth)
	}
	return nil
}

// Metrics are the broker's counters since it was created. Every copy of an
// accepted publish for a matching subscriber (two when broker.duplicate
// fires) ends up counted exactly once as Missed, Dropped, Suppressed,
// Handled or Failed, or is still counted in Buffered or InFlight. Delivered
// counts the copies that entered a buffer; Discarded, a part of Missed,
// those a disconnect threw out of one.
type Metrics struct {
	Published      int // publishes accepted
	Rejected       int // publishes refused (unavailable or back-pressure)
	Backpressure   int // of Rejected, refused because a Block subscriber was full
	Delivered      int // copies placed in a subscriber buffer
	Missed         int // copies not placed because the subscriber was offline
	Dropped        int // copies dropped by an overflow policy
	Suppressed     int // copies kept from subscribers by the supervisor switch
	Handled        int // copies whose handler succeeded
	Failed         int // copies whose handler returned an error
	Discarded      int // buffered copies thrown away by a disconnect (included in Missed)
	Duplicated     int // extra copies made by broker.duplicate
	Delayed        int // copies held back by broker.delay or broker.reorder
	Forwarded      int // messages forwarded into a durable fan-out target
	ForwardFailed  int // forwards the target refused
	CascadeLimited int // child publishes refused by the depth limit
	Buffered       int // copies in subscriber buffers now
	InFlight       int // copies held by the broker now (delayed, reordered, waiting for room)
}

// envelope is one accepted publish, shared by every subscriber buffer that
// holds a copy of it.
type envelope struct {
	msg     sim.Message
	subject string
	where   string // "topic:"+subject, shared with the route
	corr    string
	depth   int32
	copies  int32    // copies placed in buffers before the cascade record existed
	refs    int32    // buffer slots, held copies and running publishes that use it
	cascade *Cascade // nil for a root until a handler publishes a child
}

// route is the cached list of subscriptions matching one subject.
type route struct {
	where   string // "topic:"+subject
	block   bool   // some subscriber has the Block policy
	subs    []*Subscriber
	fanouts []*fanout
}

type fanout struct {
	name     string
	pattern  Pattern
	target   sim.Publisher
	consumer sim.ConsumerRef
}

type delayed struct {
	at  sim.Tick
	seq uint64
	sub *Subscriber
	env *envelope
}

type delayHeap []delayed

func (h delayHeap) Len() int { return len(h) }
func (h delayHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h delayHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)   { *h = append(*h, x.(delayed)) }
func (h *delayHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = delayed{}
	*h = old[:len(old)-1]
	return x
}

// Broker is an ephemeral publish/subscribe broker. It implements
// sim.Publisher (Publish routes by Headers.Type) and sim.Actor (Step, in
// sim.PhaseBroker, releases delayed and reordered copies). A Broker is
// driven by one goroutine.
type Broker struct {
	name     string
	env      *sim.Env
	faults   *faults.Injector
	maxDepth int

	subs    []*Subscriber
	fanouts []*fanout
	names   map[string]bool
	routes  map[string]*route
	free    []*envelope // settled envelopes for reuse

	mute     int
	delayed  delayHeap
	delaySeq uint64
	held     []*Subscriber

	gen     uint64   // handling generation, advanced by a tick's first subscriber step
	genTick sim.Tick // the tick gen was last advanced

	cascades map[sim.ID]*Cascade
	m        Metrics
}

// New returns a broker without subscribers.
func New(cfg Config) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	env := cfg.Env
	if env == nil {
		env = sim.NewEnv(0)
	}
	depth := cfg.MaxDepth
	if depth == 0 {
		depth = DefaultMaxDepth
	}
	return &Broker{
		name: cfg.Name, env: env, faults: cfg.Faults, maxDepth: depth,
		genTick: -1, names: map[string]bool{}, routes: map[string]*route{}, cascades: map[sim.ID]*Cascade{},
	}, nil
}

// Name returns the broker's name.
func (b *Broker) Name() string { return b.name }

// Env returns the environment the broker runs in.
func (b *Broker) Env() *sim.Env { return b.env }

// MaxDepth returns the cascade depth limit in effect.
func (b *Broker) MaxDepth() int { return b.maxDepth }

// Metrics returns the broker's counters.
func (b *Broker) Metrics() Metrics { return b.m }

// Subscribers returns the subscribers in subscription order.
func (b *Broker) Subscribers() []*Subscriber {
	return append([]*Subscriber(nil), b.subs...)
}

// Subscriber returns the subscriber called name.
func (b *Broker) Subscriber(name string) (*Subscriber, bool) {
	for _, s := range b.subs {
		if s.name == name {
			return s, true
		}
	}
	return nil, false
}

// FanOut subscribes a durable target (a queue, in SNS-to-SQS style) to
// every subject matching pattern: each matching publish is forwarded to
// target.Publish with its ID and headers unchanged, whether or not any
// ephemeral subscriber is online, and the supervisor switch does not mute
// it. A forward the target refuses is traced as "rejected" and recorded in
// the ledger as lost, with cause sim.CauseBrokerUnavailable, for the logical
// consumer called name; name the fan-out after the target's ledger consumer
// (a queue's Consumer, by default its Name) so the loss shows up there.
func (b *Broker) FanOut(name, pattern string, target sim.Publisher) error {
	if name == "" {
		return fmt.Errorf("%w: a fan-out needs a name", ErrInvalidConfig)
	}
	if target == nil {
		return fmt.Errorf("%w: fan-out %q has no target", ErrInvalidConfig, name)
	}
	p, err := ParsePattern(pattern)
	if err != nil {
		return fmt.Errorf("fan-out %q: %w", name, err)
	}
	if b.names[name] {
		return fmt.Errorf("%w: %q", ErrDuplicateName, name)
	}
	b.names[name] = true
	b.fanouts = append(b.fanouts, &fanout{name: name, pattern: p, target: target, consumer: b.env.Ledger.Consumer(name)})
	b.invalidate()
	return nil
}

func (b *Broker) invalidate() { clear(b.routes) }

// route returns the subscriptions matching subject, validating the subject
// on a cache miss.
func (b *Broker) route(subject string) (*route, error) {
	if r, ok := b.routes[subject]; ok {
		return r, nil
	}
	if err := ValidSubject(subject); err != nil {
		return nil, err
	}
	r := &route{where: "topic:" + subject}
	for _, s := range b.subs {
		if s.pattern.Match(subject) {
			r.subs = append(r.subs, s)
			r.block = r.block || s.policy == Block
		}
	}
	for _, f := range b.fanouts {
		if f.pattern.Match(subject) {
			r.fanouts = append(r.fanouts, f)
		}
	}
	if len(b.routes) >= routeCacheMax {
		clear(b.routes)
	}
	b.routes[subject] = r
	return r, nil
}

// Mute turns the supervisor switch on: until the matching Unmute, publishes
// reach no ephemeral subscriber (each skipped copy is traced as
// "suppressed"); durable fan-outs still get them. Calls nest.
func (b *Broker) Mute() { b.mute++ }

// Unmute undoes one Mute.
func (b *Broker) Unmute() {
	if b.mute > 0 {
		b.mute--
	}
}

// Muted reports whether the supervisor switch is on.
func (b *Broker) Muted() bool { return b.mute > 0 }

// Publish publishes m to the subject m.Headers.Type as a root event. It is
// PublishTo(m.Headers.Type, m).
func (b *Broker) Publish(m sim.Message) error { return b.PublishTo(m.Headers.Type, m) }

// PublishTo publishes m to subject as a root event (cascade depth 0). The
// message is copied to every matching subscriber connected now and
// forwarded to every matching fan-out. It returns an error wrapping
// ErrInvalidSubject or ErrInvalidMessage for bad input, ErrUnavailable while
// the broker.unavailable fault fires, and ErrBackpressure when a matching
// online subscriber with the Block policy has a full buffer; in those cases
// nothing was delivered and the publisher may retry the same message.
func (b *Broker) PublishTo(subject string, m sim.Message) error {
	return b.publish(subject, m, nil)
}

func (b *Broker) corrOf(m *sim.Message, parent *envelope) string {
	if parent != nil {
		return parent.corr
	}
	if m.Headers.CorrelationID != "" {
		return m.Headers.CorrelationID
	}
	return m.ID.String()
}

func (b *Broker) publish(subject string, m sim.Message, parent *envelope) error {
	if m.ID == 0 {
		return fmt.Errorf("%w: message has no ID (create it with Env.NewMessage)", ErrInvalidMessage)
	}
	r, err := b.route(subject)
	if err != nil {
		return err
	}
	where := r.where
	if b.faults.Has(faults.BrokerUnavailable) {
		if f, ok := b.faults.Check(faults.BrokerUnavailable, faults.Context{Where: where, Key: m.Key, Type: m.Headers.Type, Msg: m.ID}); ok {
			cause := errConnection
			if f.Error != "" {
				cause = errors.New(f.Error)
			}
			err := fmt.Errorf("%w: %w", ErrUnavailable, cause)
			b.m.Rejected++
			b.env.Emit(sim.Event{Kind: sim.KindRejected, Where: where, Msg: m.ID, Key: m.Key, Corr: b.corrOf(&m, parent), Rule: f.Rule, Detail: err.Error()})
			return err
		}
	}
	muted := b.mute > 0
	if !muted && r.block {
		for _, s := range r.subs {
			if s.policy == Block && s.online && s.full() {
				b.m.Rejected++
				b.m.Backpressure++
				b.env.Emit(sim.Event{Kind: sim.KindRejected, Where: where, Actor: s.name, Msg: m.ID, Key: m.Key, Corr: b.corrOf(&m, parent),
					Detail: "back-pressure: buffer full (" + strconv.Itoa(len(s.ring)) + ")"})
				return fmt.Errorf("%w: subscriber %q has a full buffer of %d", ErrBackpressure, s.name, len(s.ring))
			}
		}
	}

	if led := b.env.Ledger; led != nil {
		now := b.env.Now()
		led.Register(&m)
		led.Sent(m.ID, now)
		led.SetState(m.ID, sim.StateDelivered, now)
	}
	e := b.newEnvelope()
	e.msg, e.subject, e.where, e.corr = m, subject, where, b.corrOf(&m, parent)
	if parent != nil {
		c := b.cascadeOf(parent)
		e.depth = parent.depth + 1
		e.cascade = c
		for len(c.Published) <= int(e.depth) {
			c.Published = append(c.Published, 0)
		}
		c.Published[e.depth]++
	}
	b.m.Published++
	if tr := b.env.Trace; tr.Enabled() {
		ev := sim.Event{Kind: sim.KindPublished, Where: where, Msg: m.ID, Key: m.Key, Corr: e.corr}
		if e.depth == 0 {
			ev.Actor = m.Headers.Source // a root publish names its producer
		} else {
			ev.Detail = "depth " + strconv.Itoa(int(e.depth)) + " of root " + e.cascade.Root.String() + ", caused by " + m.Headers.CausationID.String()
		}
		b.env.Emit(ev)
	} else {
		tr.Skip()
	}
	if b.faults == nil && !muted {
		b.fanOutFast(r, e)
	} else {
		b.fanOut(r, e, muted)
	}
	for _, f := range r.fanouts {
		b.forward(f, e)
	}
	b.unref(e)
	return nil
}

// fanOutFast copies e to the subscribers of r when no fault can fire and
// the supervisor switch is off: the common case, with the bookkeeping of
// place done once per publish instead of once per copy.
func (b *Broker) fanOutFast(r *route, e *envelope) {
	led, tr := b.env.Ledger, b.env.Trace
	tracing := tr.Enabled()
	placed := 0
	for _, s := range r.subs {
		if !s.online || s.full() {
			b.offer(s, e, true) // missed, or the overflow policy decides
			continue
		}
		s.push(slot{env: e, gen: b.gen})
		s.m.Delivered++
		placed++
		n := 0
		if led != nil {
			n = led.Delivered(e.msg.ID, s.consumer, b.env.Now())
		}
		if tracing {
			b.emitCopySlow(sim.KindDelivered, s.name, e, n, "")
		} else {
			tr.Skip()
		}
	}
	e.refs += int32(placed)
	b.m.Buffered += placed
	b.m.Delivered += placed
	if e.cascade != nil {
		e.cascade.Deliveries += placed
	} else {
		e.copies += int32(placed)
	}
}

// fanOut copies e to the subscribers of r one by one, consulting the fault
// points for each copy, or suppresses every copy while muted.
func (b *Broker) fanOut(r *route, e *envelope, muted bool) {
	m := &e.msg
	where := e.where
	for _, s := range r.subs {
		if muted {
			b.m.Suppressed++
			s.m.Suppressed++
			if e.cascade != nil {
				e.cascade.Suppressed++
			}
			b.env.Emit(sim.Event{Kind: KindSuppressed, Where: where, Actor: s.name, Msg: m.ID, Key: m.Key, Corr: e.corr, Detail: "supervisor switch is on"})
			continue
		}
		b.offer(s, e, true)
	}
}

// forward hands e's message to a durable fan-out target.
func (b *Broker) forward(f *fanout, e *envelope) {
	m := e.msg
	if err := f.target.Publish(m); err != nil {
		b.m.ForwardFailed++
		now := b.env.Now()
		b.env.Ledger.Lost(m.ID, f.consumer, sim.CauseBrokerUnavailable, now)
		b.env.Emit(sim.Event{Kind: sim.KindRejected, Where: e.where, Actor: f.name, Msg: m.ID, Key: m.Key, Corr: e.corr, Detail: "fan-out failed: " + err.Error()})
		b.env.Emit(sim.Event{Kind: sim.KindLost, Where: e.where, Actor: f.name, Msg: m.ID, Key: m.Key, Corr: e.corr, Detail: string(sim.CauseBrokerUnavailable)})
		return
	}
	b.m.Forwarded++
	e.addCopy()
	b.env.Emit(sim.Event{Kind: sim.KindDelivered, Where: e.where, Actor: f.name, Msg: m.ID, Key: m.Key, Corr: e.corr, Detail: "forwarded to durable fan-out"})
}

func (e *envelope) addCopy() {
	if e.cascade != nil {
		e.cascade.Deliveries++
	} else {
		e.copies++
	}
}

// faultCtx is the fault context of a copy of e for s.
func faultCtx(s *Subscriber, e *envelope) faults.Context {
	return faults.Context{Where: e.where, Consumer: s.name, Key: e.msg.Key, Type: e.msg.Headers.Type, Msg: e.msg.ID}
}

// offer tries to hand a copy of e to s: missed when s is offline, held back
// by broker.delay or broker.reorder (only at publish time), otherwise
// placed in the buffer, twice when broker.duplicate fires.
func (b *Broker) offer(s *Subscriber, e *envelope, atPublish bool) {
	if !s.online {
		b.miss(s, e, "", "subscriber offline")
		return
	}
	in := b.faults
	if in == nil {
		b.place(s, e)
		return
	}
	if in.Has(faults.SubscriberOffline) {
		if f, ok := in.Check(faults.SubscriberOffline, faultCtx(s, e)); ok {
			b.miss(s, e, f.Rule, "subscriber offline")
			return
		}
	}
	if atPublish {
		if in.Has(faults.BrokerDelay) {
			if f, ok := in.Check(faults.BrokerDelay, faultCtx(s, e)); ok {
				d := sim.Tick(f.Param)
				if d <= 0 {
					d = 1
				}
				b.hold(s, e, b.env.Now()+d, f.Rule, "delayed by "+strconv.FormatInt(int64(d), 10)+" tick(s)")
				return
			}
		}
		if s.held == nil && in.Has(faults.BrokerReorder) {
			if f, ok := in.Check(faults.BrokerReorder, faultCtx(s, e)); ok {
				s.held, s.heldAt = e, b.env.Now()
				e.refs++
				if !s.listed {
					s.listed = true
					b.held = append(b.held, s)
				}
				b.m.Delayed++
				b.m.InFlight++
				b.env.Emit(sim.Event{Kind: sim.KindDelayed, Where: e.where, Actor: s.name, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr, Rule: f.Rule,
					Detail: "reordered: held back behind the next copy"})
				return
			}
		}
	}
	dup := false
	if in.Has(faults.BrokerDuplicate) {
		if _, ok := in.Check(faults.BrokerDuplicate, faultCtx(s, e)); ok {
			dup = true
			b.m.Duplicated++
		}
	}
	b.place(s, e)
	if dup {
		b.place(s, e)
	}
	if atPublish && s.held != nil && s.held != e {
		h := s.held
		s.held = nil
		b.m.InFlight--
		b.place(s, h)
		b.unref(h)
	}
}

// hold keeps a copy of e for s in the broker until tick at.
func (b *Broker) hold(s *Subscriber, e *envelope, at sim.Tick, rule, detail string) {
	b.delaySeq++
	heap.Push(&b.delayed, delayed{at: at, seq: b.delaySeq, sub: s, env: e})
	e.refs++
	b.m.InFlight++
	if detail != "" {
		b.m.Delayed++
		b.env.Emit(sim.Event{Kind: sim.KindDelayed, Where: e.where, Actor: s.name, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr, Rule: rule, Detail: detail})
	}
}

// miss records that s missed e.
func (b *Broker) miss(s *Subscriber, e *envelope, rule, detail string) {
	b.m.Missed++
	s.m.Missed++
	led := b.env.Ledger
	led.Expect(e.msg.ID, s.consumer)
	led.Missed(e.msg.ID, s.consumer, b.env.Now())
	b.env.Emit(sim.Event{Kind: sim.KindMissed, Where: e.where, Actor: s.name, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr, Rule: rule, Detail: detail})
}

// drop records that an overflow policy dropped s's copy of e.
func (b *Broker) drop(s *Subscriber, e *envelope, detail string) {
	b.m.Dropped++
	s.m.Dropped++
	now := b.env.Now()
	led := b.env.Ledger
	led.Expect(e.msg.ID, s.consumer)
	led.Lost(e.msg.ID, s.consumer, sim.CauseOverflow, now)
	b.env.Emit(sim.Event{Kind: sim.KindDropped, Where: e.where, Actor: s.name, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr,
		Detail: detail})
}

// place puts a copy of e into s's buffer, applying s's overflow policy
// when the buffer is full. A Block subscriber that is full (possible only
// for copies the broker already accepted) keeps the copy in the broker and
// retries on the next tick.
func (b *Broker) place(s *Subscriber, e *envelope) {
	if s.full() {
		switch s.policy {
		case DropNewest:
			b.drop(s, e, "overflow: drop newest, buffer "+strconv.Itoa(len(s.ring)))
			return
		case DropOldest:
			old := s.pop()
			b.m.Buffered--
			b.drop(s, old.env, "overflow: drop oldest, buffer "+strconv.Itoa(len(s.ring)))
			b.unref(old.env)
		case Block:
			b.hold(s, e, b.env.Now()+1, "", "")
			return
		}
	}
	s.push(slot{env: e, gen: b.gen})
	e.refs++
	b.m.Buffered++
	b.m.Delivered++
	s.m.Delivered++
	e.addCopy()
	n := 0
	if led := b.env.Ledger; led != nil {
		n = led.Delivered(e.msg.ID, s.consumer, b.env.Now())
	}
	if tr := b.env.Trace; tr.Enabled() {
		b.emitCopySlow(sim.KindDelivered, s.name, e, n, "")
	} else {
		tr.Skip()
	}
}

// newEnvelope returns a cleared envelope with one reference, reusing a
// settled one when it can, so a steady publish rate allocates nothing.
func (b *Broker) newEnvelope() *envelope {
	if n := len(b.free); n > 0 {
		e := b.free[n-1]
		b.free[n-1] = nil
		b.free = b.free[:n-1]
		e.refs = 1
		return e
	}
	return &envelope{refs: 1}
}

// unref drops one reference to e and recycles it when none is left.
func (b *Broker) unref(e *envelope) {
	e.refs--
	if e.refs > 0 {
		return
	}
	*e = envelope{}
	if len(b.free) < freeMax {
		b.free = append(b.free, e)
	}
}

// emitCopySlow traces an event about a copy of e; callers on the per-copy
// hot path call it only when a sink listens, and Trace.Skip otherwise.
func (b *Broker) emitCopySlow(k sim.Kind, actor string, e *envelope, attempt int, detail string) {
	b.env.Emit(sim.Event{Kind: k, Where: e.where, Actor: actor, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr, Attempt: attempt, Detail: detail})
}

// Step releases the copies held by broker.delay whose time has come, and
// the copies held by broker.reorder that no later copy overtook. It is the
// broker's sim.Actor step, for sim.PhaseBroker; its cost is O(released).
func (b *Broker) Step(now sim.Tick) {
	keep := b.held[:0]
	for _, s := range b.held {
		switch h := s.held; {
		case h == nil:
			s.listed = false
		case s.heldAt < now:
			s.held, s.listed = nil, false
			b.m.InFlight--
			b.release(s, h)
			b.unref(h)
		default: // held this very tick: wait for a later copy or the next tick
			keep = append(keep, s)
		}
	}
	clear(b.held[len(keep):])
	b.held = keep
	for len(b.delayed) > 0 && b.delayed[0].at <= now {
		d := heap.Pop(&b.delayed).(delayed)
		b.m.InFlight--
		b.release(d.sub, d.env)
		b.unref(d.env)
	}
}

// release delivers a copy the broker held back, as if published now.
func (b *Broker) release(s *Subscriber, e *envelope) {
	if s.closed {
		b.miss(s, e, "", "subscriber closed")
		return
	}
	b.offer(s, e, false)
}

// StepSubscribers steps every subscriber in subscription order; Attach
// registers it in sim.PhaseConsumer. Subscribers added during the step are
// stepped from the next tick on.
func (b *Broker) StepSubscribers(now sim.Tick) {
	subs := b.subs
	for _, s := range subs {
		s.Step(now)
	}
}

// Attach registers the broker with w: Step as "pubsub:"+Name in
// sim.PhaseBroker and StepSubscribers as "pubsub:"+Name+"/subscribers" in
// sim.PhaseConsumer. Do not also add the subscribers to w one by one.
func (b *Broker) Attach(w *sim.World) error {
	if err := w.Add(sim.PhaseBroker, "pubsub:"+b.name, b); err != nil {
		return err
	}
	return w.Add(sim.PhaseConsumer, "pubsub:"+b.name+"/subscribers", sim.ActorFunc(b.StepSubscribers))
}

// cascadeOf returns the cascade record of parent's root, creating it when a
// root publishes its first child.
func (b *Broker) cascadeOf(parent *envelope) *Cascade {
	if parent.cascade != nil {
		return parent.cascade
	}
	c := &Cascade{Root: parent.msg.ID, Corr: parent.corr, Published: []int{1}, Deliveries: int(parent.copies)}
	parent.cascade = c
	b.cascades[c.Root] = c
	return c
}

// Cascade returns the cascade record of the root event root. Only roots
// whose handlers published (or tried to publish) at least one child have a
// record.
func (b *Broker) Cascade(root sim.ID) (Cascade, bool) {
	c, ok := b.cascades[root]
	if !ok {
		return Cascade{}, false
	}
	out := *c
	out.Published = append([]int(nil), c.Published...)
	return out, true
}

// Cascades returns every cascade record in root ID order.
func (b *Broker) Cascades() []Cascade {
	ids := make([]sim.ID, 0, len(b.cascades))
	for id := range b.cascades {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]Cascade, len(ids))
	for i, id := range ids {
		out[i], _ = b.Cascade(id)
	}
	return out
}

// Cascade counts what one root event caused.
type Cascade struct {
	// Root is the ID of the root event.
	Root sim.ID
	// Corr is the correlation ID every message of the cascade carries.
	Corr string
	// Published counts the messages published at each depth; Published[0]
	// is 1 (the root) and len(Published)-1 is the deepest depth reached.
	Published []int
	// Deliveries counts the copies placed in subscriber buffers and the
	// forwards to fan-outs, over the whole cascade.
	Deliveries int
	// Suppressed counts the copies the supervisor switch kept from
	// subscribers.
	Suppressed int
	// Limited counts the child publishes the depth limit refused.
	Limited int
}

// Depth returns the deepest depth the cascade reached.
func (c Cascade) Depth() int { return len(c.Published) - 1 }

// Messages returns how many messages the cascade published, root included.
func (c Cascade) Messages() int {
	n := 0
	for _, x := range c.Published {
		n += x
	}
	return n
}
