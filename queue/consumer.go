package queue

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Outcome is what a handler decided about one delivery: an error (nil for
// success; classify it with ErrTransient, ErrPermanent or ErrPoison) and how
// many extra ticks the work takes. With Ticks > 0 the message stays in
// progress and the effect (or the failure) takes hold that many ticks later,
// possibly after the visibility timeout ran out.
type Outcome struct {
	Err   error
	Ticks sim.Tick
	// Duplicate reports that an idempotent handler recognised the message
	// as already processed and applied nothing: the consumer acks it
	// without booking an effect in the ledger and traces it as
	// deduplicated.
	Duplicate bool
}

// Handler processes deliveries for a Consumer. Handle is called once per
// delivery, when processing starts.
type Handler interface {
	Handle(d Delivery) Outcome
}

// HandlerFunc adapts user code to a Handler that takes no extra ticks.
type HandlerFunc func(d Delivery) error

// Handle calls f(d).
func (f HandlerFunc) Handle(d Delivery) Outcome { return Outcome{Err: f(d)} }

// OutcomeFunc adapts a function returning a full Outcome to a Handler.
type OutcomeFunc func(d Delivery) Outcome

// Handle calls f(d).
func (f OutcomeFunc) Handle(d Delivery) Outcome { return f(d) }

type behaviourKind uint8

const (
	bSucceed behaviourKind = iota
	bTransient
	bPermanent
	bPoison
	bSlow
)

// behaviour is a built-in handler behaviour.
type behaviour struct {
	kind  behaviourKind
	n     int
	ticks sim.Tick
}

// Succeed returns a handler that succeeds at once.
func Succeed() Handler { return behaviour{kind: bSucceed} }

// Transient returns a handler that fails the first n receives of every
// message with ErrTransient and succeeds after that; n must be >= 1.
func Transient(n int) Handler { return behaviour{kind: bTransient, n: n} }

// Permanent returns a handler that fails every message with ErrPermanent.
func Permanent() Handler { return behaviour{kind: bPermanent} }

// Poison returns a handler that fails every message with ErrPoison.
func Poison() Handler { return behaviour{kind: bPoison} }

// Slow returns a handler that succeeds after n ticks; n must be >= 1.
func Slow(n sim.Tick) Handler { return behaviour{kind: bSlow, ticks: n} }

// Handle applies the behaviour.
func (b behaviour) Handle(d Delivery) Outcome {
	switch b.kind {
	case bTransient:
		if d.ReceiveCount <= b.n {
			return Outcome{Err: fmt.Errorf("%w: attempt %d of %d failing", ErrTransient, d.ReceiveCount, b.n)}
		}
	case bPermanent:
		return Outcome{Err: ErrPermanent}
	case bPoison:
		return Outcome{Err: ErrPoison}
	case bSlow:
		return Outcome{Ticks: b.ticks}
	}
	return Outcome{}
}

func (b behaviour) validate() error {
	switch {
	case b.kind == bTransient && b.n < 1:
		return fmt.Errorf("%w: Transient(%d) needs n >= 1", ErrInvalidConfig, b.n)
	case b.kind == bSlow && (b.ticks < 1 || b.ticks > MaxDuration):
		return fmt.Errorf("%w: Slow(%d) needs ticks in [1, %d]", ErrInvalidConfig, b.ticks, MaxDuration)
	}
	return nil
}

type selector struct {
	pred         func(sim.Message) bool
	match, other Handler
}

// Select returns a handler that uses match for messages pred accepts and
// other for the rest, e.g. a poison handler for one key only.
func Select(pred func(sim.Message) bool, match, other Handler) Handler {
	return selector{pred, match, other}
}

// Handle dispatches d.
func (s selector) Handle(d Delivery) Outcome {
	if s.pred(d.Message) {
		return s.match.Handle(d)
	}
	return s.other.Handle(d)
}

func (s selector) validate() error {
	if s.pred == nil || s.match == nil || s.other == nil {
		return fmt.Errorf("%w: Select needs a predicate and two handlers", ErrInvalidConfig)
	}
	if err := validateHandler(s.match); err != nil {
		return err
	}
	return validateHandler(s.other)
}

func validateHandler(h Handler) error {
	if v, ok := h.(interface{ validate() error }); ok {
		return v.validate()
	}
	return nil
}

// AckMode says when a consumer acks.
type AckMode uint8

// The ack modes.
const (
	// AckAfterProcess acks after the effect is applied: at-least-once. A
	// crash before the ack redelivers the message (a duplicate effect).
	AckAfterProcess AckMode = iota
	// AckBeforeProcess acks on receipt, before processing: at-most-once. A
	// crash or a failure after the ack loses the message
	// (sim.CauseAckBeforeProcess).
	AckBeforeProcess
)

// String returns "ack-after-process" or "ack-before-process".
func (m AckMode) String() string {
	if m == AckBeforeProcess {
		return "ack-before-process"
	}
	return "ack-after-process"
}

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	// Queue is the queue to consume; required.
	Queue *Queue
	// Name is the worker's name in the trace and in fault matches; required.
	Name string
	// Batch is the most messages one receive takes; 0 means 1.
	Batch int
	// Handler processes messages; nil means Succeed().
	Handler Handler
	// AckMode says whether to ack after (default) or before processing.
	AckMode AckMode
	// Retry handles transient failures; the zero value is RetryNone.
	Retry RetryPolicy
	// MaxAttempts, when positive, dead-letters a message whose transient
	// failure happened on receive number MaxAttempts or later.
	MaxAttempts int
	// Faults is consulted at the consumer and handler fault points; nil
	// means the queue's injector.
	Faults *faults.Injector
	// RestartDelay is how many ticks a crashed consumer stays down; 0 means 1.
	RestartDelay sim.Tick
	// Dedup, when set, makes the consumer idempotent: it is called when a
	// successful handling would apply the effect and reports whether the
	// message's effect was applied before (looked up in the consumer's
	// processed table, which it records in the same step when it reports
	// false). A duplicate is acked without applying the effect again and
	// traced as deduplicated. nil applies every success.
	Dedup func(m sim.Message) bool
}

