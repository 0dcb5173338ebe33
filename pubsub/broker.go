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

// Sentinel errors of package pubsub. ErrUnavailable wraps
// sim.ErrUnavailable, so code publishing to any sim.Publisher can test for
// an unavailable broker once; ErrInvalidConfig wraps sim.ErrInvalidConfig.
var (
	ErrInvalidConfig  = sim.Sentinel("pubsub: invalid config", sim.ErrInvalidConfig)
	ErrInvalidSubject = errors.New("pubsub: invalid subject")
	ErrInvalidMessage = errors.New("pubsub: invalid message")
	ErrDuplicateName  = errors.New("pubsub: duplicate subscriber name")
	ErrUnavailable    = sim.Sentinel("pubsub: broker unavailable", sim.ErrUnavailable)
	ErrBackpressure   = errors.New("pubsub: back-pressure")
	ErrCascadeLimit   = errors.New("pubsub: cascade depth limit")
	ErrClosed         = errors.New("pubsub: subscriber closed")
	ErrNoContext      = errors.New("pubsub: no cascade context")
)

// errConnection is what an unavailable broker reports when the fault rule
// states no error text.
var errConnection = errors.New("connection refused")

// The trace kinds pubsub adds to sim's. The ledger ignores them.
const (
	KindSuppressed     sim.Kind = "suppressed"      // the supervisor switch kept a copy from a subscriber
	KindCascadeLimited sim.Kind = "cascade_limited" // a child publish was refused by a cascade depth limit
	KindConnected      sim.Kind = "connected"       // a subscriber connected
	KindDisconnected   sim.Kind = "disconnected"    // a subscriber disconnected
	KindForwarded      sim.Kind = "forwarded"       // a durable fan-out accepted its copy (Msg: the copy, Origin: the publish)
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
	// Name identifies the broker; New registers it with the world as
	// "pubsub:"+Name and its subscribers as "pubsub:"+Name+"/subscribers".
	// Required.
	Name string
	// Faults is consulted at the points subscriber.offline,
	// subscriber.slow, broker.duplicate, broker.delay and broker.reorder
	// for every copy (broker.duplicate once per copy, when it is first
	// offered), at broker.unavailable for every publish and every connect
	// (Subscriber.Connect), and, through Injector.Handler, at the handler
	// points of every subscriber; nil means no faults. broker.ack_lost is
	// never consulted: core NATS has no acknowledgements, so there is no
	// ack to lose (a fan-out's queue consults it for its own consumers).
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
// Handled, Skipped, Failed or Discarded, or is still counted in Buffered,
// InFlight or Handling. Delivered counts the copies that entered a buffer.
// Every copy for a matching fan-out ends up counted once as Forwarded or
// ForwardFailed, or is still counted in Retrying.
type Metrics struct {
	Published      int // publishes accepted
	Rejected       int // publishes refused (unavailable or back-pressure)
	Backpressure   int // of Rejected, refused because a Block subscriber was full
	Delivered      int // copies placed in a subscriber buffer
	Missed         int // copies not placed because the subscriber was offline (by design)
	Dropped        int // copies dropped by an overflow policy
	Suppressed     int // copies kept from subscribers by the supervisor switch
	Handled        int // copies whose handler succeeded
	Skipped        int // copies a subscriber ignored (muted, or its own change under SourceCheck)
	Failed         int // copies whose handler returned an error (lost: no redelivery)
	Discarded      int // copies a disconnect threw out of a buffer, a handler or the broker's hold (lost)
	Duplicated     int // extra copies made by broker.duplicate
	Delayed        int // copies held back by broker.delay or broker.reorder
	Forwarded      int // copies forwarded into a durable fan-out target
	ForwardFailed  int // fan-out copies the target refused on every attempt (lost)
	ForwardRetries int // retries of refused forwards, immediate and backoff
	ConnectRefused int // connects refused by broker.unavailable (each retried on the next tick)
	CascadeLimited int // child publishes refused by a depth limit
	Emitted        int // child publishes of subscribers' Emits accepted
	EmitsLost      int // child publishes of Emits the broker refused (lost)
	Buffered       int // copies in subscriber buffers now
	InFlight       int // copies held by the broker now (delayed, reordered, waiting for room)
	Handling       int // copies a slow handler is working on now
	Retrying       int // fan-out copies waiting for a backoff retry now
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
	stat    *subjectStat
	lf      sim.LedgerFanout // the logical consumers of subs, in order, for booking a publish's copies at once
}

// subjectStat counts what one subject saw; it outlives the route cache.
type subjectStat struct {
	published int
}

// delayed is a copy the broker holds for a subscriber until tick at: held
// back by broker.delay, or waiting for room in a full Block buffer.
type delayed struct {
	at      sim.Tick
	seq     uint64
	sub     *Subscriber
	env     *envelope
	attempt int32
	dup     bool // broker.duplicate fired when the copy was first offered: it is placed twice
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

// Broker is an ephemeral publish/subscribe broker bound to one World. It
// implements sim.Publisher (Publish routes by Headers.Type) and
// sim.Component: Step, in sim.PhaseBroker, releases delayed and reordered
// copies. Its subscribers are stepped together by a second component in
// sim.PhaseConsumer. New registers both, so a broker can be neither
// forgotten nor stepped in the wrong phase. A Broker is driven by one
// goroutine.
//
// The broker never writes the ledger: it reports what happens as trace
// events, which the world's ledger folds (see the package doc for the
// vocabulary).
type Broker struct {
	name     string
	env      *sim.Env
	faults   *faults.Injector
	maxDepth int

	// The fault points the broker consults, resolved once (faults.Site):
	// a point no rule targets costs a bit test per copy.
	fUnavailable, fOffline, fDuplicate, fDelay, fReorder, fSlow faults.Site

	subs    []*Subscriber
	fanouts []*fanout
	names   map[string]bool
	routes  map[string]*route
	stats   map[string]*subjectStat
	free    []*envelope // settled envelopes for reuse

	mute     int
	delayed  delayHeap
	delaySeq uint64
	held     []*Subscriber
	retries  retryHeap // fan-out copies waiting for a retry

	gen     uint64   // handling generation, advanced by a tick's subscriber step
	genTick sim.Tick // the tick gen was last advanced

	cascades map[sim.ID]*Cascade
	m        Metrics
}

// subscriberSet steps a broker's subscribers in subscription order: the
// broker's component in sim.PhaseConsumer.
type subscriberSet struct{ b *Broker }

// Phase returns sim.PhaseConsumer.
func (subscriberSet) Phase() sim.Phase { return sim.PhaseConsumer }

// Step steps every subscriber once; subscribers added during the step are
// stepped from the next tick on.
func (s subscriberSet) Step(now sim.Tick) { s.b.stepSubscribers(now) }

// New returns a broker without subscribers, bound to w: it uses w's clock,
// trace and IDs, and registers itself as "pubsub:"+Name (sim.PhaseBroker)
// and its subscribers as "pubsub:"+Name+"/subscribers" (sim.PhaseConsumer).
func New(w *sim.World, cfg Config) (*Broker, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: no world", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	depth := cfg.MaxDepth
	if depth == 0 {
		depth = DefaultMaxDepth
	}
	b := &Broker{
		name: cfg.Name, env: w.Env(), faults: cfg.Faults, maxDepth: depth, genTick: -1,
		names: map[string]bool{}, routes: map[string]*route{}, stats: map[string]*subjectStat{}, cascades: map[sim.ID]*Cascade{},
	}
	if in := cfg.Faults; in != nil {
		b.fUnavailable, b.fOffline, b.fSlow = in.Site(faults.BrokerUnavailable), in.Site(faults.SubscriberOffline), in.Site(faults.SubscriberSlow)
		b.fDuplicate, b.fDelay, b.fReorder = in.Site(faults.BrokerDuplicate), in.Site(faults.BrokerDelay), in.Site(faults.BrokerReorder)
	}
	if err := w.Add("pubsub:"+cfg.Name, b); err != nil {
		return nil, err
	}
	if err := w.Add("pubsub:"+cfg.Name+"/subscribers", subscriberSet{b}); err != nil {
		return nil, err
	}
	return b, nil
}

// Phase returns sim.PhaseBroker: the broker releases held copies before
// producers and consumers run.
func (b *Broker) Phase() sim.Phase { return sim.PhaseBroker }

// Name returns the broker's name.
func (b *Broker) Name() string { return b.name }

// Env returns the environment of the world the broker runs in.
func (b *Broker) Env() *sim.Env { return b.env }

// MaxDepth returns the cascade depth limit in effect.
func (b *Broker) MaxDepth() int { return b.maxDepth }

// Metrics returns the broker's counters.
func (b *Broker) Metrics() Metrics { return b.m }

// Idle reports whether the broker holds no copy anywhere: none buffered,
// none held back by a fault or by back-pressure, none in a slow handler,
// no fan-out copy waiting for a retry. A run has drained the broker when
// it is idle.
func (b *Broker) Idle() bool {
	return b.m.Buffered == 0 && b.m.InFlight == 0 && b.m.Handling == 0 && b.m.Retrying == 0
}

// PublishedTo returns how many publishes to subject the broker accepted,
// roots and children alike. It costs one map lookup; the broker keeps one
// small counter per subject ever published to.
func (b *Broker) PublishedTo(subject string) int {
	if s := b.stats[subject]; s != nil {
		return s.published
	}
	return 0
}

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
	r := &route{where: "topic:" + subject, stat: b.stats[subject]}
	if r.stat == nil {
		r.stat = &subjectStat{}
		b.stats[subject] = r.stat
	}
	for _, s := range b.subs {
		if s.pattern.Match(subject) {
			r.subs = append(r.subs, s)
			r.block = r.block || s.policy == Block
		}
	}
	names := make([]string, len(r.subs))
	for i, s := range r.subs {
		names[i] = s.consumer
	}
	r.lf = sim.NewLedgerFanout(names)
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
// "suppressed" and is not routed to that subscriber); durable fan-outs
// still get them. Calls nest.
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
// message is copied to every matching subscriber connected now and a new
// copy is forwarded to every matching fan-out. It returns an error
// wrapping ErrInvalidSubject or ErrInvalidMessage for bad input,
// ErrUnavailable (which wraps sim.ErrUnavailable) while the
// broker.unavailable fault fires, and ErrBackpressure when a matching
// online subscriber with the Block policy has a full buffer; in those cases
// nothing was delivered, the ledger has not heard of m, and the publisher
// may retry the same message (or give up and report the loss). Once the
// world's budget is spent (sim.World.SetBudget) it refuses every publish
// with the budget error.
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

// detailed reports whether Detail text is worth building.
func (b *Broker) detailed() bool { return b.env.Trace.Detailed() }

func (b *Broker) publish(subject string, m sim.Message, parent *envelope) error {
	if m.ID == 0 {
		return fmt.Errorf("%w: message has no ID (create it with Env.NewMessage)", ErrInvalidMessage)
	}
	if err := b.env.Exceeded(); err != nil {
		return err // the run's budget is spent: refuse new work, record nothing
	}
	r, err := b.route(subject)
	if err != nil {
		return err
	}
	where := r.where
	if b.fUnavailable.Armed() {
		c := faults.Context{Where: where, Key: m.Key, Type: m.Headers.Type, Msg: m.ID}
		if f := b.fUnavailable.Check(&c); f != nil {
			cause := errConnection
			if f.Error != "" {
				cause = errors.New(f.Error)
			}
			err := fmt.Errorf("%w: %s: %w", ErrUnavailable, where, cause)
			b.m.Rejected++
			ev := sim.Event{Kind: sim.KindRejected, Where: where, Msg: m.ID, Key: m.Key, Corr: b.corrOf(&m, parent), Rule: f.Rule}
			if b.detailed() {
				ev.Detail = err.Error()
			}
			b.env.Emit(ev)
			return err
		}
	}
	muted := b.mute > 0
	if !muted && r.block {
		for _, s := range r.subs {
			if s.policy == Block && s.online && s.full() {
				b.m.Rejected++
				b.m.Backpressure++
				ev := sim.Event{Kind: sim.KindRejected, Where: where, Actor: s.name, Consumer: s.consumer, Msg: m.ID, Key: m.Key, Corr: b.corrOf(&m, parent)}
				if b.detailed() {
					ev.Detail = "back-pressure: buffer full (" + strconv.Itoa(s.size) + ")"
				}
				b.env.Emit(ev)
				return fmt.Errorf("%w: subscriber %q has a full buffer of %d", ErrBackpressure, s.name, s.size)
			}
		}
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
	r.stat.published++
	b.published(e)
	if !muted && b.plain() {
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

// plain reports whether offer, at publish time, would place every copy
// for an online subscriber with room as it comes: no fault point a copy
// consults at publish time is armed, and no subscriber has a copy held
// back by broker.reorder that the next copy would release. It costs a
// nil test without an injector, and four bit tests while no rule targets
// those points.
func (b *Broker) plain() bool {
	if b.faults == nil {
		return true // no point can fire, so no copy is held either
	}
	return len(b.held) == 0 && !b.fOffline.Armed() && !b.fDuplicate.Armed() && !b.fDelay.Armed() && !b.fReorder.Armed()
}

// published traces the accepted publish e, built only when someone
// listens: otherwise it is counted, as Emit would number it.
func (b *Broker) published(e *envelope) {
	tr := b.env.Trace
	if !tr.Enabled() {
		tr.Skip()
		return
	}
	m := &e.msg
	if tr.BookPublished(b.env.Now(), m.ID, m.Origin, e.where, m.Key, m.Headers.Type) {
		return // only the ledger listens: booked without building the event
	}
	var ev sim.Event // filled in place, as emitCopy's
	ev.Tick, ev.Kind, ev.Where, ev.Corr = b.env.Now(), sim.KindPublished, e.where, e.corr
	ev.Msg, ev.Origin, ev.Key, ev.Type = m.ID, m.Origin, m.Key, m.Headers.Type
	if e.depth == 0 {
		ev.Actor = m.Headers.Source // a root publish names its producer
	} else if b.detailed() {
		ev.Detail = "depth " + strconv.Itoa(int(e.depth)) + " of root " + e.cascade.Root.String() + ", caused by " + m.Headers.CausationID.String()
	}
	tr.EmitRef(&ev)
}

// fanOutFast copies e to the subscribers of r when plain holds and the
// supervisor switch is off: the common case, with the bookkeeping of
// place done once per publish instead of once per copy, and the trace
// asked once per publish whether anyone listens (nothing fanOutFast calls
// attaches a sink). Each copy costs a slot written into a ring and an
// event, or only the event's number when no sink listens.
func (b *Broker) fanOutFast(r *route, e *envelope) {
	placed := 0
	tr := b.env.Trace
	on, now := tr.Enabled(), b.env.Now()
	if on && r.ready() && tr.BookDeliveries(now, e.msg.ID, &r.lf) {
		// Every subscriber takes its copy, and only the ledger listens:
		// the copies' delivered events were booked at once, in
		// subscriber order, as the loop below would have booked them.
		for _, s := range r.subs {
			s.push(slot{env: e, gen: b.gen, attempt: 1})
			s.m.Delivered++
		}
		b.placed(e, len(r.subs))
		return
	}
	for _, s := range r.subs {
		if !s.online || s.full() {
			b.offer(s, e, true, 1, false) // missed, or the overflow policy decides
			continue
		}
		s.push(slot{env: e, gen: b.gen, attempt: 1})
		s.m.Delivered++
		placed++
		b.traceCopy(on, now, sim.KindDelivered, s, e, 1)
	}
	b.placed(e, placed)
}

// ready reports whether every subscriber of r is online with room in its
// buffer, so that a publish places a copy for each. O(subscribers).
func (r *route) ready() bool {
	for _, s := range r.subs {
		if !s.online || s.full() {
			return false
		}
	}
	return true
}

// placed counts n copies of e placed in buffers by fanOutFast.
func (b *Broker) placed(e *envelope, n int) {
	e.refs += int32(n)
	b.m.Buffered += n
	b.m.Delivered += n
	if e.cascade != nil {
		e.cascade.Deliveries += n
	} else {
		e.copies += int32(n)
	}
}

// fanOut copies e to the subscribers of r one by one, consulting the fault
// points for each copy, or suppresses every copy while muted.
func (b *Broker) fanOut(r *route, e *envelope, muted bool) {
	for _, s := range r.subs {
		if muted {
			b.m.Suppressed++
			s.m.Suppressed++
			if e.cascade != nil {
				e.cascade.Suppressed++
			}
			ev := sim.Event{Kind: KindSuppressed, Where: e.where, Actor: s.name, Consumer: s.consumer, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr}
			if b.detailed() {
				ev.Detail = "supervisor switch is on"
			}
			b.env.Emit(ev)
			continue
		}
		b.offer(s, e, true, 1, false)
	}
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
// placed in the buffer, twice when broker.duplicate fires. attempt is the
// delivery number the copy gets when placed.
//
// broker.duplicate is consulted once per copy, when the copy is first
// offered at publish time (after the offline check, before delay and
// reorder), and the decision travels with the copy (dup) while the broker
// holds it: a copy re-offered later (released from a delay or a reorder,
// or retried while a Block buffer is full) is never rolled again, so a
// fault fires once per delivery and a held copy cannot breed duplicates
// tick after tick.
func (b *Broker) offer(s *Subscriber, e *envelope, atPublish bool, attempt int32, dup bool) {
	if !s.online {
		b.offline(s, e, atPublish, dup, "")
		return
	}
	if b.faults == nil {
		b.placeCopies(s, e, attempt, dup)
		return
	}
	if b.fOffline.Armed() {
		c := faultCtx(s, e)
		if f := b.fOffline.Check(&c); f != nil {
			b.offline(s, e, atPublish, dup, f.Rule)
			return
		}
	}
	if atPublish {
		if b.fDuplicate.Armed() {
			c := faultCtx(s, e)
			if f := b.fDuplicate.Check(&c); f != nil {
				dup = true
				b.m.Duplicated++
			}
		}
		if b.fDelay.Armed() {
			c := faultCtx(s, e)
			if f := b.fDelay.Check(&c); f != nil {
				d := sim.Tick(max(f.Param, 1))
				b.hold(s, e, b.env.Now()+d, attempt, dup, f.Rule, "delayed by "+strconv.FormatInt(int64(d), 10)+" tick(s)")
				return
			}
		}
		if s.held == nil && b.fReorder.Armed() {
			c := faultCtx(s, e)
			if f := b.fReorder.Check(&c); f != nil {
				s.held, s.heldAt, s.heldAttempt, s.heldDup = e, b.env.Now(), attempt, dup
				e.refs++
				if !s.listed {
					s.listed = true
					b.held = append(b.held, s)
				}
				b.m.Delayed++
				b.m.InFlight++
				ev := sim.Event{Kind: sim.KindDelayed, Where: e.where, Actor: s.name, Consumer: s.consumer, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr, Rule: f.Rule}
				if b.detailed() {
					ev.Detail = "reordered: held back behind the next copy"
				}
				b.env.Emit(ev)
				return
			}
		}
	}
	b.placeCopies(s, e, attempt, dup)
	if atPublish && s.held != nil && s.held != e {
		h, n, hd := s.held, s.heldAttempt, s.heldDup
		s.held, s.heldDup = nil, false
		b.m.InFlight--
		b.placeCopies(s, h, n, hd)
		b.unref(h)
	}
}

// offline ends s's copies of e while s is offline, whichever way it went
// offline (a timeline disconnect or subscriber.offline, rule): missed
// when s was offline at publish time, which is what missed means; lost
// with sim.CauseDisconnect when the copy was published while s was online
// and released later (from broker.delay, broker.reorder or a full Block
// buffer), as a disconnect discards the copies the broker holds.
func (b *Broker) offline(s *Subscriber, e *envelope, atPublish, dup bool, rule string) {
	if atPublish {
		b.missCopies(s, e, dup, rule, "subscriber offline")
		return
	}
	e.refs++ // discarding releases a reference per copy; the releaser keeps its own
	s.discardHeld(e, dup, "held back by the broker and released while the subscriber is offline: published while it was online, so lost, not missed")
}

// placeCopies places a copy of e in s's buffer, and a second one (the next
// delivery number) when broker.duplicate fired for it.
func (b *Broker) placeCopies(s *Subscriber, e *envelope, attempt int32, dup bool) {
	b.place(s, e, attempt)
	if dup {
		b.place(s, e, attempt+1)
	}
}

// missCopies traces that s missed its copy of e, and its duplicate too when
// broker.duplicate fired for it: each copy ends once.
func (b *Broker) missCopies(s *Subscriber, e *envelope, dup bool, rule, detail string) {
	b.miss(s, e, rule, detail)
	if dup {
		b.miss(s, e, rule, detail)
	}
}

// hold keeps a copy of e for s in the broker until tick at; dup says that
// broker.duplicate fired for it, so it is placed twice when released. A
// non-empty detail marks a fault's delay, which is traced and counted.
func (b *Broker) hold(s *Subscriber, e *envelope, at sim.Tick, attempt int32, dup bool, rule, detail string) {
	b.delaySeq++
	heap.Push(&b.delayed, delayed{at: at, seq: b.delaySeq, sub: s, env: e, attempt: attempt, dup: dup})
	e.refs++
	b.m.InFlight++
	if detail != "" {
		b.m.Delayed++
		ev := sim.Event{Kind: sim.KindDelayed, Where: e.where, Actor: s.name, Consumer: s.consumer, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr, Rule: rule}
		if b.detailed() {
			ev.Detail = detail
		}
		b.env.Emit(ev)
	}
}

// dropHeld throws away every copy the broker holds for s in its delay heap
// (broker.delay, or a full Block buffer), in the order they would have
// been released, each traced as lost with cause sim.CauseDisconnect. It
// costs O(held copies).
func (b *Broker) dropHeld(s *Subscriber) {
	var gone []delayed
	keep := b.delayed[:0]
	for _, d := range b.delayed {
		if d.sub == s {
			gone = append(gone, d)
		} else {
			keep = append(keep, d)
		}
	}
	if len(gone) == 0 {
		return
	}
	clear(b.delayed[len(keep):])
	b.delayed = keep
	heap.Init(&b.delayed)
	sort.Slice(gone, func(i, j int) bool { return delayHeap(gone).Less(i, j) })
	for _, d := range gone {
		b.m.InFlight--
		detail := "held back by the broker, discarded at disconnect"
		if b.detailed() && d.at > b.env.Now() {
			detail = "held back by the broker until tick " + strconv.FormatInt(int64(d.at), 10) + ", discarded at disconnect"
		}
		s.discardHeld(d.env, d.dup, detail)
	}
}

// connectRefused consults broker.unavailable for a connect of s and
// returns the refusal, traced as "rejected", or nil when the broker takes
// the connection.
func (b *Broker) connectRefused(s *Subscriber) error {
	if !b.fUnavailable.Armed() {
		return nil
	}
	c := faults.Context{Where: s.where, Consumer: s.name}
	f := b.fUnavailable.Check(&c)
	if f == nil {
		return nil
	}
	cause := errConnection
	if f.Error != "" {
		cause = errors.New(f.Error)
	}
	err := fmt.Errorf("%w: %s: subscriber %q cannot connect: %w", ErrUnavailable, s.where, s.name, cause)
	b.m.ConnectRefused++
	ev := sim.Event{Kind: sim.KindRejected, Where: s.where, Actor: s.name, Consumer: s.consumer, Rule: f.Rule}
	if b.detailed() {
		ev.Detail = err.Error() + "; reconnecting at the next tick"
	}
	b.env.Emit(ev)
	return err
}

// miss traces that s missed e by design ("missed").
func (b *Broker) miss(s *Subscriber, e *envelope, rule, detail string) {
	b.m.Missed++
	s.m.Missed++
	ev := sim.Event{Kind: sim.KindMissed, Where: e.where, Actor: s.name, Consumer: s.consumer, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr, Rule: rule}
	if b.detailed() {
		ev.Detail = detail
	}
	b.env.Emit(ev)
}

// drop traces that an overflow policy dropped s's copy of e ("dropped",
// which the ledger books as lost with cause sim.CauseOverflow).
func (b *Broker) drop(s *Subscriber, e *envelope, policy string) {
	b.m.Dropped++
	s.m.Dropped++
	ev := sim.Event{Kind: sim.KindDropped, Where: e.where, Actor: s.name, Consumer: s.consumer, Msg: e.msg.ID, Key: e.msg.Key, Corr: e.corr}
	if b.detailed() {
		ev.Detail = "overflow: " + policy + ", buffer " + strconv.Itoa(s.size)
	}
	b.env.Emit(ev)
}

// place puts a copy of e into s's buffer, applying s's overflow policy
// when the buffer is full. A Block subscriber that is full (possible only
// for copies the broker already accepted) keeps the copy in the broker and
// retries on the next tick; the retry consults no fault point but
// subscriber.offline (the copy's duplicate, if any, was decided already).
func (b *Broker) place(s *Subscriber, e *envelope, attempt int32) {
	if s.full() {
		switch s.policy {
		case DropNewest:
			b.drop(s, e, "drop newest")
			return
		case DropOldest:
			old := s.pop()
			b.m.Buffered--
			b.drop(s, old.env, "drop oldest")
			b.unref(old.env)
		case Block:
			b.hold(s, e, b.env.Now()+1, attempt, false, "", "")
			return
		}
	}
	s.push(slot{env: e, gen: b.gen, attempt: attempt})
	e.refs++
	b.m.Buffered++
	b.m.Delivered++
	s.m.Delivered++
	e.addCopy()
	b.emitCopy(sim.KindDelivered, s, e, attempt)
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

// emitCopy traces an event about s's copy of e, built in place, and only
// when someone listens: otherwise it is counted, as Emit would number it.
func (b *Broker) emitCopy(k sim.Kind, s *Subscriber, e *envelope, attempt int32) {
	b.traceCopy(b.env.Trace.Enabled(), b.env.Now(), k, s, e, attempt)
}

// traceCopy is emitCopy with the trace's Enabled (on) and the tick (now)
// asked by the caller, so fanOutFast asks them once per publish. It is
// the one place that decides how a copy is traced: skipped when no one
// listens, booked when only the ledger listens, built otherwise.
func (b *Broker) traceCopy(on bool, now sim.Tick, k sim.Kind, s *Subscriber, e *envelope, attempt int32) {
	tr := b.env.Trace
	switch {
	case !on:
		tr.Skip()
	case k == sim.KindDelivered && tr.BookDelivery(now, e.msg.ID, s.consumer, &s.lc):
		// only the ledger listens: booked without building the event
	default:
		b.buildCopy(k, s, e, attempt)
	}
}

// buildCopy emits an event about s's copy of e to the trace's sinks,
// built in place.
func (b *Broker) buildCopy(k sim.Kind, s *Subscriber, e *envelope, attempt int32) {
	tr := b.env.Trace
	// Field by field into a zeroed event rather than from a literal: the
	// compiler builds a literal in a temporary and copies it, and reading
	// the fields just written back as wider words stalls the copy.
	var ev sim.Event
	ev.Tick, ev.Kind, ev.Where, ev.Actor, ev.Consumer = b.env.Now(), k, e.where, s.name, s.consumer
	ev.Msg, ev.Key, ev.Corr, ev.Attempt = e.msg.ID, e.msg.Key, e.corr, int(attempt)
	tr.EmitRef(&ev)
}

// Step releases the copies held by broker.delay or by back-pressure whose
// time has come and the copies held by broker.reorder that no later copy
// overtook, and retries the fan-out forwards whose backoff is over. It is
// the broker's step in sim.PhaseBroker; its cost is O(released + retried).
func (b *Broker) Step(now sim.Tick) {
	keep := b.held[:0]
	for _, s := range b.held {
		switch h := s.held; {
		case h == nil:
			s.listed = false
		case s.heldAt < now:
			dup := s.heldDup
			s.held, s.heldDup, s.listed = nil, false, false
			b.m.InFlight--
			b.release(s, h, s.heldAttempt, dup)
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
		b.release(d.sub, d.env, d.attempt, d.dup)
		b.unref(d.env)
	}
	b.stepRetries(now)
}

// release delivers a copy the broker held back, as if published now,
// without consulting broker.duplicate again.
func (b *Broker) release(s *Subscriber, e *envelope, attempt int32, dup bool) {
	if s.closed {
		b.missCopies(s, e, dup, "", "subscriber closed")
		return
	}
	b.offer(s, e, false, attempt, dup)
}

// stepSubscribers steps every subscriber in subscription order.
func (b *Broker) stepSubscribers(now sim.Tick) {
	if b.genTick != now {
		b.gen++
		b.genTick = now
	}
	for _, s := range b.subs {
		if b.env.Exceeded() != nil {
			return // the run's budget is spent: stop at once
		}
		s.step(now)
	}
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
	// Limited counts the child publishes a depth limit refused.
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
