package queue

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// AckMode says when a consumer acks.
type AckMode uint8

// The ack modes.
const (
	// AckAfterProcess acks after the handler succeeded: at-least-once. A
	// crash before the ack redelivers the message (a duplicate effect for a
	// handler that is not idempotent).
	AckAfterProcess AckMode = iota
	// AckBeforeProcess acks on receipt, before processing: at-most-once. A
	// crash or a failure after the ack loses the message
	// (sim.CauseAckBeforeProcess).
	AckBeforeProcess
)

var ackModeNames = [...]string{"after", "before"}

// String returns the mode's name: "after" (AckAfterProcess) or "before"
// (AckBeforeProcess), as scenario files write it.
func (m AckMode) String() string {
	if int(m) < len(ackModeNames) {
		return ackModeNames[m]
	}
	return "unknown"
}

// MarshalText returns the mode's name as String does; a mode that is
// neither is an error wrapping ErrInvalidConfig.
func (m AckMode) MarshalText() ([]byte, error) {
	if int(m) >= len(ackModeNames) {
		return nil, fmt.Errorf("%w: unknown ack mode %d", ErrInvalidConfig, m)
	}
	return []byte(ackModeNames[m]), nil
}

// UnmarshalText sets m from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (m *AckMode) UnmarshalText(text []byte) error {
	for i, n := range ackModeNames {
		if n == string(text) {
			*m = AckMode(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown ack mode %q", ErrInvalidConfig, text)
}

// MaxInstances caps ConsumerConfig.Instances.
const MaxInstances = 1 << 12

// ShortPoll, as ConsumerConfig.WaitTime, makes a consumer short-poll even
// on a queue with a ReceiveWaitTime (an SQS request's WaitTimeSeconds of
// 0 overrides the queue's).
const ShortPoll sim.Tick = -1

// ConsumerConfig configures a Consumer: a worker pool of Instances
// competing instances that share one handler, one retry policy and one
// fault injector. Every instance is an instance of the queue's logical
// consumer (Config.Consumer); the checkers judge them together under that
// name.
type ConsumerConfig struct {
	// Queue is the queue to consume; required, made with New on the world
	// the consumer is made for.
	Queue *Queue
	// Name names the worker pool; required. With one instance the instance
	// is called Name; with n > 1 they are Name#1 .. Name#n. Instance names
	// are the actors in the trace and what fault rules match as consumer.
	// The World knows the pool as "consumer:"+Name.
	Name string
	// Instances is the number of competing instances; 0 means 1.
	Instances int
	// Start is the first tick the consumer works at; before it, it neither
	// receives nor processes.
	Start sim.Tick
	// Batch is the most messages one receive of an instance takes; 0
	// means 1. A queue with Config.Strict takes at most MaxStrictBatch.
	Batch int
	// VisibilityTimeout, when positive, is the visibility timeout of every
	// message the pool receives, instead of the queue's (the
	// VisibilityTimeout of SQS's ReceiveMessage). It must lie in
	// [0, MaxDuration].
	VisibilityTimeout sim.Tick
	// WaitTime is how long one receive call waits for a message (long
	// polling, SQS's WaitTimeSeconds): a call opened at tick t is answered
	// at the first tick in [t, t+WaitTime] at which a message is visible,
	// or ends empty at t+WaitTime, and the next call opens at the next
	// tick. 0 means the queue's ReceiveWaitTime; ShortPoll means short
	// polling (one attempt per call). It must lie in [ShortPoll,
	// MaxDuration]. Each call costs one attempt per tick it stays open.
	WaitTime sim.Tick
	// Handler processes deliveries and records their effects with
	// d.Apply; nil means sim.Effect(""), which applies one effect per
	// delivery. A handler that implements sim.Timed takes that long; one
	// with a Validate() error method (a *sim.Script) is validated.
	Handler sim.Handler
	// AckMode says whether to ack after (default) or before processing.
	AckMode AckMode
	// Retry handles transient failures; the zero value is RetryNone.
	Retry RetryPolicy
	// MaxAttempts, when positive, dead-letters a message whose transient
	// failure happened on receive number MaxAttempts or later.
	MaxAttempts int
	// Faults is consulted at the consumer crash points and, through
	// Injector.Handler, at the handler fault points; nil means the queue's
	// injector.
	Faults *faults.Injector
	// RestartDelay is how many ticks a crashed instance stays down; 0
	// means 1.
	RestartDelay sim.Tick
	// Forward, if set, publishes an outgoing message for every message
	// handled (see Forward).
	Forward *Forward
}

// Validate reports a configuration error, wrapping ErrInvalidConfig.
func (c ConsumerConfig) Validate() error {
	switch {
	case c.Queue == nil || c.Queue.env == nil:
		return fmt.Errorf("%w: consumer %q needs a queue made with New", ErrInvalidConfig, c.Name)
	case c.Name == "":
		return fmt.Errorf("%w: a consumer needs a name", ErrInvalidConfig)
	case c.Instances < 0 || c.Instances > MaxInstances:
		return fmt.Errorf("%w: consumer %q: instances %d is outside [0, %d]", ErrInvalidConfig, c.Name, c.Instances, MaxInstances)
	case c.Start < 0:
		return fmt.Errorf("%w: consumer %q: start %d is negative", ErrInvalidConfig, c.Name, c.Start)
	case c.Batch < 0:
		return fmt.Errorf("%w: consumer %q: batch %d is negative", ErrInvalidConfig, c.Name, c.Batch)
	case c.Queue.cfg.Strict && c.Batch > MaxStrictBatch:
		return fmt.Errorf("%w: consumer %q: batch %d is above %d (queue %q is SQS-strict)", ErrInvalidConfig, c.Name, c.Batch, MaxStrictBatch, c.Queue.cfg.Name)
	case c.VisibilityTimeout < 0 || c.VisibilityTimeout > MaxDuration:
		return fmt.Errorf("%w: consumer %q: visibility timeout %d is outside [0, %d]", ErrInvalidConfig, c.Name, c.VisibilityTimeout, MaxDuration)
	case c.WaitTime < ShortPoll || c.WaitTime > MaxDuration:
		return fmt.Errorf("%w: consumer %q: wait time %d is outside [%d, %d]", ErrInvalidConfig, c.Name, c.WaitTime, ShortPoll, MaxDuration)
	case c.AckMode > AckBeforeProcess:
		return fmt.Errorf("%w: consumer %q: unknown ack mode %d", ErrInvalidConfig, c.Name, c.AckMode)
	case c.MaxAttempts < 0:
		return fmt.Errorf("%w: consumer %q: max attempts %d is negative", ErrInvalidConfig, c.Name, c.MaxAttempts)
	case c.RestartDelay < 0 || c.RestartDelay > MaxDuration:
		return fmt.Errorf("%w: consumer %q: restart delay %d is outside [0, %d]", ErrInvalidConfig, c.Name, c.RestartDelay, MaxDuration)
	}
	if err := c.Retry.Validate(); err != nil {
		return fmt.Errorf("consumer %q: %w", c.Name, err)
	}
	if err := c.Forward.Validate(); err != nil {
		return fmt.Errorf("consumer %q: %w", c.Name, err)
	}
	if err := validateHandler(c.Handler); err != nil {
		return fmt.Errorf("%w: consumer %q: %w", ErrInvalidConfig, c.Name, err)
	}
	return nil
}

// validateHandler calls h's Validate method when it has one.
func validateHandler(h sim.Handler) error {
	if v, ok := h.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// ConsumerStats counts what a consumer did.
type ConsumerStats struct {
	Received     int // deliveries taken
	Processed    int // effects the handler recorded (d.Apply)
	Skipped      int // deliveries the handler absorbed as duplicates (d.Skip)
	Failed       int // handler failures
	Retried      int // nacks sent by the retry policy
	DeadLettered int // messages the consumer sent to the dead-letter queue
	Crashes      int
	StaleAcks    int // acks (or nacks, dead-letter moves) the queue rejected as stale
	AckFailed    int // acks, nacks and dead-letter moves that failed because the broker was unavailable: the message comes back
	Released     int // FIFO: messages handed back unprocessed (nack 0) because an earlier one of their group in the batch failed
	Lost         int // messages lost by acking before processing
	Polls        int // receive calls opened (a long poll is one call however many ticks it waits)
	EmptyPolls   int // receive calls that ended with nothing
	// Forwarded counts outgoing messages published (Forward), Resent
	// those of them published for a skipped duplicate, ForwardFailed the
	// publishes the target refused.
	Forwarded, Resent, ForwardFailed int
}

// add adds the counts of o to s.
func (s *ConsumerStats) add(o *ConsumerStats) {
	s.Received += o.Received
	s.Processed += o.Processed
	s.Skipped += o.Skipped
	s.Failed += o.Failed
	s.Retried += o.Retried
	s.DeadLettered += o.DeadLettered
	s.Crashes += o.Crashes
	s.StaleAcks += o.StaleAcks
	s.AckFailed += o.AckFailed
	s.Released += o.Released
	s.Lost += o.Lost
	s.Polls += o.Polls
	s.EmptyPolls += o.EmptyPolls
	s.Forwarded += o.Forwarded
	s.Resent += o.Resent
	s.ForwardFailed += o.ForwardFailed
}

// work is one delivery an instance holds.
type work struct {
	d      Delivery
	h      sim.Handler // the user's handler when processing started
	doneAt sim.Tick
	acked  bool
}

// dispatch is the handler the fault wrapper calls: the user's handler a
// delivery started with. One fault wrapper serves every delivery, so its
// state (consecutive transient failures per message) survives SetHandler.
type dispatch struct {
	h sim.Handler
}

// Handle calls the current handler.
func (x *dispatch) Handle(d *sim.Delivery) error { return x.h.Handle(d) }

// Duration asks the current handler.
func (x *dispatch) Duration(d *sim.Delivery) sim.Tick { return sim.DurationOf(x.h, d) }

// Consumer is a pool of competing consumers of a Queue, a sim.Component of
// the consumer phase. One NewConsumer call makes Instances instances; each
// tick (from Start, unless paused) every instance, in order, first
// completes the work whose time came (in the order it started), then, when
// it holds nothing, receives a batch (a receive call may stay open for
// WaitTime ticks: long polling), acks all of it at once
// (AckBeforeProcess), and starts each message: the crash point
// consumer.crash_before_process, then the handler's processing time
// (sim.DurationOf, including handler.slow). On a standard queue every
// message of the batch starts at once; on a FIFO queue they start one
// after the other, each when the one before it is done, so a group's
// messages are processed in order. A message whose processing takes time
// stays in flight meanwhile, and the handler is called when the time is
// up, so a visibility timeout shorter than the processing lets another
// instance receive the message concurrently.
//
// The handler is the user's, wrapped by the injector's Handler, so the
// handler fault points (poison, permanent, transient) are consulted before
// it runs. It records effects with d.Apply and absorbed duplicates with
// d.Skip; the consumer never reports an effect itself. After a success the
// consumer consults consumer.crash_after_effect, then acks
// (AckAfterProcess). A failure is traced failed and classified with
// sim.Classify: permanent and poison go to the dead-letter queue at once;
// transient ones are dead-lettered once MaxAttempts is reached and
// otherwise retried by the retry policy (a nack with delay, or nothing for
// RetryNone: the visibility timeout brings the message back), except a
// rate limit (sim.RateLimited), which is nacked with its Retry-After. A
// policy with SameForAll retries every class by the policy alone. Without a
// dead-letter queue a message to dead-letter stays unacked and comes back.
// On a FIFO queue, once a message of a group fails (or its ack before
// processing fails), the messages of that group behind it in the batch are
// not processed: they are handed back at once (a nack with no delay,
// counted as Released), so the group's order holds.
//
// An ack, nack or dead-letter move the broker refuses because it is
// unavailable leaves the message in flight; the queue traces the refusal
// (rejected), the consumer counts it (AckFailed) and carries on, and the
// message comes back after its visibility timeout, to be processed again:
// the classic cause of a redelivery. With AckBeforeProcess a message whose
// ack failed is not processed (it will come back), so at-most-once holds.
// A lost ack (broker.ack_lost) looks like a success to the consumer; the
// message comes back all the same.
//
// A crash drops everything the instance holds without acking; messages it
// had acked but not processed are lost (traced lost with
// sim.CauseAckBeforeProcess). Cost per message is O(log n) in the queue
// plus the handler.
type Consumer struct {
	// cfg.Handler is the handler deliveries start with from now on:
	// SetHandler replaces it. With no fields of their own for it, the
	// world's environment (q.env) and the injector (which only
	// NewConsumer needs), a Consumer and its allocation header fit the
	// 640-byte size class (see TestStructSizes).
	cfg    ConsumerConfig
	q      *Queue
	disp   dispatch
	h      sim.Handler // the fault wrapper around disp
	inst   []instance  // one allocation for all of them
	paused bool
	timed  bool         // cfg.Handler is sim.Timed
	reset  bool         // cfg.Handler's Duration may change the delivery: it is timed and not a *sim.Script, whose Duration only reads the key
	d      sim.Delivery // the delivery handed to the handler, reused

	crashBefore, crashAfter faults.Site // the crash points, resolved once
}

// instance is one competing instance of a Consumer.
type instance struct {
	c         *Consumer
	name      string
	stream    *sim.Stream // retry jitter; nil when the retry policy has none
	held      []work
	due       []work
	batch     []work
	wait      []work   // FIFO: received, not started yet; wait[wh:] start in order, each when nothing is held
	wh        int      // the first waiting item in wait
	failed    []string // FIFO: the groups of the current batch with a failed message
	buf       []Delivery
	downUntil sim.Tick
	pollOpen  bool     // a long-polling receive call is open
	pollUntil sim.Tick // the last tick of the open call
	stats     ConsumerStats
	// slow is handler.slow, resolved once: while it is not armed, a
	// delivery of a handler that is not sim.Timed takes no time, and
	// start does not ask the fault wrapper. It lives here, not in the
	// Consumer, which would leave its size class for it.
	slow faults.Site
}

// NewConsumer returns a consumer pool of cfg.Instances instances bound to
// the world w and registers it with w under "consumer:"+Name, in the
// consumer phase (Phase). The queue must belong to w.
func NewConsumer(w *sim.World, cfg ConsumerConfig) (*Consumer, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: consumer %q needs a world", ErrInvalidConfig, cfg.Name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Queue.env != w.Env() {
		return nil, fmt.Errorf("%w: consumer %q: queue %q belongs to another world", ErrInvalidConfig, cfg.Name, cfg.Queue.cfg.Name)
	}
	if cfg.Instances == 0 {
		cfg.Instances = 1
	}
	if cfg.Batch == 0 {
		cfg.Batch = 1
	}
	if cfg.Handler == nil {
		cfg.Handler = sim.Effect("")
	}
	if cfg.RestartDelay == 0 {
		cfg.RestartDelay = 1
	}
	in := cfg.Faults
	if in == nil {
		in = cfg.Queue.cfg.Faults
	}
	c := &Consumer{cfg: cfg, q: cfg.Queue}
	c.setTimed(cfg.Handler)
	c.h = in.Handler(&c.disp)
	c.crashBefore, c.crashAfter = in.Site(faults.ConsumerCrashBeforeProcess), in.Site(faults.ConsumerCrashAfterEffect)
	c.inst = make([]instance, cfg.Instances)
	for k := 1; k <= cfg.Instances; k++ {
		name := cfg.Name
		if cfg.Instances > 1 {
			name += "#" + strconv.Itoa(k)
		}
		x := &c.inst[k-1]
		x.c, x.name, x.slow = c, name, in.Site(faults.HandlerSlow)
		if cfg.Retry.Jitter > 0 {
			// The only draws an instance makes; a stream depends on
			// nothing but the seed and its name, so an instance that
			// never jitters does without one.
			x.stream = c.q.env.Stream(c.q.where + "/consumer/" + name)
		}
	}
	if err := w.Add("consumer:"+cfg.Name, c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return c, nil
}

// Phase returns sim.PhaseConsumer.
func (c *Consumer) Phase() sim.Phase { return sim.PhaseConsumer }

// Weight is the number of instances: each step of the pool steps every
// one of them, so it counts that many steps against sim.Budget.Steps.
func (c *Consumer) Weight() int { return len(c.inst) }

// Name returns the pool's name (ConsumerConfig.Name).
func (c *Consumer) Name() string { return c.cfg.Name }

// Instances returns the names of the instances, in the order they step.
func (c *Consumer) Instances() []string {
	out := make([]string, len(c.inst))
	for i := range c.inst {
		out[i] = c.inst[i].name
	}
	return out
}

// Queue returns the queue the consumer consumes.
func (c *Consumer) Queue() *Queue { return c.q }

// Busy returns how many messages the instances hold in progress or
// waiting to start.
func (c *Consumer) Busy() int {
	n := 0
	for i := range c.inst {
		x := &c.inst[i]
		n += len(x.held) + len(x.wait) - x.wh
	}
	return n
}

// Stats returns the counters summed over the instances.
func (c *Consumer) Stats() ConsumerStats {
	var s ConsumerStats
	for i := range c.inst {
		s.add(&c.inst[i].stats)
	}
	return s
}

// Handler returns the handler deliveries start with (without the fault
// wrapper).
func (c *Consumer) Handler() sim.Handler { return c.cfg.Handler }

// SetHandler replaces the handler, e.g. after "fixing the bug" in a
// lesson. Deliveries that start processing after the call use h;
// deliveries already in progress (a slow handler) finish with the handler
// they started with, as a deployed fix reaches only new work. The handler
// fault points keep their state across the change. A nil handler, or one
// whose Validate fails, is refused with ErrInvalidConfig and the old
// handler stays.
func (c *Consumer) SetHandler(h sim.Handler) error {
	if h == nil {
		return fmt.Errorf("%w: consumer %q: nil handler", ErrInvalidConfig, c.cfg.Name)
	}
	if err := validateHandler(h); err != nil {
		return fmt.Errorf("%w: consumer %q: %w", ErrInvalidConfig, c.cfg.Name, err)
	}
	c.cfg.Handler = h
	c.setTimed(h)
	return nil
}

// setTimed notes whether handler h takes time (sim.Timed), and whether
// asking it how long may change the delivery, so that start resets the
// delivery again before the handler runs. brokerlab's own scripted
// handler (*sim.Script) only reads the key; any other Duration is the
// user's code.
func (c *Consumer) setTimed(h sim.Handler) {
	_, c.timed = h.(sim.Timed)
	_, script := h.(*sim.Script)
	c.reset = c.timed && !script
}

// Pause takes the consumer offline (a "disconnect"): from the next step
// on, no instance receives, processes, acks or retries until Resume. Work
// in progress stays with its instance and completes after Resume; the
// messages it holds unacked come back to the queue when their visibility
// timeout runs out, as for any stalled consumer. It is idempotent.
func (c *Consumer) Pause() { c.paused = true }

// Resume brings a paused consumer back online (a "connect"). It is
// idempotent.
func (c *Consumer) Resume() { c.paused = false }

// Paused reports whether the consumer is paused.
func (c *Consumer) Paused() bool { return c.paused }

// Step runs every instance at tick now, in order, unless the consumer is
// paused or its start tick has not come.
func (c *Consumer) Step(now sim.Tick) {
	if c == nil || c.q == nil || c.paused || now < c.cfg.Start {
		return
	}
	for i := range c.inst {
		c.inst[i].step(now)
	}
}

// Crash makes every instance crash now, as a timeline action or an
// operator would: everything they hold is dropped without an ack (unacked
// messages come back after their visibility timeout; ones acked before
// processing are lost) and they stay down for RestartDelay ticks. It
// costs O(held messages).
func (c *Consumer) Crash(reason string) {
	if c == nil || c.q == nil {
		return
	}
	now := c.q.env.Now()
	for i := range c.inst {
		x := &c.inst[i]
		x.stats.Crashes++
		c.q.env.Emit(sim.Event{Kind: sim.KindCrashed, Where: c.q.where, Actor: x.name, Detail: reason})
		x.dropHeld()
		x.downUntil = now + c.cfg.RestartDelay
	}
}

// step runs the instance at tick now.
func (x *instance) step(now sim.Tick) {
	if now < x.downUntil {
		return
	}
	c := x.c
	keep := x.held[:0]
	x.due = x.due[:0]
	for _, w := range x.held {
		if w.doneAt > now {
			keep = append(keep, w)
		} else {
			x.due = append(x.due, w)
		}
	}
	clear(x.held[len(keep):])
	x.held = keep
	for i := range x.due {
		w := &x.due[i]
		if x.finish(&w.d, w.h, w.acked, nil, now, x.due[i+1:]) {
			clear(x.due)
			return
		}
	}
	clear(x.due)
	if x.wh < len(x.wait) && x.drain(now) {
		return
	}
	if len(x.held) > 0 || x.wh < len(x.wait) {
		return
	}
	fifo := c.q.cfg.FIFO
	if !fifo && c.cfg.AckMode == AckAfterProcess && c.cfg.Batch == 1 {
		// A batch of one, the default, is received into a buffer on the
		// stack and started from there: the delivery is not written to
		// the heap (with the collector's write barriers on its pointers
		// while it marks) before the handler's own copy, and nothing
		// keeps it reachable after.
		var one [1]Delivery
		if buf, ok := x.receive(now, one[:0]); ok {
			x.startEach(buf, now)
		}
		return
	}
	buf, ok := x.receive(now, x.buf[:0])
	x.buf = buf
	if !ok {
		return
	}
	if !fifo && c.cfg.AckMode == AckAfterProcess {
		x.startEach(buf, now)
		return
	}
	x.failed = x.failed[:0]
	x.batch = x.batch[:0]
	for i := range buf {
		d := &buf[i]
		x.stats.Received++
		if fifo && x.groupFailed(d.Message.Key) {
			x.release(d.Receipt)
			continue
		}
		acked := false
		if c.cfg.AckMode == AckBeforeProcess {
			if err := c.q.Ack(d.Receipt); err != nil {
				x.refused(err)
				if fifo {
					x.failGroup(d.Message.Key)
				}
				continue
			}
			acked = true
		}
		// Filled in place: a composite literal would be built in a
		// temporary and copied.
		x.batch = append(x.batch, work{})
		w := &x.batch[len(x.batch)-1]
		w.d = *d
		w.acked = acked
	}
	// x.buf and x.batch are not cleared: the next batch overwrites them, so
	// they keep at most one batch of messages reachable, and clearing them
	// would cost a write of every byte of every delivery once more.
	if fifo {
		x.wait = append(x.wait[:0], x.batch...)
		x.wh = 0
		x.drain(now)
		return
	}
	for i := range x.batch {
		if x.start(&x.batch[i].d, x.batch[i].acked, now, x.batch[i+1:]) {
			break
		}
	}
}

// receive makes one attempt of the instance's receive call at tick now,
// opening a call when none is open, appending what it got to dst, and
// returns dst and whether it got anything. A long-polling call stays open
// until it gets messages, fails, or reaches its last tick. dst goes
// nowhere but the result.
func (x *instance) receive(now sim.Tick, dst []Delivery) ([]Delivery, bool) {
	c := x.c
	wait := c.cfg.WaitTime
	switch {
	case wait == 0:
		wait = c.q.cfg.ReceiveWaitTime
	case wait < 0:
		wait = 0
	}
	if x.pollOpen && now > x.pollUntil {
		// The call ended empty while the instance was paused.
		x.pollOpen = false
		x.stats.EmptyPolls++
		c.q.m.EmptyReceives++
	}
	if !x.pollOpen {
		x.pollOpen = true
		x.pollUntil = now + wait
		x.stats.Polls++
	}
	last := now >= x.pollUntil
	dst, err := c.q.receive(dst, x.name, ReceiveOptions{Max: c.cfg.Batch, VisibilityTimeout: c.cfg.VisibilityTimeout}, wait > 0, last)
	switch {
	case err != nil:
		x.pollOpen = false // the queue traced the refusal; a new call opens next tick
		return dst, false
	case len(dst) > 0:
		x.pollOpen = false
		return dst, true
	case last:
		x.pollOpen = false
		x.stats.EmptyPolls++
	}
	return dst, false
}

// drain starts the waiting FIFO items in order while the instance holds
// nothing in progress; it reports whether the instance crashed. An item
// not acked yet whose group failed earlier in the batch is handed back
// unprocessed.
func (x *instance) drain(now sim.Tick) bool {
	for len(x.held) == 0 && x.wh < len(x.wait) {
		w := x.wait[x.wh]
		x.wait[x.wh] = work{}
		x.wh++
		if x.wh == len(x.wait) {
			x.wait, x.wh = x.wait[:0], 0
		}
		if !w.acked && x.groupFailed(w.d.Message.Key) {
			x.release(w.d.Receipt)
			continue
		}
		if x.start(&w.d, w.acked, now, nil) {
			return true
		}
	}
	return false
}

// groupFailed reports whether a message of group key failed earlier in
// the current FIFO batch.
func (x *instance) groupFailed(key string) bool {
	for _, k := range x.failed {
		if k == key {
			return true
		}
	}
	return false
}

// failGroup records that a message of group key failed in the current
// FIFO batch.
func (x *instance) failGroup(key string) {
	if !x.groupFailed(key) {
		x.failed = append(x.failed, key)
	}
}

// release hands the delivery named by r back unprocessed: a nack with no
// delay.
func (x *instance) release(r Receipt) {
	if err := x.c.q.Nack(r, 0); err != nil {
		x.refused(err)
		return
	}
	x.stats.Released++
}

// refused counts an ack, nack or dead-letter move the queue refused: the
// broker was unavailable, or the receipt was stale.
func (x *instance) refused(err error) {
	if errors.Is(err, ErrUnavailable) {
		x.stats.AckFailed++
	} else {
		x.stats.StaleAcks++
	}
}

// fire consults crash point p for message m; it returns the firing, nil
// when no rule fired. The context is built in this frame, so filling it
// in stores its strings without write barriers.
func (x *instance) fire(p faults.Site, m *sim.Message) *faults.Firing {
	if !p.Armed() {
		return nil
	}
	return p.Check(&faults.Context{Where: x.c.q.where, Consumer: x.name, Key: m.Key, Type: m.Headers.Type, Msg: m.ID})
}

// startEach starts the received deliveries of buf in order, for a
// consumer with nothing to ack first and no group to hold back: each
// message starts straight from its place in buf, which is neither copied
// into a work item nor into the heap first. A crash drops the messages
// not started yet, which acks nothing and loses nothing, as a batch of
// unacked items would. buf does not escape, so it may be a buffer on the
// caller's stack.
func (x *instance) startEach(buf []Delivery, now sim.Tick) {
	x.stats.Received += len(buf)
	for i := range buf {
		if x.start(&buf[i], false, now, nil) {
			break
		}
	}
}

// delivery returns the consumer's Delivery reset for the received
// delivery rd, with the handler h it started with behind the fault
// wrapper.
func (x *instance) delivery(rd *Delivery, h sim.Handler) *sim.Delivery {
	c := x.c
	c.d.ResetFrom(c.q.env, &rd.Message, c.q.where, c.q.consumer, x.name, rd.ReceiveCount)
	c.disp.h = h
	return &c.d
}

// start begins processing the received delivery rd, acked before
// processing when acked; it reports whether the instance crashed. rest
// are the batch's messages not started yet; a crash drops them. rd is
// read where it lies (a receive buffer, a batch or a waiting item) and
// copied only into a work item the instance holds while a timed handler
// runs, so start does not retain it.
func (x *instance) start(rd *Delivery, acked bool, now sim.Tick, rest []work) bool {
	if x.fire(x.c.crashBefore, &rd.Message) != nil {
		x.crash(now, "before processing", rd, acked, rest)
		return true
	}
	c := x.c
	h := c.cfg.Handler
	d := x.delivery(rd, h)
	// The fault wrapper's Duration is the handler's plus handler.slow's:
	// 0, with no draw, for an untimed handler while handler.slow is not
	// armed, so it is asked only when one of them can take time.
	if c.timed || x.slow.Armed() {
		if t := sim.DurationOf(c.h, d); t > 0 {
			// Filled in place: a composite literal would be built in a
			// temporary and copied.
			x.held = append(x.held, work{})
			w := &x.held[len(x.held)-1]
			w.d, w.h, w.doneAt, w.acked = *rd, h, now+min(t, MaxDuration), acked
			return false
		}
		if c.reset {
			d = nil // the user's Duration may have changed the delivery: finish resets it
		}
	}
	return x.finish(rd, h, acked, d, now, rest)
}

// finish calls the handler h (the one processing started with) for the
// received delivery rd, acked before processing when acked, and settles
// the message; it reports whether the instance crashed. d is the
// consumer's delivery already reset for rd and untouched since, or nil to
// reset it here (a reset copies the message, so start, which has just
// reset it to ask the duration of handlers that cannot change it, passes
// it on). rest are the items due at this tick (or the batch's messages)
// not handled yet; a crash drops them. finish does not retain rd.
func (x *instance) finish(rd *Delivery, h sim.Handler, acked bool, d *sim.Delivery, now sim.Tick, rest []work) bool {
	c := x.c
	if d == nil {
		d = x.delivery(rd, h)
	}
	err := c.h.Handle(d)
	if err == nil {
		x.stats.Processed += d.Effects()
		if d.Skipped() {
			x.stats.Skipped++
		}
		if x.fire(c.crashAfter, &rd.Message) != nil {
			x.crash(now, "after effect, before ack", rd, false, rest)
			return true
		}
		x.forward(d)
		if !acked {
			if err := c.q.Ack(rd.Receipt); err != nil {
				x.refused(err) // the message comes back after its visibility timeout
			}
		}
		return false
	}
	x.stats.Failed++
	class := sim.Classify(err)
	x.traceFailed(d, class, err)
	if acked {
		x.lose(rd, true)
		return false
	}
	if c.q.cfg.FIFO {
		x.failGroup(rd.Message.Key)
	}
	if OnFailure(class, rd.ReceiveCount, c.cfg.MaxAttempts, c.cfg.Retry.SameForAll) == SettleRedeliver {
		delay, ok := c.cfg.Retry.Backoff(rd.ReceiveCount, x.stream)
		if after, limited := sim.RetryAfter(err); limited && !c.cfg.Retry.SameForAll {
			delay, ok = after, true
		}
		if ok {
			if err := c.q.Nack(rd.Receipt, delay); err != nil {
				x.refused(err)
			} else {
				x.stats.Retried++
			}
		}
		return false
	}
	if c.cfg.Retry.SameForAll {
		class = sim.ClassTransient // one policy for every class
	}
	reason := class.String() + " failure"
	if class == sim.ClassTransient && c.q.env.Trace.Detailed() {
		reason = strconv.Itoa(rd.ReceiveCount) + " failed attempts"
	}
	switch err := c.q.DeadLetter(rd.Receipt, reason); {
	case err == nil:
		x.stats.DeadLettered++
	case errors.Is(err, ErrNoDeadLetter):
		// Nowhere to put it: it comes back after its visibility timeout.
	default:
		x.refused(err)
	}
	return false
}

// Settlement is what a queue consumer does with a message its handler
// failed: give it back to be received again, or move it to the
// dead-letter queue.
type Settlement uint8

// The settlements of a failed message.
const (
	// SettleRedeliver gives the message back: a consumer nacks it with its
	// retry policy's delay or a rate limit's Retry-After, or leaves it for
	// the visibility timeout to bring back.
	SettleRedeliver Settlement = iota
	// SettleDeadLetter moves the message to the dead-letter queue; a queue
	// without one leaves it to come back after its visibility timeout.
	SettleDeadLetter
)

// OnFailure is the dead-letter-or-redeliver policy of a queue consumer,
// for a handler failure of class (sim.Classify) on receive number
// receiveCount: permanent and poison failures are dead-lettered at once,
// transient ones are redelivered until receive number maxAttempts (0: no
// limit), and sameForAll (RetryPolicy.SameForAll) treats every class as
// transient. Every consumer of a Queue, in this package or an adapter,
// settles failures by it. It is pure and costs O(1).
func OnFailure(class sim.Class, receiveCount, maxAttempts int, sameForAll bool) Settlement {
	if sameForAll {
		class = sim.ClassTransient
	}
	if class == sim.ClassTransient && (maxAttempts == 0 || receiveCount < maxAttempts) {
		return SettleRedeliver
	}
	return SettleDeadLetter
}

// traceFailed traces the handler's failure on delivery d for the logical
// consumer; the detail text is built only when a sink shows it.
func (x *instance) traceFailed(d *sim.Delivery, class sim.Class, err error) {
	c := x.c
	tr := c.q.env.Trace
	if !tr.Enabled() {
		tr.Skip()
		return
	}
	ev := d.Event(sim.KindFailed)
	if tr.Detailed() {
		ev.Detail = err.Error()
		if class == sim.ClassTransient && !errors.Is(err, sim.ErrTransient) {
			ev.Detail = "transient: " + ev.Detail // an unclassified error counts as transient
		}
	}
	tr.EmitRef(&ev)
}

// lose traces that w was acked before processing and will never be
// processed: a loss with sim.CauseAckBeforeProcess for the logical
// consumer.
func (x *instance) lose(d *Delivery, acked bool) {
	if !acked {
		return
	}
	c := x.c
	m := &d.Message
	x.stats.Lost++
	ev := sim.Lost(c.q.where, x.name, c.q.consumer, m, sim.CauseAckBeforeProcess)
	ev.Attempt = d.ReceiveCount
	c.q.env.Emit(ev)
}

// dropHeld drops the work the instance holds, in progress or waiting, and
// any open receive call; the messages it acked before processing are
// lost.
func (x *instance) dropHeld() {
	for i := range x.held {
		x.lose(&x.held[i].d, x.held[i].acked)
	}
	clear(x.held)
	x.held = x.held[:0]
	for i := x.wh; i < len(x.wait); i++ {
		x.lose(&x.wait[i].d, x.wait[i].acked)
	}
	clear(x.wait)
	x.wait, x.wh = x.wait[:0], 0
	x.pollOpen = false
}

// crash drops everything the instance holds, plus cur (the message being
// started or finished, lost when loseCur: it was acked before processing
// and its handler never ran) and rest (items not handled yet); nothing is
// acked. Dropped messages that were acked before processing are lost.
func (x *instance) crash(now sim.Tick, why string, cur *Delivery, loseCur bool, rest []work) {
	c := x.c
	x.stats.Crashes++
	m := &cur.Message
	c.q.env.Emit(sim.Event{Kind: sim.KindCrashed, Where: c.q.where, Actor: x.name, Msg: m.ID, Key: m.Key, Detail: why})
	x.lose(cur, loseCur)
	for i := range rest {
		x.lose(&rest[i].d, rest[i].acked)
	}
	x.dropHeld()
	x.downUntil = now + c.cfg.RestartDelay
}