// Validate reports a configuration error, wrapping ErrInvalidConfig.
func (c ConsumerConfig) Validate() error {
	switch {
	case c.Queue == nil || c.Queue.env == nil:
		return fmt.Errorf("%w: consumer %q needs a queue made with New", ErrInvalidConfig, c.Name)
	case c.Name == "":
		return fmt.Errorf("%w: a consumer needs a name", ErrInvalidConfig)
	case c.Batch < 0:
		return fmt.Errorf("%w: consumer %q: batch %d is negative", ErrInvalidConfig, c.Name, c.Batch)
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
	if c.Handler != nil {
		if err := validateHandler(c.Handler); err != nil {
			return fmt.Errorf("consumer %q: %w", c.Name, err)
		}
	}
	return nil
}

// ConsumerStats counts what a consumer did.
type ConsumerStats struct {
	Received     int // deliveries taken
	Processed    int // effects applied
	Failed       int // handler failures
	Retried      int // nacks sent by the retry policy
	DeadLettered int // messages the consumer sent to the dead-letter queue
	Crashes      int
	StaleAcks    int // acks (or nacks) the queue rejected as stale
	Lost         int // messages lost by acking before processing
	Deduplicated int // successes reported as duplicates (Outcome.Duplicate or Dedup)
}

type work struct {
	d      Delivery
	doneAt sim.Tick
	err    error
	acked  bool
	dup    bool // the handler reported a duplicate (Outcome.Duplicate)
}

// Consumer is a competing consumer of a Queue, a sim.Actor for the
// consumer phase. Each Step it first completes the work whose time came (in
// the order it started), then, when it holds nothing, receives a batch,
// acks all of it at once (AckBeforeProcess), and starts each message: the
// crash point
// consumer.crash_before_process, the handler faults (poison, permanent,
// transient, slow), then the Handler. A completed success records the
// effect in the ledger (Applied) and traces processed, consults
// consumer.crash_after_effect, and acks (AckAfterProcess). A failure is
// traced failed and classified: permanent and poison go to the dead-letter
// queue; transient ones are dead-lettered once MaxAttempts is reached and
// otherwise retried by the retry policy (a nack with delay, or nothing for
// RetryNone). A crash drops everything the consumer holds without acking;
// messages it had acked but not processed are lost. Cost per message is
// O(log n) in the queue plus the handler.
type Consumer struct {
	cfg       ConsumerConfig
	q         *Queue
	env       *sim.Env
	faults    *faults.Injector
	fctx      faults.Context // scratch context for fault consultations
	stream    *sim.Stream
	held      []work
	due       []work
	batch     []work
	buf       []Delivery
	transient map[sim.ID]int
	downUntil sim.Tick
	stats     ConsumerStats
}

// NewConsumer returns a consumer; add it to a World in sim.PhaseConsumer.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Batch == 0 {
		cfg.Batch = 1
	}
	if cfg.Handler == nil {
		cfg.Handler = Succeed()
	}
	if cfg.RestartDelay == 0 {
		cfg.RestartDelay = 1
	}
	in := cfg.Faults
	if in == nil {
		in = cfg.Queue.faults
	}
	return &Consumer{cfg: cfg, q: cfg.Queue, env: cfg.Queue.env, faults: in,
		stream: cfg.Queue.env.Stream(cfg.Queue.where + "/consumer/" + cfg.Name), transient: map[sim.ID]int{}}, nil
}

