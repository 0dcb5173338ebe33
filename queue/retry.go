package queue

import (
	"fmt"
	"math"

	"github.com/brokerlab/brokerlab/sim"
)

// RetryKind selects a retry policy.
type RetryKind uint8

// The retry policies.
const (
	// RetryNone leaves a failed message unacked: it comes back when its
	// visibility timeout runs out (the broker retries).
	RetryNone RetryKind = iota
	// RetryFixed nacks with the same delay every time.
	RetryFixed
	// RetryExponential nacks with Delay * 2^(failures-1), capped at Cap,
	// minus a jitter drawn from the consumer's seeded stream.
	RetryExponential
)

var retryKindNames = [...]string{"none", "fixed", "exponential"}

// String returns the kind's name: "none", "fixed" or "exponential", as
// scenario files write it.
func (k RetryKind) String() string {
	if int(k) < len(retryKindNames) {
		return retryKindNames[k]
	}
	return "unknown"
}

// MarshalText returns the kind's name as String does; a kind that is none
// of the three is an error wrapping ErrInvalidConfig.
func (k RetryKind) MarshalText() ([]byte, error) {
	if int(k) >= len(retryKindNames) {
		return nil, fmt.Errorf("%w: unknown retry kind %d", ErrInvalidConfig, k)
	}
	return []byte(retryKindNames[k]), nil
}

// UnmarshalText sets k from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (k *RetryKind) UnmarshalText(text []byte) error {
	for i, n := range retryKindNames {
		if n == string(text) {
			*k = RetryKind(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown retry kind %q", ErrInvalidConfig, text)
}

// RetryPolicy decides how a consumer retries a failure that sim.Classify
// calls transient. The zero value is RetryNone.
type RetryPolicy struct {
	Kind RetryKind
	// Delay is the fixed delay, or the exponential base; > 0 unless RetryNone.
	Delay sim.Tick
	// Cap bounds the exponential delay; 0 means MaxDuration.
	Cap sim.Tick
	// Jitter in [0, 1] is the largest fraction of the exponential delay
	// that a random draw subtracts ("equal jitter" at 0.5, "full jitter" at 1).
	Jitter float64
	// SameForAll applies this one policy to every failure, whatever its
	// class: a permanent or poison failure is retried like a transient
	// one (until the queue's redrive policy or MaxAttempts dead-letters
	// it), and a rate limit's Retry-After is ignored. The default, false,
	// treats each class on its own: permanent and poison go to the
	// dead-letter queue at once, a rate limit is retried after its
	// Retry-After, any other transient failure by the policy.
	SameForAll bool
}

// NoRetry returns the RetryNone policy.
func NoRetry() RetryPolicy { return RetryPolicy{} }

// FixedRetry returns a policy that nacks with delay d every time.
func FixedRetry(d sim.Tick) RetryPolicy { return RetryPolicy{Kind: RetryFixed, Delay: d} }

// ExponentialRetry returns an exponential policy with a base, a cap and a
// jitter fraction.
func ExponentialRetry(base, cap sim.Tick, jitter float64) RetryPolicy {
	return RetryPolicy{Kind: RetryExponential, Delay: base, Cap: cap, Jitter: jitter}
}

// Validate reports a policy that cannot work, wrapping ErrInvalidConfig.
func (p RetryPolicy) Validate() error {
	switch {
	case p.Kind > RetryExponential:
		return fmt.Errorf("%w: unknown retry kind %d", ErrInvalidConfig, p.Kind)
	case p.Kind == RetryNone:
		return nil
	case p.Delay <= 0 || p.Delay > MaxDuration:
		return fmt.Errorf("%w: retry delay %d is outside [1, %d]", ErrInvalidConfig, p.Delay, MaxDuration)
	case p.Cap < 0 || p.Cap > MaxDuration:
		return fmt.Errorf("%w: retry cap %d is outside [0, %d]", ErrInvalidConfig, p.Cap, MaxDuration)
	case p.Cap > 0 && p.Cap < p.Delay:
		return fmt.Errorf("%w: retry cap %d is below the base delay %d", ErrInvalidConfig, p.Cap, p.Delay)
	case math.IsNaN(p.Jitter) || p.Jitter < 0 || p.Jitter > 1:
		return fmt.Errorf("%w: retry jitter %v is outside [0, 1]", ErrInvalidConfig, p.Jitter)
	}
	return nil
}

// Backoff returns the nack delay after the given number of failed attempts
// (1 after the first failure) and whether to nack at all (false for
// RetryNone). The delay is within [0, MaxDuration] even for a policy that
// Validate refuses. Jitter draws from s only when the policy has jitter, so a
// policy without it never shifts the stream.
func (p RetryPolicy) Backoff(failures int, s *sim.Stream) (sim.Tick, bool) {
	switch p.Kind {
	case RetryFixed:
		return clampDelay(p.Delay), true
	case RetryExponential:
		limit := p.Cap
		if limit == 0 || limit > MaxDuration {
			limit = MaxDuration // a refused policy's cap: the doubling stays in range
		}
		d := p.Delay
		for i := 1; i < failures && d < limit; i++ {
			d *= 2
		}
		d = min(d, limit)
		if p.Jitter > 0 && s != nil {
			if span := int(float64(d) * p.Jitter); span > 0 {
				d -= sim.Tick(s.IntN(span + 1))
			}
		}
		return clampDelay(d), true
	}
	return 0, false
}

// clampDelay keeps a delay of a policy that Validate would refuse (a
// negative delay, a jitter above 1) within [0, MaxDuration], so that no
// policy sends a message back in time.
func clampDelay(d sim.Tick) sim.Tick { return min(max(d, 0), MaxDuration) }
