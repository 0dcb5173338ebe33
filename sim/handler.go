package sim

import (
	"errors"
	"fmt"
)

// The failure classes of a handler error. A handler wraps one of them
// (fmt.Errorf("...: %w", sim.ErrPermanent)) to tell the model what to do;
// an error wrapping none of them is transient.
var (
	ErrTransient = errors.New("transient failure") // retry later; a later try may succeed
	ErrPermanent = errors.New("permanent failure") // retrying will not help; dead-letter it
	ErrPoison    = errors.New("poison message")    // the message itself can never be handled
)

// Class is the failure class of a handler error.
type Class uint8

// The classes, as Classify returns them.
const (
	ClassNone      Class = iota // no error
	ClassTransient              // retry later
	ClassPermanent              // dead-letter, do not retry
	ClassPoison                 // dead-letter at once
)

var classNames = [...]string{"none", "transient", "permanent", "poison"}

// String returns the class's name.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// Classify returns the failure class of err: ClassNone for nil, the class
// of the sentinel err wraps, and ClassTransient for any other error.
func Classify(err error) Class {
	switch {
	case err == nil:
		return ClassNone
	case errors.Is(err, ErrPoison):
		return ClassPoison
	case errors.Is(err, ErrPermanent):
		return ClassPermanent
	}
	return ClassTransient
}

// Delivery is one delivery of a message copy to a handler: the same shape
// for queue consumers, consumer-group members, pub/sub subscribers and
// outbox consumers. Through it the handler records what it did: Apply for
// each effect it applies, Skip when it recognises a duplicate. The ledger
// learns of effects only this way, so a handler that skips a duplicate
// records none, whatever it returns.
//
// A Delivery is valid only during the Handle call it is passed to; models
// reuse it.
type Delivery struct {
	Msg       Message
	Where     string // the component it came from, e.g. "queue:orders"
	Consumer  string // the logical consumer (worker pool, group, subscriber)
	Instance  string // the instance handling it (worker#2, a member); Consumer when there is one
	Attempt   int    // receive or delivery count, from 1
	HasPos    bool   // whether Partition and Offset are meaningful (log records)
	Partition int
	Offset    int64
	Corr      string // the correlation ID shown on trace events
	// Ext is the model's own context for this delivery, for handlers
	// written against that model (pubsub.ContextOf reads pubsub's cascade
	// context from it); nil when the model attaches none. Reset clears it.
	Ext any

	env     *Env
	effects int
	skips   int
	// lc caches the consumer's ledger handle across the deliveries of
	// a reused Delivery; Reset keeps it, as it is keyed by the ledger
	// and the consumer's name and so never stale.
	lc LedgerConsumer
}

// NewDelivery prepares a delivery of m from where to the consumer's
// instance, on the world's environment env. Models call it (or Reset on
// one they keep) before calling a handler.
func NewDelivery(env *Env, m Message, where, consumer, instance string, attempt int) *Delivery {
	d := &Delivery{}
	d.Reset(env, m, where, consumer, instance, attempt)
	return d
}

// Reset makes d a fresh delivery of m, as NewDelivery does, so a model can
// reuse one Delivery without allocating. It is ResetFrom(env, &m, ...);
// a model that holds the message in memory of its own calls ResetFrom
// and saves a copy of it.
func (d *Delivery) Reset(env *Env, m Message, where, consumer, instance string, attempt int) {
	d.ResetFrom(env, &m, where, consumer, instance, attempt)
}

// ResetFrom makes d a fresh delivery of a copy of *m, as Reset does: d.Msg
// is a copy the handler may change without changing *m, and nothing of d
// points into *m but what the message's own strings and slices share
// (Body and Headers.Extra, which no handler may modify). It copies the
// message once, straight from *m into d.Msg; Reset, which takes the
// message by value, copies it into its parameter first, and reading that
// fresh copy back stalls the processor's store forwarding on every
// delivery. It costs the copy and a few stores.
func (d *Delivery) ResetFrom(env *Env, m *Message, where, consumer, instance string, attempt int) {
	d.Msg = *m
	d.ResetInPlace(env, where, consumer, instance, attempt)
}

// ResetInPlace makes d a fresh delivery of the message the model has just
// written into d.Msg, as ResetFrom does for a message held elsewhere: a
// model that keeps a message in parts (a log record's entry and headers)
// fills d.Msg field by field and so builds it once, where the handler
// reads it, instead of building it and copying its 152 bytes again. Every
// other field is reset as by ResetFrom, and d.Corr is taken from
// d.Msg.Headers. It costs a few stores.
func (d *Delivery) ResetInPlace(env *Env, where, consumer, instance string, attempt int) {
	if instance == "" {
		instance = consumer
	}
	// Field by field rather than *d = Delivery{...}: the literal would be
	// built in a temporary and copied, message and all, once per copy
	// handed out. TestResetForgetsEveryField keeps the list complete.
	d.Where, d.Consumer, d.Instance = where, consumer, instance
	d.Attempt = attempt
	d.HasPos, d.Partition, d.Offset = false, 0, 0
	d.Corr = d.Msg.Headers.CorrelationID
	d.Ext = nil
	d.env = env
	d.effects, d.skips = 0, 0
}

