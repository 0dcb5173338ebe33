package sim

import (
	"fmt"
	"path"
	"strconv"
)

// Timed is implemented by handlers that take time. Before calling Handle,
// a model asks Duration; when it is positive, the model keeps the delivery
// busy (a queue message stays in flight, a member stops polling, a
// subscriber stops reading) for that many ticks and calls Handle when the
// time is up, so the effect lands at the tick the work ends.
type Timed interface {
	Duration(d *Delivery) Tick
}

// DurationOf returns how long h takes for d: h's Duration when it is
// Timed, 0 otherwise.
func DurationOf(h Handler, d *Delivery) Tick {
	if t, ok := h.(Timed); ok {
		return t.Duration(d)
	}
	return 0
}

// Behaviour names what a Script does to the messages it applies to.
type Behaviour uint8

// The scripted behaviours.
const (
	Succeed   Behaviour = iota // apply the effect
	Transient                  // fail the first Failures attempts per message, then apply
	Permanent                  // always fail with a permanent error
	Poison                     // always fail: the message can never be handled
	Slow                       // apply the effect, taking Ticks (at least 1) per attempt
)

var behaviourNames = [...]string{"succeed", "transient", "permanent", "poison", "slow"}

// String returns the behaviour's name: "succeed", "transient",
// "permanent", "poison" or "slow", as scenario files write it.
func (b Behaviour) String() string {
	if int(b) < len(behaviourNames) {
		return behaviourNames[b]
	}
	return "unknown"
}

// MarshalText returns the behaviour's name as String does; a behaviour
// that is none of the five is an error wrapping ErrInvalidConfig.
func (b Behaviour) MarshalText() ([]byte, error) {
	if int(b) >= len(behaviourNames) {
		return nil, fmt.Errorf("%w: unknown behaviour %d", ErrInvalidConfig, b)
	}
	return []byte(behaviourNames[b]), nil
}

// UnmarshalText sets b from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (b *Behaviour) UnmarshalText(text []byte) error {
	for i, n := range behaviourNames {
		if n == string(text) {
			*b = Behaviour(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown behaviour %q", ErrInvalidConfig, text)
}

// Script is a scripted handler, the behaviour lessons and scenario files
// describe: it applies Behaviour to the messages whose key matches Keys (a
// path.Match glob; "" matches every key) and applies the effect to the
// others. Each attempt takes Ticks ticks (Timed). Fix turns it into a
// plain succeed, as a deployed bug fix would. Idempotency, when set,
// absorbs repeats of an effect by message ID or by business key.
//
// A Script counts failed attempts per message itself (O(messages that
// failed)), so Transient behaves the same for every model, including those
// whose deliveries carry no receive count.
type Script struct {
	Behaviour Behaviour
	Keys      string // glob of the keys the behaviour applies to
	Failures  int    // for Transient: attempts that fail per message
	Ticks     Tick   // processing time of one attempt
	Error     string // the error text of a failure
	Note      string // the effect's note in the trace
	// MinVersion and MaxVersion, when above 0, bound the schema versions
	// (Headers.SchemaVersion; 0, unversioned, reads as 1) the handler can
	// parse: a message of another version fails permanently, whatever its
	// key, until Fix (deploying code that reads every version).
	MinVersion, MaxVersion int

	fixed    bool
	attempts map[ID]int
}

// Validate reports a script that cannot run.
func (s *Script) Validate() error {
	switch {
	case s.Behaviour > Slow:
		return fmt.Errorf("%w: unknown behaviour %d", ErrInvalidConfig, s.Behaviour)
	case s.Behaviour == Slow && s.Ticks < 1:
		return fmt.Errorf("%w: a slow script needs ticks of at least 1, got %d", ErrInvalidConfig, s.Ticks)
	case s.Failures < 0:
		return fmt.Errorf("%w: failures %d is negative", ErrInvalidConfig, s.Failures)
	case s.Ticks < 0:
		return fmt.Errorf("%w: ticks %d is negative", ErrInvalidConfig, s.Ticks)
	case s.MinVersion < 0 || s.MaxVersion < 0 || s.MaxVersion > 0 && s.MinVersion > s.MaxVersion:
		return fmt.Errorf("%w: schema versions %d to %d are not a range", ErrInvalidConfig, s.MinVersion, s.MaxVersion)
	}
	if _, err := path.Match(s.Keys, ""); err != nil {
		return fmt.Errorf("%w: bad key pattern %q: %v", ErrInvalidConfig, s.Keys, err)
	}
	return nil
}

// Fix makes the script succeed from now on.
func (s *Script) Fix() { s.fixed = true }

// Fixed reports whether Fix was called.
func (s *Script) Fixed() bool { return s.fixed }

// applies reports whether the behaviour applies to key.
func (s *Script) applies(key string) bool {
	if s.fixed || s.Behaviour == Succeed {
		return false
	}
	return s.matches(key)
}

// Duration is the processing time of one attempt: Ticks for the messages
// the script applies to (matching Keys, not yet fixed), 0 for the others.
func (s *Script) Duration(d *Delivery) Tick {
	if s.fixed || !s.matches(d.Msg.Key) {
		return 0
	}
	return s.Ticks
}

// matches reports whether key matches Keys.
func (s *Script) matches(key string) bool {
	if s.Keys == "" {
		return true
	}
	ok, _ := path.Match(s.Keys, key)
	return ok
}

// versions says which schema versions the script reads: "v2 and later",
// "up to v1" or "v1 to v2".
func (s *Script) versions() string {
	switch {
	case s.MinVersion > 0 && s.MaxVersion > 0:
		return "v" + strconv.Itoa(s.MinVersion) + " to v" + strconv.Itoa(s.MaxVersion)
	case s.MinVersion > 0:
		return "v" + strconv.Itoa(s.MinVersion) + " and later"
	}
	return "up to v" + strconv.Itoa(s.MaxVersion)
}

// text returns the error text of a failure.
func (s *Script) text(def string) string {
	if s.Error != "" {
		return s.Error
	}
	return def
}

// Handle applies the script to d.
func (s *Script) Handle(d *Delivery) error {
	if v := max(d.Msg.Headers.SchemaVersion, 1); !s.fixed && (s.MinVersion > 0 && v < s.MinVersion || s.MaxVersion > 0 && v > s.MaxVersion) {
		return fmt.Errorf("%w: cannot parse schema v%d (reads %s)", ErrPermanent, v, s.versions())
	}
	if s.applies(d.Msg.Key) {
		switch s.Behaviour {
		case Transient:
			if s.attempts == nil {
				s.attempts = map[ID]int{}
			}
			n := s.attempts[d.Msg.ID] + 1
			if n <= s.Failures {
				s.attempts[d.Msg.ID] = n
				return fmt.Errorf("%w: %s", ErrTransient, s.text("attempt "+strconv.Itoa(n)+" failed"))
			}
			delete(s.attempts, d.Msg.ID)
		case Permanent:
			return fmt.Errorf("%w: %s", ErrPermanent, s.text("rejected"))
		case Poison:
			return fmt.Errorf("%w: %s", ErrPoison, s.text("cannot process"))
		}
	}
	d.Apply(s.Note)
	return nil
}
