package sim

import (
	"crypto/sha256"
	"hash"
	"io"
	"strconv"
	"unicode/utf8"
)

// Kind names what happened in a trace Event. Kinds are lower-case words
// joined by underscores; their text is part of the stable trace format.
type Kind string

// The kinds the core and the models emit. Models may define further kinds;
// the text form of a kind never changes once released.
const (
	KindSent              Kind = "sent"               // a producer handed a message to a broker
	KindDelayed           Kind = "delayed"            // a message became visible only later
	KindReceived          Kind = "received"           // a consumer received a message
	KindAcked             Kind = "acked"              // a consumer acknowledged (deleted) a message
	KindNacked            Kind = "nacked"             // a consumer returned a message with a delay
	KindVisibility        Kind = "visibility_changed" // a consumer changed a visibility timeout
	KindVisibilityExpired Kind = "visibility_expired" // an unacked message became visible again
	KindRedelivered       Kind = "redelivered"        // a message was delivered again to the same logical consumer
	KindDeadLettered      Kind = "dead_lettered"      // a message moved to a dead-letter queue
	KindRedriven          Kind = "redriven"           // a dead letter went back to its source as a new message
	KindExpired           Kind = "expired"            // retention deleted a message
	KindPurged            Kind = "purged"             // a purge deleted a message
	KindRejected          Kind = "rejected"           // a call was refused (stale receipt, broker down, old generation)
	KindDeduplicated      Kind = "deduplicated"       // a send was dropped by a deduplication window
	KindDuplicated        Kind = "duplicated"         // a broker made an extra copy of a message, under the same ID (broker.duplicate)
	KindProcessed         Kind = "processed"          // a handler applied the effect of a message
	KindFailed            Kind = "failed"             // a handler failed on a message
	KindCrashed           Kind = "crashed"            // an actor crashed and restarted
	KindProduced          Kind = "produced"           // a record was appended to a log partition
	KindPolled            Kind = "polled"             // a group member read a record
	KindCommitted         Kind = "committed"          // a group committed an offset
	KindRebalanced        Kind = "rebalanced"         // a group's assignment changed
	KindSeeked            Kind = "seeked"             // a group's position was moved
	KindPublished         Kind = "published"          // a message was published to a topic
	KindDelivered         Kind = "delivered"          // a pub/sub subscriber got a copy
	KindMissed            Kind = "missed"             // an offline subscriber missed a publish (by design)
	KindDropped           Kind = "dropped"            // a buffer overflow dropped a message
	KindRelayed           Kind = "relayed"            // an outbox relay published a row
	KindLost              Kind = "lost"               // the ledger recorded a loss with its cause
	KindFault             Kind = "fault"              // a fault rule fired
	KindAction            Kind = "action"             // a timeline action ran
	KindNarration         Kind = "narration"          // a lesson narration step
	KindChecked           Kind = "checked"            // an expectation was evaluated
	KindStored            Kind = "stored"             // a message was written to an outbox table, to be relayed
	KindSkipped           Kind = "skipped"            // a handler recognised a duplicate and applied no effect
	KindPhantom           Kind = "phantom"            // a published event announces a change that never committed
	KindSubscribed        Kind = "subscribed"         // a consumer group started following a log
	KindStepDone          Kind = "step_done"          // a saga step's participant applied it
	KindStepFailed        Kind = "step_failed"        // a saga step failed or timed out
	KindCompensated       Kind = "compensated"        // a saga compensation reached its participant (Detail "duplicate" when it applied nothing)
	KindSagaEnded         Kind = "saga_ended"         // a saga ended: Detail completed, compensated, failed or parked
)

// Event is one entry of the trace. Fields that do not apply are left at their
// zero value and are omitted from the text and JSON forms; Partition and
// Offset are printed only when HasPos is set.
type Event struct {
	Seq       uint64 // position in the trace, from 1
	Tick      Tick   // when it happened
	Kind      Kind   // what happened
	Where     string // the component, e.g. "queue:orders", "log:orders", "topic:prices"
	Actor     string // the consumer instance, producer, relay or group member involved
	Consumer  string // the logical consumer (queue worker pool, group, subscriber) the event concerns
	Msg       ID     // the message copy, if any
	Origin    ID     // the copy Msg was made from (redrive, fan-out, deduplicated send), if any
	Key       string // the message key, if any
	Type      string // the message type, on the event that creates a copy
	Cause     Cause  // why a message was lost, on lost and expired events
	Corr      string // the correlation ID, if any
	Attempt   int    // receive count, delivery count or attempt number (0 = none)
	HasPos    bool   // whether Partition and Offset are meaningful
	Partition int    // log partition
	Offset    int64  // log offset
	Rule      string // the fault rule that fired or caused this event
	Detail    string // free text: an error, a reason, a count
}

