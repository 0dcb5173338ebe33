package eventlog

import (
	"math/rand/v2"
	"testing"

	"github.com/brokerlab/brokerlab/internal/stored"
	"github.com/brokerlab/brokerlab/sim"
)

// TestRecordsMatchASlice drives a partition's records through appends,
// drops from the head and truncations (as retention and compaction do),
// across many chunk boundaries, and checks every live entry against a plain
// slice after every step.
func TestRecordsMatchASlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var p partition
	var want []int64 // live offsets
	next := int64(0)
	check := func(step int) {
		t.Helper()
		if p.size() != len(want) {
			t.Fatalf("step %d: %d live records, want %d", step, p.size(), len(want))
		}
		if p.head >= recChunk {
			t.Fatalf("step %d: head %d not below a chunk", step, p.head)
		}
		for i, off := range want {
			if got := p.recs.at(p.head + i).off; got != off {
				t.Fatalf("step %d: live record %d has offset %d, want %d", step, i, got, off)
			}
		}
		if len(want) > 0 && p.search(want[len(want)/2]) != p.head+len(want)/2 {
			t.Fatalf("step %d: search misses offset %d", step, want[len(want)/2])
		}
	}
	for step := range 4000 {
		switch r := rng.IntN(10); {
		case r < 6: // a burst of appends
			for range rng.IntN(200) {
				p.recs.push(entry{off: next, msg: stored.Message{ID: sim.ID(next + 1)}})
				want = append(want, next)
				next++
				p.end = next
			}
		case r < 9: // retention: drop some from the head
			for k := rng.IntN(300); k > 0 && p.size() > 0; k-- {
				p.dropHead()
				want = want[1:]
			}
		default: // compaction: keep every other live record
			w := p.head
			var kept []int64
			for i := p.head; i < p.recs.len(); i++ {
				if e := *p.recs.at(i); e.off%2 == 0 {
					*p.recs.at(w) = e
					w++
					kept = append(kept, e.off)
				}
			}
			p.recs.truncate(w)
			if p.head == p.recs.len() {
				p.recs.truncate(0)
				p.head = 0
			}
			want = kept
		}
		check(step)
	}
}

// TestRecordsNeverCopied checks that every entry stays where it was
// written while the partition grows from one entry to many chunks: the
// storage adds chunks and never copies records into a bigger array.
func TestRecordsNeverCopied(t *testing.T) {
	var r records
	var ptrs []*entry
	for i := range 40 * recChunk {
		r.push(entry{off: int64(i)})
		ptrs = append(ptrs, r.at(i))
	}
	for i, p := range ptrs {
		if r.at(i) != p {
			t.Fatalf("entry %d moved while the partition grew", i)
		}
	}
	if got := len(r.chunks); got != 39+recSmall {
		t.Fatalf("%d chunks for %d records, want %d", got, r.len(), 39+recSmall)
	}
	for i := range r.len() {
		if r.at(i).off != int64(i) {
			t.Fatalf("entry %d holds offset %d", i, r.at(i).off)
		}
	}
}

// TestRecordsStartSmall checks that a partition with a few records holds a
// few entries, not a whole chunk.
func TestRecordsStartSmall(t *testing.T) {
	var r records
	for i := range 10 {
		r.push(entry{off: int64(i)})
	}
	held := 0
	for _, c := range r.chunks {
		held += cap(c)
	}
	if held > 20 {
		t.Fatalf("10 records hold %d entries", held)
	}
}
