package lab

import (
	"strings"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// ActionName names what a does for a person: "replay" (seek a group to
// the earliest offset), "redrive", "crash" or "broker down"; a timeline
// action other than the hand actions is named by its file name ("purge").
// The player's key table names the hand actions' keys with it, so a key's
// name and the notices that name its action agree.
func ActionName(a Action) string {
	switch {
	case a.Action == scenario.ActionSeek && a.To == eventlog.SeekToEarliest:
		return "replay"
	case a.Action == scenario.ActionRedrive:
		return "redrive"
	case a.Action == scenario.ActionCrash:
		return "crash"
	case a.Action == ActionBrokerDown:
		return "broker down"
	case a.Action == "":
		return "none"
	}
	return a.Action
}

// FailedNotice is the header notice for action a that failed with err:
// the fault symbol, the action's name and the reason, e.g. "⚠ crash:
// no consumer named x". A reason that already says what could not be done
// ("nothing to redrive: the dead-letter queue is empty") gets no name
// before it, which would only push it off an 80-column header.
func FailedNotice(a Action, err error) string {
	msg := err.Error()
	if !strings.HasPrefix(msg, "nothing to ") {
		msg = ActionName(a) + ": " + msg
	}
	return SymFault + " " + msg
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
