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
	src *rand.PCG  // the generator; Float64, Uint64 and Chance draw from it directly
	r   *rand.Rand // the same generator behind math/rand's IntN algorithm
}

// NewStream returns the stream for the component called name in a run with
// the given seed. The same (seed, name) always yields the same sequence.
func NewStream(seed uint64, name string) *Stream {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	src := rand.NewPCG(seed, h.Sum64()^0x9e3779b97f4a7c15)
	return &Stream{src: src, r: rand.New(src)}
}

// Float64 returns a number in [0, 1).
// It draws exactly as math/rand/v2's Rand.Float64 does, without going
// through the Source interface.
func (s *Stream) Float64() float64 { return float64(s.src.Uint64()<<11>>11) / (1 << 53) }

// IntN returns a number in [0, n). It returns 0 when n <= 0 instead of
// panicking, so a misconfigured caller degrades instead of crashing.
func (s *Stream) IntN(n int) int {
	if n <= 0 {
		return 0
	}
	return s.r.IntN(n)
}

// Uint64 returns a uniformly distributed 64-bit number.
func (s *Stream) Uint64() uint64 { return s.src.Uint64() }

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
	return s.Float64() < p
}
