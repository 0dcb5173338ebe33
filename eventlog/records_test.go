package eventlog

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	"github.com/brokerlab/brokerlab/sim"
)

// TestRecordsMatchASlice drives a partition through appends (some of
// messages created before the tick they are appended in, or copies with an
// origin, which widen it), drops from the head and compactions (as
// retention and compaction do), across many chunk boundaries, and checks
// every live record's offset, message and tick against a plain slice after
// every step.
func TestRecordsMatchASlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var p partition
	var want []Record // live records
	wides := 0
	check := func(step int) {
		t.Helper()
		if p.size() != len(want) {
			t.Fatalf("step %d: %d live records, want %d", step, p.size(), len(want))
		}
		if p.head >= recChunk {
			t.Fatalf("step %d: head %d not below a chunk", step, p.head)
		}
		checkFill(t, step, &p.recs)
		if p.wide() {
			checkFill(t, step, p.side)
		}
		for i, r := range want {
			if got := p.record(0, p.head+i); !reflect.DeepEqual(got, r) {
				t.Fatalf("step %d: live record %d is %+v, want %+v", step, i, got, r)
			}
		}
		if len(want) > 0 {
			if p.start != want[0].Offset {
				t.Fatalf("step %d: log start %d, want %d", step, p.start, want[0].Offset)
			}
			mid := want[len(want)/2].Offset
			if p.search(mid) != p.head+len(want)/2 || p.at(mid) != p.head+len(want)/2 {
				t.Fatalf("step %d: search misses offset %d", step, mid)
			}
			if p.search(mid-1) > p.head+len(want)/2 || p.search(p.end) != p.recs.len() || p.at(p.end) >= 0 {
				t.Fatalf("step %d: search of a missing offset", step)
			}
		}
		// search finds the first live record at or after an offset, or
		// the end, for offsets below the log start, between, at and past
		// the end, narrow or wide, with or without live records.
		for k := range 12 {
			off := p.start - 2 + rng.Int64N(p.end-p.start+5)
			if k%3 == 0 { // around the log start
				off = p.start - 3 + rng.Int64N(6)
			}
			want := p.recs.len()
			for i := p.head; i < p.recs.len(); i++ {
				if p.off(i) >= off {
					want = i
					break
				}
			}
			if got := p.search(off); got != want {
				t.Fatalf("step %d: search(%d) = %d, want %d (head %d, live %d, wide %v)", step, off, got, want, p.head, p.size(), p.wide())
			}
		}
	}
	var none sim.Headers
	for step := range 4000 {
		tick := sim.Tick(step)
		switch r := rng.IntN(10); {
		case r < 6: // a burst of appends
			for range rng.IntN(200) {
				m := sim.Message{ID: sim.ID(p.end + 1), Key: "k", Created: tick}
				switch rng.IntN(50) {
				case 0:
					m.Created = tick - 3 // relayed: created earlier
				case 1:
					m.Origin = 7 // a copy
				}
				off := p.push(tick, &m, &none)
				if off != p.end-1 {
					t.Fatalf("step %d: appended at %d, end %d", step, off, p.end)
				}
				want = append(want, Record{Partition: 0, Offset: off, Tick: tick, Message: m})
			}
		case r < 9: // retention: drop some from the head
			for k := rng.IntN(300); k > 0 && p.size() > 0; k-- {
				p.dropHead()
				want = want[1:]
			}
		default: // compaction: keep every other live record, as Compact does
			w := p.head
			var kept []Record
			for i := p.head; i < p.recs.len(); i++ {
				if p.off(i)%2 == 0 {
					if w < i {
						if !p.wide() {
							p.widen()
						}
						p.move(i, w)
					}
					w++
					kept = append(kept, want[i-p.head])
				}
			}
			p.truncate(w)
			if p.head == p.recs.len() {
				p.start = p.end
			} else {
				p.start = p.off(p.head)
			}
			want = kept
		}
		if p.wide() {
			wides++
		}
		check(step)
	}
	if wides == 0 || wides == 4000 {
		t.Fatalf("the partition was wide after %d of 4000 steps: both forms are not covered", wides)
	}
}

// TestRecordsNeverCopied checks that every entry stays where it was
// written while the partition grows from one entry to many chunks: the
// storage adds chunks and never copies records into a bigger array.
func TestRecordsNeverCopied(t *testing.T) {
	var r records[entry]
	var ptrs []*entry
	for i := range 40 * recChunk {
		r.push(entry{id: sim.ID(i)})
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
		if r.at(i).id != sim.ID(i) {
			t.Fatalf("entry %d holds record %d", i, r.at(i).id)
		}
	}
}

// TestRecordsStartSmall checks that a partition with a few records holds a
// few entries, not a whole chunk.
func TestRecordsStartSmall(t *testing.T) {
	var r records[entry]
	for i := range 10 {
		r.push(entry{id: sim.ID(i)})
	}
	held := 0
	for _, c := range r.chunks {
		held += cap(c)
	}
	if held > 20 {
		t.Fatalf("10 records hold %d entries", held)
	}
}

