package lab

import (
	"errors"
	"strings"

	"github.com/brokerlab/brokerlab/scenario"
)

// Action is one thing done to a running scenario, from its timeline or by
// hand: the file format's timeline action (its At and position are ignored
// by Session.Do and Run.Do), or ActionBrokerDown.
type Action = scenario.Action

// words strips the "lab: runtime error: " prefix of a run-time error, so
// the notice says what was wrong in words.
func words(err error) error {
	msg := err.Error()
	for _, p := range []string{ErrRuntime.Error() + ": ", "lab: ", "scenario: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return errors.New(msg)
}
