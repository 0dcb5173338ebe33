package lab

import (
	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// BrokerDownWindow is how many ticks the BrokerDown action keeps every
// broker unavailable.
const BrokerDownWindow sim.Tick = 10

// ActionBrokerDown is the action name of BrokerDown, a hand action that no
// scenario file can say (a file writes a broker.unavailable fault rule).
const ActionBrokerDown = "broker_down"

// SeekEarliest returns the action that seeks consumer group to the
// earliest offset of every partition, a replay; "" seeks every group.
func SeekEarliest(group string) Action {
	return Action{Action: scenario.ActionSeek, Group: group, To: eventlog.SeekToEarliest, Partition: -1}
}

// Redrive returns the action that moves every dead letter of dead-letter
// queue dlq back to its source queue; "" redrives every dead-letter queue.
func Redrive(dlq string) Action { return Action{Action: scenario.ActionRedrive, Queue: dlq} }

// Crash returns the action that crashes a queue consumer (every instance)
// or a group member by name; "" crashes the first consumer, else the first
// member.
func Crash(consumer string) Action { return Action{Action: scenario.ActionCrash, Consumer: consumer} }

// BrokerDown returns the action that takes every broker down for
// BrokerDownWindow ticks from now.
func BrokerDown() Action { return Action{Action: ActionBrokerDown} }

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
