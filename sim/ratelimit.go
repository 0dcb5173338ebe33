package sim

import (
	"errors"
	"strconv"
)

// RateLimited is a handler error that says a downstream refused the call
// for a while, as an HTTP 429 with a Retry-After header does. It is a
// transient failure (errors.Is(err, ErrTransient) holds, so Classify
// returns ClassTransient), and it carries how long to wait: a model that
// honours it retries after exactly After ticks instead of its own policy's
// delay, since retrying earlier only earns another refusal.
type RateLimited struct {
	// After is the Retry-After delay in ticks; at least 1.
	After Tick
	// Reason is the downstream's words, e.g. "429 too many requests".
	Reason string
}

// Error returns "rate limited, retry after N ticks" and the reason.
func (e *RateLimited) Error() string {
	s := "rate limited, retry after " + strconv.FormatInt(int64(e.After), 10) + " ticks"
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Is makes a RateLimited error a transient failure.
func (e *RateLimited) Is(target error) bool { return target == ErrTransient }

// RetryAfter returns the Retry-After delay of err when it is, or wraps, a
// RateLimited error, and false otherwise. It does not allocate (queue
// consumers ask it of every handler error).
func RetryAfter(err error) (Tick, bool) {
	if rl, ok := errors.AsType[*RateLimited](err); ok {
		return max(rl.After, 1), true
	}
	return 0, false
}
