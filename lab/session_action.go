package lab

import (
	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// ActionName names what a does for a person, e.g. "redrive DLQ" or "seek
// earliest"; a timeline action other than the hand actions is named by its
// file name ("purge").
func ActionName(a Action) string {
	switch {
	case a.Action == scenario.ActionSeek && a.To == eventlog.SeekToEarliest:
		return "seek earliest"
	case a.Action == scenario.ActionRedrive:
		return "redrive DLQ"
	case a.Action == scenario.ActionCrash:
		return "crash consumer"
	case a.Action == ActionBrokerDown:
		return "broker down"
	case a.Action == "":
		return "none"
	}
	return a.Action
}

// Target returns the name a acts on: its queue, group, consumer or member
// ("" for every applicable one, or for the one the session picks).
func Target(a Action) string {
	return a.Queue + a.Group + a.Consumer + a.Member
}

// actCounter is a trace sink that counts what the session's actions
// report back as events: the copies moved out of a dead-letter queue.
type actCounter struct{ redriven int }

// Emit counts e.
func (c *actCounter) Emit(e *sim.Event) {
	if e.Kind == sim.KindRedriven {
		c.redriven++
	}
}

// NextSeed derives the seed for "restart with a new seed" from the current
// one. It is deterministic, so a session can be retold: the seeds follow the
// sequence seed, NextSeed(seed), NextSeed(NextSeed(seed)), ...
func NextSeed(seed uint64) uint64 {
	// The stream's name is the one the player has always used, so the
	// sequence of seeds stays the same.
	s := sim.NewStream(seed, "tui/reseed").Uint64() % 1000000
	if s == seed {
		s++
	}
	return s
}
