package watermill

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

// Sentinel errors of package watermill. Errors returned by the package wrap
// one of them (or the model's own sentinel) with %w.
var (
	// ErrInvalidConfig reports a Config or SubscriberConfig that cannot work.
	ErrInvalidConfig = errors.New("watermill: invalid config")
	// ErrClosed reports a call on a closed Broker, Publisher or Subscriber.
	ErrClosed = errors.New("watermill: closed")
	// ErrInvalidTopic reports a topic name the broker kind cannot use.
	ErrInvalidTopic = errors.New("watermill: invalid topic")
	// ErrNotDelivered reports a message that no Subscriber of this Broker
	// delivered (Applied and Sim need the delivered message itself).
	ErrNotDelivered = errors.New("watermill: message not delivered by this broker")
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

// DefaultBuffer is the pub/sub buffer per connection when Config.Buffer is 0.
const DefaultBuffer = 10000

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
	}
	if err := (faults.Plan{Rules: c.Faults}).Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// Broker is one simulated broker behind Watermill's Publisher and
// Subscriber interfaces. It owns a sim.World through a live.Driver: the
// world ticks every Config.TickEvery on the owner goroutine, and every
// publish, receive, ack and nack runs there too, between ticks, so the
// models stay single-threaded and deterministic. Topics (queues, subjects or
// log topics) are created on first use. Its methods are safe for
// concurrent use; each call costs one round trip to the owner goroutine.
type Broker struct {
	cfg Config
	d   *live.Driver

	// Owned by the driver goroutine: touched only inside d.Do or OnTick.
	w      *sim.World
	env    *sim.Env
	inj    *faults.Injector
	ps     *pubsub.Broker
	topics map[string]*topic
	order  []*topic // topics in creation order, for deterministic ticks
	ids    map[string]sim.ID
	uuids  map[sim.ID]string

	tick   wakeup // fired after every tick, for consumers retrying an unavailable broker
	subs   atomic.Int64
	closed atomic.Bool
}

// topic is one Watermill topic: a queue, a pub/sub subject or a log topic.
type topic struct {
	name   string
	q      *queue.Queue
	lt     *eventlog.Topic
	groups map[string]*group // KindLog
	glist  []*group          // KindLog, creation order
	wake   wakeup
}

// New validates cfg, builds the world and starts the driver.
func New(cfg Config) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.TickEvery == 0 {
		cfg.TickEvery = DefaultTickEvery
	}
	w, err := sim.New(sim.Config{Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	b := &Broker{cfg: cfg, w: w, env: w.Env(), topics: map[string]*topic{}, ids: map[string]sim.ID{}, uuids: map[sim.ID]string{}}
	if cfg.Trace != nil {
		b.env.Trace.Attach(cfg.Trace)
	}
	if len(cfg.Faults) > 0 {
		if b.inj, err = faults.New(faults.Config{Plan: faults.Plan{Rules: cfg.Faults}, Env: b.env}); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	if cfg.Kind == KindPubSub {
		if b.ps, err = pubsub.New(pubsub.Config{Name: "watermill", Env: b.env, Faults: b.inj}); err != nil {
			return nil, err
		}
		if err := b.ps.Attach(w); err != nil {
			return nil, err
		}
	}
	if b.d, err = live.Start(live.Config{World: w, TickEvery: cfg.TickEvery, OnTick: b.onTick}); err != nil {
		return nil, err
	}
	return b, nil
}

// Kind returns the broker's kind.
func (b *Broker) Kind() Kind { return b.cfg.Kind }

// onTick runs on the owner goroutine after every tick: it wakes the
// consumers of queues where a message became visible (delays, nacks with a
// delay and visibility timeouts run out in the queue's Step). It costs
// O(topics with a waiting consumer).
func (b *Broker) onTick(*sim.World) {
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
// ledger, the trace, metrics) or for effects that must book into the same
// world, such as an idempotent consumer from package outbox. f must not
// keep the world or call back into the Broker.
func (b *Broker) Do(f func(w *sim.World)) error {
	if b.closed.Load() {
		return ErrClosed
	}
	if err := b.d.Do(f); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return nil
}

// Check runs the checkers against the ledger and returns a *sim.CheckError
// listing every violation, or nil.
func (b *Broker) Check(checks ...sim.Checker) error {
	var err error
	if derr := b.Do(func(w *sim.World) { err = sim.Check(w.Env().Ledger, checks...) }); derr != nil {
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
		lt, err := eventlog.New(eventlog.Config{Name: name, Env: b.env, Faults: b.inj, Partitions: b.cfg.Partitions})
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidTopic, name, err)
		}
		if err := b.w.Add(sim.PhaseBroker, "log:"+name, lt); err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalidTopic, name, err)
		}
		t.lt, t.groups = lt, map[string]*group{}
	}
	b.topics[name] = t
	b.order = append(b.order, t)
	return t, nil
}

// queue creates the queue topic name, or returns it when it exists.
func (b *Broker) queue(name string, dlq *queue.Queue) (*topic, error) {
	if t := b.topics[name]; t != nil {
		return t, nil
	}
	cfg := queue.Config{Name: name, Env: b.env, Faults: b.inj, VisibilityTimeout: b.cfg.VisibilityTimeout, FIFO: b.cfg.FIFO, Consumer: name}
	if dlq != nil {
		cfg.DeadLetter, cfg.MaxReceiveCount = dlq, b.cfg.MaxReceiveCount
	}
	q, err := queue.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrInvalidTopic, name, err)
	}
	if err := b.w.Add(sim.PhaseBroker, "queue:"+name, q); err != nil {
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
// Metadata become extra headers sorted by name. Owner goroutine only.
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
	m := sim.Message{ID: id, Key: key, Body: bytes.Clone(wm.Payload), Headers: h, Created: b.env.Now()}
	b.env.Ledger.Register(&m)
	return m
}

// delivery is what a delivered Watermill message carries in its context.
type delivery struct {
	b   *Broker
	msg sim.Message
	ref sim.ConsumerRef
}

type deliveryKey struct{}

// toWatermill builds the Watermill message for a delivery of m to the
// logical consumer ref; its context derives from ctx and is canceled by
// cancel. Owner goroutine only.
func (b *Broker) toWatermill(ctx context.Context, m sim.Message, ref sim.ConsumerRef) (*message.Message, context.CancelFunc) {
	wm := message.NewMessage(b.uuids[m.ID], bytes.Clone(m.Body))
	for _, h := range m.Headers.Extra {
		wm.Metadata.Set(h.Name, h.Value)
	}
	mctx, cancel := context.WithCancel(context.WithValue(ctx, deliveryKey{}, &delivery{b: b, msg: m, ref: ref}))
	wm.SetContext(mctx)
	return wm, cancel
}

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
	return d.msg, nil
}

// Applied books in the ledger that the handler applied the effect of the
// delivered message wm, for the logical consumer it was delivered to (see
// Subscriber.Consumer). Checkers such as sim.ExactlyOnce then judge the
// handler: a non-idempotent handler that applies a duplicate delivery is
// reported with the message ID and tick.
func (b *Broker) Applied(wm *message.Message) error {
	d, err := b.delivered(wm)
	if err != nil {
		return err
	}
	return b.Do(func(w *sim.World) { w.Env().Ledger.Applied(d.msg.ID, d.ref, w.Now()) })
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
