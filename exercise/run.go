package exercise

import (
	"fmt"
	"reflect"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Violation is one breach of a property in one run.
type Violation struct {
	Prop string   `json:"prop"`
	Tick sim.Tick `json:"tick"`
	Text string   `json:"text"`
}

// String formats v as "t=5 TEXT".
func (v Violation) String() string { return fmt.Sprintf("t=%d %s", v.Tick, v.Text) }

// Run is one graded run: a world at a seed with the exercise's fault
// injector, the violations found so far and, when kept, the trace. The
// exercises' harnesses drive it; a student's code sees it only through
// the types it is handed (Store, WorkQueue, ...).
type Run struct {
	ex      *Exercise
	seed    uint64
	w       *sim.World
	env     *sim.Env
	inj     *faults.Injector
	viol    []Violation
	seen    map[string]bool // properties with a violation
	held    map[string]bool // properties that had something to judge
	trace   []sim.Event     // kept only for a replay
	keep    bool
	harness any // the exercise's own state
	// replay is the schedule the run fires exactly, nil to draw from the
	// plan; a harness that builds its own injector (a scenario run) uses
	// it there and reports what fired in fired.
	replay *faults.Schedule
	fired  *faults.Schedule
	// clock, when set, is the clock of the world the harness built
	// itself; violations are stamped with it.
	clock func() sim.Tick
	calls int // calls into the harness by the student's code, for the budget
}

// maxCalls bounds the calls a student's code makes into one run's world:
// a loop that never ends is stopped there instead of hanging the grader.
const maxCalls = 5000

// crash is the panic a harness raises to crash the student's process at a
// fault: the student's deferred calls run (a go-memdb Abort), the world
// stays, and the harness starts the code again later.
type crash struct{ point faults.Point }

// stop is the panic that ends a run whose student code went over its
// budget; why is reported under prop.
type stop struct{ prop, why string }

// fail records a violation of prop at the current tick. Only the first
// violation of each property is kept, so a run's report stays short
// whatever the code does.
func (r *Run) fail(prop, format string, args ...any) {
	r.ex.prop(prop)
	if r.seen[prop] {
		return
	}
	r.seen[prop] = true
	now := r.env.Now()
	if r.clock != nil {
		now = r.clock()
	}
	v := Violation{Prop: prop, Tick: now, Text: fmt.Sprintf(format, args...)}
	r.viol = append(r.viol, v)
	ev := sim.Event{Kind: sim.KindFailed, Where: "expect", Detail: "FAIL " + prop + ": " + v.Text}
	if r.clock == nil {
		r.env.Emit(ev)
	} else if r.keep {
		ev.Tick, ev.Seq = now, uint64(len(r.trace)+1)
		r.trace = append(r.trace, ev)
	}
}

// judged records that prop had something to judge in this run (an order
// stored, a row marked, a message received), so a property that holds
// only because the code never got that far is not counted as held.
func (r *Run) judged(prop string) { r.held[prop] = true }

// failed reports whether prop has been violated.
func (r *Run) failed(prop string) bool { return r.seen[prop] }

// note puts a line of what the harness did into the trace, for the
// player.
func (r *Run) note(where, actor, format string, args ...any) {
	r.env.Emit(sim.Event{Kind: sim.KindAction, Where: where, Actor: actor, Detail: fmt.Sprintf(format, args...)})
}

// fault consults the injector at p.
func (r *Run) fault(p faults.Point, c faults.Context) (faults.Firing, bool) {
	return r.inj.Check(p, c)
}

// call counts one call of the student's code into the world and stops
// the run when the budget is spent.
func (r *Run) call(prop, why string) {
	r.calls++
	if r.calls > maxCalls {
		panic(stop{prop, why})
	}
}

// student calls f, the student's code. It returns the crash that ended
// it, if a fault crashed it; a panic of the code itself is reported under
// prop and ends the call as a crash would.
func (r *Run) student(prop, what string, f func()) (crashed *crash) {
	r.judged(prop)
	defer func() {
		switch p := recover().(type) {
		case nil:
		case crash:
			crashed = &p
		case stop:
			panic(p)
		default:
			r.fail(prop, "%s panicked: %v", what, p)
			crashed = &crash{}
		}
	}()
	f()
	return nil
}

// Outcome is what one run found.
type Outcome struct {
	Seed       uint64
	Violations []Violation
	// Fired is every fault decision of the run, recorded.
	Fired faults.Schedule
	// Trace is the run's trace, when it was asked for.
	Trace []sim.Event
	// End is the last tick.
	End sim.Tick
	// Judged are the properties that had something to judge.
	Judged map[string]bool
}

// Failed reports whether prop (any property when "") was violated.
func (o *Outcome) Failed(prop string) bool {
	for _, v := range o.Violations {
		if prop == "" || v.Prop == prop {
			return true
		}
	}
	return false
}

// execute runs sol once at seed: with the exercise's plan, or firing
// exactly replay when it is non-nil. The run records its fault
// decisions; keep keeps its trace. Cost: one run of the exercise's world,
// O(Ticks) steps plus what the student's code does, capped by maxCalls.
func (e *Exercise) execute(sol Solution, seed uint64, replay *faults.Schedule, keep bool) *Outcome {
	w, err := sim.New(sim.Config{Seed: seed, MaxTicks: e.Ticks + 1000})
	if err != nil {
		panic(err) // a zero MaxTicks is the only error, and it is not zero
	}
	r := &Run{ex: e, seed: seed, w: w, env: w.Env(), seen: map[string]bool{}, held: map[string]bool{}, keep: keep, replay: replay}
	if keep {
		w.Trace().Attach(sim.SinkFunc(func(ev *sim.Event) { r.trace = append(r.trace, *ev) }))
	}
	inj, err := faults.New(w, faults.Config{Plan: e.Plan, Record: true, Replay: replay})
	if err != nil {
		panic(fmt.Sprintf("exercise %s: fault plan: %v", e.Name, err))
	}
	r.inj = inj
	func() {
		defer func() {
			if p := recover(); p != nil {
				s, ok := p.(stop)
				if !ok {
					panic(p)
				}
				r.fail(s.prop, "%s", s.why)
			}
		}()
		e.run(r, sol)
	}()
	fired := inj.Fired()
	if r.fired != nil {
		fired = *r.fired
	}
	end := r.env.Now()
	if r.clock != nil {
		end = r.clock()
	}
	return &Outcome{Seed: seed, Violations: r.viol, Fired: fired, Trace: r.trace, End: end, Judged: r.held}
}

// isNil reports whether v is nil or a nil func, map, pointer or slice.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Func, reflect.Map, reflect.Pointer, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