// Name returns the consumer's name.
func (c *Consumer) Name() string { return c.cfg.Name }

// Busy returns how many messages are in progress.
func (c *Consumer) Busy() int { return len(c.held) }

// Stats returns the consumer's counters.
func (c *Consumer) Stats() ConsumerStats { return c.stats }

// SetHandler replaces the handler, e.g. after "fixing the bug" in a lesson.
func (c *Consumer) SetHandler(h Handler) error {
	if h == nil {
		return fmt.Errorf("%w: consumer %q: nil handler", ErrInvalidConfig, c.cfg.Name)
	}
	if err := validateHandler(h); err != nil {
		return err
	}
	c.cfg.Handler = h
	return nil
}

// Step runs the consumer at tick now.
func (c *Consumer) Step(now sim.Tick) {
	if c == nil || c.q == nil || now < c.downUntil {
		return
	}
	keep := c.held[:0]
	c.due = c.due[:0]
	for _, w := range c.held {
		if w.doneAt > now {
			keep = append(keep, w)
		} else {
			c.due = append(c.due, w)
		}
	}
	clear(c.held[len(keep):])
	c.held = keep
	for i := range c.due {
		if c.finish(&c.due[i], now, c.due[i+1:]) {
			clear(c.due)
			return
		}
	}
	clear(c.due)
	if len(c.held) > 0 {
		return
	}
	var err error
	c.buf, err = c.q.AppendReceive(c.buf[:0], c.cfg.Name, c.cfg.Batch)
	if err != nil {
		return // the queue traced the rejection; try again next tick
	}
	c.batch = c.batch[:0]
	for i := range c.buf {
		d := &c.buf[i]
		c.stats.Received++
		acked := false
		if c.cfg.AckMode == AckBeforeProcess {
			if err := c.q.Ack(d.Receipt); err != nil {
				c.stats.StaleAcks++
				continue
			}
			acked = true
		}
		// Filled in place: a composite literal would be built in a
		// temporary and copied.
		c.batch = append(c.batch, work{})
		w := &c.batch[len(c.batch)-1]
		w.d = *d
		w.acked = acked
	}
	// c.buf and c.batch are not cleared: the next batch overwrites them, so
	// they keep at most one batch of messages reachable, and clearing them
	// would cost a write of every byte of every delivery once more.
	for i := range c.batch {
		if c.start(&c.batch[i], now, c.batch[i+1:]) {
			break
		}
	}
}

