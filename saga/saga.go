// Package saga is brokerlab's saga orchestrator: a pure, deterministic
// state machine that runs one saga per order it takes from a queue,
// through a fixed list of steps (order → reserve → charge → confirm), and
// undoes the steps already done, in reverse order, when a later step fails.
//
// The orchestrator is a sim.Component in the consumer phase, driven only
// by ticks. Each tick it takes the orders visible on its queue (one saga
// per order, traced "processed" for the order, then acked), and moves
// every open saga by at most one step, in the order the sagas started:
//
//   - A running saga sends its current step. The participant applies it
//     (traced "step_done"), declines it (fault point saga.step_failed,
//     traced "step_failed"), or never answers (saga.step_silent): the
//     orchestrator waits Timeout ticks and then parks the saga for review
//     (traced "step_failed" with Detail "timeout" and "saga_ended parked").
//     A parked saga compensates nothing: whether the silent step happened
//     is unknown, so a person must decide.
//   - A declined step makes the saga compensate, if Config.Compensate is
//     set: one compensation per tick, for the done steps that have one,
//     last done first. Without it the saga ends "failed" and its done
//     steps stay applied (a reservation stays held).
//   - A compensation is itself an idempotent event: its participant
//     records (saga, step) and applies it once. A compensation delivered
//     twice (saga.compensation_duplicate) is traced a second time with
//     Detail "duplicate" and changes nothing.
//
// What happened is traced once, as events; Metrics counts the same
// events (Held is folded from them), so a fold of the trace gives the
// same figures. Memory is
// O(sagas started); a tick costs O(open sagas + orders received).
package saga

import (
	"fmt"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package saga.
var (
	// ErrInvalidConfig reports a Config that cannot work, or a world that
	// refused to register the orchestrator. It wraps sim.ErrInvalidConfig.
	ErrInvalidConfig = sim.Sentinel("saga: invalid config", sim.ErrInvalidConfig)
)

// DuplicateMark ends the Detail of a "compensated" event for a
// compensation delivered again, which applied nothing.
const DuplicateMark = "(duplicate, applied once)"

// MaxSteps bounds the steps of one saga.
const MaxSteps = 16

// Step is one step of a saga: the command a participant applies, and the
// compensation that undoes it ("" for a step nothing undoes, such as the
// last one).
type Step struct {
	Name         string
	Compensation string
}

// Config configures an Orchestrator.
type Config struct {
	// Name names the orchestrator; required. The world knows it as
	// "saga:"+Name, and it is the consumer of its queue.
	Name string
	// Queue holds the orders; each order starts one saga. Required.
	Queue *queue.Queue
	// Steps are the saga's steps, in order; 1 to MaxSteps, with distinct
	// non-empty names.
	Steps []Step
	// Timeout is how many ticks the orchestrator waits for a step's
	// answer before it parks the saga; 0 means 3.
	Timeout sim.Tick
	// Compensate makes a saga whose step is declined undo its done steps.
	Compensate bool
	// Faults is consulted at saga.step_failed, saga.step_silent and
	// saga.compensation_duplicate; nil injects nothing.
	Faults *faults.Injector
}

// Validate reports a configuration error, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("%w: a saga needs a name", ErrInvalidConfig)
	}
	if c.Queue == nil {
		return fmt.Errorf("%w: saga %q needs a queue for its orders", ErrInvalidConfig, c.Name)
	}
	if len(c.Steps) == 0 || len(c.Steps) > MaxSteps {
		return fmt.Errorf("%w: saga %q has %d steps; 1 to %d are allowed", ErrInvalidConfig, c.Name, len(c.Steps), MaxSteps)
	}
	seen := map[string]bool{}
	for _, s := range c.Steps {
		if s.Name == "" || seen[s.Name] {
			return fmt.Errorf("%w: saga %q: step names must be non-empty and distinct, got %q", ErrInvalidConfig, c.Name, s.Name)
		}
		seen[s.Name] = true
	}
	if c.Timeout < 0 {
		return fmt.Errorf("%w: saga %q: timeout %d is negative", ErrInvalidConfig, c.Name, c.Timeout)
	}
	return nil
}

// State is where a saga is.
type State uint8

