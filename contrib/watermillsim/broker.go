package watermillsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/live"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package watermillsim. Errors returned by the package wrap
// one of them (or the model's own sentinel) with %w.
var (
	// ErrInvalidConfig reports a Config or SubscriberConfig that cannot work.
	ErrInvalidConfig = sim.Sentinel("watermillsim: invalid config", sim.ErrInvalidConfig)
	// ErrClosed reports a call on a closed Broker, Publisher or Subscriber.
	ErrClosed = errors.New("watermillsim: closed")
	// ErrInvalidTopic reports a topic name the broker kind cannot use.
	ErrInvalidTopic = errors.New("watermillsim: invalid topic")
	// ErrNotDelivered reports a message that no Subscriber of this Broker
	// delivered (Applied and Sim need the delivered message itself).
	ErrNotDelivered = errors.New("watermillsim: message not delivered by this broker")
)

// Kind selects the broker model behind a Broker.
type Kind uint8

// The broker kinds.
const (
	// KindQueue is the SQS-like work queue: every Subscribe on a topic is a
	// competing consumer, Nack returns the message for redelivery, and an
	// unacked message comes back when its visibility timeout runs out.
	KindQueue Kind = iota
	// KindPubSub is ephemeral publish/subscribe: each Subscriber instance
	// gets a copy of every publish made while it is connected to the topic.
	KindPubSub
	// KindLog is the partitioned log: consumer groups by name, each with its
	// own committed offsets; a new group reads from the start.
	KindLog
)

var kindNames = [...]string{"queue", "pubsub", "log"}

// String returns "queue", "pubsub" or "log".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// DefaultTickEvery is the wall-clock length of one tick when
// Config.TickEvery is 0.
const DefaultTickEvery = time.Millisecond

// DefaultBuffer is the pub/sub buffer per connection when Config.Buffer is
// 0. It is larger than the model's pubsub.DefaultBuffer (256) on purpose:
// a connection drains the model's buffer once per tick, and Watermill
// code (its universal test suite among it) publishes thousands of
// messages within one tick, which 256 copies would overflow.
const DefaultBuffer = 10000

// DefaultSessionTimeout is the session timeout of log group members, in
// ticks, when Config.SessionTimeout is 0: about 35 years of 1 ms ticks, so
// a member is never removed for being slow.
const DefaultSessionTimeout = queue.MaxDuration

// DeadLetterSuffix is appended to a queue topic's name to name its
// dead-letter queue, which is itself a topic one can subscribe to. A topic
// whose name ends with it never gets a dead-letter queue of its own.
const DeadLetterSuffix = ".dlq"

// CorrelationMetadata is the metadata key whose value becomes the
// message's sim correlation ID (Watermill's correlation middleware uses it).
const CorrelationMetadata = "correlation_id"

