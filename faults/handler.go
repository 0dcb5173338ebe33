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
	return &faultyHandler{in: in, h: h,
		poison: in.Site(HandlerPoison), permanent: in.Site(HandlerPermanent), limited: in.Site(HandlerRateLimited),
		transient: in.Site(HandlerTransient), slow: in.Site(HandlerSlow)}
}

// faultyHandler is the wrapper Handler returns. Its points are resolved
// when it is made, so a delivery no handler rule targets costs a few
// length checks.
type faultyHandler struct {
	in   *Injector
	h    sim.Handler
	left map[sim.ID]int64 // further attempts a transient firing fails, per message; made when first needed

	poison, permanent, limited, transient, slow Site
}

// context returns the fault context of d.
func context(d *sim.Delivery) Context {
	group := ""
	if d.HasPos {
		group = d.Consumer
	}
	return Context{Where: d.Where, Consumer: d.Instance, Group: group, Key: d.Msg.Key, Type: d.Msg.Headers.Type, Msg: d.Msg.ID}
}

// Duration adds handler.slow to the wrapped handler's own duration.
func (f *faultyHandler) Duration(d *sim.Delivery) sim.Tick {
	t := sim.DurationOf(f.h, d)
	if f.slow.Armed() {
		c := context(d)
		if x := f.slow.Check(&c); x != nil {
			t += sim.Tick(max(x.Param, 1))
		}
	}
	return t
}

// Handle consults the failure points, then calls the wrapped handler.
func (f *faultyHandler) Handle(d *sim.Delivery) error {
	var c Context
	made := false
	ctx := func() *Context {
		if !made {
			c, made = context(d), true
		}
		return &c
	}
	if f.poison.Armed() {
		if x := f.poison.Check(ctx()); x != nil {
			return fail(sim.ErrPoison, x)
		}
	}
	if f.permanent.Armed() {
		if x := f.permanent.Check(ctx()); x != nil {
			return fail(sim.ErrPermanent, x)
		}
	}
	if f.limited.Armed() {
		if x := f.limited.Check(ctx()); x != nil {
			reason := "rule " + x.Rule
			if x.Error != "" {
				reason = x.Error + " (rule " + x.Rule + ")"
			}
			return &sim.RateLimited{After: sim.Tick(max(x.Param, 1)), Reason: reason}
		}
	}
	if n := f.left[d.Msg.ID]; n > 0 {
		if n == 1 {
			delete(f.left, d.Msg.ID)
		} else {
			f.left[d.Msg.ID] = n - 1
		}
		return fmt.Errorf("%w: still failing", sim.ErrTransient)
	}
	if f.transient.Armed() {
		if x := f.transient.Check(ctx()); x != nil {
			if x.Param > 1 {
				if f.left == nil {
					f.left = map[sim.ID]int64{}
				}
				f.left[d.Msg.ID] = min(x.Param, 1<<20) - 1
			}
			return fail(sim.ErrTransient, x)
		}
	}
	return f.h.Handle(d)
}

// fail is the error of a handler firing x of the error class class.
func fail(class error, x *Firing) error {
	if x.Error == "" {
		return fmt.Errorf("%w (rule %s)", class, x.Rule)
	}
	return fmt.Errorf("%w: %s (rule %s)", class, x.Error, x.Rule)
}

// Unwrap returns the wrapped handler.
func (f *faultyHandler) Unwrap() sim.Handler { return f.h }
