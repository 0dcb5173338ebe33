package queue

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/internal/stored"
	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package queue. Errors returned by the package wrap one
// of them with %w, so callers test with errors.Is.
var (
	// ErrInvalidConfig reports a Config, ConsumerConfig or RetryPolicy that
	// cannot work, or a world that refused to register a component. It
	// wraps sim.ErrInvalidConfig.
	ErrInvalidConfig = sim.Sentinel("queue: invalid config", sim.ErrInvalidConfig)
	// ErrInvalidArgument reports a bad argument to a queue operation
	// (negative duration, non-positive batch size).
	ErrInvalidArgument = errors.New("queue: invalid argument")
	// ErrUnavailable reports that the broker is down (fault point
	// broker.unavailable). It wraps sim.ErrUnavailable, so code publishing
	// to any sim.Publisher can test errors.Is(err, sim.ErrUnavailable); the
	// errors Send and Receive return also wrap ErrConnection.
	ErrUnavailable = sim.Sentinel("queue: broker unavailable", sim.ErrUnavailable)
	// ErrConnection is the connection error an unavailable broker reports.
	ErrConnection = errors.New("queue: connection refused")
	// ErrUnknownReceipt reports a receipt this queue never issued (the zero
	// receipt, one from another queue, or a forged one).
	ErrUnknownReceipt = errors.New("queue: unknown receipt")
	// ErrStaleReceipt reports a receipt that this queue issued but that no
	// longer names the delivery: the message was received again since (a
	// redelivery), or it was deleted (acked, dead-lettered, expired,
	// purged). A second ack with the same receipt gets this error.
	ErrStaleReceipt = errors.New("queue: stale receipt")
	// ErrNotInFlight reports a Nack or ChangeVisibility on a message whose
	// visibility timeout already expired (it is visible or delayed now).
	ErrNotInFlight = errors.New("queue: message not in flight")
	// ErrNoDeadLetter reports a dead-letter request on a queue without a
	// dead-letter queue.
	ErrNoDeadLetter = errors.New("queue: no dead-letter queue")
	// ErrNotMade reports a call on a nil or zero Queue, one not made by New.
	ErrNotMade = errors.New("queue: queue not made with New")
	// ErrOverLimit reports a short-polling receive on a standard queue
	// refused because the queue's in-flight cap (Config.MaxInFlight) is
	// reached, as SQS's OverLimit error. Long polls and FIFO queues are
	// refused without an error: the receive returns nothing. Either way the
	// refusal is traced.
	ErrOverLimit = errors.New("queue: too many messages in flight")
)

// MaxDuration caps every duration the package accepts (delays, timeouts,
// retention, windows), so tick arithmetic can never overflow.
const MaxDuration sim.Tick = 1 << 40

// DefaultVisibilityTimeout is the visibility timeout when
// Config.VisibilityTimeout is 0.
const DefaultVisibilityTimeout sim.Tick = 30

// DedupHeader is the extra header whose value is a FIFO message's
// deduplication ID. Without it the deduplication ID is the SHA-256 of the
// body when Config.ContentBasedDedup is set, and the message ID otherwise,
// so re-publishing the same message (an outbox relay retry) is absorbed.
const DedupHeader = "dedup-id"

// MaxStrictBatch is the most messages one receive may ask for on a queue
// with Config.Strict, as SQS's ReceiveMessage (MaxNumberOfMessages 1 to
// 10).
const MaxStrictBatch = 10

// StrictInFlightLimit is the in-flight cap of a queue with Config.Strict
// and no MaxInFlight of its own: SQS's quota of about 120,000 in-flight
// messages per queue, which the SQS developer guide now states for FIFO
// queues as well.
const StrictInFlightLimit = 120_000

// Config configures a Queue.
type Config struct {
	// Name is required, e.g. "orders"; the trace and the World name the
	// queue "queue:"+Name.
	Name string
	// Faults is consulted at broker.unavailable, broker.duplicate,
	// broker.delay and broker.reorder; nil means no faults.
	Faults *faults.Injector
	// VisibilityTimeout is how long a received message stays invisible;
	// 0 means DefaultVisibilityTimeout.
	VisibilityTimeout sim.Tick
	// Retention deletes messages this many ticks after they entered the
	// queue, in any state; 0 keeps them forever.
	Retention sim.Tick
	// DeadLetter is the optional dead-letter queue, made with New on the
	// same World before this queue.
	DeadLetter *Queue
	// MaxReceiveCount, with DeadLetter, is the redrive policy: a receive that
	// would make a message's receive count exceed it moves the message to
	// the dead-letter queue instead. 0 disables the policy.
	MaxReceiveCount int
	// FIFO makes the queue deliver per message group (Message.Key) in send
	// order: a receive takes the visible run at a group's head, and no
	// receive takes from a group while one of its messages is in flight.
	// Its DeadLetter must be FIFO too, a standard queue's standard.
	FIFO bool
	// DedupWindow (FIFO only) drops a send whose deduplication ID was
	// accepted fewer than DedupWindow ticks before (the ID is remembered
	// while its age is below the window and forgotten from the tick its age
	// equals it), and suppresses broker.duplicate copies within the same
	// window; 0 disables deduplication.
	DedupWindow sim.Tick
	// ContentBasedDedup (FIFO with a DedupWindow) makes the SHA-256 of the
	// body the deduplication ID of a message without a DedupHeader, as SQS's
	// ContentBasedDeduplication; the header still overrides it. It costs
	// one hash of the body per send.
	ContentBasedDedup bool
	// Delay is the queue-level delivery delay (SQS DelaySeconds): a sent
	// message becomes visible Delay ticks after the send. On a standard
	// queue a positive per-message delay (Send's delay) replaces it; a FIFO
	// queue refuses per-message delays, so Delay is its only delay. 0 means
	// none. It must lie in [0, MaxDuration].
	Delay sim.Tick
	// ReceiveWaitTime is the queue's long-polling wait (SQS
	// ReceiveMessageWaitTimeSeconds): a Consumer whose WaitTime is 0 keeps
	// each receive call open up to this many ticks until a message is
	// visible. 0 means short polling. It must lie in [0, MaxDuration].
	ReceiveWaitTime sim.Tick
	// MaxInFlight caps the messages in flight (received and neither deleted
	// nor visible again: a copy nacked with a delay stays in flight until
	// it is visible). A receive at the cap is refused and traced as
	// rejected: a short poll on a standard queue fails with ErrOverLimit,
	// a long poll or a FIFO receive returns nothing (as SQS); a receive
	// that reaches the cap returns what it took so far. 0 means no cap, or
	// StrictInFlightLimit when Strict. It must not be negative, nor above
	// StrictInFlightLimit when Strict.
	MaxInFlight int
	// Strict applies SQS's API limits: a receive may ask for at most
	// MaxStrictBatch messages (more is refused with ErrInvalidArgument, and
	// a consumer with a larger Batch is refused at NewConsumer), and
	// MaxInFlight defaults to StrictInFlightLimit. The default (false) is
	// permissive: any batch size and no in-flight cap.
	Strict bool
	// Consumer is the logical consumer the queue's messages are routed to:
	// every worker receiving from the queue is an instance of it, and the
	// ledger judges deliveries, effects and losses under this name. ""
	// means Name.
	Consumer string
}

// Validate reports a configuration error, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: queue %q: %s", ErrInvalidConfig, c.Name, fmt.Sprintf(format, a...))
	}
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: a queue needs a name", ErrInvalidConfig)
	case c.VisibilityTimeout < 0 || c.VisibilityTimeout > MaxDuration:
		return bad("visibility timeout %d is outside [0, %d]", c.VisibilityTimeout, MaxDuration)
	case c.Retention < 0 || c.Retention > MaxDuration:
		return bad("retention %d is outside [0, %d]", c.Retention, MaxDuration)
	case c.DedupWindow < 0 || c.DedupWindow > MaxDuration:
		return bad("dedup window %d is outside [0, %d]", c.DedupWindow, MaxDuration)
	case c.DedupWindow > 0 && !c.FIFO:
		return bad("a dedup window needs a FIFO queue")
	case c.ContentBasedDedup && (!c.FIFO || c.DedupWindow == 0):
		return bad("content-based dedup needs a FIFO queue with a dedup window")
	case c.Delay < 0 || c.Delay > MaxDuration:
		return bad("delay %d is outside [0, %d]", c.Delay, MaxDuration)
	case c.ReceiveWaitTime < 0 || c.ReceiveWaitTime > MaxDuration:
		return bad("receive wait time %d is outside [0, %d]", c.ReceiveWaitTime, MaxDuration)
	case c.MaxInFlight < 0:
		return bad("max in flight %d is negative", c.MaxInFlight)
	case c.Strict && c.MaxInFlight > StrictInFlightLimit:
		return bad("max in flight %d of a strict queue is above SQS's in-flight quota of %d (0 means that quota)", c.MaxInFlight, StrictInFlightLimit)
	case c.MaxReceiveCount < 0:
		return bad("max receive count %d is negative", c.MaxReceiveCount)
	case c.MaxReceiveCount > 0 && c.DeadLetter == nil:
		return bad("max receive count needs a dead-letter queue")
	case c.DeadLetter != nil && c.DeadLetter.env == nil:
		return bad("dead-letter queue was not made with New")
	case c.DeadLetter != nil && c.DeadLetter.cfg.FIFO != c.FIFO:
		return bad("the dead-letter queue %q must be a %s queue like its source", c.DeadLetter.cfg.Name, kindName(c.FIFO))
	}
	return nil
}