// Now returns the current tick.
func (d *Delivery) Now() Tick {
	if d.env == nil {
		return 0
	}
	return d.env.Now()
}

// Apply records that the handler applied one effect of the message (a
// charge, a row written, a projection updated). It emits the "processed"
// event the ledger counts; note, if set, is shown in the trace.
func (d *Delivery) Apply(note string) {
	d.effects++
	d.emit(KindProcessed, note)
}

// Skip records that the handler recognised the message as a duplicate and
// applied nothing; why, if set, is shown in the trace. The ledger counts it
// as an absorbed duplicate.
func (d *Delivery) Skip(why string) {
	d.skips++
	d.emit(KindSkipped, why)
}

// Effects returns how many effects the handler recorded so far.
func (d *Delivery) Effects() int { return d.effects }

// Skipped reports whether the handler recorded a skipped duplicate.
func (d *Delivery) Skipped() bool { return d.skips > 0 }

// emit traces one of the handler's records.
func (d *Delivery) emit(k Kind, detail string) {
	if d.env == nil {
		return
	}
	tr := d.env.Trace
	if !tr.Enabled() {
		tr.Skip() // numbered as Emit would, without building an event no one reads
		return
	}
	if k == KindProcessed && tr.BookEffect(d.env.Now(), d.Msg.ID, d.Consumer, &d.lc) {
		return // only the ledger listens: booked without building the event
	}
	if !tr.Detailed() {
		detail = ""
	}
	var ev Event
	d.fill(&ev, k)
	ev.Detail = detail
	tr.EmitRef(&ev)
}

