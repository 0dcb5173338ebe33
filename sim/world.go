package sim

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Sentinel errors of package sim (the meanings shared by the models are in
// errors.go).
var (
	ErrDuplicateName = errors.New("sim: duplicate component name")
	ErrTickCap       = errors.New("sim: tick cap reached")
	ErrNotDone       = errors.New("sim: not done")
)

// Env is what every model and actor of one World shares: the clock, the
// trace, the ledger folding the trace, the ID allocator and the seed. Only
// World makes one, so every model of a run shares the same clock and
// ledger; models reach it through the World their constructor takes.
type Env struct {
	Clock  Clock
	Trace  *Trace
	Ledger *Ledger // read it; it is written only by folding Trace's events
	IDs    IDs
	Seed   uint64

	budget Budget
	over   error  // the budget error the run stopped with
	watch  bool   // over is set or budget has a cap Exceeded checks: false lets Exceeded answer nil at once
	steps  uint64 // component steps run so far (Budget.Steps)
}

// newEnv returns an Env with the given seed and an empty ledger attached
// to a trace without other sinks.
func newEnv(seed uint64) *Env {
	l := NewLedger()
	return &Env{Seed: seed, Trace: NewTrace(l), Ledger: l}
}

// Now returns the current tick.
func (e *Env) Now() Tick { return e.Clock.Now() }

// Stream returns the random stream of the component called name.
func (e *Env) Stream(name string) *Stream { return NewStream(e.Seed, name) }

// Emit stamps ev with the current tick and adds it to the trace.
func (e *Env) Emit(ev Event) {
	ev.Tick = e.Clock.Now()
	e.Trace.Emit(ev)
}

// NewMessage creates a message with a fresh ID, created now. The ledger
// learns of it from the event that hands it to a broker or an outbox.
func (e *Env) NewMessage(key string, body []byte, h Headers) Message {
	return Message{ID: e.IDs.Next(), Key: key, Body: body, Headers: h, Created: e.Clock.Now()}
}

// Phase orders the components of a World within one tick.
type Phase int

// The phases, in the order they run within a tick.
const (
	PhaseBroker   Phase = iota // brokers: timers, visibility expiry, retention, delayed deliveries
	PhaseProducer              // producers and writers
	PhaseRelay                 // outbox relays
	PhaseConsumer              // consumers, group members, subscribers
	PhaseObserver              // metrics and samplers
)

var phaseNames = [...]string{"broker", "producer", "relay", "consumer", "observer"}

// String returns the phase's name.
func (p Phase) String() string {
	if p >= 0 && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// Actor is a component the World steps once per tick.
type Actor interface {
	Step(now Tick)
}

// Component is an Actor whose type fixes the phase it runs in. Model
// constructors add their components to the World themselves, so a broker
// can be neither forgotten nor stepped in the wrong phase.
type Component interface {
	Actor
	Phase() Phase
}

// ActorFunc adapts a function to an Actor.
type ActorFunc func(now Tick)

// Step calls f(now).
func (f ActorFunc) Step(now Tick) { f(now) }

type member struct {
	phase  Phase
	name   string
	actor  Actor
	weight uint64 // steps one step counts for (Weighted), at least 1
}

// Weighted is implemented by a component whose one step does the work of
// several, such as a queue consumer with competing instances: each of its
// steps counts Weight steps against Budget.Steps. Weight is read once,
// when the component is added.
type Weighted interface {
	Weight() int
}

type action struct {
	at   Tick
	seq  int
	name string
	run  func()
}

// Config configures a World.
type Config struct {
	// Seed makes the run reproducible.
	Seed uint64
	// MaxTicks caps Run and RunUntil; 0 means DefaultMaxTicks.
	MaxTicks Tick
}

// DefaultMaxTicks is the tick cap when Config.MaxTicks is 0.
const DefaultMaxTicks Tick = 1_000_000

// Validate reports a configuration error.
func (c Config) Validate() error {
	if c.MaxTicks < 0 {
		return fmt.Errorf("%w: MaxTicks %d is negative", ErrInvalidConfig, c.MaxTicks)
	}
	return nil
}

// World runs a simulation: it owns the Env and steps every registered
// component once per tick in a fixed order. Within a tick, first the
// timeline actions due at that tick run (in the order they were scheduled),
// then the components by phase (broker, producer, relay, consumer,
// observer) and, within a phase, in registration order. A World is driven by
// one goroutine.
type World struct {
	env      *Env
	members  []member
	names    map[string]bool // the members' names once there are more than namesFrom; nil before (see taken)
	timeline []action
	seq      int
	maxTicks Tick
}

// New returns a World at tick 0.
func New(cfg Config) (*World, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	max := cfg.MaxTicks
	if max == 0 {
		max = DefaultMaxTicks
	}
	// Room for a typical world's components from the start, so the first
	// few adds allocate nothing; the list grows as append does after.
	members := make([]member, 0, worldFirst)
	return &World{env: newEnv(cfg.Seed), members: members, maxTicks: max}, nil
}

// worldFirst is the number of components a World has room for when it is
// made: a broker, a producer and a few consumers or members. A smaller
// world wastes at most that many 48-byte members (288 bytes, a size class
// of its own); a larger one grows the list as append does.
const worldFirst = 6

// Env returns the world's shared environment.
func (w *World) Env() *Env { return w.env }

// Now returns the current tick.
func (w *World) Now() Tick { return w.env.Clock.Now() }

// Trace returns the world's trace; attach sinks to it to see the run.
func (w *World) Trace() *Trace { return w.env.Trace }

// Ledger returns the ledger folded from the world's trace.
func (w *World) Ledger() *Ledger { return w.env.Ledger }

// Add registers a component under a unique name, in the phase its type
// fixes. Model constructors call it; users rarely need to.
func (w *World) Add(name string, c Component) error {
	if c == nil {
		return fmt.Errorf("%w: component %q is nil", ErrInvalidConfig, name)
	}
	return w.add(c.Phase(), name, c)
}

// AddFunc registers a function of the caller's own, stepped once per tick
// in the given phase under a unique name: a custom actor or an observer.
func (w *World) AddFunc(name string, phase Phase, f func(now Tick)) error {
	if f == nil {
		return fmt.Errorf("%w: component %q is nil", ErrInvalidConfig, name)
	}
	return w.add(phase, name, ActorFunc(f))
}

// add registers a under name in phase.
func (w *World) add(phase Phase, name string, a Actor) error {
	if phase < PhaseBroker || phase > PhaseObserver {
		return fmt.Errorf("%w: unknown phase %d for %q", ErrInvalidConfig, int(phase), name)
	}
	if w.taken(name) {
		return fmt.Errorf("%w: %q", ErrDuplicateName, name)
	}
	weight := uint64(1)
	if wt, ok := a.(Weighted); ok && wt.Weight() > 1 {
		weight = uint64(wt.Weight())
	}
	// Members stay in phase order, and in the order added within a phase:
	// the new one goes after every member of its phase or an earlier one.
	i := len(w.members)
	for i > 0 && w.members[i-1].phase > phase {
		i--
	}
	w.members = slices.Insert(w.members, i, member{phase: phase, name: name, actor: a, weight: weight})
	switch {
	case w.names != nil:
		w.names[name] = true
	case len(w.members) > namesFrom:
		w.names = make(map[string]bool, len(w.members))
		for _, m := range w.members {
			w.names[m.name] = true
		}
	}
	return nil
}

// namesFrom is the number of components up to which a World finds a
// name among its members by scanning them (a few string comparisons,
// no map to allocate); past it, it indexes their names in a map.
const namesFrom = 16

// taken reports whether a component is called name: O(namesFrom) while
// the world has at most namesFrom components, O(1) after.
func (w *World) taken(name string) bool {
	if w.names != nil {
		return w.names[name]
	}
	for _, m := range w.members {
		if m.name == name {
			return true
		}
	}
	return false
}

// Components returns the registered component names in step order.
func (w *World) Components() []string {
	out := make([]string, len(w.members))
	for i, m := range w.members {
		out[i] = m.name
	}
	return out
}

// At schedules a timeline action to run at the start of tick t, before every
// component. Actions scheduled for a tick already past run at the next tick.
// Each action is traced as an "action" event naming it.
func (w *World) At(t Tick, name string, run func()) {
	w.seq++
	a := action{at: t, seq: w.seq, name: name, run: run}
	i := sort.Search(len(w.timeline), func(i int) bool {
		x := w.timeline[i]
		return x.at > t || x.at == t && x.seq > a.seq
	})
	w.timeline = append(w.timeline, action{})
	copy(w.timeline[i+1:], w.timeline[i:])
	w.timeline[i] = a
}

// Pending returns how many timeline actions have not run yet.
func (w *World) Pending() int { return len(w.timeline) }

// Tick advances the clock by one tick and runs it. It returns the new tick.
func (w *World) Tick() Tick {
	now := w.env.Clock.Advance()
	for len(w.timeline) > 0 && w.timeline[0].at <= now {
		a := w.timeline[0]
		w.timeline = w.timeline[1:]
		w.env.Emit(Event{Kind: KindAction, Where: "timeline", Detail: a.name})
		if a.run != nil {
			a.run()
		}
	}
	for _, m := range w.members {
		if w.env.Exceeded() != nil {
			break
		}
		w.env.steps += m.weight
		m.actor.Step(now)
	}
	return now
}

// Run runs n ticks, or up to the tick cap; it returns ErrTickCap when the
// cap stopped it.
func (w *World) Run(n Tick) error {
	for i := Tick(0); i < n; i++ {
		if w.Now() >= w.maxTicks {
			return fmt.Errorf("%w: %d ticks", ErrTickCap, w.maxTicks)
		}
		w.Tick()
		if err := w.env.Exceeded(); err != nil {
			return err
		}
	}
	return nil
}

// RunUntil runs ticks until done returns true (checked before each tick).
// It returns nil once done holds, and an error wrapping ErrNotDone when max
// ticks ran first (or ErrTickCap at the world's tick cap), so a test that
// stopped before the system drained cannot mistake it for success.
func (w *World) RunUntil(done func() bool, max Tick) error {
	for i := Tick(0); i < max; i++ {
		if done() {
			return nil
		}
		if w.Now() >= w.maxTicks {
			return fmt.Errorf("%w: %d ticks", ErrTickCap, w.maxTicks)
		}
		w.Tick()
		if err := w.env.Exceeded(); err != nil {
			return err
		}
	}
	if done() {
		return nil
	}
	return fmt.Errorf("%w after %d ticks (t=%d): the condition still does not hold", ErrNotDone, max, w.Now())
}
