package sim

import (
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

// A stream draws exactly the sequence of a math/rand PCG seeded with the
// seed and the FNV-1a hash of the name, whatever mix of Float64, Uint64
// and IntN calls asks for it: the seeds of every recorded run depend on it.
func TestStreamDrawsAsPCGSeededByFNV(t *testing.T) {
	for _, name := range []string{"", "fault/crash", "queue:orders/visibility", "ünïcode"} {
		h := fnv.New64a()
		_, _ = h.Write([]byte(name))
		if got, want := fnv64a(name), h.Sum64(); got != want {
			t.Fatalf("fnv64a(%q) = %x, want %x", name, got, want)
		}
		for _, seed := range []uint64{0, 1, 42, 1 << 63} {
			src := rand.NewPCG(seed, h.Sum64()^0x9e3779b97f4a7c15)
			ref := rand.New(src)
			s := NewStream(seed, name)
			for i := range 300 {
				switch i % 3 {
				case 0:
					if got, want := s.Float64(), ref.Float64(); got != want {
						t.Fatalf("%q seed %d draw %d: Float64 %v, want %v", name, seed, i, got, want)
					}
				case 1:
					if got, want := s.IntN(1+i), ref.IntN(1+i); got != want {
						t.Fatalf("%q seed %d draw %d: IntN %v, want %v", name, seed, i, got, want)
					}
				default:
					if got, want := s.Uint64(), ref.Uint64(); got != want {
						t.Fatalf("%q seed %d draw %d: Uint64 %v, want %v", name, seed, i, got, want)
					}
				}
			}
		}
	}
}

// Making a stream allocates the stream only.
func TestNewStreamAllocatesOnce(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { NewStream(7, "fault/duplicate").Float64() }); n > 1 {
		t.Fatalf("NewStream allocates %v times, want 1", n)
	}
}
