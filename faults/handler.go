package faults

import (
	"fmt"

	"github.com/brokerlab/brokerlab/sim"
)

// Handler wraps h so that the handler fault points are consulted for every
// delivery, the same way for every model: handler.poison, then
// handler.permanent, then handler.rate_limited (a sim.RateLimited error
// whose Retry-After is Param ticks, at least 1), then handler.transient
// (whose Param, when above 1, is how many consecutive attempts of the
// message fail), fail the attempt
// with an error of that class before h runs; handler.slow (Param ticks,
// at least 1) adds to the processing time the model asks for through
// sim.Timed. A nil injector returns h itself.
//
// Each consulted point is one opportunity for its rules, with the
// delivery's component, consumer, instance, key, type and message.
func (in *Injector) Handler(h sim.Handler) sim.Handler {
	if in == nil {
		return h
	}
	f := &faultyHandler{in: in, h: h}
	for k, i := range handlerPoints {
		if in.targeted&(1<<i) != 0 {
			f.heads[k] = in.headAt(i)
		}
	}
	return f
}

// The handler points a wrapper consults, by their index in heads.
const (
	hPoison = iota
	hPermanent
	hLimited
	hTransient
	hSlow
	numHandlerPoints
)

// handlerPoints are the indexes in Points of the handler points, in the
// order of the constants above, and failingPoints has the bits of the
// four failure points (poison, permanent, rate_limited, transient) in an
// injector's sets of points, so one test of the armed set against it
// says whether any of them is armed now. The sets are kept up to date as
// rules are added and disabled, so the test is as exact as asking each
// Site.
var (
	handlerPoints = [numHandlerPoints]int{
		hPoison:    index(HandlerPoison),
		hPermanent: index(HandlerPermanent),
		hLimited:   index(HandlerRateLimited),
		hTransient: index(HandlerTransient),
		hSlow:      index(HandlerSlow),
	}
	failingPoints = uint64(1)<<handlerPoints[hPoison] | 1<<handlerPoints[hPermanent] |
		1<<handlerPoints[hLimited] | 1<<handlerPoints[hTransient]
	// handlerPts has the bits of all five handler points.
	handlerPts = failingPoints | 1<<handlerPoints[hSlow]
)

// Passes reports whether h, a handler Handler returned, would hand the
// next delivery to the handler it wraps untouched and take no extra time,
// drawing nothing: no handler point of the injector is armed now, and h
// owes no message further failures of an earlier transient firing. A
// handler the injector did not wrap (nil among them) passes, as does any
// handler of a nil injector. A model that can record a delivery without
// making it, when the handler is a plain effect, asks this first. O(1).
func (in *Injector) Passes(h sim.Handler) bool {
	if in == nil {
		return true
	}
	if in.armedPts&handlerPts != 0 {
		return false
	}
	f, ok := h.(*faultyHandler)
	return !ok || len(f.left) == 0
}

// faultyHandler is the wrapper Handler returns. Its points are resolved
// when it is made, so a delivery for which no failure point is armed and
// no message owes further transient failures costs one bit test and one
// length check before the wrapped handler runs. It holds the first rule
// of each handler point rather than a Site of each, which would repeat
// the injector and an index the point's position here implies: 96 bytes
// instead of 184.
type faultyHandler struct {
	in   *Injector
	h    sim.Handler
	left map[sim.ID]int64 // further attempts a transient firing fails, per message; made when first needed
	errs []firingErr      // the errors of firings so far, reused: an error value never changes
	// heads holds the first rule of each handler point, by the constants
	// above, when a rule targeted it as the wrapper was made, else nil,
	// as Site.head does.
	heads [numHandlerPoints]*ruleState
}

// site returns the Site of handler point k.
func (f *faultyHandler) site(k int) Site {
	return Site{in: f.in, head: f.heads[k], i: handlerPoints[k]}
}

// context returns the fault context of d.
func context(d *sim.Delivery) Context {
	group := ""
	if d.HasPos {
		group = d.Consumer
	}
	return Context{Where: d.Where, Consumer: d.Instance, Group: group, Key: d.Msg.Key, Type: d.Msg.Headers.Type, Msg: d.Msg.ID}
}

// check is Site.Check of handler point k for delivery d, which builds
// d's context only when it is read: for a firing, or at once when the
// point's rules may read it before (a rule has a Match, or the injector
// records or replays; see Injector.plainPts). A delivery no rule fires
// for then costs the draws alone.
func (f *faultyHandler) check(k int, d *sim.Delivery) *Firing {
	in, i, head := f.in, handlerPoints[k], f.heads[k]
	if head == nil || in.plainPts&(1<<i) == 0 {
		c := context(d)
		return in.checkAt(i, head, &c)
	}
	if r := draw(head, in.env.Clock.Now(), nil); r != nil {
		c := context(d)
		return in.fire(r.Name, r.Point, r.Param, r.Error, &c, 0, 0)
	}
	return nil
}