// Sink receives trace events. Emit must not retain e after it returns.
type Sink interface {
	Emit(e *Event)
}

// Trace is the ordered record of a run. It numbers events and hands them to
// its sinks in order. A nil *Trace and a Trace without sinks accept events
// and discard them at the cost of a counter increment.
type Trace struct {
	seq      uint64
	sinks    []Sink
	ledger   *Ledger      // the ledger sink, called directly
	budget   *budgetState // the run's delivery budget, if any
	detailed bool         // some sink shows Detail text
	cur      *Event       // the event handed to sinks other than the ledger, made on first use and reused: a trace whose only sink besides the ledger is one TextWriter or JSONWriter, or that has none, never holds it
	busy     bool         // a sink is running; a nested Emit must not reuse cur
}

// NewTrace returns a trace that forwards to the given sinks in order.
func NewTrace(sinks ...Sink) *Trace {
	t := &Trace{}
	for _, s := range sinks {
		t.Attach(s)
	}
	return t
}

// Attach adds a sink; it receives only events emitted after the call. A
// *Ledger is always called first, before every other sink, so a sink that
// reads the ledger sees the event already folded. A sink with a
// NeedsDetail() bool method that returns false (a fold that reads only
// structured fields) does not make the trace Detailed.
func (t *Trace) Attach(s Sink) {
	if t == nil || s == nil {
		return
	}
	if l, ok := s.(*Ledger); ok {
		if l != nil && t.ledger == nil {
			t.ledger = l
		}
		return
	}
	if d, ok := s.(interface{ NeedsDetail() bool }); !ok || d.NeedsDetail() {
		t.detailed = true // every other sink may show Detail
	}
	t.sinks = append(t.sinks, s)
}

// Ledger returns the ledger folding this trace's events, or nil.
func (t *Trace) Ledger() *Ledger {
	if t == nil {
		return nil
	}
	return t.ledger
}

// Enabled reports whether any sink listens, the ledger included. Models
// must emit every event when it returns true; they may call Skip instead
// only when it is false.
func (t *Trace) Enabled() bool { return t != nil && (t.ledger != nil || len(t.sinks) > 0) }

// Detailed reports whether a sink shows events to people and so needs
// their Detail text. Models build Detail strings (which cost formatting)
// only when it returns true; the ledger never reads Detail.
func (t *Trace) Detailed() bool { return t != nil && t.detailed }

// Len returns the number of events emitted so far.
func (t *Trace) Len() uint64 {
	if t == nil {
		return 0
	}
	return t.seq
}

// Emit numbers e and hands it to every sink. It does not allocate: the
// sinks get a pointer to an event on the caller's stack or to a buffer the
// trace reuses, which is why they must not retain it. Emit is small enough
// to be inlined, so a model's event is built in place and not copied.
func (t *Trace) Emit(e Event) {
	if t != nil {
		t.emit(&e)
	}
}

// EmitRef is Emit for an event the caller built in place: it numbers *e
// (setting e.Seq) and hands e itself to every sink, so a large event is
// not copied on its way. Like Emit it does not retain e and costs a
// counter increment when no sink listens. Callers set e.Tick themselves
// (Env.Emit does it for them).
func (t *Trace) EmitRef(e *Event) {
	if t != nil {
		t.emit(e)
	}
}

// emit numbers e and hands it to the ledger, then to the sinks. It never
// retains e.
func (t *Trace) emit(e *Event) {
	t.seq++
	if t.ledger != nil {
		e.Seq = t.seq
		t.ledger.Emit(e)
	}
	if t.budget != nil {
		t.budget.count(e)
	}
	if len(t.sinks) == 0 {
		return
	}
	if t.busy {
		t.emitNested(*e)
		return
	}
	t.busy = true
	if len(t.sinks) == 1 {
		// The writers do not retain e, and with their concrete types the
		// compiler can see it: e stays where it is, and the event is not
		// copied once more into cur.
		switch s := t.sinks[0].(type) {
		case *TextWriter:
			e.Seq = t.seq
			s.Emit(e)
			t.busy = false
			return
		case *JSONWriter:
			e.Seq = t.seq
			s.Emit(e)
			t.busy = false
			return
		}
	}
	if t.cur == nil {
		t.cur = new(Event)
	}
	*t.cur = *e
	t.cur.Seq = t.seq
	for _, s := range t.sinks {
		s.Emit(t.cur)
	}
	t.busy = false
}

