package lab

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// ErrUnknownHandler is wrapped by the error New returns when
// Options.Handlers names a consumer, member or subscriber the scenario
// does not have, or binds one to nil.
var ErrUnknownHandler = errors.New("lab: cannot bind handler")

// Fixer is implemented by a bound Go handler that a fix_handler action of
// the timeline can fix, as it fixes a scripted one. A bound handler that
// is not a Fixer makes fix_handler a runtime error of the file.
type Fixer interface {
	Fix()
}

// Bindable is a name Options.Handlers can bind: a queue consumer (its
// every instance), a group member or a pub/sub subscriber of the file.
type Bindable struct {
	Name string
	// Kind is "consumer", "member" or "subscriber".
	Kind string
}

// Bindables returns the names Options.Handlers can bind, in file order:
// the queue consumers, then the group members, then the subscribers of
// every topic. Cost: O(actors).
func Bindables(s *scenario.Scenario) []Bindable {
	var out []Bindable
	for i := range s.Actors.Consumers {
		out = append(out, Bindable{s.Actors.Consumers[i].Name, "consumer"})
	}
	for i := range s.Actors.Members {
		out = append(out, Bindable{s.Actors.Members[i].Name, "member"})
	}
	for i := range s.Topology.Topics {
		for j := range s.Topology.Topics[i].Subscribers {
			out = append(out, Bindable{s.Topology.Topics[i].Subscribers[j].Name, "subscriber"})
		}
	}
	return out
}

// BindError is one name of Options.Handlers that cannot be bound.
type BindError struct {
	// File is the scenario's file name.
	File string
	// Name is the name as the Go code gave it.
	Name string
	// Why is "" for a name the scenario does not have, else what is wrong
	// (a nil handler).
	Why string
	// Have are the names the scenario does have, in file order.
	Have []string
}

// Error says what is wrong and, for an unknown name, lists the names the
// scenario has, e.g. `lab: no consumer "biling" in orders.yaml; it
// has: billing, shipping`.
func (e *BindError) Error() string {
	if e.Why != "" {
		return "lab: cannot bind handler " + strconv.Quote(e.Name) + " in " + e.File + ": " + e.Why
	}
	have := "no consumer, member or subscriber at all"
	if len(e.Have) > 0 {
		have = strings.Join(e.Have, ", ")
	}
	msg := "lab: no consumer " + strconv.Quote(e.Name) + " in " + e.File + "; it has: " + have
	if s := scenario.SuggestName(e.Name, e.Have); s != "" {
		msg += " (did you mean " + strconv.Quote(s) + "?)"
	}
	return msg
}

// Unwrap makes a BindError match ErrUnknownHandler.
func (e *BindError) Unwrap() error { return ErrUnknownHandler }

// checkHandlers reports every name of hs that cannot be bound, in name
// order: one the scenario does not have, a nil handler, or a name shared
// (Load refuses a file in which two actors share a name.)
func checkHandlers(s *scenario.Scenario, hs map[string]sim.Handler) error {
	if len(hs) == 0 {
		return nil
	}
	known := map[string]bool{}
	var have []string
	for _, b := range Bindables(s) {
		known[b.Name] = true
		have = append(have, b.Name)
	}
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	sort.Strings(names)
	var errs []error
	for _, n := range names {
		e := &BindError{File: s.File, Name: n}
		switch {
		case !known[n]:
			e.Have = have
		case hs[n] == nil:
			e.Why = "the handler is nil"
		default:
			continue
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// bound returns the Go handler bound to name, or nil.
func (r *Run) bound(name string) sim.Handler { return r.handlers[name] }

// playedBy returns the handler the actor name runs: the Go handler bound
// to it by Options.Handlers (which brings its own idempotency, if any), or
// else its scripted behaviour wrapped in the idempotency the file asks for.
func (r *Run) playedBy(name string, idem sim.IdempotencyKey, script sim.Handler) sim.Handler {
	if b := r.bound(name); b != nil {
		return b
	}
	return idem.Wrap(script)
}

// fixBound fixes the bound handler h for a fix_handler action of the
// timeline (Fixer), or says why it cannot.
func fixBound(kind, name string, h sim.Handler) error {
	f, ok := h.(Fixer)
	if !ok {
		return fmt.Errorf("%w: %s %q runs a Go handler bound by Options.Handlers, which has no Fix method (scenario.Fixer); fix_handler cannot fix it", ErrRuntime, kind, name)
	}
	f.Fix()
	return nil
}
