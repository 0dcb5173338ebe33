package sim

import "errors"

// Meanings shared by every model. Each model declares its own sentinel for
// them, with its package prefix, made with Sentinel so that it wraps the
// one here: code that publishes to any Publisher, or validates any Config,
// tests for the meaning once, whichever model it talks to:
//
//	errors.Is(err, sim.ErrUnavailable)   // a Publish the broker refused: not accepted, retry it
//	errors.Is(err, sim.ErrInvalidConfig) // a Config's Validate or a constructor refused it
var (
	ErrInvalidConfig = errors.New("sim: invalid config")
	ErrUnavailable   = errors.New("sim: broker unavailable")
)

// Sentinel returns a model's own sentinel error for a meaning sim shares:
// its text is text alone, so the messages users see carry the model's prefix
// only, and errors.Is reports true for it and for base. Each call returns a
// distinct error. For example:
//
//	var ErrInvalidConfig = sim.Sentinel("queue: invalid config", sim.ErrInvalidConfig)
func Sentinel(text string, base error) error { return &sentinel{text: text, base: base} }

type sentinel struct {
	text string
	base error
}

func (e *sentinel) Error() string { return e.text }
func (e *sentinel) Unwrap() error { return e.base }

// Also returns err with its text unchanged, marked as also meaning meaning:
// errors.Is reports true for meaning as well as for everything err wraps. A
// model uses it where an error of one kind is, in that place, also of a
// shared kind, such as a bad subject pattern in a Config (an invalid
// config), without changing what users read. Also(nil, meaning) is nil.
func Also(err, meaning error) error {
	if err == nil {
		return nil
	}
	return &also{err: err, meaning: meaning}
}

type also struct{ err, meaning error }

func (e *also) Error() string   { return e.err.Error() }
func (e *also) Unwrap() []error { return []error{e.err, e.meaning} }
