package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream is a deterministic random number stream owned by one component.
// Streams are derived from (seed, component name) with NewStream, so the draws
// of one component never depend on how many other components exist or how
// often they draw. A Stream is not safe for concurrent use; like every model
// in brokerlab it is driven by a single owner.
type Stream struct {
	r *rand.Rand
}

// NewStream returns the stream for the component called name in a run with
// the given seed. The same (seed, name) always yields the same sequence.
func NewStream(seed uint64, name string) *Stream {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return &Stream{r: rand.New(rand.NewPCG(seed, h.Sum64()^0x9e3779b97f4a7c15))}
}

// Float64 returns a number in [0, 1).
func (s *Stream) Float64() float64 { return s.r.Float64() }

// IntN returns a number in [0, n). It returns 0 when n <= 0 instead of
// panicking, so a misconfigured caller degrades instead of crashing.
func (s *Stream) IntN(n int) int {
	if n <= 0 {
		return 0
	}
	return s.r.IntN(n)
}

// Uint64 returns a uniformly distributed 64-bit number.
func (s *Stream) Uint64() uint64 { return s.r.Uint64() }

// Chance reports whether an event of probability p happens. p <= 0 never
// happens and p >= 1 always happens; neither draws from the stream, so rules
// that are certain do not shift the stream of rules that are not.
func (s *Stream) Chance(p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	return s.r.Float64() < p
}
