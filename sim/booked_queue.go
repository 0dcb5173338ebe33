package sim

// The typed entry points of the queue's own event kinds. A queue books its
// sends and acks, on a hot path, when the ledger is the trace's only
// listener; its deliveries go through BookDelivery and the handler's
// effects through BookEffect, like every model's.

// Booking reports whether the ledger is the trace's only listener, the
// one case in which the typed entry points (BookSent, BookDelivery,
// BookAcked and their siblings) book an event rather than refuse. A model
// on a hot path asks it first: it is inlined, so a trace with another sink
// pays no call into an entry point that would only refuse. O(1).
func (t *Trace) Booking() bool { return t != nil && len(t.sinks) == 0 && t.ledger != nil }

// BookSent is the typed form of emitting a sent event: copy msg (made
// from origin, with key and type typ) handed to the queue where at tick,
// where the logical consumer called consumer (none when empty) is to
// receive it. When the ledger is the trace's only listener (no other
// sink) and the send fits the run's budget, it numbers the event, folds
// it and charges the budget exactly as Emit would, without building it,
// and reports true. Otherwise it does nothing and reports false, and the
// caller emits the event as usual: a send that breaches Sends is always
// emitted, so the run stops with the same error at the same event. O(1)
// amortised, and it does not allocate but as Emit's fold does.
func (t *Trace) BookSent(tick Tick, msg, origin ID, where, key, typ, consumer string) bool {
	return t.bookSend(KindSent, tick, msg, origin, where, key, typ, consumer)
}

// BookAcked is the typed form of emitting an acked event: copy msg was
// acknowledged (deleted from its queue) for the logical consumer called
// consumer at tick. When the ledger is the trace's only listener it
// numbers the event and folds it exactly as Emit would, without building
// it, and reports true. Otherwise it does nothing and reports false, and
// the caller emits the event as usual. A budget does not count acked
// events, so it does not stop the typed form. c caches the consumer's
// handle (see LedgerConsumer). O(1) amortised, and it does not allocate
// but as Emit's fold does.
func (t *Trace) BookAcked(tick Tick, msg ID, consumer string, c *LedgerConsumer) bool {
	l := t.ledgerOnly()
	if l == nil {
		return false
	}
	t.seq++
	l.bookAcked(msg, c.resolve(l, consumer), tick)
	return true
}

// bookAcked folds an acked event of copy id for consumer c at tick t, as
// Emit folds it. O(1) amortised.
func (l *Ledger) bookAcked(id ID, c ConsumerRef, t Tick) {
	l.begin(t, id, 0)
	l.acked(id, c, t)
	l.folded()
}