// LedgerConsumer keeps a logical consumer's handle in the ledger of a
// trace, for a model that books that consumer's events with
// Trace.BookDelivery and Trace.BookEffect instead of emitting them: the
// handle is looked up on the first event booked, at the moment the event
// would have named the consumer, and reused while the ledger and the name
// stay the same (a ledger never forgets a consumer), so booking costs no
// name lookup. The zero value is ready to use; a model keeps one per
// consumer it books for (a subscriber, a worker pool, a group member).
type LedgerConsumer struct {
	l    *Ledger
	name string
	ref  ConsumerRef
}

// resolve returns the handle of the consumer called name in l, from the
// cache when it holds it. A name passed as the same string every time, as
// models do, is compared by its pointer and length.
func (c *LedgerConsumer) resolve(l *Ledger, name string) ConsumerRef {
	if c.l != l || c.name != name {
		c.l, c.name, c.ref = l, name, l.ref(name)
	}
	return c.ref
}

// LedgerFanout keeps the ledger handles of a fixed list of logical
// consumers, for a model that books one delivery of a copy to each of
// them in one call (Trace.BookDeliveries), as a fan-out hands a publish to
// its subscribers. The names are given once, by NewLedgerFanout; each
// handle is looked up when the first delivery to its consumer is booked,
// at the moment the event would have named it, and reused while the
// ledger stays the same, so a booking costs no name lookup or comparison
// per copy. The zero value holds no consumer.
type LedgerFanout struct {
	names []string
	l     *Ledger       // the ledger refs belong to
	refs  []ConsumerRef // by position in names; negative until looked up
}

// NewLedgerFanout returns the handles of the consumers called names, in
// that order, none looked up yet. It keeps its own copy of the list.
func NewLedgerFanout(names []string) LedgerFanout {
	return LedgerFanout{names: append([]string(nil), names...)}
}

// Len returns the number of consumers.
func (f *LedgerFanout) Len() int { return len(f.names) }

// ledgerOnly returns the ledger when it is the only sink: then an event
// is read by no one but the ledger's fold, and need not be built.
func (t *Trace) ledgerOnly() *Ledger {
	if t == nil || len(t.sinks) != 0 {
		return nil
	}
	return t.ledger
}

// BookDelivery is the typed form of emitting a delivery event (received,
// redelivered, polled or delivered) of copy msg to the logical consumer
// called consumer at tick, for a model on a hot path: when the ledger is
// the trace's only listener (no other sink), already holds the copy's
// record and the delivery fits the run's budget, it numbers the event,
// folds it and charges the budget exactly as Emit would, without building
// it, and reports true. Otherwise it does nothing and reports false, and
// the caller emits the event as usual: a delivery that breaches
// DeliveriesPerTick is always emitted, so the run stops with the same
// error at the same event. c caches the consumer's handle (see
// LedgerConsumer). O(1) amortised, and it does not allocate.
func (t *Trace) BookDelivery(tick Tick, msg ID, consumer string, c *LedgerConsumer) bool {
	l := t.ledgerOnly()
	if l == nil || t.budget != nil && !t.budget.fitsDeliveries(tick, 1) || !l.bookDelivery(msg, c.resolve(l, consumer), tick) {
		return false
	}
	if t.budget != nil {
		t.budget.chargeDeliveries(tick, 1)
	}
	t.seq++
	return true
}

// BookDeliveries is BookDelivery for one delivered event of copy msg to
// each consumer of f in turn, all at tick: when the ledger is the trace's
// only listener (no other sink), already holds the copy's record and all
// f.Len() deliveries fit the run's budget, it numbers the events, folds
// them, in f's order, and charges the budget exactly as Emit would, and
// reports true. Otherwise it does nothing and reports false, and the
// caller emits the events as usual (so the one that breaches
// DeliveriesPerTick stops the run as before). O(f.Len()) amortised, and
// it does not allocate but to hold f's handles the first time it meets a
// ledger.
func (t *Trace) BookDeliveries(tick Tick, msg ID, f *LedgerFanout) bool {
	l := t.ledgerOnly()
	if l == nil || t.budget != nil && !t.budget.fitsDeliveries(tick, len(f.names)) {
		return false
	}
	if f.l != l {
		f.l, f.refs = l, make([]ConsumerRef, len(f.names))
		for i := range f.refs {
			f.refs[i] = NoConsumer
		}
	}
	if !l.bookDeliveries(msg, f, tick) {
		return false
	}
	if t.budget != nil {
		t.budget.chargeDeliveries(tick, len(f.names))
	}
	t.seq += uint64(len(f.names))
	return true
}

