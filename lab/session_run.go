package lab

// This file is the one place where the session meets the scenario runtime:
// the run it drives, the verdict it shows and how an action reaches the
// run. Everything else in the package goes through the names below.

import (
	"errors"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

type (
	// run is one run of a scenario, driven by the session.
	run = scenario.Run
	// queueInfo is a queue of a run as its panel needs it.
	queueInfo = scenario.QueueInfo
	// Verdict is every expectation judged on the state of a run so far.
	Verdict = scenario.Verdict
	// Judgement is one expectation of a Verdict.
	Judgement = scenario.Judgement
	// Standing is where one expectation stands: not yet decided, holds or
	// broken.
	Standing = scenario.Standing
	// Action is one thing done to a running scenario, from its timeline or
	// by hand: the file format's timeline action (its At and position are
	// ignored by Session.Do), or ActionBrokerDown.
	Action = scenario.Action
)

// The standings of a Judgement.
const (
	NotYet = scenario.NotYet
	Holds  = scenario.Holds
	Broken = scenario.Broken
)

// newRun builds a run of s with the given seed (the file's when nil),
// handlers bound by name and trace sinks.
func newRun(s *scenario.Scenario, seed *uint64, handlers map[string]sim.Handler, sinks []sim.Sink) (*run, error) {
	return s.NewRun(scenario.Options{Seed: seed, Handlers: handlers, Sinks: sinks})
}

// do runs a on r at its current tick, through the run's one entry for
// actions; ActionBrokerDown, which no file can say, adds a
// broker.unavailable rule for BrokerDownWindow ticks.
func do(r *run, a Action) error {
	if a.Action == ActionBrokerDown {
		return r.BrokerDown(BrokerDownWindow)
	}
	return r.Do(a)
}

// words strips the "scenario: runtime error: " prefix of a run-time error,
// so the notice says what was wrong in words.
func words(err error) error {
	msg := err.Error()
	for _, p := range []string{scenario.ErrRuntime.Error() + ": ", "scenario: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return errors.New(msg)
}