// TestSmallChunksLayout checks the small chunks against smallSizes as
// records grow to a full chunk and past it: chunk k is allocated with
// smallSizes[k] entries, capacity agrees with the chunks held, entry i
// lives in the chunk that capacity places it in, in order, n records
// never hold more than max(recFirst, 2n) entries, and a partition of up
// to 42 records stays within its header's room.
func TestSmallChunksLayout(t *testing.T) {
	var r records[entry]
	for i := range recChunk + 10 {
		r.push(entry{id: sim.ID(i)})
		n := i + 1
		if held := r.capacity(len(r.chunks)); n <= recChunk && held > max(recFirst, 2*n) {
			t.Fatalf("%d records hold %d entries, more than twice as many", n, held)
		}
		if n <= smallCap[recHeader] && len(r.chunks) > recHeader {
			t.Fatalf("%d records take %d chunks, past the header's room for %d", n, len(r.chunks), recHeader)
		}
	}
	for k, n := range smallSizes {
		if len(r.chunks[k]) != n || cap(r.chunks[k]) != n {
			t.Fatalf("small chunk %d has %d entries (cap %d), want %d", k, len(r.chunks[k]), cap(r.chunks[k]), n)
		}
		if r.capacity(k+1)-r.capacity(k) != n {
			t.Fatalf("capacity gives small chunk %d %d entries, want %d", k, r.capacity(k+1)-r.capacity(k), n)
		}
	}
	for i := range r.len() {
		k := 0
		for r.capacity(k+1) <= i {
			k++
		}
		if want := &r.chunks[k][i-r.capacity(k)]; r.at(i) != want || r.at(i).id != sim.ID(i) {
			t.Fatalf("entry %d is not index %d of chunk %d, or holds record %d", i, i-r.capacity(k), k, r.at(i).id)
		}
	}
}

// TestSmallChunksFitTheirClass checks that every small chunk of record
// entries the records allocate (all but the first, which a partition
// holds itself) leaves less than an entry unused in what it takes from the
// allocator: a chunk above 512 bytes carries an 8-byte header and rounds
// up to its size class, so a size that misses its class by a few bytes
// pays for most of an entry it cannot use.
func TestSmallChunksFitTheirClass(t *testing.T) {
	if smallCap[recHeader] < 40 {
		t.Errorf("the header's room covers %d records, want at least 40", smallCap[recHeader])
	}
	const size, header = int(unsafe.Sizeof(entry{})), 8
	for _, n := range smallSizes[1:] {
		if took := allocated(func() { sinkChunk = make([]entry, n) }); took-n*size >= size+header {
			t.Errorf("a chunk of %d entries (%d bytes) takes %d bytes from the allocator", n, n*size, took)
		}
	}
}

// sinkChunk keeps the chunks allocated holds: a chunk that escapes is on
// the heap, in its size class.
var sinkChunk []entry

// allocated returns the bytes one call of alloc takes from the heap: the
// allocator counts each object's whole size class. It is the least mean
// over a few rounds of many calls, as the runtime may allocate something
// of its own during a round.
func allocated(alloc func()) int {
	const rounds, calls = 5, 100
	least := uint64(1 << 62)
	for range rounds {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range calls {
			alloc()
		}
		runtime.ReadMemStats(&after)
		least = min(least, (after.TotalAlloc-before.TotalAlloc)/calls)
	}
	return int(least)
}

// TestSeededPartitionsKeepTheirOwn checks the partitions a log is made
// with, whose first chunks and chunk headers share two allocations: each
// grows past its header's room, and retention drops its first chunks,
// without touching a neighbour's records, and every partition reads back
// exactly what was produced to it.
func TestSeededPartitionsKeepTheirOwn(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	const parts = 4
	l, err := New(w, Config{Name: "orders", Partitions: parts, RetentionRecords: 3 * recChunk})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	want := make([][]sim.ID, parts) // the IDs retention keeps, per partition
	for step := range 6000 {
		p := rng.IntN(parts)
		if p == parts-1 && step%50 != 0 {
			p = 0 // the last partition stays small, its neighbour grows
		}
		m := w.Env().NewMessage("", nil, sim.Headers{})
		if _, err := l.ProduceTo(p, m); err != nil {
			t.Fatal(err)
		}
		want[p] = append(want[p], m.ID)
		if step%100 == 99 {
			l.Step(w.Env().Clock.Advance())
			for q := range want {
				if n := len(want[q]); n > 3*recChunk {
					want[q] = want[q][n-3*recChunk:]
				}
			}
		}
		if step%500 == 0 || step == 5999 {
			for q := range parts {
				got, err := l.Fetch(q, l.Start(q), len(want[q])+1, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want[q]) {
					t.Fatalf("step %d: partition %d reads %d records, want %d", step, q, len(got), len(want[q]))
				}
				for i, r := range got {
					if r.Message.ID != want[q][i] {
						t.Fatalf("step %d: partition %d record %d is %s, want %s", step, q, i, r.Message.ID, want[q][i])
					}
				}
			}
		}
	}
}

// checkFill fails when r's fill is not what its last chunk holds: n minus
// what the chunks before it hold.
func checkFill[T any](t *testing.T, step int, r *records[T]) {
	t.Helper()
	want := 0
	if k := len(r.chunks); k > 0 {
		want = r.n - r.capacity(k-1)
	}
	if int(r.fill) != want {
		t.Fatalf("step %d: fill %d, want %d (%d entries in %d chunks)", step, r.fill, want, r.n, len(r.chunks))
	}
}
