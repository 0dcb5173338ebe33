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
	return &faultyHandler{in: in, h: h, left: map[sim.ID]int64{}}
}

// faultyHandler is the wrapper Handler returns.
type faultyHandler struct {
	in   *Injector
	h    sim.Handler
	left map[sim.ID]int64 // further attempts a transient firing fails, per message
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
	if f.in.Has(HandlerSlow) {
		c := context(d)
		if x := f.in.CheckRef(HandlerSlow, &c); x != nil {
			t += sim.Tick(max(x.Param, 1))
		}
	}
	return t
}

// Handle consults the failure points, then calls the wrapped handler.
func (f *faultyHandler) Handle(d *sim.Delivery) error {
	in := f.in
	c := context(d)
	fail := func(class error, x *Firing) error {
		if x.Error == "" {
			return fmt.Errorf("%w (rule %s)", class, x.Rule)
		}
		return fmt.Errorf("%w: %s (rule %s)", class, x.Error, x.Rule)
	}
	if in.Has(HandlerPoison) {
		if x := in.CheckRef(HandlerPoison, &c); x != nil {
			return fail(sim.ErrPoison, x)
		}
	}
	if in.Has(HandlerPermanent) {
		if x := in.CheckRef(HandlerPermanent, &c); x != nil {
			return fail(sim.ErrPermanent, x)
		}
	}
	if in.Has(HandlerRateLimited) {
		if x := in.CheckRef(HandlerRateLimited, &c); x != nil {
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
	if in.Has(HandlerTransient) {
		if x := in.CheckRef(HandlerTransient, &c); x != nil {
			if x.Param > 1 {
				f.left[d.Msg.ID] = min(x.Param, 1<<20) - 1
			}
			return fail(sim.ErrTransient, x)
		}
	}
	return f.h.Handle(d)
}

// Unwrap returns the wrapped handler.
func (f *faultyHandler) Unwrap() sim.Handler { return f.h }