// Handler handles deliveries: the one handler contract of every model. It
// returns nil on success, or an error whose class (Classify) tells the
// model whether to retry, dead-letter or give up.
type Handler interface {
	Handle(d *Delivery) error
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(d *Delivery) error

// Handle calls f(d).
func (f HandlerFunc) Handle(d *Delivery) error { return f(d) }

// Effect returns a handler that applies one effect, described by note, to
// every delivery and succeeds: the simplest correct handler, and a naive
// one under duplicates.
func Effect(note string) Handler { return &effect{note: note} }

// effect is the handler Effect returns. It is a type of its own rather
// than a HandlerFunc closure so that a model's call of Handle reaches the
// Apply directly, not through HandlerFunc.Handle and then the closure: on
// a fan-out that hands out millions of copies, one indirect call fewer on
// each.
type effect struct{ note string }

// Handle applies one effect, described by the note, and succeeds.
func (e *effect) Handle(d *Delivery) error {
	d.Apply(e.note)
	return nil
}

// IsEffect reports whether h is a handler Effect made: one that applies
// exactly one effect to every delivery and succeeds, reading nothing of
// the delivery but what the processed event names. A model that holds
// such a handler may skip preparing the Delivery when the trace would
// not build the event (EffectRun.Book numbers or books it), since the
// handler's whole record is then that one event; otherwise it prepares
// the Delivery and calls Handle as usual. A handler wrapped by anything
// (a fault injector, Idempotent) is not an effect. O(1).
func IsEffect(h Handler) bool {
	_, ok := h.(*effect)
	return ok
}

// Idempotent wraps h so that it applies each origin's effect at most once
// per key, where key(d) names what makes two deliveries the same (the
// message ID, or a business key): a delivery whose key was handled with an
// effect before is skipped (Skip) and h is not called. The keys are kept in
// memory for the wrapper's lifetime, O(distinct keys); services that keep
// their dedup table in their database use outbox.Consumer instead.
func Idempotent(h Handler, key func(d *Delivery) string) Handler {
	return &idempotent{h: h, key: key, seen: map[string]bool{}}
}

// DedupTable is the table of keys an idempotent handler has applied, kept
// apart from the handler so that several can share it: the members of a
// consumer group that keep their dedup table in the service's database
// share one, and a record one member applied is skipped by the member
// that takes its partition over. O(distinct keys). The zero value is
// ready to use.
type DedupTable struct {
	seen map[string]bool
}

// Len returns how many keys the table holds.
func (t *DedupTable) Len() int { return len(t.seen) }

// IdempotentIn is Idempotent with its keys kept in t, shared with every
// handler given the same table.
func IdempotentIn(h Handler, key func(d *Delivery) string, t *DedupTable) Handler {
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	return &idempotent{h: h, key: key, seen: t.seen}
}

// idempotent is the handler Idempotent returns. It is Timed when the
// wrapped handler is, so a slow handler stays slow behind it.
type idempotent struct {
	h    Handler
	key  func(d *Delivery) string
	seen map[string]bool
}

// Handle skips a key seen with an effect before, or calls the handler.
func (x *idempotent) Handle(d *Delivery) error {
	k := x.key(d)
	if x.seen[k] {
		d.Skip(skipNote(k))
		return nil
	}
	err := x.h.Handle(d)
	if d.Effects() > 0 {
		x.seen[k] = true
	}
	return err
}

// skipNote describes a skipped key in the trace: the key itself when it is
// plain printable text (a message ID, an order number), else only that a
// business key matched.
func skipNote(k string) string {
	for _, c := range k {
		if c < ' ' || c == 0x7f {
			return "already applied (same business key)"
		}
	}
	return "already applied " + k
}

// Duration is the wrapped handler's processing time.
func (x *idempotent) Duration(d *Delivery) Tick { return DurationOf(x.h, d) }

// Unwrap returns the wrapped handler.
func (x *idempotent) Unwrap() Handler { return x.h }

// HeaderEventID is the extra header in which a broker-made copy carries
// the ID of the event it copies, as SNS carries its MessageId in the
// envelope of every SQS copy: a fan-out copy has a new message ID but the
// same event ID. A redrive keeps the headers and changes the ID.
const HeaderEventID = "event-id"

// ByMessageID is a key for Idempotent: the event ID a fan-out copy carries
// (HeaderEventID), else the message ID. It changes when a message is
// redriven from a dead-letter queue (a new message, as in SQS).
func ByMessageID(d *Delivery) string {
	if v, ok := d.Msg.Headers.Get(HeaderEventID); ok {
		return v
	}
	return d.Msg.ID.String()
}

// BusinessKey is what makes two messages the same business change: the
// type, the key and the body, which a redriven or re-sent copy with a new
// ID keeps. Every idempotency helper (Idempotent with ByBusinessKey, the
// outbox's database-backed consumer) uses it.
func BusinessKey(m Message) string {
	return m.Headers.Type + "\x00" + m.Key + "\x00" + string(m.Body)
}

// ByBusinessKey is a key for Idempotent: BusinessKey of the message.
func ByBusinessKey(d *Delivery) string { return BusinessKey(d.Msg) }

// IdempotencyKey names the key function of Idempotent as a value a
// configuration can hold: NotIdempotent, KeyByMessageID (ByMessageID) or
// KeyByBusinessKey (ByBusinessKey). Its text is "none", "message_id" or
// "business_key", as scenario files write it.
type IdempotencyKey uint8

// The idempotency keys.
const (
	// NotIdempotent applies every delivery: Wrap returns the handler as it
	// is.
	NotIdempotent IdempotencyKey = iota
	// KeyByMessageID absorbs a repeat of the same message (ByMessageID).
	KeyByMessageID
	// KeyByBusinessKey absorbs a repeat of the same business change under
	// any ID, e.g. a redriven copy (ByBusinessKey).
	KeyByBusinessKey
)

var idempotencyKeyNames = [...]string{"none", "message_id", "business_key"}

// String returns the key's name: "none", "message_id" or "business_key".
func (k IdempotencyKey) String() string {
	if int(k) < len(idempotencyKeyNames) {
		return idempotencyKeyNames[k]
	}
	return "unknown"
}

// MarshalText returns the key's name as String does; a key that is none
// of the three is an error wrapping ErrInvalidConfig.
func (k IdempotencyKey) MarshalText() ([]byte, error) {
	if int(k) >= len(idempotencyKeyNames) {
		return nil, fmt.Errorf("%w: unknown idempotency key %d", ErrInvalidConfig, k)
	}
	return []byte(idempotencyKeyNames[k]), nil
}

// UnmarshalText sets k from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (k *IdempotencyKey) UnmarshalText(text []byte) error {
	for i, n := range idempotencyKeyNames {
		if n == string(text) {
			*k = IdempotencyKey(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown idempotency key %q", ErrInvalidConfig, text)
}

// Wrap returns h made idempotent by k: Idempotent(h, ByMessageID) for
// KeyByMessageID, Idempotent(h, ByBusinessKey) for KeyByBusinessKey, and
// h itself for NotIdempotent (or any unknown key).
func (k IdempotencyKey) Wrap(h Handler) Handler {
	switch k {
	case KeyByMessageID:
		return Idempotent(h, ByMessageID)
	case KeyByBusinessKey:
		return Idempotent(h, ByBusinessKey)
	}
	return h
}

// WrapIn is Wrap with the keys kept in t (see IdempotentIn); with
// NotIdempotent it returns h and leaves t alone.
func (k IdempotencyKey) WrapIn(h Handler, t *DedupTable) Handler {
	switch k {
	case KeyByMessageID:
		return IdempotentIn(h, ByMessageID, t)
	case KeyByBusinessKey:
		return IdempotentIn(h, ByBusinessKey, t)
	}
	return h
}

// ByKey is a key for Idempotent: the message key (a business key such as
// an order number), which survives redrives and re-publishes.
func ByKey(d *Delivery) string { return d.Msg.Key }