func kindName(fifo bool) string {
	if fifo {
		return "FIFO"
	}
	return "standard"
}

// Delivery is one received message: the message, the receipt that acks it,
// and how many times this copy has been received (1 on the first receive).
type Delivery struct {
	Message      sim.Message
	Receipt      Receipt
	ReceiveCount int
}

// Receipt names one delivery of one message copy. It encodes the queue, the
// copy's slot and the receive generation, so a receipt issued before a
// redelivery is recognised as stale. The zero Receipt is never valid.
type Receipt struct {
	q    *Queue
	id   sim.ID
	slot uint32
	gen  uint32
}

// Msg returns the ID of the message the receipt was issued for.
func (r Receipt) Msg() sim.ID { return r.id }

// IsZero reports whether r is the zero Receipt.
func (r Receipt) IsZero() bool { return r.q == nil }

// String formats the receipt as "m7#3.2": message, slot, generation.
func (r Receipt) String() string {
	if r.q == nil {
		return "-"
	}
	return r.id.String() + "#" + strconv.FormatUint(uint64(r.slot), 10) + "." + strconv.FormatUint(uint64(r.gen), 10)
}

// Metrics is a snapshot of a queue's gauges and counters.
type Metrics struct {
	// Visible counts the messages waiting to be received, neither in
	// flight nor delayed. In a FIFO queue it includes those waiting behind
	// an in-flight message of their group, which no receive returns until
	// that message is acked or its visibility timeout runs out.
	Visible   int
	InFlight  int      // received, not yet acked, visibility timeout running
	Delayed   int      // not yet visible (delayed send, nack with delay)
	DLQDepth  int      // messages resident in the dead-letter queue
	OldestAge sim.Tick // age of the oldest resident message, 0 when empty

	Sent              int // messages accepted, redriven ones included (broker copies excluded)
	Receives          int // deliveries, redeliveries included
	Acks              int
	Nacks             int
	Redeliveries      int // deliveries with receive count > 1
	VisibilityExpired int // visibility timeouts that ran out
	DeadLettered      int // moved to the dead-letter queue
	Expired           int // deleted by retention
	Purged            int
	Redriven          int // moved out of this queue (as a DLQ) as new messages
	Deduplicated      int // sends dropped, and broker duplicates suppressed, by the FIFO dedup window
	Duplicated        int // broker copies made by the broker.duplicate fault
	Rejected          int // refused calls: broker down, stale or unknown receipts, in-flight cap, FIFO per-message delay
	AcksLost          int // acks lost on their way (broker.ack_lost): reported as done, the message stayed in flight
	OverLimit         int // receives the in-flight cap stopped (wholly or partly)
	EmptyReceives     int // receive calls that returned nothing (a long poll counts once, when its wait ends)
}

// group is one FIFO message group: its resident messages in send order,
// delayed ones included (a message joins its group when it is sent, so a
// delay never lets a later message overtake it). The front is the group's
// head. A receive takes the run of visible messages from the head, so the
// group can be received from only while none of its messages is in flight
// or held (busy is 0) and its head is visible.
type group struct {
	key    string
	refs   ring[ref]
	busy   int  // messages of the group in flight or held (nacked with a delay)
	queued bool // the group is in Queue.readyGroups
}

// aged is a resident copy whose enqueue time is earlier than the tick it
// entered the queue (a standard queue's dead letter keeps its first
// enqueue time), kept in a heap by that time so retention finds it.
type aged struct {
	at sim.Tick
	id sim.ID
	r  ref
}

func (x *aged) less(y *aged) bool {
	if x.at != y.at {
		return x.at < y.at
	}
	if x.id != y.id {
		return x.id < y.id
	}
	return x.r < y.r
}

// agedHeap is a binary min-heap of aged copies, with lazy deletion: a
// copy deleted otherwise stays until it reaches the top or a compaction.
type agedHeap []aged

func (h *agedHeap) push(x aged) {
	*h = append(*h, x)
	a := *h
	for j := len(a) - 1; j > 0; {
		i := (j - 1) / 2
		if !a[j].less(&a[i]) {
			break
		}
		a[i], a[j] = a[j], a[i]
		j = i
	}
}