// BookProduced is the typed form of emitting a produced event: copy msg
// (made from origin, with key and type typ) appended to the log where at
// tick. When the ledger is the trace's only listener (no other sink) and
// the send fits the run's budget, it numbers the event, folds it and
// charges the budget exactly as Emit would, without building it, and
// reports true. Otherwise it does nothing and reports false, and the
// caller emits the event as usual: a send that breaches Sends is always
// emitted, so the run stops with the same error at the same event. O(1)
// amortised, and it does not allocate.
func (t *Trace) BookProduced(tick Tick, msg, origin ID, where, key, typ string) bool {
	return t.bookSend(KindProduced, tick, msg, origin, where, key, typ, "")
}

// bookSend is BookProduced and BookSent: it books a send of kind k, which
// the budget counts, when the ledger is the only listener and the send
// fits the budget, and reports whether it did.
func (t *Trace) bookSend(k Kind, tick Tick, msg, origin ID, where, key, typ, consumer string) bool {
	l := t.ledgerOnly()
	if l == nil {
		return false
	}
	if t.budget != nil {
		if !t.budget.fitsSend() {
			return false
		}
		t.budget.sends++
	}
	t.seq++
	l.bookArrival(k, msg, origin, tick, where, key, typ, consumer)
	return true
}

// BookPublished is the typed form of emitting a published event: copy
// msg (made from origin, with key and type typ) handed to the
// subscribers of the topic where at tick. When the ledger is the trace's
// only listener it numbers the event and folds it exactly as Emit would,
// without building it, and reports true. Otherwise it does nothing and
// reports false, and the caller emits the event as usual. A budget does
// not count published events, so it does not stop the typed form. O(1)
// amortised, and it does not allocate.
func (t *Trace) BookPublished(tick Tick, msg, origin ID, where, key, typ string) bool {
	l := t.ledgerOnly()
	if l == nil {
		return false
	}
	t.seq++
	l.bookArrival(KindPublished, msg, origin, tick, where, key, typ, "")
	return true
}

// BookExpired is the typed form of emitting an expired event: copy msg
// was deleted with cause (retention when empty) at tick. When the ledger
// is the trace's only listener and already holds the copy's record, it
// numbers the event and folds it exactly as Emit would, without building
// it, and reports true. Otherwise it does nothing and reports false, and
// the caller emits the event as usual. A budget does not count expired
// events, so it does not stop the typed form. O(consumers), like Emit,
// and it does not allocate.
func (t *Trace) BookExpired(tick Tick, msg ID, cause Cause) bool {
	l := t.ledgerOnly()
	if l == nil || !l.bookExpired(msg, cause, tick) {
		return false
	}
	t.seq++
	return true
}

// BookEffect is the typed form of emitting a processed event (a handler
// applied an effect) of copy msg for the logical consumer called consumer
// at tick: when the ledger is the trace's only listener it numbers the
// event and folds it exactly as Emit would, without building it, and
// reports true; otherwise it does nothing and reports false, and the
// caller emits the event. A budget does not count processed events, so it
// does not stop the typed form. c caches the consumer's handle. O(1)
// amortised, and it does not allocate.
func (t *Trace) BookEffect(tick Tick, msg ID, consumer string, c *LedgerConsumer) bool {
	l := t.ledgerOnly()
	if l == nil {
		return false
	}
	t.seq++
	l.bookEffect(msg, c.resolve(l, consumer), tick)
	return true
}

