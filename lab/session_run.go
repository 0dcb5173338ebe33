package lab

// This file is where the session meets the runner: the run it drives and
// how an action reaches the run. Everything else in the session goes
// through the names below.

import (
	"errors"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

type (
	// run is one run of a scenario, driven by the session.
	run = Run
	// queueInfo is a queue of a run as its panel needs it.
	queueInfo = QueueInfo
	// Action is one thing done to a running scenario, from its timeline or
	// by hand: the file format's timeline action (its At and position are
	// ignored by Session.Do), or ActionBrokerDown.
	Action = scenario.Action
)

// newRun builds a run of s with the given seed (the file's when nil),
// handlers bound by name and trace sinks.
func newRun(s *scenario.Scenario, seed *uint64, handlers map[string]sim.Handler, sinks []sim.Sink) (*run, error) {
	return New(s, Options{Seed: seed, Handlers: handlers, Sinks: sinks})
}

// do runs a on r at its current tick, through the run's one entry for
// actions (Run.Do).
func do(r *run, a Action) error { return r.Do(a) }

// words strips the "lab: runtime error: " prefix of a run-time error, so
// the notice says what was wrong in words.
func words(err error) error {
	msg := err.Error()
	for _, p := range []string{ErrRuntime.Error() + ": ", "lab: ", "scenario: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return errors.New(msg)
}
