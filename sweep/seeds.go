package sweep

import (
	"fmt"
	"iter"
	"math"
	"strconv"
)

// MaxSeeds caps the seeds of one sweep (all shards together).
const MaxSeeds = 1 << 40

// Seeds is the seed space of a sweep, or one shard of it: the seeds
// From, From+1, ..., From+Count-1, of which shard K of N (1 <= K <= N)
// takes those with seed mod N == K-1. Shards interleave, so every shard
// gets early and late seeds alike, and a seed's shard depends on the seed
// alone: the same seed is in the same shard whatever From and Count are.
type Seeds struct {
	From, Count uint64
	// Shard is K and Shards is N; 0 and 0 (or 1 and 1) mean the whole
	// space.
	Shard, Shards int
}

// Validate reports a space that cannot be swept, wrapping ErrSeeds.
func (s Seeds) Validate() error {
	switch {
	case s.Count == 0:
		return fmt.Errorf("%w: no seeds: the count must be at least 1", ErrSeeds)
	case s.Count > MaxSeeds:
		return fmt.Errorf("%w: %d seeds; a sweep is capped at %d", ErrSeeds, s.Count, uint64(MaxSeeds))
	case s.From > math.MaxUint64-(s.Count-1):
		return fmt.Errorf("%w: seeds from %d on, %d of them, run past the largest seed %d", ErrSeeds, s.From, s.Count, uint64(math.MaxUint64))
	case s.Shards == 0 && s.Shard == 0:
	case s.Shards < 1 || s.Shard < 1 || s.Shard > s.Shards:
		return fmt.Errorf("%w: shard %d/%d: want K/N with 1 <= K <= N", ErrSeeds, s.Shard, s.Shards)
	}
	return nil
}

// shards returns N, at least 1.
func (s Seeds) shards() uint64 { return uint64(max(s.Shards, 1)) }

// first returns the first seed of the shard at or after From, and false
// when the shard has none.
func (s Seeds) first() (uint64, bool) {
	n := s.shards()
	k := uint64(max(s.Shard, 1) - 1)
	off := (k + n - s.From%n) % n
	if off >= s.Count {
		return 0, false
	}
	return s.From + off, true
}

// Len returns how many seeds the shard holds. O(1).
func (s Seeds) Len() uint64 {
	f, ok := s.first()
	if !ok {
		return 0
	}
	return (s.From+s.Count-1-f)/s.shards() + 1
}

// At returns the i-th seed of the shard (from 0); i must be below Len.
// O(1).
func (s Seeds) At(i uint64) uint64 {
	f, _ := s.first()
	return f + i*s.shards()
}

// All yields the seeds of the shard in increasing order.
func (s Seeds) All() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		f, ok := s.first()
		if !ok {
			return
		}
		last := s.From + s.Count - 1
		for x := f; ; x += s.shards() {
			if !yield(x) || last-x < s.shards() {
				return
			}
		}
	}
}

// String formats the space as "seeds 1..200" or "seeds 1..200, shard 2/4".
func (s Seeds) String() string {
	out := "seeds " + strconv.FormatUint(s.From, 10) + ".." + strconv.FormatUint(s.From+s.Count-1, 10)
	if s.Shards > 1 {
		out += ", shard " + strconv.Itoa(s.Shard) + "/" + strconv.Itoa(s.Shards)
	}
	return out
}
