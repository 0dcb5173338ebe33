package sim

import "math/rand/v2"

// Stream is a deterministic random number stream owned by one component.
// Streams are derived from (seed, component name) with NewStream, so the draws
// of one component never depend on how many other components exist or how
// often they draw. A Stream is not safe for concurrent use; like every model
// in brokerlab it is driven by a single owner.
//
// A Stream is one allocation: the generator lives in it, and the
// math/rand wrapper IntN needs is made on the first IntN call.
type Stream struct {
	src rand.PCG   // the generator; Float64, Uint64 and Chance draw from it directly
	r   *rand.Rand // the same generator behind math/rand's IntN algorithm, once IntN was called
}

// NewStream returns the stream for the component called name in a run with
// the given seed. The same (seed, name) always yields the same sequence.
func NewStream(seed uint64, name string) *Stream {
	s := &Stream{}
	s.src.Seed(seed, fnv64a(name)^0x9e3779b97f4a7c15)
	return s
}

// fnv64a is the 64-bit FNV-1a hash of name, as hash/fnv's New64a computes
// it, without allocating a hasher.
func fnv64a(name string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= prime
	}
	return h
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
	if s.r == nil {
		s.r = rand.New(&s.src)
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
