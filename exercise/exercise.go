package exercise

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of the package; every error it returns wraps one.
var (
	// ErrUnknown is wrapped when a name is not an exercise.
	ErrUnknown = errors.New("exercise: unknown exercise")
	// ErrSolution is wrapped when a solution is incomplete (a nil
	// function) or of the wrong exercise.
	ErrSolution = errors.New("exercise: bad solution")
	// ErrWorkspace is wrapped by the errors of Start.
	ErrWorkspace = errors.New("exercise: cannot write workspace")
)

// Solution is what a student hands in: one of the exercise's solution
// types (Outbox, DeadLetterLoop, Architecture, IdempotentConsumer,
// GroupMember, Retries) with the student's functions in its fields.
type Solution interface {
	// Exercise returns the name of the exercise the solution is for.
	Exercise() string
}

// Property is one guarantee a solution must keep, checked on every seed.
type Property struct {
	// ID is short and stable ("atomic-order"); reports and --json use it.
	ID string `json:"id"`
	// Title says in plain words what must hold.
	Title string `json:"title"`
}

// Exercise is one exercise: what the student writes, the lesson that
// comes before it, the properties it is graded by, the fault plan the
// grader runs, and the graded hints.
type Exercise struct {
	Number  int
	Name    string
	Title   string
	Concept string
	// Lesson is the lesson (a file of scenario/lessons, without .yaml) the
	// student should have played first.
	Lesson string
	// Task is the README's statement of the task, in Markdown.
	Task string
	// Hints are guiding questions, from gentle to pointed; never the
	// solution.
	Hints []string
	// Props are checked on every seed, in this order.
	Props []Property
	// Plan is the fault plan of every graded run.
	Plan faults.Plan
	// File is the student's file in a workspace; Stub is its first
	// content (the functions to write, with bodies that compile and fail).
	File, Stub string
	// Bind is the Go expression, in the workspace's package main, that
	// makes the Solution from the student's functions.
	Bind string
	// Ticks is how long one graded run lasts at most.
	Ticks sim.Tick

	// run drives one graded run of sol; check says what is missing in
	// sol before any run.
	run   func(r *Run, sol Solution)
	check func(sol Solution) error
}

// registry is every exercise, by number.
var registry []*Exercise

// register adds e; the exercises' files call it from init.
func register(e *Exercise) {
	registry = append(registry, e)
	sort.Slice(registry, func(i, j int) bool { return registry[i].Number < registry[j].Number })
}

// All returns the exercises in their order. The slice is a copy; the
// exercises are shared and must not be changed.
func All() []*Exercise { return append([]*Exercise(nil), registry...) }

// Lookup returns the exercise called name, or the one numbered name
// ("1"), or an error wrapping ErrUnknown that lists the names.
func Lookup(name string) (*Exercise, error) {
	for _, e := range registry {
		if e.Name == name || fmt.Sprint(e.Number) == name {
			return e, nil
		}
	}
	var names []string
	for _, e := range registry {
		names = append(names, e.Name)
	}
	return nil, fmt.Errorf("%w %q; the exercises are: %s", ErrUnknown, name, strings.Join(names, ", "))
}

// prop returns the property with id; it panics on an unknown id, which
// is a mistake in this package, caught by its tests.
func (e *Exercise) prop(id string) Property {
	for _, p := range e.Props {
		if p.ID == id {
			return p
		}
	}
	panic("exercise: " + e.Name + " has no property " + id)
}

// Hint returns hint n (from 1) and how many there are, or an error that
// says which numbers exist.
func (e *Exercise) Hint(n int) (string, int, error) {
	if n < 1 || n > len(e.Hints) {
		return "", len(e.Hints), fmt.Errorf("exercise %s has hints 1 to %d, not %d", e.Name, len(e.Hints), n)
	}
	return e.Hints[n-1], len(e.Hints), nil
}

// Check reports what is missing in sol (a nil function, a solution of
// another exercise), wrapping ErrSolution.
func (e *Exercise) Check(sol Solution) error {
	if sol == nil {
		return fmt.Errorf("%w: no solution", ErrSolution)
	}
	if sol.Exercise() != e.Name {
		return fmt.Errorf("%w: a solution of %q given to exercise %q", ErrSolution, sol.Exercise(), e.Name)
	}
	if e.check != nil {
		if err := e.check(sol); err != nil {
			return fmt.Errorf("%w: %w", ErrSolution, err)
		}
	}
	return nil
}

// missing names the nil functions among fns (name, value pairs).
func missing(fns ...any) error {
	var nils []string
	for i := 0; i+1 < len(fns); i += 2 {
		if isNil(fns[i+1]) {
			nils = append(nils, fns[i].(string))
		}
	}
	if len(nils) > 0 {
		return fmt.Errorf("no function for %s", strings.Join(nils, ", "))
	}
	return nil
}
