package faults

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/sim"
)

// ErrNotReplayable reports a schedule Config.Replay cannot replay.
var ErrNotReplayable = errors.New("faults: schedule cannot be replayed")

// MaxDecisions caps how many firings an injector lists in Fired; the
// firings after it are only counted (Schedule.Omitted), so a long run
// never grows the list without bound.
const MaxDecisions = 1 << 20

// occKey names an opportunity: a point consulted for a context. For a
// message (Msg != 0) it is counted over the whole run, so it survives the
// removal of firings that only shift ticks; without a message it is
// counted within its tick.
type occKey struct {
	point                            Point
	msg                              sim.ID
	tick                             sim.Tick // only when msg == 0
	where, consumer, group, key, typ string
	n                                int // the occurrence, in replay lookups; 0 when counting
}

func keyOf(p Point, c *Context, now sim.Tick) occKey {
	k := occKey{point: p, msg: c.Msg, where: c.Where, consumer: c.Consumer, group: c.Group, key: c.Key, typ: c.Type}
	if c.Msg == 0 {
		k.tick = now
	}
	return k
}

func (d *Decision) key() occKey {
	k := keyOf(d.Point, &Context{Where: d.Where, Consumer: d.Consumer, Group: d.Group, Key: d.Key, Type: d.Type, Msg: d.Msg}, d.Tick)
	k.n = d.Occurrence
	return k
}

type replayEntry struct {
	d    Decision
	used bool
}

// pointSeen holds the consultations of one point in the current tick.
type pointSeen struct {
	point Point
	ctx   []Context
}

// recorder counts opportunities and lists the firings (Config.Record)
// and holds the schedule being replayed (Config.Replay).
type recorder struct {
	now     sim.Tick
	started bool
	byMsg   map[occKey]int // occurrences of message opportunities, over the run
	byTick  map[occKey]int // occurrences of the other opportunities, this tick
	seen    []pointSeen
	replay  map[occKey]*replayEntry // nil when only recording
	points  []Point                 // the points the replayed schedule names
	fired   []Decision              // every firing, up to MaxDecisions
}

func newRecorder(s *Schedule) *recorder {
	r := &recorder{byMsg: map[occKey]int{}, byTick: map[occKey]int{}}
	if s != nil {
		r.replay = make(map[occKey]*replayEntry, len(s.Decisions))
		for _, d := range s.Decisions {
			r.replay[d.key()] = &replayEntry{d: d}
			if !r.replays(d.Point) {
				r.points = append(r.points, d.Point)
			}
		}
	}
	return r
}

// replays reports whether the replayed schedule names point p.
func (r *recorder) replays(p Point) bool {
	for _, x := range r.points {
		if x == p {
			return true
		}
	}
	return false
}

// note counts a consultation of p for c at tick now and returns its
// occurrence.
func (r *recorder) note(now sim.Tick, p Point, c *Context) int {
	if !r.started || now != r.now {
		r.started, r.now = true, now
		if len(r.byTick) > 0 {
			clear(r.byTick)
		}
		for i := range r.seen {
			clear(r.seen[i].ctx)
			r.seen[i].ctx = r.seen[i].ctx[:0]
		}
	}
	k := keyOf(p, c, now)
	m := r.byMsg
	if c.Msg == 0 {
		m = r.byTick
	}
	occ := m[k] + 1
	m[k] = occ
	ps := r.seenOf(p)
	ps.ctx = append(ps.ctx, *c)
	return occ
}

func (r *recorder) seenOf(p Point) *pointSeen {
	for i := range r.seen {
		if r.seen[i].point == p {
			return &r.seen[i]
		}
	}
	r.seen = append(r.seen, pointSeen{point: p})
	return &r.seen[len(r.seen)-1]
}

// nth returns how many consultations of p this tick, up to the latest,
// match c's non-empty fields: the count a rule whose Match names exactly
// those fields would have reached.
func (r *recorder) nth(p Point, c *Context) int {
	n := 0
	for _, x := range r.seenOf(p).ctx {
		if covers(c, &x) {
			n++
		}
	}
	return n
}

// covers reports whether pattern c (empty fields match anything) matches x.
func covers(c, x *Context) bool {
	eq := func(p, s string) bool { return p == "" || p == s }
	return eq(c.Where, x.Where) && eq(c.Consumer, x.Consumer) && eq(c.Group, x.Group) && eq(c.Key, x.Key) && eq(c.Type, x.Type)
}

// checkRecorded is CheckRef when recording or replaying; head is the
// first rule of p, nil when no rule targets it.
func (in *Injector) checkRecorded(p Point, head *ruleState, c *Context) *Firing {
	rec := in.rec
	now := in.env.Clock.Now()
	if rec.replay != nil {
		if !rec.replays(p) {
			return nil
		}
		k := keyOf(p, c, now)
		k.n = rec.note(now, p, c)
		e := rec.replay[k]
		if e == nil || e.used {
			return nil
		}
		e.used = true
		if r := in.rule(e.d.Rule); r != nil {
			r.fired++
		}
		return in.fire(e.d.Rule, p, e.d.Param, e.d.Error, c, k.n, rec.nth(p, c))
	}
	if head == nil {
		return nil
	}
	occ := rec.note(now, p, c)
	if r := draw(head, now, c); r != nil {
		return in.fire(r.Name, r.Point, r.Param, r.Error, c, occ, rec.nth(p, c))
	}
	return nil
}

// Fired returns every firing of the run so far, in order, when the
// injector records (Config.Record or Config.Replay), at most MaxDecisions
// of them; Omitted counts the firings not listed (every firing, when the
// injector does not record). It copies the list: O(firings).
func (in *Injector) Fired() Schedule {
	if in == nil {
		return Schedule{}
	}
	var fired []Decision
	if in.rec != nil {
		fired = in.rec.fired
	}
	return Schedule{Decisions: append([]Decision(nil), fired...), Omitted: in.omitted}
}

// replayable reports why s cannot be replayed, nil when it can.
func (s *Schedule) replayable() error {
	if s.Omitted > 0 {
		return fmt.Errorf("%w: %d firings were not listed (the run did not set Config.Record, or fired more than %d times)", ErrNotReplayable, s.Omitted, MaxDecisions)
	}
	seen := make(map[occKey]int, len(s.Decisions))
	var errs []error
	for i, d := range s.Decisions {
		switch {
		case !Known(d.Point):
			errs = append(errs, fmt.Errorf("%w: decision %d: %w %q", ErrNotReplayable, i+1, ErrUnknownPoint, d.Point))
		case d.Occurrence <= 0:
			errs = append(errs, fmt.Errorf("%w: decision %d (%s) was not recorded: set Config.Record in the run that made it", ErrNotReplayable, i+1, d.Words()))
		default:
			if j, dup := seen[d.key()]; dup {
				errs = append(errs, fmt.Errorf("%w: decisions %d and %d name the same opportunity", ErrNotReplayable, j, i+1))
			}
			seen[d.key()] = i + 1
		}
	}
	return errors.Join(errs...)
}
