package outbox

import (
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// InFlightCheck is a trace sink that checks the lease invariant of polling
// relays: no outbox row is claimed or published by one relay while another
// relay still holds an unexpired claim on it, i.e. no row is in flight at two
// relays at once, and no relay records a failure or a release (which clear
// the lease) on a row another relay holds. It knows only the trace and each relay's lease length, so
// it checks the relays rather than trusting them. Attach it to the trace
// before the run; it costs O(1) per event and one map entry per row in
// flight.
type InFlightCheck struct {
	lease      map[string]sim.Tick // by relay name; never iterated
	holder     map[sim.ID]string
	until      map[sim.ID]sim.Tick
	violations []sim.Violation
}

// CheckInFlight is the name of the check in its violations.
const CheckInFlight = "in-flight-once"

// NewInFlightCheck returns a check for the given relays.
func NewInFlightCheck(relays ...*Relay) *InFlightCheck {
	c := &InFlightCheck{lease: map[string]sim.Tick{}, holder: map[sim.ID]string{}, until: map[sim.ID]sim.Tick{}}
	for _, r := range relays {
		c.lease[r.cfg.Name] = r.cfg.Lease
	}
	return c
}

// Emit inspects one trace event.
func (c *InFlightCheck) Emit(e *sim.Event) {
	if _, ok := c.lease[e.Actor]; !ok {
		return
	}
	switch e.Kind {
	case KindClaimed:
		if h, ok := c.holder[e.Msg]; ok && h != e.Actor && c.until[e.Msg] > e.Tick {
			c.add(e, "claimed while "+h+" holds it until t="+strconv.FormatInt(int64(c.until[e.Msg]), 10))
		}
		c.holder[e.Msg], c.until[e.Msg] = e.Actor, e.Tick+c.lease[e.Actor]
	case KindMarked, KindReleased, sim.KindFailed, sim.KindDeadLettered:
		h, ok := c.holder[e.Msg]
		if ok && h != e.Actor && c.until[e.Msg] > e.Tick && e.Kind != KindMarked {
			// A failure or a release clears the lease: written by a relay
			// that no longer holds the row, it would free a row another
			// relay is working on.
			c.add(e, string(e.Kind)+" while "+h+" holds it until t="+strconv.FormatInt(int64(c.until[e.Msg]), 10))
		}
		if h == e.Actor {
			delete(c.holder, e.Msg)
			delete(c.until, e.Msg)
		}
	case sim.KindRelayed:
		if h, ok := c.holder[e.Msg]; !ok || h != e.Actor {
			c.add(e, "published without holding the row (holder "+strconv.Quote(h)+")")
		}
	}
}

func (c *InFlightCheck) add(e *sim.Event, detail string) {
	c.violations = append(c.violations, sim.Violation{Check: CheckInFlight, Msg: e.Msg, Key: e.Key, Consumer: e.Actor, Tick: e.Tick, Detail: detail})
}

// Violations returns every violation seen so far, in trace order.
func (c *InFlightCheck) Violations() []sim.Violation { return c.violations }

// Err returns nil when the invariant held, or a *sim.CheckError with every
// violation.
func (c *InFlightCheck) Err() error {
	if len(c.violations) == 0 {
		return nil
	}
	return &sim.CheckError{Violations: c.violations}
}