// Close ends the trace for the sinks that keep a record of it: each sink
// with a Close() error method (a JSONWriter writes its closing record) is
// closed, in order, and the first error is returned. Call it when the run
// has finished, and only then: a trace without its closing record reads
// as cut short. Events emitted after Close still reach the ledger and the
// other sinks; a closed JSONWriter refuses them (ErrTraceClosed).
func (t *Trace) Close() error {
	if t == nil {
		return nil
	}
	var first error
	for _, s := range t.sinks {
		if c, ok := s.(interface{ Close() error }); ok {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Skip advances the event counter exactly as Emit does when no sink
// listens. A model on a hot path may call it instead of building an event
// when Enabled is false, so event numbering does not depend on whether it
// built the event.
func (t *Trace) Skip() {
	if t != nil {
		t.seq++
	}
}

// emitNested hands e to the sinks when a sink emits while it runs; only
// then does an event cost an allocation.
func (t *Trace) emitNested(e Event) {
	e.Seq = t.seq
	for _, s := range t.sinks {
		s.Emit(&e)
	}
}

// Recorder is a Sink that keeps events in memory, for tests and players.
// When Max is positive it keeps only the newest Max events and counts the
// ones it let go in Dropped.
type Recorder struct {
	Max     int
	Dropped uint64
	events  []Event
}

// Emit stores a copy of e.
func (r *Recorder) Emit(e *Event) {
	if r.Max > 0 && len(r.events) >= r.Max {
		n := copy(r.events, r.events[len(r.events)-r.Max+1:])
		r.Dropped += uint64(len(r.events) - n)
		r.events = r.events[:n]
	}
	r.events = append(r.events, *e)
}

// Events returns the recorded events in order. The slice is the recorder's
// own; callers must not modify it.
func (r *Recorder) Events() []Event { return r.events }

// Reset forgets every recorded event.
func (r *Recorder) Reset() { r.events = r.events[:0]; r.Dropped = 0 }

// SinkFunc adapts a function to a Sink.
type SinkFunc func(e *Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e *Event) { f(e) }

// TextWriter is a Sink that writes the stable one-line text form of each
// event to W, one Write call per event and unbuffered, so W holds every
// line as soon as Emit returns. The first write error is kept in Err and
// stops further writes.
//
// The lines are exactly those of AppendText. To make them cheaper the
// writer remembers the start of its last few lines ("t=<tick> <kind>
// <where> ", for a few kinds and components: a tick's events follow each
// other), the text of the last message ID and key it formatted (so do a
// message's events), of the last actor and attempt, and the last key it
// found to be a plain token, so a repeated one is copied instead of
// formatted or scanned again.
type TextWriter struct {
	W   io.Writer
	Err error
	buf []byte

	pre      [4]textPrefix // recent line prefixes, replaced round robin
	preNext  uint8         // the entry of pre to replace next
	msg      ID            // the message ID whose text is msgTxt
	msgKey   string        // the key whose text ends msgTxt, if set
	msgTxt   []byte        // "m<id>", then " key=<key>" when the key is set; empty until the first event with an ID
	plainKey string        // the last key known to be a plain token
	by       string        // the actor whose text is in byTxt
	byTry    int           // the attempt whose text is in byTxt
	byOK     bool          // whether byTxt is set
	byTxt    []byte        // " by=<actor>" when set, then " try=<attempt>" when set
}

// NewTextWriter returns a TextWriter writing to w.
func NewTextWriter(w io.Writer) *TextWriter { return &TextWriter{W: w} }

// Emit writes one line.
func (tw *TextWriter) Emit(e *Event) {
	if tw.Err != nil {
		return
	}
	b := append(tw.appendText(tw.buf[:0], e), '\n')
	if cap(b) != cap(tw.buf) { // keep a grown buffer; otherwise skip the store
		tw.buf = b[:0]
	}
	if _, err := tw.W.Write(b); err != nil {
		tw.Err = err
	}
}

// appendKey appends " key=" and the key k as a token.
func (tw *TextWriter) appendKey(b []byte, k string) []byte {
	b = append(b, " key="...)
	if same(k, tw.plainKey) {
		return append(b, k...)
	}
	if plainToken(k) {
		tw.plainKey = k
		return append(b, k...)
	}
	return strconv.AppendQuote(b, k)
}

// textPrefix is the start of a line, "t=<tick> <kind> <where> ", for one
// tick, kind and component.
type textPrefix struct {
	tick  Tick
	kind  Kind
	where string
	txt   []byte // empty when the entry is unused
}

// prefix returns the text of e's tick, kind and component, followed by a
// space, from the writer's cache of recent prefixes. The events of a tick
// come from few components and of few kinds, so most lookups hit.
func (tw *TextWriter) prefix(e *Event) []byte {
	for i := range tw.pre {
		p := &tw.pre[i]
		if p.tick == e.Tick && len(p.txt) > 0 && same(string(p.kind), string(e.Kind)) && same(p.where, e.Where) {
			return p.txt
		}
	}
	p := &tw.pre[int(tw.preNext)%len(tw.pre)]
	tw.preNext++
	p.tick, p.kind, p.where = e.Tick, e.Kind, e.Where
	b := appendInt(append(p.txt[:0], "t="...), int64(e.Tick))
	b = append(append(b, ' '), e.Kind...)
	b = append(b, ' ')
	if e.Where == "" {
		b = append(b, '-')
	} else {
		b = append(b, e.Where...)
	}
	p.txt = append(b, ' ')
	return p.txt
}

// appendText appends the text form of e to b, as AppendText does, using
// and updating the writer's caches.
func (tw *TextWriter) appendText(b []byte, e *Event) []byte {
	b = append(b, tw.prefix(e)...)
	if e.Msg == 0 {
		b = append(b, '-')
		if e.Key != "" {
			b = tw.appendKey(b, e.Key)
		}
	} else {
		if len(tw.msgTxt) == 0 || e.Msg != tw.msg || !same(e.Key, tw.msgKey) {
			tw.msg, tw.msgKey = e.Msg, e.Key
			tw.msgTxt = appendUint(append(tw.msgTxt[:0], 'm'), uint64(e.Msg))
			if e.Key != "" {
				tw.msgTxt = tw.appendKey(tw.msgTxt, e.Key)
			}
		}
		b = append(b, tw.msgTxt...)
	}
	if e.Actor != "" || e.Attempt != 0 {
		if !tw.byOK || e.Attempt != tw.byTry || !same(e.Actor, tw.by) {
			tw.by, tw.byTry, tw.byOK = e.Actor, e.Attempt, true
			tw.byTxt = tw.byTxt[:0]
			if e.Actor != "" {
				tw.byTxt = append(tw.byTxt, " by="...)
				tw.byTxt = appendToken(tw.byTxt, e.Actor)
			}
			if e.Attempt != 0 {
				tw.byTxt = append(tw.byTxt, " try="...)
				tw.byTxt = appendInt(tw.byTxt, int64(e.Attempt))
			}
		}
		b = append(b, tw.byTxt...)
	}
	if showConsumer(e) {
		b = append(b, " for="...)
		b = appendToken(b, e.Consumer)
	}
	if !e.HasPos && e.Corr == "" && e.Rule == "" && e.Detail == "" && e.Origin == 0 && e.Cause == "" {
		return b
	}
	return appendTextRest(b, e, false)
}

// same reports whether a and b are equal. The writer's caches compare
// short strings (kinds, components, keys, actors), so this is cheap.
func same(a, b string) bool { return a == b }

// JSONWriter is a Sink that writes each event as one JSON object per line
// (JSON Lines). The fields are documented on AppendJSON; the writer adds a
// last field, "hash", to every line: a running hash over every line before
// it and this one (see ChainHash), so a reader names the first line that
// was edited. Close ends the trace with a closing record carrying the
// event count and the last hash; a trace without it was cut short.
//
// The chain makes a trace tamper-evident, not tamper-proof: it holds no
// secret, so whoever rewrites a line and recomputes every hash after it
// forges a trace that reads as whole. It catches edits, deletions,
// reorderings, duplicates and truncation, by hand or by accident.
//
// Each line costs one SHA-256 over its bytes on top of AppendJSON.
type JSONWriter struct {
	W   io.Writer
	Err error
	buf []byte

	chain  ChainHash // the running hash over the lines written so far
	digest hash.Hash // reused for the chain
	n      uint64    // events written
	closed bool
}

// NewJSONWriter returns a JSONWriter writing to w.
func NewJSONWriter(w io.Writer) *JSONWriter { return &JSONWriter{W: w} }

// Emit writes one line. After Close it writes nothing and sets Err to
// ErrTraceClosed: an event after the closing record would read as
// tampering.
func (jw *JSONWriter) Emit(e *Event) {
	if jw.Err != nil {
		return
	}
	if jw.closed {
		jw.Err = ErrTraceClosed
		return
	}
	jw.buf = AppendJSON(jw.buf[:0], e)
	if jw.digest == nil {
		jw.digest = sha256.New()
	}
	jw.chain.add(jw.digest, jw.buf, false)
	jw.buf = jw.chain.appendField(jw.buf)
	jw.buf = append(jw.buf, '\n')
	jw.n++
	_, jw.Err = jw.W.Write(jw.buf)
}

// Close writes the closing record, {"end":true,"events":N,"hash":"..."},
// and returns the first write error. Calling it again does nothing more.
// It does not close W.
func (jw *JSONWriter) Close() error {
	if jw.closed || jw.Err != nil {
		return jw.Err
	}
	jw.closed = true
	jw.buf = AppendClosing(jw.buf[:0], jw.n, jw.chain)
	jw.buf = append(jw.buf, '\n')
	_, jw.Err = jw.W.Write(jw.buf)
	return jw.Err
}

// AppendText appends the stable one-line text form of e to b:
//
//	t=12 expired queue:orders m7 key=kunde-A try=2 for=worker from=m3 p=0 off=3 corr=c1 rule=r1 cause=retention "detail"
//
// Tick, kind and Where always appear; the message ID appears as "-" when
// absent; every other field appears only when set, in this order. The
// logical consumer (for=) appears only when no actor is named; it and the
// message type are always in the JSON form. The form
// never contains a newline, and it is part of the public API: golden files
// depend on it.
func AppendText(b []byte, e *Event) []byte {
	b = append(b, "t="...)
	b = appendInt(b, int64(e.Tick))
	b = append(b, ' ')
	b = append(b, e.Kind...)
	b = append(b, ' ')
	if e.Where == "" {
		b = append(b, '-')
	} else {
		b = append(b, e.Where...)
	}
	b = append(b, ' ')
	if e.Msg == 0 {
		b = append(b, '-')
	} else {
		b = appendUint(append(b, 'm'), uint64(e.Msg))
	}
	if e.Key != "" {
		b = append(b, " key="...)
		b = appendToken(b, e.Key)
	}
	if e.Actor != "" {
		b = append(b, " by="...)
		b = appendToken(b, e.Actor)
	}
	return appendTextTail(b, e)
}

// appendTextTail appends the fields of e's text form from the attempt on.
func appendTextTail(b []byte, e *Event) []byte {
	if a := e.Attempt; a > 0 && a < 10 {
		b = append(b, ' ', 't', 'r', 'y', '=', byte('0'+a))
	} else if a != 0 {
		b = append(b, " try="...)
		b = appendInt(b, int64(a))
	}
	return appendTextRest(b, e, true)
}

// showConsumer reports whether e's text form names its logical consumer:
// only when no actor is named (an expiry, a loss, a miss the broker
// books), so the line says whom it concerns. Lines with an actor leave it
// out to stay short; the JSON form always carries it.
func showConsumer(e *Event) bool { return e.Consumer != "" && e.Actor == "" }

// appendTextRest appends the fields of e's text form after the attempt,
// starting with the consumer when withConsumer is set.
func appendTextRest(b []byte, e *Event, withConsumer bool) []byte {
	if withConsumer && showConsumer(e) {
		b = append(b, " for="...)
		b = appendToken(b, e.Consumer)
	}
	if e.Origin != 0 {
		b = append(b, " from="...)
		b = e.Origin.AppendTo(b)
	}
	if e.HasPos {
		b = append(b, " p="...)
		b = appendInt(b, int64(e.Partition))
		b = append(b, " off="...)
		b = appendInt(b, e.Offset)
	}
	if e.Corr != "" {
		b = append(b, " corr="...)
		b = appendToken(b, e.Corr)
	}
	if e.Rule != "" {
		b = append(b, " rule="...)
		b = appendToken(b, e.Rule)
	}
	if e.Cause != "" {
		b = append(b, " cause="...)
		b = appendToken(b, string(e.Cause))
	}
	if e.Detail != "" {
		b = append(b, ' ')
		b = strconv.AppendQuote(b, e.Detail)
	}
	return b
}

// digitPairs holds the two-digit decimal forms of 0 to 99.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// appendUint appends the decimal form of v to b, as strconv.AppendUint
// does, two digits at a time.
func appendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	var buf [20]byte
	i := len(buf)
	for v >= 100 {
		q := v / 100
		r := (v - q*100) * 2
		i -= 2
		buf[i], buf[i+1] = digitPairs[r], digitPairs[r+1]
		v = q
	}
	if v >= 10 {
		i -= 2
		buf[i], buf[i+1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		i--
		buf[i] = byte('0' + v)
	}
	return append(b, buf[i:]...)
}

// appendInt appends the decimal form of v to b, as strconv.AppendInt does.
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(b, '-'), uint64(-v))
	}
	return appendUint(b, uint64(v))
}