// Config configures a Broker.
type Config struct {
	// Kind selects the model: KindQueue, KindPubSub or KindLog.
	Kind Kind
	// Seed makes the simulation's decisions (fault firings above all)
	// reproducible for the same sequence of calls.
	Seed uint64
	// TickEvery is the wall-clock length of one tick; 0 means
	// DefaultTickEvery. Visibility timeouts and delays are counted in ticks.
	TickEvery time.Duration
	// Faults are the fault rules, consulted by the models at their fault
	// points (broker.duplicate, broker.delay, broker.unavailable, ...). A
	// rule's Match.Where selects a topic: "queue:orders", "topic:orders" or
	// "log:orders".
	Faults []faults.Rule
	// VisibilityTimeout (KindQueue) is how long, in ticks, a delivered
	// message stays invisible to other consumers while it is unacked; 0
	// means queue.DefaultVisibilityTimeout.
	VisibilityTimeout sim.Tick
	// NackDelay (KindQueue) is how many ticks a nacked message waits before
	// it is visible again; 0 means at once.
	NackDelay sim.Tick
	// MaxReceiveCount (KindQueue), when positive, gives every topic a
	// dead-letter queue (topic+DeadLetterSuffix) and moves a message there
	// instead of delivering it more than this many times.
	MaxReceiveCount int
	// FIFO (KindQueue) makes every queue a FIFO queue whose message groups
	// are the message keys (see KeyMetadata).
	FIFO bool
	// Buffer (KindPubSub) is the buffer of each connection in copies; 0
	// means DefaultBuffer. A full buffer drops the newest copy, traced and
	// booked as a loss with cause overflow.
	Buffer int
	// Partitions (KindLog) is the number of partitions of each topic; 0
	// means 1.
	Partitions int
	// Commit (KindLog) is when a group member commits its offsets: the
	// zero value eventlog.CommitAfter commits after each Ack, so an unacked
	// record comes again; eventlog.CommitBefore commits right after the
	// poll (at-most-once: a nacked record is lost, booked with cause
	// "commit before processing"); eventlog.CommitAuto commits the member's
	// progress every eventlog.DefaultAutoCommitEvery ticks at a poll and
	// when the subscription ends; eventlog.CommitOffByOne commits the offset
	// of the acked record instead of the next one.
	Commit eventlog.CommitMode
	// SessionTimeout (KindLog) removes a group member, as Kafka's
	// max.poll.interval does, when its subscription has not polled for
	// more than this many ticks: a Watermill handler holding a record that
	// long loses its partitions, its Ack commits nothing, and the record
	// comes again to the partition's next owner. 0 means
	// DefaultSessionTimeout, which no handler reaches. With a timeout set,
	// an idle subscription polls every tick to keep its session.
	SessionTimeout sim.Tick
	// KeyMetadata names the metadata entry whose value becomes the sim
	// message key (FIFO group, log partition, fault matches); "" means no key.
	KeyMetadata string
	// Trace, if set, receives every trace event, on the owner goroutine.
	Trace sim.Sink
}

// Validate reports a configuration error, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	switch {
	case c.Kind > KindLog:
		return bad("unknown kind %d", int(c.Kind))
	case c.TickEvery < 0:
		return bad("TickEvery %v is negative", c.TickEvery)
	case c.VisibilityTimeout < 0 || c.VisibilityTimeout > queue.MaxDuration:
		return bad("VisibilityTimeout %d is outside [0, %d]", c.VisibilityTimeout, queue.MaxDuration)
	case c.NackDelay < 0 || c.NackDelay > queue.MaxDuration:
		return bad("NackDelay %d is outside [0, %d]", c.NackDelay, queue.MaxDuration)
	case c.MaxReceiveCount < 0:
		return bad("MaxReceiveCount %d is negative", c.MaxReceiveCount)
	case c.Buffer < 0:
		return bad("Buffer %d is negative", c.Buffer)
	case c.Partitions < 0:
		return bad("Partitions %d is negative", c.Partitions)
	case c.Commit < eventlog.CommitAfter || c.Commit > eventlog.CommitOffByOne:
		return bad("unknown commit mode %d", int(c.Commit))
	case c.SessionTimeout < 0 || c.SessionTimeout > queue.MaxDuration:
		return bad("SessionTimeout %d is outside [0, %d]", c.SessionTimeout, queue.MaxDuration)
	}
	if err := (faults.Plan{Rules: c.Faults}).Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	for _, r := range c.Faults {
		if r.Point == faults.MemberSessionTimeout && c.Kind == KindLog && c.SessionTimeout == 0 {
			return bad("rule %q: %s stalls a member past its session timeout, which needs SessionTimeout", r.Name, r.Point)
		}
	}
	return nil
}

