package sim

// Constructors of the events that several models build the same way. A
// model fills in what only it knows (Detail, Cause, Rule) on the returned
// value and emits it with Trace.EmitRef; each constructor costs a copy of
// the event's fields and no allocation.

// Event returns the event of kind k about delivery d at the current tick
// of d's world (0 for a delivery made without one): d's component, its
// instance as the actor, its logical consumer, the message ID, key and
// correlation ID, the attempt, and for a log record its partition and
// offset. Detail, Cause and Rule are left empty. The handler's own
// records (processed, skipped) and every model's failed event, where a
// handler returned an error for d, are built by it, so the same delivery
// is described the same way in every model.
func (d *Delivery) Event(k Kind) Event {
	var e Event
	d.fill(&e, k)
	return e
}

// fill sets the fields Event describes on e, which is zero. Filling an
// event in place, field by field, spares the handler's records a
// temporary: a literal is built in one and copied, 224 bytes an event.
func (d *Delivery) fill(e *Event, k Kind) {
	if d.env != nil {
		e.Tick = d.env.Now()
	}
	e.Kind, e.Where, e.Actor, e.Consumer = k, d.Where, d.Instance, d.Consumer
	e.Msg, e.Key, e.Corr, e.Attempt = d.Msg.ID, d.Msg.Key, d.Corr, d.Attempt
	e.HasPos, e.Partition, e.Offset = d.HasPos, d.Partition, d.Offset
}

// Lost returns the lost event of message m: where it was lost, the actor
// that lost it, the logical consumer that will never process it ("" for a
// loss before any consumer), and the cause the ledger books it under; the
// correlation ID is m's header. Tick is left to the caller (Env.Emit sets
// it), and so are what only some losses have: Attempt, Type, Origin, a log
// position, the Rule that caused it, Detail, or a correlation ID the model
// carries apart from the header (a cascade's).
func Lost(where, actor, consumer string, m *Message, cause Cause) Event {
	return Event{Kind: KindLost, Where: where, Actor: actor, Consumer: consumer, Msg: m.ID, Key: m.Key,
		Corr: m.Headers.CorrelationID, Cause: cause}
}