// The saga states.
const (
	Running      State = iota // sending its steps
	Compensating              // undoing its done steps
	Completed                 // every step applied
	Compensated               // a step was declined and every done step undone
	Failed                    // a step was declined and nothing undone
	Parked                    // a step never answered: left for review
)

var stateNames = [...]string{"running", "compensating", "completed", "compensated", "failed", "parked"}

// String returns the state's name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// Saga is one saga's state, as Sagas returns it.
type Saga struct {
	Order sim.ID // the order message that started it
	Key   string // the order's key
	State State
	// Done is how many steps were applied; Undone how many of them were
	// compensated.
	Done, Undone int
	// Held lists the applied steps that have a compensation and were not
	// compensated: what the saga still holds (a reservation, a charge).
	Held []string
}

type run struct {
	Saga
	corr   string
	step   int      // the step being sent (Running) or compensated (Compensating)
	sentAt sim.Tick // when the current step was sent
	silent bool     // the current step will never answer
}

// Metrics are an orchestrator's counters. Every one is a count of trace
// events (see the package doc), except Held, which is folded from them.
type Metrics struct {
	Started, Completed, Compensated, Failed, Parked int
	// Compensations counts compensations applied, Duplicates those
	// delivered again and applied nothing.
	Compensations, Duplicates int
	// Held is the number of applied steps with a compensation in sagas
	// that ended failed: reservations and charges nobody will release.
	// (A parked saga's steps wait for review and are not counted.)
	Held int
}

// Orchestrator runs sagas. It is not safe for concurrent use; the world
// steps it.
type Orchestrator struct {
	cfg   Config
	env   *sim.Env
	where string
	sagas []*run
	byID  map[sim.ID]bool // orders that started a saga
	open  []*run
	buf   []queue.Delivery
	m     Metrics
}

// New returns an orchestrator for cfg, registered in w.
func New(w *sim.World, cfg Config) (*Orchestrator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 3
	}
	cfg.Steps = append([]Step(nil), cfg.Steps...)
	o := &Orchestrator{cfg: cfg, env: w.Env(), where: "saga:" + cfg.Name, byID: map[sim.ID]bool{}}
	if err := w.Add(o.where, o); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return o, nil
}

// Phase places the orchestrator with the consumers.
func (o *Orchestrator) Phase() sim.Phase { return sim.PhaseConsumer }

// Name returns the orchestrator's name.
func (o *Orchestrator) Name() string { return o.cfg.Name }

// Metrics returns the orchestrator's counters. It costs O(1).
func (o *Orchestrator) Metrics() Metrics { return o.m }

// Sagas returns every saga started, in start order, with copies of their
// held steps. It costs O(sagas x steps).
func (o *Orchestrator) Sagas() []Saga {
	out := make([]Saga, len(o.sagas))
	for i, r := range o.sagas {
		out[i] = r.Saga
		out[i].Held = append([]string(nil), r.Held...)
	}
	return out
}

// Step takes the visible orders and moves every open saga by one step.
func (o *Orchestrator) Step(now sim.Tick) {
	open := o.open[:0]
	for _, r := range o.open {
		o.advance(r, now)
		if r.State == Running || r.State == Compensating {
			open = append(open, r)
		}
	}
	clear(o.open[len(open):])
	o.open = open
	o.take(now)
}

// take starts one saga per visible order. A refused receive or ack is
// left to the queue: the order comes back after its visibility timeout
// and, being known, is acked without a second saga.
func (o *Orchestrator) take(now sim.Tick) {
	ds, err := o.cfg.Queue.AppendReceive(o.buf[:0], o.cfg.Name, 10)
	o.buf = ds[:0]
	if err != nil {
		return
	}
	for i := range ds {
		d := &ds[i]
		m := &d.Message
		if !o.byID[m.ID] {
			corr := m.Headers.CorrelationID
			if corr == "" {
				corr = m.ID.String()
			}
			r := &run{Saga: Saga{Order: m.ID, Key: m.Key}, corr: corr, sentAt: now}
			o.sagas = append(o.sagas, r)
			o.byID[m.ID] = true
			o.open = append(o.open, r)
			o.m.Started++
			o.env.Emit(sim.Event{Kind: sim.KindProcessed, Where: o.where, Actor: o.cfg.Name, Consumer: o.cfg.Name,
				Msg: m.ID, Key: m.Key, Corr: corr, Detail: "saga started"})
		}
		_ = o.cfg.Queue.Ack(d.Receipt) // a refused ack brings the order back; known, it starts nothing
	}
	clear(ds)
}