// Broker is one simulated broker behind Watermill's Publisher and
// Subscriber interfaces. It owns a sim.World through a live.Driver (in a
// Harness, through the lockstep driver on the bubble's fake clock): the
// world ticks every Config.TickEvery on the owner goroutine, and every
// publish, receive, ack and nack runs there too, between ticks, so the
// models stay single-threaded and deterministic. Topics (queues, subjects or
// log topics) are created on first use, each a model built on the world.
// The Broker keeps no delivery state of its own beyond the copies a pub/sub
// connection has taken from the model and not yet had acked: queues,
// groups, members and offsets all live in the models. Its methods are safe
// for concurrent use; each call costs one round trip to the owner
// goroutine.
type Broker struct {
	cfg Config
	d   driver
	ls  *lockstep // the driver in a synctest bubble (Harness); nil in real time

	// declared is the set of topics a Harness declared up front, created
	// in its order before anything runs; nil in real time. Read-only once
	// the harness runs.
	declared map[string]bool
	// status says what each subscription is waiting for, by worker, for
	// the harness's tick-cap errors; nil in real time.
	status *statusBoard
	// draining stops the subscriptions from taking new messages
	// (Harness.Close).
	draining atomic.Bool

	// Owned by the driver goroutine: touched only inside d.Do or OnTick.
	w      *sim.World
	env    *sim.Env
	inj    *faults.Injector
	hf     sim.Handler // inj's handler fault points around a hand-over that succeeds; nil without handler rules
	ps     *pubsub.Broker
	topics map[string]*topic
	order  []*topic // topics in creation order, for deterministic ticks
	ids    map[string]sim.ID
	uuids  map[sim.ID]string

	tick   wakeup       // fired after every tick, for subscriptions waiting for a tick
	now    atomic.Int64 // the tick reached, stored before tick fires
	subs   atomic.Int64
	closed atomic.Bool
}

// topic is one Watermill topic: a queue, a pub/sub subject or a log topic.
type topic struct {
	name string
	q    *queue.Queue
	lt   *eventlog.Log
	wake wakeup
}

// handlerPoints are the fault points Injector.Handler consults.
var handlerPoints = []faults.Point{faults.HandlerPoison, faults.HandlerPermanent, faults.HandlerRateLimited, faults.HandlerTransient, faults.HandlerSlow}

// New validates cfg, builds the world and starts the driver.
func New(cfg Config) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.TickEvery == 0 {
		cfg.TickEvery = DefaultTickEvery
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	b, err := newBroker(cfg)
	if err != nil {
		return nil, err
	}
	d, err := live.Start(live.Config{World: b.w, TickEvery: cfg.TickEvery, OnTick: b.onTick})
	if err != nil {
		return nil, err
	}
	b.d = realTime{d}
	return b, nil
}