// appendToken appends s as is when it is a plain token and quoted otherwise,
// so a space or quote inside a key cannot break the line's shape.
func appendToken(b []byte, s string) []byte {
	if plainToken(s) {
		return append(b, s...)
	}
	return strconv.AppendQuote(b, s)
}

// plainToken reports whether s can appear in the text form unquoted: no
// space, control character, quote, equals sign or non-ASCII byte.
func plainToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == '"' || c == '=' || c >= 0x7f {
			return false
		}
	}
	return true
}

// AppendJSON appends e as a JSON object to b. Fields, in this order:
// "seq" (number), "tick" (number), "kind" (string), "where" (string), and
// when set "msg" (string, e.g. "m7"), "origin" (string), "key", "type",
// "actor", "consumer", "corr" (strings), "attempt" (number), "partition"
// and "offset" (numbers, only for log events), "rule", "cause" and
// "detail" (strings). The form carries every field the Ledger folds, so
// ReadJSONL rebuilds the same ledger from it. JSONWriter appends the
// running "hash" to each object (see ChainHash).
func AppendJSON(b []byte, e *Event) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"tick":`...)
	b = strconv.AppendInt(b, int64(e.Tick), 10)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, string(e.Kind))
	b = append(b, `,"where":`...)
	b = appendJSONString(b, e.Where)
	if e.Msg != 0 {
		b = append(b, `,"msg":"`...)
		b = e.Msg.AppendTo(b)
		b = append(b, '"')
	}
	if e.Origin != 0 {
		b = append(b, `,"origin":"`...)
		b = e.Origin.AppendTo(b)
		b = append(b, '"')
	}
	if e.Key != "" {
		b = append(b, `,"key":`...)
		b = appendJSONString(b, e.Key)
	}
	if e.Type != "" {
		b = append(b, `,"type":`...)
		b = appendJSONString(b, e.Type)
	}
	if e.Actor != "" {
		b = append(b, `,"actor":`...)
		b = appendJSONString(b, e.Actor)
	}
	if e.Consumer != "" {
		b = append(b, `,"consumer":`...)
		b = appendJSONString(b, e.Consumer)
	}
	if e.Corr != "" {
		b = append(b, `,"corr":`...)
		b = appendJSONString(b, e.Corr)
	}
	if e.Attempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	if e.HasPos {
		b = append(b, `,"partition":`...)
		b = strconv.AppendInt(b, int64(e.Partition), 10)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, e.Offset, 10)
	}
	if e.Rule != "" {
		b = append(b, `,"rule":`...)
		b = appendJSONString(b, e.Rule)
	}
	if e.Cause != "" {
		b = append(b, `,"cause":`...)
		b = appendJSONString(b, string(e.Cause))
	}
	if e.Detail != "" {
		b = append(b, `,"detail":`...)
		b = appendJSONString(b, e.Detail)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal. Control characters
// are escaped and invalid UTF-8 becomes U+FFFD, so the output always parses.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size - 1
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// EffectRun books the processed events of a run of copies that one
// logical consumer handles in one step of its model, each with a handler
// that IsEffect: each Book is what the handler's Apply does to the trace
// and the ledger, but whether anyone listens, and the consumer's handle,
// are asked once per run rather than once per copy. Take one with
// Trace.Effects at the start of the step and drop it at its end: it stays
// valid while no sink is attached and the tick does not change, as
// within a step whose copies no other handler runs for. It does not
// allocate.
type EffectRun struct {
	t    *Trace
	l    *Ledger // the ledger when it is the only listener, else nil
	skip bool    // no one listens: a copy's event is only numbered
	tick Tick
	name string
	c    *LedgerConsumer
	ref  ConsumerRef // NoConsumer until the first Book looks it up
}

// Effects returns the EffectRun of the consumer called consumer at tick;
// c caches the consumer's handle, as for BookEffect. The handle is looked
// up on the first Book, as BookEffect would, so a run that books nothing
// names no consumer to the ledger. O(1).
func (t *Trace) Effects(tick Tick, consumer string, c *LedgerConsumer) EffectRun {
	return EffectRun{t: t, l: t.ledgerOnly(), skip: !t.Enabled(), tick: tick, name: consumer, c: c, ref: NoConsumer}
}

// Book records one applied effect of copy msg as the handler's Apply
// would when the trace does not build the event: it numbers it when no
// one listens, or numbers and folds it when only the ledger listens, and
// reports true. When a sink listens it does nothing and reports false,
// and the caller runs the handler on a delivery, which builds the event.
// O(1) amortised.
func (r *EffectRun) Book(msg ID) bool {
	if r.l == nil {
		if r.skip {
			r.t.Skip()
		}
		return r.skip
	}
	if r.ref == NoConsumer {
		r.ref = r.c.resolve(r.l, r.name)
	}
	r.t.seq++
	r.l.bookEffect(msg, r.ref, r.tick)
	return true
}