// Duration adds handler.slow to the wrapped handler's own duration.
func (f *faultyHandler) Duration(d *sim.Delivery) sim.Tick {
	t := sim.DurationOf(f.h, d)
	if f.site(hSlow).Armed() {
		if x := f.check(hSlow, d); x != nil {
			t += sim.Tick(max(x.Param, 1))
		}
	}
	return t
}

// Handle consults the armed failure points in order, then calls the
// wrapped handler. When none of them is armed and no message owes
// further failures of an earlier transient firing, it calls the wrapped
// handler straight away: the points would draw nothing and fire nothing.
// A point builds the context of d only when it reads it (see check).
func (f *faultyHandler) Handle(d *sim.Delivery) error {
	if f.in.armedPts&failingPoints == 0 && len(f.left) == 0 {
		return f.h.Handle(d)
	}
	if f.site(hPoison).Armed() {
		if x := f.check(hPoison, d); x != nil {
			return f.fail(sim.ErrPoison, x)
		}
	}
	if f.site(hPermanent).Armed() {
		if x := f.check(hPermanent, d); x != nil {
			return f.fail(sim.ErrPermanent, x)
		}
	}
	if f.site(hLimited).Armed() {
		if x := f.check(hLimited, d); x != nil {
			reason := "rule " + x.Rule
			if x.Error != "" {
				reason = x.Error + " (rule " + x.Rule + ")"
			}
			return &sim.RateLimited{After: sim.Tick(max(x.Param, 1)), Reason: reason}
		}
	}
	if len(f.left) > 0 {
		if n := f.left[d.Msg.ID]; n > 0 {
			if n == 1 {
				delete(f.left, d.Msg.ID)
			} else {
				f.left[d.Msg.ID] = n - 1
			}
			return errStillFailing
		}
	}
	if f.site(hTransient).Armed() {
		if x := f.check(hTransient, d); x != nil {
			if x.Param > 1 {
				if f.left == nil {
					f.left = map[sim.ID]int64{}
				}
				f.left[d.Msg.ID] = min(x.Param, 1<<20) - 1
			}
			return f.fail(sim.ErrTransient, x)
		}
	}
	return f.h.Handle(d)
}

// errStillFailing is the error of the further attempts a transient
// firing with a Param above 1 fails.
var errStillFailing = fmt.Errorf("%w: still failing", sim.ErrTransient)

// firingErr is the error fail made for a firing of rule with error text
// text at a point of error class class.
type firingErr struct {
	class      error
	rule, text string
	err        error
}

// maxFiringErrs bounds the errors a handler wrapper keeps for reuse: a
// plan fires its handler points through a few rules, so a few entries
// serve every firing; past the bound an error is made afresh each time.
const maxFiringErrs = 8

// fail is the error of a handler firing x of the error class class. The
// error's text and class depend on nothing else, so the error a rule's
// firing got before is handed out again instead of being formatted anew:
// O(kept errors) to find it, no allocation after the first firing.
func (f *faultyHandler) fail(class error, x *Firing) error {
	for i := range f.errs {
		if e := &f.errs[i]; e.class == class && e.rule == x.Rule && e.text == x.Error {
			return e.err
		}
	}
	err := fail(class, x)
	if len(f.errs) < maxFiringErrs {
		f.errs = append(f.errs, firingErr{class: class, rule: x.Rule, text: x.Error, err: err})
	}
	return err
}

// fail is the error of a handler firing x of the error class class.
func fail(class error, x *Firing) error {
	return &firedError{class: class, rule: x.Rule, text: x.Error}
}

// firedError is the error of a handler firing: it wraps its error class
// and reads "<class>: <text> (rule <rule>)", or "<class> (rule <rule>)"
// without a text, as fmt.Errorf with %w would make it. The text is built
// the first time Error is asked for, not when the firing fails a
// delivery: a run whose trace is not detailed never reads it.
type firedError struct {
	class      error
	rule, text string
	msg        string // the text of Error once built, "" before
}

// Error returns the error's text, built once.
func (e *firedError) Error() string {
	if e.msg == "" {
		if e.text == "" {
			e.msg = e.class.Error() + " (rule " + e.rule + ")"
		} else {
			e.msg = e.class.Error() + ": " + e.text + " (rule " + e.rule + ")"
		}
	}
	return e.msg
}

// Unwrap returns the error class, so errors.Is(err, sim.ErrTransient)
// and the like hold.
func (e *firedError) Unwrap() error { return e.class }

// Unwrap returns the wrapped handler.
func (f *faultyHandler) Unwrap() sim.Handler { return f.h }