// newBroker builds the broker and its world without a driver.
func newBroker(cfg Config) (*Broker, error) {
	w, err := sim.New(sim.Config{Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	b := &Broker{cfg: cfg, w: w, env: w.Env(), topics: map[string]*topic{}, ids: map[string]sim.ID{}, uuids: map[sim.ID]string{}}
	if cfg.Trace != nil {
		w.Trace().Attach(cfg.Trace)
	}
	if len(cfg.Faults) > 0 {
		if b.inj, err = faults.New(w, faults.Config{Plan: faults.Plan{Rules: cfg.Faults}}); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		for _, p := range handlerPoints {
			if b.inj.Has(p) && cfg.Kind != KindPubSub {
				b.hf = b.inj.Handler(sim.HandlerFunc(func(*sim.Delivery) error { return nil }))
				break
			}
		}
	}
	if cfg.Kind == KindPubSub {
		if b.ps, err = pubsub.New(w, pubsub.Config{Name: "watermill", Faults: b.inj}); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Kind returns the broker's kind.
func (b *Broker) Kind() Kind { return b.cfg.Kind }

// onTick runs on the owner goroutine after every tick: it wakes the
// consumers of queues where a message became visible (delays, nacks with a
// delay and visibility timeouts run out in the queue's Step). It costs
// O(topics with a waiting consumer).
func (b *Broker) onTick(w *sim.World) {
	b.now.Store(int64(w.Now()))
	b.tick.fire()
	if b.cfg.Kind != KindQueue {
		return
	}
	for _, t := range b.order {
		if t.wake.armed() && t.q.Metrics().Visible > 0 {
			t.wake.fire()
		}
	}
}

// Do runs f on the owner goroutine between two ticks, for inspection (the
// ledger, the trace, metrics) or for work that must happen in the same
// world. f must not keep the world. Called from f (or from a handler run
// by Handle), a Broker method that needs the owner goroutine returns an
// error wrapping live.ErrReentrant instead of waiting for itself.
func (b *Broker) Do(f func(w *sim.World)) error { return b.doKey("do", f) }

// doKey is Do for a caller named key; in lockstep, calls waiting at the
// same time are served in the order of their keys.
func (b *Broker) doKey(key string, f func(w *sim.World)) error {
	if b.closed.Load() {
		return ErrClosed
	}
	if err := b.d.do(key, f); err != nil {
		if errors.Is(err, live.ErrReentrant) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return nil
}

// Check runs the checkers against the ledger folded from the world's
// trace and returns a *sim.CheckError listing every violation, or nil. The
// checkers never pass vacuously: a message still pending (unacked, or
// never received) is a violation, so check after the subscriptions have
// settled what they were handed (close the Subscriber, or wait for the
// metrics).
func (b *Broker) Check(checks ...sim.Checker) error {
	var err error
	if derr := b.Do(func(w *sim.World) { err = sim.Check(w.Ledger(), checks...) }); derr != nil {
		return derr
	}
	return err
}

// Now returns the tick the world reached.
func (b *Broker) Now() sim.Tick { return b.d.Now() }

// Advance runs n ticks at once, e.g. to let visibility timeouts run out
// without waiting for the wall clock.
func (b *Broker) Advance(n int) error {
	if b.closed.Load() {
		return ErrClosed
	}
	return b.d.Advance(n)
}

// QueueMetrics returns the metrics of the queue behind topic (KindQueue),
// and false when no such queue exists yet.
func (b *Broker) QueueMetrics(topic string) (queue.Metrics, bool) {
	var m queue.Metrics
	ok := false
	_ = b.Do(func(*sim.World) {
		if t := b.topics[topic]; t != nil && t.q != nil {
			m, ok = t.q.Metrics(), true
		}
	})
	return m, ok
}

// LogMetrics returns the metrics of consumer group group on the log topic
// behind topic (KindLog): its committed offsets, lag and members. It
// reports false when there is no such topic or group yet.
func (b *Broker) LogMetrics(topic, group string) (eventlog.GroupMetrics, bool) {
	var m eventlog.GroupMetrics
	ok := false
	_ = b.Do(func(*sim.World) {
		if t := b.topics[topic]; t != nil && t.lt != nil {
			if g := t.lt.Group(group); g != nil {
				m, ok = g.Metrics(), true
			}
		}
	})
	return m, ok
}

// Close stops the driver. Close Publishers and Subscribers first; their
// later calls fail with ErrClosed. Close is idempotent.
func (b *Broker) Close() error {
	b.closed.Store(true)
	b.d.Stop()
	return nil
}

// topic returns the topic called name, creating it on first use. Owner
// goroutine only.
func (b *Broker) topic(name string) (*topic, error) {
	if t := b.topics[name]; t != nil {
		return t, nil
	}
	if name == "" {
		return nil, fmt.Errorf("%w: empty topic name", ErrInvalidTopic)
	}
	if !b.knows(name) {
		return nil, fmt.Errorf("%w: %q was not declared in HarnessConfig.Topics (declared: %s)", ErrInvalidTopic, name, b.declaredList())
	}
	t := &topic{name: name}
	switch b.cfg.Kind {
	case KindQueue:
		var dlq *queue.Queue
		if b.cfg.MaxReceiveCount > 0 && !strings.HasSuffix(name, DeadLetterSuffix) {
			d, err := b.queue(name+DeadLetterSuffix, nil)
			if err != nil {
				return nil, err
			}
			dlq = d.q
		}
		return b.queue(name, dlq)
	case KindPubSub:
		if err := pubsub.ValidSubject(name); err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidTopic, name, err)
		}
	case KindLog:
		lt, err := eventlog.New(b.w, eventlog.Config{Name: name, Faults: b.inj, Partitions: b.cfg.Partitions})
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidTopic, name, err)
		}
		t.lt = lt
	}
	b.topics[name] = t
	b.order = append(b.order, t)
	return t, nil
}

// knows reports whether a topic may be used: any in real time; in a
// harness the declared ones and their dead-letter queues.
func (b *Broker) knows(name string) bool {
	if b.declared == nil || b.declared[name] {
		return true
	}
	base, ok := strings.CutSuffix(name, DeadLetterSuffix)
	return ok && b.cfg.Kind == KindQueue && b.cfg.MaxReceiveCount > 0 && b.declared[base]
}

// queue creates the queue topic name, or returns it when it exists.
func (b *Broker) queue(name string, dlq *queue.Queue) (*topic, error) {
	if t := b.topics[name]; t != nil {
		return t, nil
	}
	cfg := queue.Config{Name: name, Faults: b.inj, VisibilityTimeout: b.cfg.VisibilityTimeout, FIFO: b.cfg.FIFO, Consumer: name}
	if dlq != nil {
		cfg.DeadLetter, cfg.MaxReceiveCount = dlq, b.cfg.MaxReceiveCount
	}
	q, err := queue.New(b.w, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrInvalidTopic, name, err)
	}
	t := &topic{name: name, q: q}
	b.topics[name] = t
	b.order = append(b.order, t)
	return t, nil
}