func (h *agedHeap) pop() aged {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && a[l].less(&a[m]) {
			m = l
		}
		if r := l + 1; r < n && a[r].less(&a[m]) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

// keep drops the copies keep rejects and restores the heap order: O(len).
func (h *agedHeap) keep(keep func(ref) bool) {
	a := (*h)[:0]
	for _, x := range *h {
		if keep(x.r) {
			a = append(a, x)
		}
	}
	*h = nil
	for _, x := range a {
		h.push(x)
	}
}

// dedupRec is one deduplication ID in the order it was accepted, for
// expiring the window.
type dedupRec struct {
	id  string
	exp sim.Tick
}

// dedupHit is what the window remembers of a deduplication ID: when it
// expires and the message it was first accepted with.
type dedupHit struct {
	exp sim.Tick
	msg sim.ID
}

// Queue is an SQS-like work queue for competing consumers. It is a state
// machine driven by explicit calls (Send, Receive, Ack, Nack,
// ChangeVisibility, DeadLetter, Purge, Redrive) and by Step, which the World
// calls once per tick in the broker phase to run delays, visibility expiry
// and retention.
//
// The queue reports what happens only through its trace, as events or,
// when the ledger listens alone, as typed bookings that fold exactly as
// the events would (see the package documentation); the world's ledger
// folds them. It never writes the ledger.
//
// Invariants: every resident copy is in exactly one of visible, in flight
// or delayed, and Len equals their sum. Every operation costs O(log n) in
// the resident messages n (heaps with index fields for the delayed and
// in-flight sets, rings for visible messages and groups, receipts that
// address the slot directly), except Purge, which deletes everything, and
// amortised compaction of lazily deleted ring entries. A resident message
// costs about 81 bytes beyond its body and the ledger's share.
//
// A Queue is not safe for concurrent use.
type Queue struct {
	// cfg holds the name and the injector: with no fields of their own
	// for them, a Queue and its allocation header fit the 1 KiB size
	// class (see TestStructSizes).
	cfg      Config
	where    string
	consumer string // the logical consumer the queue routes its messages to
	vt       sim.Tick
	env      *sim.Env

	s     slab
	hdrs  stored.Cache // shares equal headers of consecutive sends
	all   ring[ref]    // every resident copy, in the order it entered; some refs marked fresh (see ready)
	delay theap

	// ready is a standard queue's delivery order of visible copies, stale
	// refs of deleted copies included until they are popped or compacted
	// away. Most copies become visible as they enter, so their refs would
	// be in all and in ready alike: such a copy's ref is marked fresh in
	// all, and ready holds a run that stands for it (see run). The runs of
	// ready, in order, stand for all's fresh refs, in order: the first
	// dropped for the fresh refs trimAll dropped from all's front as
	// deleted, then for the fresh refs still in all, none of which lies
	// before index allPos. readyLen is the length of the order ready
	// stands for. A backlog that was never received costs one run, not
	// 8 bytes a copy.
	ready            ring[ref]
	readyLen, allPos int
	dropped          int
	// allNext is the length of all at which add compacts it again
	// before it adds a ref, so all never holds more: a quarter of the
	// live copies, plus 64, beyond its length after the last compaction
	// (see compactAll).
	allNext int
	flight  theap

	groups      map[string]*group
	readyGroups ring[*group]
	dedup       map[string]dedupHit
	dedupOrder  ring[dedupRec]
	old         agedHeap // copies enqueued before they entered (standard dead letters), for retention
	run         []ref    // scratch: the run of visible messages a FIFO receive takes from one group
	limit       int      // the in-flight cap, 0 for none

	live, nVisible, nInFlight, nDelayed int
	nNacked                             int // copies nacked with a delay and not visible yet: in flight for the cap

	// lc caches the ledger's handle of the logical consumer, for the
	// deliveries and acks the queue books (sim.Trace.BookDelivery,
	// sim.Trace.BookAcked) when the ledger is the only listener.
	lc sim.LedgerConsumer

	actors   []string
	actorIdx map[string]int32 // index of actors, made once there are more than maxActorScan
	sources  []*Queue

	m Metrics

	// The fault points the queue consults, resolved once (faults.Site).
	fUnavailable, fDelay, fReorder, fDuplicate, fAckLost faults.Site
}

// New returns an empty queue bound to the world w and registers it with w
// under "queue:"+Name, in the broker phase (Phase), so it can be neither
// forgotten nor stepped in the wrong phase. It uses the world's clock,
// trace, IDs and seed. A dead-letter queue must be made first, on the same
// world.
func New(w *sim.World, cfg Config) (*Queue, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: queue %q needs a world", ErrInvalidConfig, cfg.Name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	env := w.Env()
	if d := cfg.DeadLetter; d != nil && d.env != env {
		return nil, fmt.Errorf("%w: queue %q: dead-letter queue %q belongs to another world", ErrInvalidConfig, cfg.Name, d.cfg.Name)
	}
	if cfg.Consumer == "" {
		cfg.Consumer = cfg.Name
	}
	vt := cfg.VisibilityTimeout
	if vt == 0 {
		vt = DefaultVisibilityTimeout
	}
	q := &Queue{cfg: cfg, where: "queue:" + cfg.Name, consumer: cfg.Consumer, vt: vt, env: env,
		limit: cfg.MaxInFlight}
	if q.limit == 0 && cfg.Strict {
		q.limit = StrictInFlightLimit
	}
	q.delay.s, q.flight.s = &q.s, &q.s
	if in := cfg.Faults; in != nil {
		q.fUnavailable, q.fDelay, q.fReorder = in.Site(faults.BrokerUnavailable), in.Site(faults.BrokerDelay), in.Site(faults.BrokerReorder)
		q.fDuplicate, q.fAckLost = in.Site(faults.BrokerDuplicate), in.Site(faults.BrokerAckLost)
	}
	if cfg.FIFO {
		q.groups = map[string]*group{}
		q.dedup = map[string]dedupHit{}
	}
	if err := w.Add(q.where, q); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if d := cfg.DeadLetter; d != nil && len(d.sources) < 1<<16-1 {
		d.sources = append(d.sources, q)
	}
	return q, nil
}

// Phase returns sim.PhaseBroker: a queue runs its timers before producers
// and consumers act in a tick.
func (q *Queue) Phase() sim.Phase { return sim.PhaseBroker }

// Name returns the queue's name.
func (q *Queue) Name() string { return q.cfg.Name }

// Where returns the queue's name in the trace, "queue:"+Name.
func (q *Queue) Where() string { return q.where }

// Consumer returns the name of the logical consumer the queue routes its
// messages to (Config.Consumer, default Name): the name to give the
// checkers.
func (q *Queue) Consumer() string { return q.consumer }

// Env returns the environment of the world the queue belongs to.
func (q *Queue) Env() *sim.Env { return q.env }

// Config returns the queue's configuration with defaults filled in.
func (q *Queue) Config() Config {
	c := q.cfg
	c.VisibilityTimeout = q.vt
	c.MaxInFlight = q.limit
	return c
}

// Len returns the number of resident message copies (visible, in flight
// and delayed).
func (q *Queue) Len() int {
	if q == nil {
		return 0
	}
	return q.live
}

// Metrics returns a snapshot of the gauges and counters. It is O(1)
// amortised.
func (q *Queue) Metrics() Metrics {
	if q.made() != nil {
		return Metrics{}
	}
	m := q.m
	m.Visible, m.InFlight, m.Delayed = q.nVisible, q.nInFlight, q.nDelayed
	if q.cfg.DeadLetter != nil {
		m.DLQDepth = q.cfg.DeadLetter.live
	}
	q.trimAll()
	if q.all.len() > 0 {
		m.OldestAge = q.env.Now() - q.s.at(q.all.front().slot()).entered
		if m.OldestAge < 0 {
			m.OldestAge = 0
		}
	}
	return m
}

// Step runs the queue's timers at tick now: delayed and held messages whose
// delay ran out become visible, in-flight messages whose visibility timeout
// ran out become visible again (traced as visibility_expired; their next
// receive counts one more), retention deletes messages whose enqueue time
// is Retention ticks old, and the FIFO deduplication window forgets IDs
// accepted DedupWindow ticks ago. It is the queue's sim.Actor method for
// the broker phase; its cost is O(log n) per message it moves.
func (q *Queue) Step(now sim.Tick) {
	if q.made() != nil {
		return
	}
	for q.delay.len() > 0 && q.delay.peekDue() <= now {
		slot := q.delay.pop()
		e := q.s.at(slot)
		q.nDelayed--
		q.unnack(e)
		if !q.cfg.FIFO {
			q.enqueueNew(slot)
			continue
		}
		// Already in its group: it becomes visible where it stands.
		held := e.state == stHeld
		q.s.setState(slot, e, stReady)
		q.nVisible++
		if g := q.groups[e.msg.Key]; g != nil {
			if held {
				g.busy--
			}
			q.settle(g)
		}
	}
	for q.flight.len() > 0 && q.flight.peekDue() <= now {
		slot := q.flight.pop()
		e := q.s.at(slot)
		q.nInFlight--
		q.m.VisibilityExpired++
		if q.tracing() {
			var ev sim.Event
			q.event(&ev, sim.KindVisibilityExpired, e, q.actorName(e))
			q.env.Trace.EmitRef(&ev)
		}
		q.returnReady(slot)
	}
	if r := q.cfg.Retention; r > 0 {
		// Copies that entered with their own enqueue time are in entry
		// order, so the ring's front is the oldest of them; the others
		// (standard dead letters) are in the aged heap.
		for {
			q.trimAll()
			if q.all.len() == 0 {
				break
			}
			slot := q.all.front().slot()
			if q.s.sentAt(q.s.at(slot))+r > now {
				break
			}
			q.expire(slot)
		}
		for len(q.old) > 0 {
			top := &q.old[0]
			if !q.isLive(top.r) {
				q.old.pop()
				continue
			}
			if top.at+r > now {
				break
			}
			slot := top.r.slot()
			q.old.pop()
			q.expire(slot)
		}
	}
	for q.dedupOrder.len() > 0 && q.dedupOrder.front().exp <= now {
		d := q.dedupOrder.popFront()
		if q.dedup[d.id].exp == d.exp {
			delete(q.dedup, d.id)
		}
	}
}

// expire deletes the copy in slot by retention, traced as expired.
func (q *Queue) expire(slot uint32) {
	e := q.s.at(slot)
	q.m.Expired++
	if q.tracing() {
		var ev sim.Event
		q.event(&ev, sim.KindExpired, e, "")
		ev.Cause = sim.CauseRetention
		ev.Detail = q.detail("retention ", int64(q.cfg.Retention))
		q.env.Trace.EmitRef(&ev)
	}
	q.remove(slot)
}

// Publish sends m with no per-message delay (the queue's Delay applies);
// it makes a Queue a sim.Publisher.
func (q *Queue) Publish(m sim.Message) error { return q.send(&m, 0) }

// Send accepts m; it becomes visible after delay ticks, or after the
// queue's Delay when delay is 0. A message without an ID gets a fresh one.
// The send is traced as sent, naming the queue's logical consumer (the
// ledger expects the message there), the message's type and its Origin.
//
// A FIFO queue refuses a positive delay (SQS FIFO queues have only the
// queue-level delay): Send returns an error wrapping ErrInvalidArgument,
// traces the refusal as rejected, and the message was not accepted. On a
// FIFO queue with a dedup window, a send whose deduplication ID
// (DedupHeader, else the body's SHA-256 with ContentBasedDedup, else the
// message ID) was accepted fewer than DedupWindow ticks before is dropped,
// traced as deduplicated with Origin the message it repeats, and reported
// as success. A FIFO message joins its group when it is sent, delayed or
// not, so no delay (the queue's or broker.delay's) lets a later message of
// its group overtake it.
//
// While the broker is unavailable Send returns an error wrapping
// ErrUnavailable (and so sim.ErrUnavailable) and ErrConnection, and the
// message was not accepted.
func (q *Queue) Send(m sim.Message, delay sim.Tick) error { return q.send(&m, delay) }

// send is Send of *m, which it may change (a fresh ID): Send and Publish
// hand it their own copy, so the message is copied once per call, not
// once more from one to the other.
func (q *Queue) send(m *sim.Message, delay sim.Tick) error {
	if err := q.made(); err != nil {
		return err
	}
	if delay < 0 || delay > MaxDuration {
		return fmt.Errorf("%w: %s: delay %d is outside [0, %d]", ErrInvalidArgument, q.where, delay, MaxDuration)
	}
	if q.cfg.FIFO && delay > 0 {
		err := fmt.Errorf("%w: %s: a FIFO queue takes no per-message delay (got %d); set the queue's Delay", ErrInvalidArgument, q.where, delay)
		q.reject(m.ID, m.Headers.Source, err)
		return err
	}
	if delay == 0 {
		delay = q.cfg.Delay
	}
	now := q.env.Now()
	if err := q.unavailable("", m.ID, m.Key, m.Headers.Type, ""); err != nil {
		if _, forwarded := m.Headers.Get(sim.HeaderEventID); forwarded {
			// A broker-made copy (a fan-out's forward) is traced refused by
			// the broker forwarding it, with its attempt and what comes
			// next: one line per refusal, not two.
			q.m.Rejected++
			return err
		}
		q.reject(m.ID, "", err)
		return err
	}
	if m.ID == 0 {
		m.ID = q.env.IDs.Next()
		if m.Created == 0 {
			m.Created = now
		}
	}
	if q.cfg.FIFO && q.cfg.DedupWindow > 0 {
		id := q.dedupID(&m.Headers, m.Body, m.ID)
		if hit, seen := q.dedup[id]; seen && hit.exp > now {
			q.m.Deduplicated++
			q.deduplicated(m, hit.msg, id)
			return nil
		}
		exp := now + q.cfg.DedupWindow
		q.dedup[id] = dedupHit{exp: exp, msg: m.ID}
		q.dedupOrder.pushBack(dedupRec{id, exp})
	}
	if q.fDelay.Armed() {
		if f := q.fDelay.Check(&faults.Context{Where: q.where, Key: m.Key, Type: m.Headers.Type, Msg: m.ID}); f != nil {
			extra := sim.Tick(f.Param)
			if extra <= 0 {
				extra = 1
			}
			delay = min(delay+extra, MaxDuration)
		}
	}
	q.accept(m, delay)
	return nil
}

// dedupID returns m's deduplication ID: its DedupHeader, else the hex
// SHA-256 of its body when the queue dedups by content, else its ID.
func (q *Queue) dedupID(h *sim.Headers, body []byte, msg sim.ID) string {
	if id, ok := h.Get(DedupHeader); ok {
		return id
	}
	if q.cfg.ContentBasedDedup {
		sum := sha256.Sum256(body)
		return hex.EncodeToString(sum[:])
	}
	return msg.String()
}

// deduplicated traces that the dedup window dropped a send of m, a repeat
// of the message first accepted as first with deduplication ID id.
func (q *Queue) deduplicated(m *sim.Message, first sim.ID, id string) {
	tr := q.env.Trace
	if !tr.Enabled() {
		tr.Skip()
		return
	}
	ev := sim.Event{Tick: q.env.Now(), Kind: sim.KindDeduplicated, Where: q.where, Actor: m.Headers.Source, Msg: m.ID, Key: m.Key,
		Type: m.Headers.Type, Corr: m.Headers.CorrelationID}
	if first != m.ID {
		ev.Origin = first // a different message with the same deduplication ID: the ledger absorbs it into first
	}
	if tr.Detailed() {
		ev.Detail = "dedup id " + id
	}
	tr.EmitRef(&ev)
}

// accept enqueues m after the checks of Send, traced as sent.
func (q *Queue) accept(m *sim.Message, delay sim.Tick) {
	now := q.env.Now()
	q.m.Sent++
	var st stored.Message
	st.Set(m, q.hdrs.Share(m))
	slot := q.add(&st, now, now)
	e := q.s.at(slot)
	if tr := q.env.Trace; tr.Booking() && tr.BookSent(now, e.msg.ID, q.s.origin(e), q.where, e.msg.Key, e.msg.Headers().Type, q.consumer) {
		// Only the ledger listens: booked without building the event.
	} else if q.tracing() {
		// A fresh copy has no receives yet. eventAt, unlike event, is
		// inlined, so the event is filled in straight in this frame.
		var ev sim.Event
		q.eventAt(&ev, sim.KindSent, e, e.msg.Headers().Source, 0)
		ev.Consumer = q.consumer
		ev.Origin = q.s.origin(e)
		ev.Type = e.msg.Headers().Type
		q.env.Trace.EmitRef(&ev)
	}
	if delay > 0 {
		// The copy waits while the copies sent around it leave: its body,
		// kept apart, does not hold their arena chunk.
		e.msg.Apart(&q.s.bodies)
		q.s.setState(slot, e, stDelayed)
		q.delay.push(slot, now+delay)
		q.nDelayed++
		if q.cfg.FIFO {
			q.join(slot) // its place in the group is taken now, in send order
		}
		if q.tracing() {
			var ev sim.Event
			q.event(&ev, sim.KindDelayed, e, "")
			ev.Detail = q.detail("until t=", int64(now+delay))
			q.env.Trace.EmitRef(&ev)
		}
		return
	}
	q.enqueueNew(slot)
}

// add takes a slot for a new resident copy of m, entered at tick now with
// enqueue time sentAt (now, or earlier for a standard dead letter).
func (q *Queue) add(m *stored.Message, sentAt, now sim.Tick) uint32 {
	slot := q.s.alloc()
	e := q.s.at(slot)
	q.s.hold(e, m, sentAt, now)
	e.flags.set(fDup, false)
	q.live++
	r := q.s.ref(slot)
	// Compact before r goes in: its slot is not live until the caller
	// sets its state, so a filter would drop it.
	if q.all.len() >= q.allNext {
		q.compactAll()
	}
	q.all.pushBack(r)
	if sentAt < now && q.cfg.Retention > 0 {
		// Pruned before r goes in, for the same reason as all.
		if len(q.old) >= 2*q.live+64 {
			q.old.keep(q.isLive)
		}
		q.old.push(aged{at: sentAt, id: m.ID, r: r})
	}
	return slot
}

func (q *Queue) isLive(r ref) bool { return q.s.live(r &^ fresh) }

func (q *Queue) isReady(r ref) bool {
	if r.slot() >= q.s.n {
		return false
	}
	e := q.s.at(r.slot())
	return *q.s.tag(r.slot()) == r.life() && e.state == stReady
}

// trimAll drops deleted copies from the front of the all ring.
func (q *Queue) trimAll() {
	for q.all.len() > 0 && !q.isLive(q.all.front()) {
		r := q.all.popFront()
		if q.allPos > 0 {
			q.allPos--
		} else if r&fresh != 0 {
			q.dropped++ // the first run still counts it
		}
	}
}

// keepInAll reports whether compacting the all ring keeps r: a live copy,
// or a fresh ref, which a run of ready counts. The compaction keeps the
// order, so allPos is reset to 0.
func (q *Queue) keepInAll(r ref) bool { return r&fresh != 0 || q.isLive(r) }

// compactAll drops the refs of deleted copies from the all ring, keeping
// its order, so that the ring holds about the live copies and not twice
// them: a copy retried or held at its front keeps trimAll from dropping
// the deleted copies behind it. It first drops them from the part before
// allPos, where the copies taken from the ready order lie and so most of
// the deleted ones; it holds no fresh ref, so no run of ready counts any
// of them. Only when more than a quarter of the live copies, plus 64, of
// deleted refs lie beyond allPos (refs of copies that entered
// invisible, say) does it filter the whole ring. It costs O(allPos), or
// O(len) for the whole ring, and add calls it once a quarter of the live
// copies has entered since the last call, so a copy costs O(1)
// amortised for it.
func (q *Queue) compactAll() {
	if p := q.allPos; p > 0 {
		// Pack the prefix's live refs at its end, in order, then drop
		// the front up to them.
		w := p
		for i := p - 1; i >= 0; i-- {
			if r := q.all.at(i); q.isLive(r) {
				w--
				*q.all.slot(w) = r
			}
		}
		for range w {
			q.all.popFront()
		}
		q.allPos = p - w
	}
	if q.all.len()-q.live > q.live/4+64 {
		q.all.filter(q.keepInAll)
		q.allPos = 0
	}
	q.allNext = q.all.len() + q.live/4 + 64
}

// pushReady puts the visible copy e in slot at the back of a standard
// queue's delivery order. A copy whose ref is the last of all and whose
// enqueue time is when it entered (so retention deletes it only from
// all's front, never from its middle) goes in as a fresh ref, counted by
// the run at ready's back. O(1) amortised; it compacts ready when more
// than half of the order it stands for is stale.
func (q *Queue) pushReady(slot uint32, e *entry) {
	r := q.s.ref(slot)
	switch {
	case q.all.len() == 0 || *q.all.back() != r || q.s.sentAt(e) != e.entered:
		q.ready.pushBack(r)
	default:
		if q.ready.len() == 0 || !q.growRun() {
			q.ready.pushBack(run(1))
		}
		*q.all.back() = r | fresh
		// A copy that returns may lie before allPos, which a scan passed
		// when it was taken.
		q.allPos = min(q.allPos, q.all.len()-1)
	}
	q.readyLen++
	if q.readyLen > 2*q.nVisible+64 {
		q.compactReady()
	}
}

// growRun adds one to the run at ready's back, if it is a run that has
// room, and reports whether it did.
func (q *Queue) growRun() bool {
	b := q.ready.back()
	n, ok := b.isRun()
	if !ok || n == math.MaxUint32 {
		return false
	}
	*b = run(n + 1)
	return true
}

// popReady takes the first ref of a standard queue's delivery order off
// it, and returns it, or 0 for a ref that trimAll dropped. ready is not
// empty. O(1) amortised: the scan for the next fresh ref never passes an
// index of all twice between compactions of all.
func (q *Queue) popReady() ref {
	q.readyLen--
	f := q.ready.slot(0)
	n, ok := f.isRun()
	if !ok {
		return q.ready.popFront()
	}
	if n > 1 {
		*f = run(n - 1)
	} else {
		q.ready.popFront()
	}
	if q.dropped > 0 {
		q.dropped--
		return 0
	}
	for ; q.allPos < q.all.len(); q.allPos++ {
		if p := q.all.slot(q.allPos); *p&fresh != 0 {
			*p &^= fresh
			q.allPos++
			return *p
		}
	}
	return 0 // not reached: the runs count the fresh refs
}

// compactReady drops the stale refs from a standard queue's delivery
// order: the refs of copies deleted or no longer visible, and the dropped
// refs the first runs count; adjacent runs merge. O(len(ready)).
func (q *Queue) compactReady() {
	w, total := 0, 0
	for i := 0; i < q.ready.len(); i++ {
		r := q.ready.at(i)
		n, ok := r.isRun()
		if !ok {
			if q.isReady(r) {
				*q.ready.slot(w) = r
				w++
				total++
			}
			continue
		}
		d := min(uint32(min(q.dropped, math.MaxUint32)), n)
		n -= d
		q.dropped -= int(d)
		if n == 0 {
			continue
		}
		total += int(n)
		if w > 0 {
			if m, ok := q.ready.at(w - 1).isRun(); ok && uint64(m)+uint64(n) <= math.MaxUint32 {
				*q.ready.slot(w - 1) = run(m + n)
				continue
			}
		}
		*q.ready.slot(w) = run(n)
		w++
	}
	q.ready.truncate(w)
	q.readyLen = total
}

// join puts the copy in slot at the back of its FIFO group, making the
// group if needed.
func (q *Queue) join(slot uint32) *group {
	e := q.s.at(slot)
	g := q.groups[e.msg.Key]
	if g == nil {
		g = &group{key: e.msg.Key}
		q.groups[e.msg.Key] = g
	}
	g.refs.pushBack(q.s.ref(slot))
	if g.refs.len() > 2*q.live+64 {
		g.refs.filter(q.isLive)
	}
	return g
}

// enqueueNew makes a copy that was never visible, and is in no group yet,
// visible: at the back of the ready ring, or at the back of its FIFO
// group.
func (q *Queue) enqueueNew(slot uint32) {
	e := q.s.at(slot)
	q.s.setState(slot, e, stReady)
	q.nVisible++
	if !q.cfg.FIFO {
		q.pushReady(slot, e)
		return
	}
	q.settle(q.join(slot))
}

// returnReady makes an in-flight copy visible again. On a standard queue
// it goes to the back of the ready ring; on a FIFO queue it keeps its
// place in its group, which is one message less busy.
func (q *Queue) returnReady(slot uint32) {
	e := q.s.at(slot)
	q.s.setState(slot, e, stReady)
	q.nVisible++
	if !q.cfg.FIFO {
		q.pushReady(slot, e)
		return
	}
	if g := q.groups[e.msg.Key]; g != nil {
		g.busy--
		q.settle(g)
	}
}

// settle drops deleted refs from the front of g, forgets g when it is
// empty, and queues it for receiving when nothing of it is in flight or
// held and its head is visible.
func (q *Queue) settle(g *group) {
	for g.refs.len() > 0 && !q.isLive(g.refs.front()) {
		g.refs.popFront()
	}
	if g.refs.len() == 0 {
		if q.groups[g.key] == g {
			delete(q.groups, g.key)
		}
		g.busy = 0
		return
	}
	if g.busy == 0 && !g.queued && q.s.at(g.refs.front().slot()).state == stReady {
		g.queued = true
		q.readyGroups.pushBack(g)
	}
}

// nextReady takes the next visible copy off the ready structures. On a FIFO
// queue the copy is the head of a group that was taken off readyGroups; the
// caller must receive or remove the head, or call settle.
func (q *Queue) nextReady() (uint32, bool) {
	if !q.cfg.FIFO {
		for q.ready.len() > 0 {
			if r := q.popReady(); r != 0 && q.isReady(r) {
				return r.slot(), true
			}
		}
		return 0, false
	}
	for q.readyGroups.len() > 0 {
		g := q.readyGroups.popFront()
		g.queued = false
		if q.groups[g.key] != g || g.busy > 0 {
			continue
		}
		for g.refs.len() > 0 && !q.isLive(g.refs.front()) {
			g.refs.popFront()
		}
		if g.refs.len() == 0 {
			delete(q.groups, g.key)
			continue
		}
		slot := g.refs.front().slot()
		if q.s.at(slot).state != stReady {
			continue
		}
		return slot, true
	}
	return 0, false
}

// putBack undoes nextReady for a copy that stays visible.
func (q *Queue) putBack(slot uint32, front bool) {
	e := q.s.at(slot)
	if !q.cfg.FIFO {
		if front {
			q.ready.pushFront(q.s.ref(slot))
		} else {
			q.ready.pushBack(q.s.ref(slot))
		}
		q.readyLen++
		return
	}
	if g := q.groups[e.msg.Key]; g != nil {
		q.settle(g)
	}
}

// remove deletes a resident copy from every structure and frees its slot.
func (q *Queue) remove(slot uint32) {
	e := q.s.at(slot)
	st := e.state
	switch st {
	case stReady:
		q.nVisible-- // the delivery order keeps a stale ref until it is popped
	case stInFlight:
		q.flight.remove(e.hidx)
		q.nInFlight--
	case stDelayed, stHeld:
		q.delay.remove(e.hidx)
		q.nDelayed--
		q.unnack(e)
	}
	var g *group
	if q.cfg.FIFO {
		if g = q.groups[e.msg.Key]; g != nil {
			if st == stInFlight || st == stHeld {
				g.busy--
			}
			if g.refs.len() > 0 && g.refs.front() == q.s.ref(slot) {
				g.refs.popFront()
			}
		}
	}
	q.s.release(slot)
	q.live--
	if g != nil {
		q.settle(g)
	}
	q.trimAll()
}

// ReceiveOptions are the parameters of one receive call (SQS's
// ReceiveMessage).
type ReceiveOptions struct {
	// Max is the most messages the call returns; 0 means 1. A queue with
	// Config.Strict refuses more than MaxStrictBatch.
	Max int
	// VisibilityTimeout, when positive, is the visibility timeout of the
	// messages this call returns, instead of the queue's (ReceiveMessage's
	// VisibilityTimeout). A later receive uses the queue's again. It must
	// lie in [0, MaxDuration].
	VisibilityTimeout sim.Tick
}

// Receive returns up to max visible messages for the worker called
// consumer (the actor in the trace), each with a fresh receipt; they stay
// invisible for the visibility timeout. A copy whose receive count would
// exceed MaxReceiveCount moves to the dead-letter queue instead. See
// AppendReceiveWith.
func (q *Queue) Receive(consumer string, max int) ([]Delivery, error) {
	return q.AppendReceive(nil, consumer, max)
}

// ReceiveWith is Receive with the call's options.
func (q *Queue) ReceiveWith(consumer string, o ReceiveOptions) ([]Delivery, error) {
	return q.AppendReceiveWith(nil, consumer, o)
}

// AppendReceive is AppendReceiveWith with Max max, which must be positive.
func (q *Queue) AppendReceive(dst []Delivery, consumer string, max int) ([]Delivery, error) {
	if err := q.made(); err != nil {
		return dst, err
	}
	if max <= 0 {
		return dst, fmt.Errorf("%w: %s: receive batch %d must be positive", ErrInvalidArgument, q.where, max)
	}
	return q.receive(dst, consumer, ReceiveOptions{Max: max}, false, true)
}

// AppendReceiveWith is ReceiveWith appending to dst, so a caller can reuse
// one slice and receive without allocating. It is one short poll: it
// never waits (Consumer models long polling). Each delivery is traced as
// received (first receive) or redelivered (receive count > 1), by the
// worker for the queue's logical consumer. A FIFO receive takes, from each
// group it can receive from, the run of visible messages at the group's
// head in send order, as many as Max allows, before it moves on to the
// next group. Faults: broker.unavailable fails the call with
// ErrUnavailable; broker.reorder (standard queues) hands out the message
// behind one first; broker.duplicate leaves a second copy of a delivered
// message visible, which another receive returns with its own receipt,
// except on a FIFO queue whose dedup window still holds the message's
// deduplication ID: there the copy is suppressed, traced as deduplicated.
// At the in-flight cap the call is refused (see Config.MaxInFlight).
func (q *Queue) AppendReceiveWith(dst []Delivery, consumer string, o ReceiveOptions) ([]Delivery, error) {
	if err := q.made(); err != nil {
		return dst, err
	}
	return q.receive(dst, consumer, o, false, true)
}

// receive is one attempt of a receive call: long says the call is a long
// poll (the in-flight cap then refuses without an error), last that the
// call ends with this attempt (an empty result counts as an empty
// receive).
func (q *Queue) receive(dst []Delivery, consumer string, o ReceiveOptions, long, last bool) ([]Delivery, error) {
	max := o.Max
	if max == 0 {
		max = 1
	}
	switch {
	case max < 0:
		return dst, fmt.Errorf("%w: %s: receive batch %d must be positive", ErrInvalidArgument, q.where, max)
	case q.cfg.Strict && max > MaxStrictBatch:
		return dst, fmt.Errorf("%w: %s: receive batch %d is above %d (SQS-strict queue)", ErrInvalidArgument, q.where, max, MaxStrictBatch)
	case o.VisibilityTimeout < 0 || o.VisibilityTimeout > MaxDuration:
		return dst, fmt.Errorf("%w: %s: visibility timeout %d is outside [0, %d]", ErrInvalidArgument, q.where, o.VisibilityTimeout, MaxDuration)
	}
	if err := q.down("receive", 0, "", "", consumer); err != nil {
		return dst, err
	}
	vt := q.vt
	if o.VisibilityTimeout > 0 {
		vt = o.VisibilityTimeout
	}
	start := len(dst)
	now := q.env.Now()
	ai := q.actor(consumer)
	reorder := !q.cfg.FIFO && q.fReorder.Armed()
	dup := q.fDuplicate.Armed()
	capped := false
	for n := 0; n < max; {
		if q.atLimit() {
			capped = true
			break
		}
		slot, ok := q.nextReady()
		if !ok {
			break
		}
		if q.cfg.FIFO {
			// The run of visible messages at the group's head, in send
			// order, up to what the call can still take.
			g := q.groups[q.s.at(slot).msg.Key]
			q.run = q.run[:0]
			for i := 0; i < g.refs.len() && len(q.run) < max-n; i++ {
				r := g.refs.at(i)
				if !q.isLive(r) {
					continue
				}
				if q.s.at(r.slot()).state != stReady {
					break // a delayed message holds back the ones behind it
				}
				q.run = append(q.run, r)
			}
			took := false
			for _, r := range q.run {
				if q.atLimit() {
					capped = true
					break
				}
				if !q.isReady(r) {
					break
				}
				if dst, ok = q.take(r.slot(), g, consumer, ai, vt, now, dup, dst); ok {
					n++
					took = true
				}
			}
			if !took {
				q.settle(g) // nothing taken (the cap, or all dead-lettered): the group stays receivable
			}
			if capped {
				break
			}
			continue
		}
		e := q.s.at(slot)
		if reorder && q.readyLen > 0 {
			if q.fReorder.Check(&faults.Context{Where: q.where, Consumer: consumer, Key: e.msg.Key, Type: e.msg.Headers().Type, Msg: e.msg.ID}) != nil {
				if next, ok := q.nextReady(); ok {
					q.putBack(slot, true)
					slot = next
				}
			}
		}
		if dst, ok = q.take(slot, nil, consumer, ai, vt, now, dup, dst); ok {
			n++
		}
	}
	got := len(dst) - start
	if capped {
		q.m.OverLimit++
		err := fmt.Errorf("%w: %s: %d messages in flight, the cap", ErrOverLimit, q.where, q.nInFlight+q.nNacked)
		q.reject(0, consumer, err)
		if got == 0 && !long && !q.cfg.FIFO {
			return dst, err
		}
	}
	if got == 0 && last {
		q.m.EmptyReceives++
	}
	return dst, nil
}

// take delivers the visible copy in slot (taken off the ready structures;
// g is its FIFO group, nil on a standard queue) to the worker consumer
// (actor index ai) with visibility timeout vt, appending the delivery to
// dst, and returns dst and whether it did: a copy whose receive count
// would exceed MaxReceiveCount moves to the dead-letter queue instead.
// dst goes nowhere but the result, so a caller may pass a buffer on its
// stack (see instance.step).
func (q *Queue) take(slot uint32, g *group, consumer string, ai int32, vt, now sim.Tick, dup bool, dst []Delivery) ([]Delivery, bool) {
	e := q.s.at(slot)
	// Found once: the receive count, the event and the delivery read it.
	// A copy received once has one anyway; giving it before a dead letter
	// changes nothing, as a record with the defaults says what none does.
	c := q.s.mkCold(e)
	if q.cfg.DeadLetter != nil && q.cfg.MaxReceiveCount > 0 && int(c.receives) >= q.cfg.MaxReceiveCount {
		q.deadLetter(slot, consumer, "receive count would exceed "+strconv.Itoa(q.cfg.MaxReceiveCount))
		return dst, false
	}
	c.receives++
	c.actor = ai
	rc := c.receives
	e.gen++
	q.s.setState(slot, e, stInFlight)
	q.nVisible--
	q.nInFlight++
	q.flight.push(slot, now+vt)
	if g != nil {
		g.busy++
	}
	q.m.Receives++
	kind := sim.KindReceived
	if rc > 1 {
		kind = sim.KindRedelivered
		q.m.Redeliveries++
	}
	if tr := q.env.Trace; tr.Booking() && tr.BookDelivery(now, e.msg.ID, q.consumer, &q.lc) {
		// Only the ledger listens: booked without building the event.
	} else if q.tracing() {
		var ev sim.Event
		q.eventAt(&ev, kind, e, consumer, rc)
		ev.Consumer = q.consumer
		q.env.Trace.EmitRef(&ev)
	}
	// Filled in place: a composite literal would be built in a
	// temporary and copied. A slot the buffer already has (a reused
	// receive buffer) is not zeroed first: every field is overwritten, and
	// zeroing a slot of the heap costs the collector's write barriers on
	// each of its pointers once more.
	if n := len(dst); n < cap(dst) {
		dst = dst[:n+1]
	} else {
		dst = append(dst, Delivery{})
	}
	d := &dst[len(dst)-1]
	q.s.fillCold(&d.Message, e, c)
	d.Receipt = Receipt{q: q, id: e.msg.ID, slot: slot, gen: e.gen}
	d.ReceiveCount = int(rc)
	// A FIFO copy is duplicated at most once, on its first receive: past
	// the dedup window a duplicate stands for a sender's late retry, which
	// happens once per send, not once per redelivery.
	// A broker duplicate is never itself duplicated: broker.duplicate
	// stands for the occasional extra copy of at-least-once delivery, and
	// duplicating duplicates would grow without end.
	if dup && !e.flags.has(fDup) && (g == nil || rc == 1) {
		if f := q.fDuplicate.Check(&faults.Context{Where: q.where, Consumer: consumer, Key: e.msg.Key, Type: e.msg.Headers().Type, Msg: e.msg.ID}); f != nil {
			q.duplicate(slot, consumer, f.Rule, now)
		}
	}
	return dst, true
}

// duplicate makes the broker copy broker.duplicate (rule) asked for of the
// copy in slot, traced as duplicated: the ledger keeps the message pending
// until both copies are settled. Unless the FIFO dedup window still holds
// its deduplication ID: then the copy is suppressed, traced as
// deduplicated (SQS FIFO's exactly-once processing).
func (q *Queue) duplicate(slot uint32, consumer, rule string, now sim.Tick) {
	e := q.s.at(slot)
	if q.cfg.FIFO && q.cfg.DedupWindow > 0 {
		id := q.dedupID(e.msg.Headers(), q.s.body(e), e.msg.ID)
		if hit, seen := q.dedup[id]; seen && hit.exp > now {
			q.m.Deduplicated++
			if q.tracing() {
				var ev sim.Event
				q.event(&ev, sim.KindDeduplicated, e, consumer)
				ev.Type = e.msg.Headers().Type
				if q.env.Trace.Detailed() {
					ev.Detail = "broker duplicate suppressed, dedup id " + id
				}
				q.env.Trace.EmitRef(&ev)
			}
			return
		}
	}
	m := q.s.stored(e)
	c := q.add(&m, now, now)
	ce := q.s.at(c)
	ce.flags.set(fDup, true)
	q.m.Duplicated++
	if q.tracing() {
		var ev sim.Event
		q.event(&ev, sim.KindDuplicated, ce, "")
		ev.Consumer = q.consumer
		ev.Rule = rule
		q.env.Trace.EmitRef(&ev)
	}
	q.enqueueNew(c)
}

// deadLetter moves the copy in slot (in flight, or visible and taken off
// the ready structures) to the DLQ, traced as dead_lettered at this queue.
// The copy keeps its ID in the DLQ and is not traced as sent there: it
// stays parked for this queue's consumer. A standard dead letter keeps its
// enqueue time, so the DLQ's retention counts from its first send; a FIFO
// one is enqueued anew (as SQS does).
func (q *Queue) deadLetter(slot uint32, actor, reason string) {
	e := q.s.at(slot)
	d := q.cfg.DeadLetter
	q.m.DeadLettered++
	if q.tracing() {
		var ev sim.Event
		q.event(&ev, sim.KindDeadLettered, e, actor)
		if q.env.Trace.Detailed() {
			ev.Detail = "to " + d.where + ": " + reason
		}
		q.env.Trace.EmitRef(&ev)
	}
	now := q.env.Now()
	sentAt := q.s.sentAt(e)
	if d.cfg.FIFO {
		sentAt = now
	}
	m := q.s.stored(e)
	c := d.add(&m, sentAt, now)
	ce := d.s.at(c) // a new copy: received 0 times
	for i, s := range d.sources {
		if s == q {
			ce.src = uint16(i + 1)
			break
		}
	}
	d.enqueueNew(c)
	if r := d.cfg.Retention; r > 0 && sentAt+r <= now {
		// Already past the dead-letter queue's retention: its Step may
		// have run this tick, so expire the copy now, not a tick late.
		d.expire(c)
	}
	q.remove(slot)
}

// lookup resolves a receipt for op, tracing and returning an error when it
// is unknown or stale.
func (q *Queue) lookup(r Receipt, op string) (uint32, *entry, error) {
	var err error
	var e *entry
	switch {
	case r.q != q || r.gen == 0 || r.slot >= q.s.n:
		err = fmt.Errorf("%w: %s: %s with %s", ErrUnknownReceipt, q.where, op, r)
	default:
		e = q.s.at(r.slot)
		switch {
		case r.gen > e.gen:
			err = fmt.Errorf("%w: %s: %s with %s", ErrUnknownReceipt, q.where, op, r)
		case r.gen < e.gen || e.state == stFree:
			why := "message deleted since"
			if e.state != stFree && e.msg.ID == r.id {
				why = "message received again since (receive count " + strconv.Itoa(int(q.s.receives(e))) + ")"
			}
			err = fmt.Errorf("%w: %s: %s with %s: %s", ErrStaleReceipt, q.where, op, r, why)
		default:
			return r.slot, e, nil
		}
	}
	q.reject(r.id, "", err)
	return 0, nil, err
}

func (q *Queue) reject(id sim.ID, actor string, err error) {
	q.m.Rejected++
	q.env.Emit(sim.Event{Kind: sim.KindRejected, Where: q.where, Msg: id, Actor: actor, Detail: err.Error()})
}

// downFor consults broker.unavailable for a call with receipt r, naming
// the worker that holds the delivery when r still names one.
func (q *Queue) downFor(op string, r Receipt) error {
	if !q.fUnavailable.Consulted() {
		return nil
	}
	var key, typ, actor string
	if r.q == q && r.gen != 0 && r.slot < q.s.n {
		if e := q.s.at(r.slot); e.state != stFree && e.gen == r.gen {
			key, typ, actor = e.msg.Key, e.msg.Headers().Type, q.actorName(e)
		}
	}
	return q.down(op, r.id, key, typ, actor)
}

// Ack deletes the message copy named by r. It succeeds while the copy has
// not been received again since r was issued, even when its visibility
// timeout ran out meanwhile (as in SQS); otherwise it returns an error
// wrapping ErrStaleReceipt (or ErrUnknownReceipt) and traces the rejection.
// The ack is traced as acked for the queue's logical consumer.
//
// Faults: while the broker is unavailable the ack fails with an error
// wrapping ErrUnavailable, traced as rejected, and the message stays in
// flight (it comes back after its visibility timeout). broker.ack_lost
// loses a valid ack on its way: Ack reports success, the fault is traced,
// and the broker keeps the message in flight, so it is delivered again
// after its visibility timeout.
func (q *Queue) Ack(r Receipt) error {
	if err := q.made(); err != nil {
		return err
	}
	if err := q.downFor("ack", r); err != nil {
		return err
	}
	slot, e, err := q.lookup(r, "ack")
	if err != nil {
		return err
	}
	if q.fAckLost.Armed() {
		if q.fAckLost.Check(&faults.Context{Where: q.where, Consumer: q.actorName(e), Key: e.msg.Key, Type: e.msg.Headers().Type, Msg: e.msg.ID}) != nil {
			q.m.AcksLost++
			return nil
		}
	}
	q.m.Acks++
	if tr := q.env.Trace; tr.Booking() && tr.BookAcked(q.env.Now(), e.msg.ID, q.consumer, &q.lc) {
		// Only the ledger listens: booked without building the event.
	} else if q.tracing() {
		var ev sim.Event
		q.eventAt(&ev, sim.KindAcked, e, q.actorName(e), q.s.receives(e)) // inlined, as in accept
		ev.Consumer = q.consumer
		q.env.Trace.EmitRef(&ev)
	}
	q.remove(slot)
	return nil
}

// Nack returns the in-flight copy named by r: visible after delay ticks
// (0: now), as SQS's ChangeMessageVisibility. On a FIFO queue the copy
// keeps its place in its group, and the group stays busy during the delay.
// The next receive counts one more. While the broker is unavailable it
// fails with an error wrapping ErrUnavailable, traced as rejected, and the
// copy stays in flight.
func (q *Queue) Nack(r Receipt, delay sim.Tick) error {
	if err := q.made(); err != nil {
		return err
	}
	if delay < 0 || delay > MaxDuration {
		return fmt.Errorf("%w: %s: nack delay %d is outside [0, %d]", ErrInvalidArgument, q.where, delay, MaxDuration)
	}
	if err := q.downFor("nack", r); err != nil {
		return err
	}
	slot, e, err := q.inFlight(r, "nack")
	if err != nil {
		return err
	}
	q.m.Nacks++
	q.flight.remove(e.hidx)
	q.nInFlight--
	if q.tracing() {
		var ev sim.Event
		q.event(&ev, sim.KindNacked, e, q.actorName(e))
		ev.Detail = q.detail("delay ", int64(delay))
		q.env.Trace.EmitRef(&ev)
	}
	if delay == 0 {
		q.returnReady(slot)
		return nil
	}
	if q.cfg.FIFO {
		q.s.setState(slot, e, stHeld)
	} else {
		q.s.setState(slot, e, stDelayed)
	}
	q.delay.push(slot, q.env.Now()+delay)
	q.nDelayed++
	e.flags.set(fNacked, true)
	q.nNacked++
	return nil
}

// atLimit reports whether the in-flight cap is reached. A copy nacked with
// a delay counts until it is visible again: in SQS a message is in flight
// until it is deleted or visible again.
func (q *Queue) atLimit() bool { return q.limit > 0 && q.nInFlight+q.nNacked >= q.limit }

// unnack ends the nack of e, which leaves the delay heap.
func (q *Queue) unnack(e *entry) {
	if e.flags.has(fNacked) {
		e.flags.set(fNacked, false)
		q.nNacked--
	}
}

func (q *Queue) inFlight(r Receipt, op string) (uint32, *entry, error) {
	slot, e, err := q.lookup(r, op)
	if err != nil {
		return 0, nil, err
	}
	if e.state != stInFlight {
		err = fmt.Errorf("%w: %s: %s with %s: visibility timeout already ran out", ErrNotInFlight, q.where, op, r)
		q.reject(r.id, "", err)
		return 0, nil, err
	}
	return slot, e, nil
}

// ChangeVisibility sets the visibility timeout of the in-flight copy named
// by r to timeout ticks counted from now (0: visible now). The change
// applies to this delivery only; the next receive uses the queue's
// timeout again. While the broker is unavailable it fails with an error
// wrapping ErrUnavailable, traced as rejected, and nothing changes.
func (q *Queue) ChangeVisibility(r Receipt, timeout sim.Tick) error {
	if err := q.made(); err != nil {
		return err
	}
	if timeout < 0 || timeout > MaxDuration {
		return fmt.Errorf("%w: %s: visibility timeout %d is outside [0, %d]", ErrInvalidArgument, q.where, timeout, MaxDuration)
	}
	if err := q.downFor("change visibility", r); err != nil {
		return err
	}
	slot, e, err := q.inFlight(r, "change visibility")
	if err != nil {
		return err
	}
	if q.tracing() {
		var ev sim.Event
		q.event(&ev, sim.KindVisibility, e, q.actorName(e))
		ev.Detail = q.detail("timeout ", int64(timeout))
		q.env.Trace.EmitRef(&ev)
	}
	if timeout == 0 {
		q.flight.remove(e.hidx)
		q.nInFlight--
		q.returnReady(slot)
		return nil
	}
	q.flight.fix(e.hidx, q.env.Now()+timeout)
	return nil
}

// DeadLetter moves the copy named by r to the dead-letter queue at once,
// with a reason: consumers use it for permanent and poison failures
// (classification) or when their own attempt limit is reached. It is
// traced as dead_lettered; the message is not acked, and the ledger holds
// it parked. Without a dead-letter queue it returns ErrNoDeadLetter and the
// message stays where it is. While the broker is unavailable it fails with
// an error wrapping ErrUnavailable, traced as rejected, and the message
// stays in flight.
func (q *Queue) DeadLetter(r Receipt, reason string) error {
	if err := q.made(); err != nil {
		return err
	}
	if err := q.downFor("dead-letter", r); err != nil {
		return err
	}
	slot, e, err := q.lookup(r, "dead-letter")
	if err != nil {
		return err
	}
	if q.cfg.DeadLetter == nil {
		return fmt.Errorf("%w: %s", ErrNoDeadLetter, q.where)
	}
	q.deadLetter(slot, q.actorName(e), reason)
	return nil
}

// Purge deletes every resident copy, in any state, and returns how many it
// deleted. Each is traced as purged; the ledger books a message whose
// effect was never applied as lost with sim.CausePurge (purging a
// dead-letter queue loses the parked messages). It costs O(resident).
func (q *Queue) Purge() int {
	if q.made() != nil {
		return 0
	}
	n := 0
	for q.all.len() > 0 {
		r := q.all.popFront()
		if !q.isLive(r) {
			continue
		}
		e := q.s.at(r.slot())
		q.m.Purged++
		if q.tracing() {
			var ev sim.Event
			q.event(&ev, sim.KindPurged, e, "")
			ev.Cause = sim.CausePurge
			q.env.Trace.EmitRef(&ev)
		}
		q.s.release(r.slot())
		n++
	}
	q.all.reset()
	q.old = nil
	q.ready.reset()
	q.readyLen, q.allPos, q.dropped, q.allNext = 0, 0, 0, 0
	q.delay.reset()
	q.flight.reset()
	q.readyGroups.reset()
	if q.cfg.FIFO {
		q.groups = map[string]*group{}
	}
	q.live, q.nVisible, q.nInFlight, q.nDelayed, q.nNacked = 0, 0, 0, 0, 0
	return n
}

// Redrive moves up to max visible messages of this queue, used as a
// dead-letter queue, back to the queues they were dead-lettered from, and
// returns how many it moved. Each goes back as a new message: a new ID,
// Origin the dead letter, no receive count, a "redriven-from" header
// naming the dead letter, and the dead letter's Created tick (the event
// it carries was created once: a business key's time bucket stays). The target traces it as redriven (Msg the new
// message, Origin the dead letter, Consumer the target's logical
// consumer), which is the event that creates the new copy: the ledger
// judges both copies as one origin. A message sent to this queue directly
// has no source and stays. On a FIFO queue such a message holds back only
// its own group: the groups behind it are redriven. Redrives bypass broker
// faults: they are an operator's action.
func (q *Queue) Redrive(max int) (int, error) { return q.redrive(nil, max) }

// RedriveTo is Redrive with every message going to dst.
func (q *Queue) RedriveTo(dst *Queue, max int) (int, error) {
	if err := dst.made(); err != nil {
		return 0, fmt.Errorf("%w: redrive target: %w", ErrInvalidArgument, err)
	}
	return q.redrive(dst, max)
}

func (q *Queue) redrive(dst *Queue, max int) (int, error) {
	if err := q.made(); err != nil {
		return 0, err
	}
	if max <= 0 {
		return 0, fmt.Errorf("%w: %s: redrive count %d must be positive", ErrInvalidArgument, q.where, max)
	}
	if dst != nil && dst.env != q.env {
		return 0, fmt.Errorf("%w: %s: redrive target %s belongs to another world", ErrInvalidArgument, q.where, dst.where)
	}
	var skipped []uint32
	n := 0
	for n < max {
		slot, ok := q.nextReady()
		if !ok {
			break
		}
		e := q.s.at(slot)
		target := dst
		if target == nil {
			if e.src == 0 {
				// It stays, and on a FIFO queue so does its group (order
				// forbids skipping its head): nextReady does not offer the
				// group again before putBack.
				skipped = append(skipped, slot)
				continue
			}
			target = q.sources[e.src-1]
		}
		orig := e.msg
		nm := q.env.NewMessage(orig.Key, q.s.body(e), orig.Headers().With("redriven-from", orig.ID.String()))
		nm.Origin = orig.ID
		nm.Created = q.s.created(e)
		q.m.Redriven++
		q.remove(slot)
		target.redriven(&nm, q)
		n++
	}
	for _, s := range skipped {
		q.putBack(s, false)
	}
	return n, nil
}

// redriven enqueues m, a new message redriven from the dead-letter queue
// dlq, traced as redriven: the event that creates the copy here.
func (q *Queue) redriven(m *sim.Message, dlq *Queue) {
	q.m.Sent++
	now := q.env.Now()
	var st stored.Message
	st.Set(m, q.hdrs.Share(m))
	slot := q.add(&st, now, now)
	e := q.s.at(slot)
	if q.tracing() {
		var ev sim.Event
		q.event(&ev, sim.KindRedriven, e, "")
		ev.Consumer = q.consumer
		ev.Origin = m.Origin
		ev.Type = m.Headers.Type
		if q.env.Trace.Detailed() {
			ev.Detail = "from " + dlq.where
		}
		q.env.Trace.EmitRef(&ev)
	}
	q.enqueueNew(slot)
}

// down consults broker.unavailable for the call op ("" for a send) and
// returns the error to report, traced as rejected.
func (q *Queue) down(op string, id sim.ID, key, typ, consumer string) error {
	err := q.unavailable(op, id, key, typ, consumer)
	if err != nil {
		q.reject(id, consumer, err)
	}
	return err
}

// unavailable is down without tracing the refusal.
func (q *Queue) unavailable(op string, id sim.ID, key, typ, consumer string) error {
	if !q.fUnavailable.Consulted() {
		return nil // no rule can make the broker unavailable: skip filling in the context
	}
	f := q.fUnavailable.Check(&faults.Context{Where: q.where, Consumer: consumer, Key: key, Type: typ, Msg: id})
	if f == nil {
		return nil
	}
	why := f.Error
	if why == "" {
		why = "rule " + f.Rule
	}
	where := q.where
	if op != "" {
		where += ": " + op
	}
	return fmt.Errorf("%w: %s (%s): %w", ErrUnavailable, where, why, ErrConnection)
}

// maxActorScan is the most actors the queue finds by scanning its list;
// past it, an index is made. A queue has a few workers, whose names a
// scan of a few strings finds sooner than a hash.
const maxActorScan = 8

// actor returns the index of the worker called name in q.actors, adding
// it when it is new; -1 for "". O(1) for the last one seen, O(actors)
// up to maxActorScan of them, a map lookup past that.
func (q *Queue) actor(name string) int32 {
	if name == "" {
		return -1
	}
	if n := len(q.actors); n > 0 && q.actors[n-1] == name {
		return int32(n - 1)
	}
	if q.actorIdx != nil {
		if i, ok := q.actorIdx[name]; ok {
			return i
		}
	} else {
		for i, a := range q.actors {
			if a == name {
				return int32(i)
			}
		}
	}
	i := int32(len(q.actors))
	q.actors = append(q.actors, name)
	switch {
	case q.actorIdx != nil:
		q.actorIdx[name] = i
	case len(q.actors) > maxActorScan:
		q.actorIdx = make(map[string]int32, 2*len(q.actors))
		for j, a := range q.actors {
			q.actorIdx[a] = int32(j)
		}
	}
	return i
}

func (q *Queue) actorName(e *entry) string {
	a := q.s.actor(e)
	if a < 0 {
		return ""
	}
	return q.actors[a]
}

// tracing reports whether a sink listens to the trace. When none does, it
// numbers the event the caller would have emitted, as emitting it would,
// and the caller builds nothing.
func (q *Queue) tracing() bool {
	tr := q.env.Trace
	if !tr.Enabled() {
		tr.Skip()
		return false
	}
	return true
}

// event sets *ev, a zero Event, to the queue's own Event of kind k about
// copy e and actor, for the caller to complete and hand to the trace with
// EmitRef after tracing said a sink listens. The caller declares ev in its
// own frame and event fills it in place: an Event is 224 bytes, and one
// returned by value would be built in a temporary and copied (the loads of
// the copy stall on the stores just made). event itself is too big to be
// inlined, so its string stores go through ev and pay the collector's
// write barriers while a collection marks; eventAt, which is inlined, does
// not. The trace never retains the event, and ev does not escape.
func (q *Queue) event(ev *sim.Event, k sim.Kind, e *entry, actor string) {
	q.eventAt(ev, k, e, actor, q.s.receives(e))
}

// eventAt is event for a copy received attempt times.
func (q *Queue) eventAt(ev *sim.Event, k sim.Kind, e *entry, actor string, attempt int32) {
	ev.Tick, ev.Kind, ev.Where, ev.Actor = q.env.Now(), k, q.where, actor
	ev.Msg, ev.Key, ev.Corr, ev.Attempt = e.msg.ID, e.msg.Key, e.msg.Headers().CorrelationID, int(attempt)
}

// made reports a nil or zero Queue as an error instead of a panic.
func (q *Queue) made() error {
	if q == nil || q.env == nil {
		return ErrNotMade
	}
	return nil
}

// detail formats prefix+n only when a sink shows Detail text.
func (q *Queue) detail(prefix string, n int64) string {
	if !q.env.Trace.Detailed() {
		return ""
	}
	return prefix + strconv.FormatInt(n, 10)
}

// Status is where a resident message copy stands.
type Status uint8

// The statuses of a resident copy.
const (
	StatusVisible  Status = iota // waiting to be received (in a FIFO queue, maybe behind its group's in-flight message)
	StatusInFlight               // received, visibility timeout running
	StatusDelayed                // not yet visible (delayed send, nack with delay, FIFO hold)
)

var statusNames = [...]string{"visible", "in-flight", "delayed"}

// String returns "visible", "in-flight" or "delayed".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Resident describes one resident message copy, for players and panels.
type Resident struct {
	Msg          sim.ID
	Key          string
	Status       Status
	ReceiveCount int
	Entered      sim.Tick // when the copy entered the queue (its age counts from here)
	Enqueued     sim.Tick // its enqueue time, which retention counts from: Entered, or earlier for a standard dead letter
	Due          sim.Tick // in flight: visibility deadline; delayed: visible at; else 0
	Consumer     string   // the last receiver, if any
}

// AppendResidents appends up to max resident copies to dst, oldest first,
// and returns the extended slice. It costs O(max) plus any deleted entries
// it skips, so a panel can show the head of a long backlog cheaply.
func (q *Queue) AppendResidents(dst []Resident, max int) []Resident {
	if q.made() != nil {
		return dst
	}
	for i := 0; i < q.all.len() && max > 0; i++ {
		r := q.all.at(i)
		if !q.isLive(r) {
			continue
		}
		e := q.s.at(r.slot())
		x := Resident{Msg: e.msg.ID, Key: e.msg.Key, ReceiveCount: int(q.s.receives(e)), Entered: e.entered, Enqueued: q.s.sentAt(e), Consumer: q.actorName(e)}
		switch e.state {
		case stInFlight:
			x.Status, x.Due = StatusInFlight, q.flight.item(e.hidx).due
		case stDelayed, stHeld:
			x.Status, x.Due = StatusDelayed, q.delay.item(e.hidx).due
		}
		dst = append(dst, x)
		max--
	}
	return dst
}