// fire consults point p for message m; it returns the firing, nil when no
// rule fired. The context is built in the consumer's scratch space, so a
// consultation copies only the message's fields.
func (c *Consumer) fire(p faults.Point, m *sim.Message) *faults.Firing {
	if c.faults == nil {
		return nil
	}
	x := &c.fctx
	x.Where, x.Consumer, x.Key, x.Type, x.Msg = c.q.where, c.cfg.Name, m.Key, m.Headers.Type, m.ID
	return c.faults.CheckRef(p, x)
}

// start begins processing w; it reports whether the consumer crashed.
// rest are the batch's messages not started yet; a crash drops them.
func (c *Consumer) start(w *work, now sim.Tick, rest []work) bool {
	if c.fire(faults.ConsumerCrashBeforeProcess, &w.d.Message) != nil {
		c.crash(now, "before processing", w, true, rest)
		return true
	}
	out := c.run(&w.d)
	w.err = out.Err
	w.dup = out.Duplicate
	if out.Ticks > 0 {
		w.doneAt = now + out.Ticks
		c.held = append(c.held, *w)
		return false
	}
	return c.finish(w, now, rest)
}

// run consults the handler fault points, then the handler.
func (c *Consumer) run(d *Delivery) Outcome {
	m := &d.Message
	var out Outcome
	if f := c.fire(faults.HandlerSlow, m); f != nil {
		out.Ticks = max(sim.Tick(f.Param), 1)
	}
	if f := c.fire(faults.HandlerPoison, m); f != nil {
		out.Err = faultErr(ErrPoison, f)
	} else if f := c.fire(faults.HandlerPermanent, m); f != nil {
		out.Err = faultErr(ErrPermanent, f)
	} else if left := c.transientLeft(m.ID); left > 0 {
		out.Err = fmt.Errorf("%w: %d more failing attempt(s)", ErrTransient, left-1)
		if left == 1 {
			delete(c.transient, m.ID)
		} else {
			c.transient[m.ID] = left - 1
		}
	} else if f := c.fire(faults.HandlerTransient, m); f != nil {
		out.Err = faultErr(ErrTransient, f)
		if n := f.Param; n > 1 {
			c.transient[m.ID] = int(min(n, 1<<20)) - 1
		}
	}
	if out.Err != nil {
		return out
	}
	h := c.cfg.Handler.Handle(*d)
	out.Err = h.Err
	out.Duplicate = h.Duplicate
	if h.Ticks > 0 {
		out.Ticks = min(out.Ticks+h.Ticks, MaxDuration)
	}
	return out
}

// transientLeft returns how many more attempts of message id fail
// transiently; most runs have none pending, and then no lookup is made.
func (c *Consumer) transientLeft(id sim.ID) int {
	if len(c.transient) == 0 {
		return 0
	}
	return c.transient[id]
}

func faultErr(class error, f *faults.Firing) error {
	if f.Error != "" {
		return fmt.Errorf("%w: %s (rule %s)", class, f.Error, f.Rule)
	}
	return fmt.Errorf("%w (rule %s)", class, f.Rule)
}