// toSim converts a Watermill message published to topic into a sim
// message. A UUID keeps the sim ID it got on its first publish, so a
// re-published or duplicated message is the same message in the ledger.
// Metadata become extra headers sorted by name. The ledger learns of the
// message from the event of the model that accepts it. Owner goroutine
// only.
func (b *Broker) toSim(topic string, wm *message.Message) sim.Message {
	id, ok := b.ids[wm.UUID]
	if !ok {
		id = b.env.IDs.Next()
		b.ids[wm.UUID], b.uuids[id] = id, wm.UUID
	}
	h := sim.Headers{Type: topic, CorrelationID: wm.Metadata.Get(CorrelationMetadata)}
	if len(wm.Metadata) > 0 {
		names := make([]string, 0, len(wm.Metadata))
		for k := range wm.Metadata {
			names = append(names, k)
		}
		sort.Strings(names)
		h.Extra = make([]sim.Header, len(names))
		for i, k := range names {
			h.Extra[i] = sim.Header{Name: k, Value: wm.Metadata[k]}
		}
	}
	var key string
	if b.cfg.KeyMetadata != "" {
		key = wm.Metadata.Get(b.cfg.KeyMetadata)
	}
	return sim.Message{ID: id, Key: key, Body: bytes.Clone(wm.Payload), Headers: h, Created: b.env.Now()}
}

// delivery is what a delivered Watermill message carries in its context:
// the sim.Delivery its effects are recorded on. d is touched only on the
// owner goroutine.
type delivery struct {
	b   *Broker
	d   *sim.Delivery
	key string // the lockstep key of the handler's calls: its worker's, plus "/handler"
}

type deliveryKey struct{}

// toWatermill builds the Watermill message for the delivery d; its context
// derives from ctx and is canceled by cancel. Owner goroutine only.
func (b *Broker) toWatermill(ctx context.Context, key string, d *sim.Delivery) (*message.Message, context.CancelFunc) {
	m := d.Msg
	wm := message.NewMessage(b.uuids[m.ID], bytes.Clone(m.Body))
	for _, h := range m.Headers.Extra {
		wm.Metadata.Set(h.Name, h.Value)
	}
	mctx, cancel := context.WithCancel(context.WithValue(ctx, deliveryKey{}, &delivery{b: b, d: d, key: key + "/handler"}))
	wm.SetContext(mctx)
	return wm, cancel
}

// doFor runs f on the owner goroutine for the handler of the delivery d,
// keyed by the subscription that handed it over: in lockstep the calls of
// concurrent handlers are served in the order of their workers' names.
func (b *Broker) doFor(d *delivery, f func(*sim.World)) error { return b.doKey(d.key, f) }

func (b *Broker) delivered(wm *message.Message) (*delivery, error) {
	d, ok := wm.Context().Value(deliveryKey{}).(*delivery)
	if !ok || d.b != b {
		return nil, fmt.Errorf("%w: %s", ErrNotDelivered, wm.UUID)
	}
	return d, nil
}

// Sim returns the sim message a delivered Watermill message stands for:
// its stable ID, key, body and headers. It fails with ErrNotDelivered for a
// message this Broker did not deliver.
func (b *Broker) Sim(wm *message.Message) (sim.Message, error) {
	d, err := b.delivered(wm)
	if err != nil {
		return sim.Message{}, err
	}
	return d.d.Msg, nil
}