func (o *Orchestrator) emit(kind sim.Kind, r *run, typ, rule, detail string) {
	o.env.Emit(sim.Event{Kind: kind, Where: o.where, Actor: o.cfg.Name, Consumer: o.cfg.Name,
		Msg: r.Order, Key: r.Key, Type: typ, Corr: r.corr, Rule: rule, Detail: detail})
}

func (o *Orchestrator) check(p faults.Point, r *run, typ string) *faults.Firing {
	return o.cfg.Faults.CheckRef(p, &faults.Context{Where: o.where, Consumer: o.cfg.Name, Key: r.Key, Type: typ, Msg: r.Order})
}

// advance moves saga r by one step at tick now.
func (o *Orchestrator) advance(r *run, now sim.Tick) {
	switch r.State {
	case Running:
		o.send(r, now)
	case Compensating:
		o.undo(r)
	}
}

func (o *Orchestrator) send(r *run, now sim.Tick) {
	st := o.cfg.Steps[r.step]
	if r.silent {
		if now-r.sentAt >= o.cfg.Timeout {
			o.emit(sim.KindStepFailed, r, st.Name, "", fmt.Sprintf("%s: no answer, timeout after %d ticks", st.Name, now-r.sentAt))
			o.end(r, Parked)
		}
		return
	}
	if f := o.check(faults.SagaStepSilent, r, st.Name); f != nil {
		r.silent, r.sentAt = true, now
		return
	}
	if f := o.check(faults.SagaStepFailed, r, st.Name); f != nil {
		o.emit(sim.KindStepFailed, r, st.Name, f.Rule, st.Name+": declined")
		if !o.cfg.Compensate || r.Done == 0 {
			if o.cfg.Compensate {
				o.end(r, Compensated)
			} else {
				o.end(r, Failed)
			}
			return
		}
		r.State, r.step = Compensating, r.Done-1
		return
	}
	o.emit(sim.KindStepDone, r, st.Name, "", st.Name)
	r.Done++
	if st.Compensation != "" {
		r.Held = append(r.Held, st.Name)
	}
	r.step++
	if r.step == len(o.cfg.Steps) {
		o.end(r, Completed)
	}
}

// undo sends the compensation of step r.step, the last done step not yet
// undone, skipping steps without one.
func (o *Orchestrator) undo(r *run) {
	for r.step >= 0 && o.cfg.Steps[r.step].Compensation == "" {
		r.step--
	}
	if r.step < 0 {
		o.end(r, Compensated)
		return
	}
	st := o.cfg.Steps[r.step]
	o.emit(sim.KindCompensated, r, st.Compensation, "", st.Compensation+" "+st.Name)
	o.release(r, st.Name)
	if f := o.check(faults.SagaCompensationDuplicate, r, st.Compensation); f != nil {
		// The participant has (saga, step) on record: the copy applies nothing.
		o.emit(sim.KindCompensated, r, st.Compensation, f.Rule, st.Compensation+" "+st.Name+" "+DuplicateMark)
		o.m.Duplicates++
	}
	r.step--
	if r.step < 0 {
		o.end(r, Compensated)
	}
}

func (o *Orchestrator) release(r *run, step string) {
	for i, h := range r.Held {
		if h == step {
			r.Held = append(r.Held[:i], r.Held[i+1:]...)
			break
		}
	}
	r.Undone++
	o.m.Compensations++
}

func (o *Orchestrator) end(r *run, s State) {
	r.State = s
	switch s {
	case Completed:
		o.m.Completed++
		r.Held = nil // the order went through: nothing is left dangling
	case Compensated:
		o.m.Compensated++
	case Failed:
		o.m.Failed++
		o.m.Held += len(r.Held)
	case Parked:
		o.m.Parked++
	}
	o.emit(sim.KindSagaEnded, r, "", "", s.String())
}
