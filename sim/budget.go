package sim

import (
	"errors"
	"fmt"
)

// ErrBudget is wrapped by the error a run stops with when it exceeds its
// Budget.
var ErrBudget = errors.New("sim: budget exceeded")

// Budget bounds the work a run may derive from its inputs, so that no
// configuration (a cascade that doubles every tick, a duplicate of every
// duplicate, a redrive of a million dead letters every tick) can make a run
// allocate or loop without bound. A zero field means no cap.
type Budget struct {
	// Messages caps the message copies created over the run (every ID
	// allocated: produced, emitted, redriven, fanned out).
	Messages uint64
	// DeliveriesPerTick caps the deliveries (received, redelivered, polled,
	// delivered events) within one tick.
	DeliveriesPerTick int
	// CascadePerRoot caps the copies one root publish may cause through
	// handlers that publish again (pub/sub cascades); the pub/sub broker
	// enforces it with Env.Exceed.
	CascadePerRoot int
	// Events caps the events traced over the run. Every piece of work a
	// model does (a send, a delivery, a retry, a refused forward) traces
	// an event, so this bounds a run's time as Messages bounds its space:
	// work that makes no new message (a poison message received again and
	// again, a retry of a refused forward) counts here.
	Events uint64
	// Sends caps the copies handed to a broker or an outbox over the run
	// (sent, produced and stored events, and broker duplicates): a
	// re-send of the same ID, such as a CDC relay's, counts each time,
	// so it bounds what brokers may have to hold, which the message cap,
	// counting IDs, does not.
	Sends uint64
	// Steps caps the component steps over the run: one per component per
	// tick, or Weight for a Weighted component (a consumer with competing
	// instances counts one per instance). It bounds the work that traces
	// nothing, such as thousands of idle consumers polling an empty queue
	// for a million ticks.
	Steps uint64
}

// budgetState counts what a Budget caps, as the trace's events go by.
type budgetState struct {
	b          Budget
	env        *Env
	tick       Tick
	deliveries int
	sends      uint64
}

// count charges e against the budget.
func (s *budgetState) count(e *Event) {
	switch e.Kind {
	case KindReceived, KindRedelivered, KindPolled, KindDelivered:
	case KindSent, KindProduced, KindStored, KindDuplicated:
		s.sends++
		if s.b.Sends > 0 && s.sends > s.b.Sends && s.env.over == nil {
			s.env.Exceed(fmt.Errorf("%w: more than %d copies handed to brokers by tick %d (cap sends), at %s", ErrBudget, s.b.Sends, e.Tick, e.Where))
		}
		return
	default:
		return
	}
	if e.Tick != s.tick {
		s.tick, s.deliveries = e.Tick, 0
	}
	s.deliveries++
	if s.b.DeliveriesPerTick > 0 && s.deliveries > s.b.DeliveriesPerTick && s.env.over == nil {
		s.env.Exceed(fmt.Errorf("%w: more than %d deliveries in tick %d (cap deliveries_per_tick), at %s", ErrBudget, s.b.DeliveriesPerTick, e.Tick, e.Where))
	}
}

// fitsDeliveries reports whether n more delivery events at tick stay
// within DeliveriesPerTick, without charging them. A typed booking
// (Trace.BookDelivery, Trace.BookDeliveries) books only deliveries that
// fit: when one would breach the cap, BookDelivery leaves it to be
// emitted, and BookDeliveries leaves the whole fan-out to the model's
// copy-by-copy path, which books the copies that fit and emits the one
// that breaches, so the error names the event's place exactly as before.
// O(1).
func (s *budgetState) fitsDeliveries(tick Tick, n int) bool {
	d := s.deliveries
	if tick != s.tick {
		d = 0
	}
	return s.b.DeliveriesPerTick <= 0 || d+n <= s.b.DeliveriesPerTick
}

// chargeDeliveries charges n delivery events at tick that fit (see
// fitsDeliveries), exactly as count charges n emitted ones. O(1).
func (s *budgetState) chargeDeliveries(tick Tick, n int) {
	if tick != s.tick {
		s.tick, s.deliveries = tick, 0
	}
	s.deliveries += n
}

// fitsSend reports whether one more send stays within Sends, without
// charging it: a typed booking of a produced event (Trace.BookProduced)
// books only a send that fits and then charges it with s.sends++, and a
// send that would breach the cap is emitted instead. O(1).
func (s *budgetState) fitsSend() bool { return s.b.Sends == 0 || s.sends < s.b.Sends }

// SetBudget bounds the world's derived work from now on. Once a cap is
// hit, the World stops stepping components at once (the current one
// finishes its step), Run and RunUntil return the error, and Env.Exceeded
// reports it, so models refuse new work. It costs a comparison per event.
func (w *World) SetBudget(b Budget) {
	w.env.budget = b
	w.env.watch = w.env.over != nil || b.Messages|b.Events|b.Steps != 0
	if b.DeliveriesPerTick > 0 || b.Sends > 0 {
		w.env.Trace.budget = &budgetState{b: b, env: w.env}
	} else {
		w.env.Trace.budget = nil
	}
}

// Err returns the error the world stopped with: a budget that was
// exceeded (wrapping ErrBudget), or nil.
func (w *World) Err() error { return w.env.over }

// Exceed stops the run with err (which should wrap ErrBudget): models call
// it when they find a cap of the Budget hit (a cascade past
// CascadePerRoot). Only the first call counts.
func (e *Env) Exceed(err error) {
	if e.over == nil {
		e.over, e.watch = err, true
	}
}

// Exceeded returns the error once the run's budget is spent, nil before.
// Models check it before creating messages or deliveries and refuse the
// work with it, so a runaway step stops at once. It also checks the
// message cap against the IDs allocated so far and, on a breach, latches
// the error, so every later call returns it too.
// The event and step caps are checked the same way, so a model that calls
// it in its loops stops within one event of the cap. It costs three
// comparisons; a run without caps, the common case, pays one, inlined in
// the caller.
func (e *Env) Exceeded() error {
	if !e.watch {
		return nil // no cap to check, and not over
	}
	return e.exceeded()
}

// exceeded is Exceeded for a run that has a cap or is over its budget.
func (e *Env) exceeded() error {
	if e.over != nil {
		return e.over
	}
	switch b := &e.budget; {
	case b.Messages > 0 && uint64(e.IDs.Last()) > b.Messages:
		e.over = fmt.Errorf("%w: more than %d messages created by tick %d (cap messages)", ErrBudget, b.Messages, e.Clock.Now())
	case b.Events > 0 && e.Trace.Len() > b.Events:
		e.over = fmt.Errorf("%w: more than %d events by tick %d (cap events)", ErrBudget, b.Events, e.Clock.Now())
	case b.Steps > 0 && e.steps > b.Steps:
		e.over = fmt.Errorf("%w: more than %d component steps by tick %d (cap steps)", ErrBudget, b.Steps, e.Clock.Now())
	}
	return e.over
}

// Steps returns the component steps the world has run so far.
func (e *Env) Steps() uint64 { return e.steps }

// BudgetOf returns the budget in force.
func (e *Env) BudgetOf() Budget { return e.budget }