// Applied records now, on the delivery of wm, that the handler applied
// one effect of the message (sim.Delivery.Apply, traced as "processed" for
// the logical consumer Subscriber.Consumer names). Calling it is optional:
// an Ack of a delivery on which nothing was recorded records one effect
// itself. A handler calls Applied to record the effect before the Ack, or
// several effects, or an effect of a message it then nacks. It fails with
// ErrNotDelivered for a message this Broker did not deliver.
func (b *Broker) Applied(wm *message.Message) error {
	d, err := b.delivered(wm)
	if err != nil {
		return err
	}
	return b.doFor(d, func(*sim.World) { d.d.Apply("") })
}

// Skip records on the delivery of wm that the handler recognised the
// message as a duplicate and applied nothing (sim.Delivery.Skip, traced as
// "skipped"): the Ack that follows records no effect, and the ledger
// counts the delivery as an absorbed duplicate. why, if set, is shown in
// the trace. It fails with ErrNotDelivered for a message this Broker did
// not deliver.
func (b *Broker) Skip(wm *message.Message, why string) error {
	d, err := b.delivered(wm)
	if err != nil {
		return err
	}
	return b.doFor(d, func(w *sim.World) {
		if !w.Trace().Detailed() {
			why = ""
		}
		d.d.Skip(why)
	})
}

// Handle runs h, a brokerlab handler, on the owner goroutine with the
// delivery of wm, and returns h's error; the Watermill handler then acks
// or nacks as it sees fit. What h records on the delivery (Apply, Skip) is
// what the ledger counts, and the Ack adds nothing when h recorded
// anything. This is how an idempotent consumer that books into the same
// world (outbox.Consumer, sim.Idempotent) judges a Watermill delivery. h
// must not keep the delivery or call back into the Broker; sim.Timed is
// not consulted. It fails with ErrNotDelivered for a message this Broker
// did not deliver.
func (b *Broker) Handle(wm *message.Message, h sim.Handler) error {
	d, err := b.delivered(wm)
	if err != nil {
		return err
	}
	var herr error
	if err := b.doFor(d, func(*sim.World) { herr = h.Handle(d.d) }); err != nil {
		return err
	}
	return herr
}

// settleAck records the effect of an acked delivery: one effect unless the
// handler recorded effects or a skip on it already. Owner goroutine only.
func settleAck(d *sim.Delivery) {
	if d.Effects() == 0 && !d.Skipped() {
		d.Apply("")
	}
}

// failed traces that the Watermill handler nacked the delivery d (or a
// handler fault failed it before the hand-over): the handler finished
// without an effect. The log's member traces its own failures. Owner
// goroutine only.
func (b *Broker) failed(d *sim.Delivery, why string) {
	tr := b.env.Trace
	if !tr.Detailed() {
		why = ""
	}
	ev := d.Event(sim.KindFailed)
	ev.Detail = why
	tr.EmitRef(&ev)
}

// slow returns how many ticks handler.slow holds the hand-over of d back
// (queue and log; the pub/sub model consults the handler points itself,
// around its hand-over to the connection), as a model asks a handler's
// processing time before it calls the handler. Owner goroutine only.
func (b *Broker) slow(d *sim.Delivery) sim.Tick {
	if b.hf == nil {
		return 0
	}
	return sim.DurationOf(b.hf, d)
}

// fail consults handler.poison, handler.permanent and handler.transient
// for d when its hand-over is due, as faults.Injector.Handler does before a
// model's handler runs: a firing fails the delivery with an error of that
// class instead of handing it to Watermill. Owner goroutine only.
func (b *Broker) fail(d *sim.Delivery) error {
	if b.hf == nil {
		return nil
	}
	return b.hf.Handle(d)
}

// wakeup lets consumer goroutines sleep until something may be ready: wait
// returns a channel that the next fire closes.
type wakeup struct {
	mu sync.Mutex
	ch chan struct{}
}

func (w *wakeup) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

func (w *wakeup) armed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch != nil
}

func (w *wakeup) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}
