package eventlog

import (
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// The memo of keys is a pure cache: whatever it holds, it returns the
// checksum of the key it is asked for, for keys it holds, keys that share
// a slot with the one it holds (same last two bytes, same length or not),
// one-byte keys and random keys.
func TestKeyMemoMatchesChecksum(t *testing.T) {
	var keys []string
	for i := range 40 {
		keys = append(keys, "order-"+strconv.Itoa(i+1))
	}
	// Keys that share their last two bytes, so their slot: they replace
	// one another.
	keys = append(keys, "a-17", "b-17", "ab-17", "17", "7", "x", "y\x00", "\xff\xff")
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, 1+r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		keys = append(keys, string(b))
	}
	var k keyMemo
	for round := range 3 {
		for i := range 5000 {
			key := keys[r.IntN(len(keys))]
			if round == 0 {
				key = keys[i%len(keys)] // cycling, as a producer does
			}
			if got, want := k.sum(key), crc32.ChecksumIEEE([]byte(key)); got != want {
				t.Fatalf("round %d: sum(%q) = %#x, want %#x", round, key, got, want)
			}
		}
	}
}

// A log puts a keyed record into PartitionFor's partition, before and
// after partitions are added: the memo keeps checksums, not partitions.
func TestProducePartitionsByKey(t *testing.T) {
	for _, parts := range []int{1, 3, 6, 7} {
		w, err := sim.New(sim.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		l, err := New(w, Config{Name: "t", Partitions: parts})
		if err != nil {
			t.Fatal(err)
		}
		check := func(n int) {
			for i := range 60 {
				key := "k-" + strconv.Itoa(i%23)
				pos, err := l.Produce(w.Env().NewMessage(key, nil, sim.Headers{}))
				if err != nil {
					t.Fatal(err)
				}
				if want := PartitionFor(key, n); pos.Partition != want {
					t.Fatalf("%d partitions: %q went to %d, want %d", n, key, pos.Partition, want)
				}
			}
		}
		check(parts)
		if err := l.AddPartitions(2); err != nil {
			t.Fatal(err)
		}
		check(parts + 2)
	}
}