// finish completes w; it reports whether the consumer crashed. rest are
// the items due at this tick that were not finished yet; a crash drops them.
func (c *Consumer) finish(w *work, now sim.Tick, rest []work) bool {
	m := &w.d.Message
	if w.err == nil && (w.dup || c.cfg.Dedup != nil && c.cfg.Dedup(*m)) {
		c.stats.Deduplicated++
		c.emit(sim.KindDeduplicated, w, "effect already applied")
		if !w.acked {
			if err := c.q.Ack(w.d.Receipt); err != nil {
				c.stats.StaleAcks++
			}
		}
		return false
	}
	if w.err == nil {
		c.stats.Processed++
		c.env.Ledger.Applied(m.ID, c.q.cref, now)
		c.emit(sim.KindProcessed, w, "")
		if c.fire(faults.ConsumerCrashAfterEffect, m) != nil {
			c.crash(now, "after effect, before ack", w, false, rest)
			return true
		}
		if !w.acked {
			if err := c.q.Ack(w.d.Receipt); err != nil {
				c.stats.StaleAcks++
			}
		}
		return false
	}
	c.stats.Failed++
	class := Classify(w.err)
	if c.env.Trace.Enabled() {
		c.emit(sim.KindFailed, w, class.String()+": "+w.err.Error())
	} else {
		c.env.Trace.Skip()
	}
	if w.acked {
		c.lose(w, now)
		return false
	}
	if class == ClassTransient && (c.cfg.MaxAttempts == 0 || w.d.ReceiveCount < c.cfg.MaxAttempts) {
		if d, ok := c.cfg.Retry.Backoff(w.d.ReceiveCount, c.stream); ok {
			if err := c.q.Nack(w.d.Receipt, d); err != nil {
				c.stats.StaleAcks++
			} else {
				c.stats.Retried++
			}
		}
		return false
	}
	reason := class.String() + " failure"
	if class == ClassTransient {
		reason = fmt.Sprintf("%d failed attempts", w.d.ReceiveCount)
	}
	switch err := c.q.DeadLetter(w.d.Receipt, reason); {
	case err == nil:
		c.stats.DeadLettered++
		delete(c.transient, m.ID)
	case errors.Is(err, ErrNoDeadLetter):
		// Nowhere to put it: it comes back after its visibility timeout.
	default:
		c.stats.StaleAcks++
	}
	return false
}

// emit traces kind for the message of w; it builds the event only when the
// trace listens, and otherwise just numbers it.
func (c *Consumer) emit(k sim.Kind, w *work, detail string) {
	tr := c.env.Trace
	if !tr.Enabled() {
		tr.Skip()
		return
	}
	m := &w.d.Message
	c.env.Emit(sim.Event{Kind: k, Where: c.q.where, Actor: c.cfg.Name, Msg: m.ID, Key: m.Key, Corr: m.Headers.CorrelationID, Attempt: w.d.ReceiveCount, Detail: detail})
}

// Crash makes the consumer crash now, as a timeline action or an operator
// would: everything it holds is dropped without an ack (unacked messages come
// back after their visibility timeout; ones it acked before processing are
// lost) and it stays down for RestartDelay ticks. It costs O(held messages).
func (c *Consumer) Crash(reason string) {
	if c == nil || c.q == nil {
		return
	}
	now := c.env.Now()
	c.stats.Crashes++
	c.env.Emit(sim.Event{Kind: sim.KindCrashed, Where: c.q.where, Actor: c.cfg.Name, Detail: reason})
	for i := range c.held {
		c.lose(&c.held[i], now)
	}
	clear(c.held)
	c.held = c.held[:0]
	c.downUntil = now + c.cfg.RestartDelay
}

// lose records that w was acked before processing and will never be
// processed.
func (c *Consumer) lose(w *work, now sim.Tick) {
	if !w.acked {
		return
	}
	m := &w.d.Message
	c.stats.Lost++
	c.env.Ledger.Lost(m.ID, c.q.cref, sim.CauseAckBeforeProcess, now)
	c.env.Emit(sim.Event{Kind: sim.KindLost, Where: c.q.where, Actor: c.cfg.Name, Msg: m.ID, Key: m.Key, Corr: m.Headers.CorrelationID,
		Attempt: w.d.ReceiveCount, Detail: string(sim.CauseAckBeforeProcess)})
}

// crash drops everything the consumer holds, plus cur (the message being
// started or finished, lost when loseCur and it was acked) and rest (due
// items not finished yet); nothing is acked. Dropped messages that were
// acked before processing are lost.
func (c *Consumer) crash(now sim.Tick, why string, cur *work, loseCur bool, rest []work) {
	c.stats.Crashes++
	m := &cur.d.Message
	c.env.Emit(sim.Event{Kind: sim.KindCrashed, Where: c.q.where, Actor: c.cfg.Name, Msg: m.ID, Key: m.Key, Detail: why})
	if loseCur {
		c.lose(cur, now)
	}
	for i := range rest {
		c.lose(&rest[i], now)
	}
	for i := range c.held {
		c.lose(&c.held[i], now)
	}
	clear(c.held)
	c.held = c.held[:0]
	c.downUntil = now + c.cfg.RestartDelay
}
