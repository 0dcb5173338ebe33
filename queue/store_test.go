package queue

import (
	"math"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/internal/stored"
	"github.com/brokerlab/brokerlab/sim"
)

// TestSlabChunksStayPut allocates slots across the small chunks and well
// into the full ones, and checks that every slot has an entry of its own
// that never moves while the slab grows.
func TestSlabChunksStayPut(t *testing.T) {
	var s slab
	const n = 5*chunkSize + 17
	ptrs := make([]*entry, n)
	seen := map[*entry]uint32{}
	tags := map[*uint32]uint32{}
	for i := range uint32(n) {
		if got := s.alloc(); got != i {
			t.Fatalf("alloc %d returned slot %d", i, got)
		}
		if s.n > s.capacity() {
			t.Fatalf("%d slots handed out, capacity %d", s.n, s.capacity())
		}
		e := s.at(i)
		if j, dup := seen[e]; dup {
			t.Fatalf("slots %d and %d share an entry", j, i)
		}
		seen[e] = i
		ptrs[i] = e
		e.entered = sim.Tick(i)
		if j, dup := tags[s.tag(i)]; dup {
			t.Fatalf("slots %d and %d share a tag", j, i)
		}
		tags[s.tag(i)] = i
	}
	for i := range uint32(n) {
		if s.at(i) != ptrs[i] || s.at(i).entered != sim.Tick(i) {
			t.Fatalf("slot %d moved or lost its entry", i)
		}
		// A slot's entry and tag are in the same chunk.
		k, j := loc(i)
		if c := s.chunks[k]; (c.small == nil) == (c.big == nil) ||
			c.small != nil && (s.at(i) != &c.small.e[j] || s.tag(i) != &c.small.t[j]) ||
			c.big != nil && (s.at(i) != &c.big.e[j] || s.tag(i) != &c.big.t[j]) {
			t.Fatalf("slot %d is not at index %d of chunk %d", i, j, k)
		}
	}
	if s.chunks[0].small == nil || s.chunks[smallCount].big == nil {
		t.Fatalf("the first chunk is not small or the first full one not big")
	}
}

// TestSlabReusesFreedSlotsLastInFirstOut frees slots in a known order and
// checks that alloc hands them back last freed first, each as a new life
// with its heap index, receives, actor, source and flags reset, before it
// opens fresh slots, and that a free slot's tag reads as not live.
func TestSlabReusesFreedSlotsLastInFirstOut(t *testing.T) {
	var s slab
	for range 40 {
		i := s.alloc()
		s.setState(i, s.at(i), stReady)
	}
	freed := []uint32{3, 17, 0, 39, 16}
	lives := map[uint32]ref{}
	for _, i := range freed {
		e := s.at(i)
		s.received(e, 2)
		e.src, e.flags = 1, fDup|fNacked
		lives[i] = s.ref(i)
		if !s.live(lives[i]) {
			t.Fatalf("slot %d is not live before release", i)
		}
		s.release(i)
		if s.live(lives[i]) {
			t.Fatalf("slot %d is live after release", i)
		}
	}
	for k := len(freed) - 1; k >= 0; k-- {
		i := s.alloc()
		if i != freed[k] {
			t.Fatalf("alloc returned slot %d, want %d (freed last)", i, freed[k])
		}
		e := s.at(i)
		if s.ref(i) == lives[i] || s.live(lives[i]) || s.live(s.ref(i)) || e.hidx != -1 || s.receives(e) != 0 || s.actor(e) != -1 ||
			e.src != 0 || e.flags != 0 || e.state != stFree {
			t.Fatalf("slot %d came back as %+v", i, *e)
		}
		s.setState(i, e, stReady)
		if !s.live(s.ref(i)) || s.live(lives[i]) {
			t.Fatalf("slot %d: the new life is not live or the old one is", i)
		}
	}
	if i := s.alloc(); i != 40 {
		t.Fatalf("with no free slot alloc returned %d, want 40", i)
	}
}

// TestColdRecordsHoldTheRareFacts checks that an entry has no cold record
// while it is a fresh message that entered when it was created and was
// never received, that every other copy gets one whose facts read back
// exactly, and that released records are reused last freed first, so
// their number follows the copies that need one, not all copies ever.
func TestColdRecordsHoldTheRareFacts(t *testing.T) {
	var s slab
	var c stored.Cache
	const n = 600
	for i := range uint32(n) {
		s.alloc()
		e := s.at(i)
		now := sim.Tick(100 + i)
		m := sim.Message{ID: sim.ID(i + 1), Key: "k", Created: now, Headers: sim.Headers{Type: "t"}}
		sentAt := now
		switch i % 5 {
		case 1:
			sentAt = sim.Tick(i)
		case 2:
			m.Created = sim.Tick(i)
		case 3:
			m.Origin = sim.ID(i)
		}
		st := c.Store(&m)
		s.hold(e, &st, sentAt, now)
		if (e.cold == 0) != (i%5 == 0 || i%5 == 4) {
			t.Fatalf("slot %d (case %d): cold record %d", i, i%5, e.cold)
		}
		if i%5 == 4 {
			s.received(e, int32(i))
			if n := s.received(e, int32(i+1)); n != 2 {
				t.Fatalf("slot %d: second receive counted %d", i, n)
			}
		}
		var got sim.Message
		s.fill(&got, e)
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("slot %d: message %+v, want %+v", i, got, m)
		}
		if got := s.sentAt(e); got != sentAt {
			t.Fatalf("slot %d: sentAt %d, want %d", i, got, sentAt)
		}
	}
	if s.nc != 4*n/5 {
		t.Fatalf("%d cold records for %d copies that need one", s.nc, 4*n/5)
	}
	// Every record is one of its own, at its index in its chunk.
	seen := map[*cold]uint32{}
	for k := range s.nc {
		c := s.coldAt(k)
		if j, dup := seen[c]; dup {
			t.Fatalf("cold records %d and %d share a place", j, k)
		}
		seen[c] = k
		a, b := loc(k)
		if x := s.colds[a]; (x.small == nil) == (x.big == nil) || x.small != nil && c != &x.small[b] || x.big != nil && c != &x.big[b] {
			t.Fatalf("cold record %d is not at index %d of chunk %d", k, b, a)
		}
	}
	for i := range uint32(n) {
		e := s.at(i)
		rc, actor := int32(0), int32(-1)
		if i%5 == 4 {
			rc, actor = 2, int32(i+1)
		}
		if s.receives(e) != rc || s.actor(e) != actor {
			t.Fatalf("slot %d: receives %d, actor %d, want %d, %d", i, s.receives(e), s.actor(e), rc, actor)
		}
	}
	for i := range uint32(n) {
		s.release(i)
	}
	for range n {
		j := s.alloc()
		s.received(s.at(j), 0)
		if s.receives(s.at(j)) != 1 || s.origin(s.at(j)) != 0 {
			t.Fatalf("slot %d: a reused record counted %d receives, origin %d", j, s.receives(s.at(j)), s.origin(s.at(j)))
		}
	}
	if s.nc != n {
		t.Fatalf("%d cold records for %d received copies", s.nc, n)
	}
}

// TestEntryIs64Bytes pins the entry's size: 16 entries fill a 1,024-byte
// and 256 a 16,384-byte allocation size class exactly.
func TestEntryIs64Bytes(t *testing.T) {
	if n := reflect.TypeFor[entry]().Size(); n != 64 {
		t.Fatalf("an entry is %d bytes", n)
	}
}

// TestRingMatchesASlice drives rings through random pushes and pops at
// both ends and compactions, across the switch from one buffer to
// segments and back down to empty, and checks every step against a plain
// slice: same length, same elements in the same order.
func TestRingMatchesASlice(t *testing.T) {
	for _, top := range []int{40, 3 * segSize, 9 * segSize} {
		var r ring[uint64]
		var want []uint64
		rng := uint64(top)
		next := func(n int) int { // xorshift, fixed per size
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			return int(rng % uint64(n))
		}
		v := uint64(0)
		for step := range 40 * top {
			grow := step < 20*top // fill first, then drain
			switch k := next(16); {
			case k < 7 && (grow || k < 3):
				v++
				r.pushBack(v)
				want = append(want, v)
			case k < 10 && (grow || k < 8):
				v++
				r.pushFront(v)
				want = append([]uint64{v}, want...)
			case k < 15:
				if len(want) > 0 {
					if got := r.popFront(); got != want[0] {
						t.Fatalf("top %d step %d: popFront %d, want %d", top, step, got, want[0])
					}
					want = want[1:]
				}
			default:
				m := uint64(next(5) + 2)
				r.filter(func(x uint64) bool { return x%m != 0 })
				want = slicesFilter(want, func(x uint64) bool { return x%m != 0 })
			}
			if len(want) > top { // keep the size near its top
				r.popFront()
				want = want[1:]
			}
			if r.len() != len(want) {
				t.Fatalf("top %d step %d: len %d, want %d", top, step, r.len(), len(want))
			}
			if len(want) > 0 && r.front() != want[0] {
				t.Fatalf("top %d step %d: front %d, want %d", top, step, r.front(), want[0])
			}
			if step%97 == 0 {
				for i, x := range want {
					if r.at(i) != x {
						t.Fatalf("top %d step %d: at(%d) = %d, want %d", top, step, i, r.at(i), x)
					}
				}
			}
		}
		for len(want) > 0 {
			if got := r.popFront(); got != want[0] {
				t.Fatalf("top %d drain: popFront %d, want %d", top, got, want[0])
			}
			want = want[1:]
		}
		if r.big != nil && r.big.n != 0 || r.len() != 0 {
			t.Fatalf("top %d: drained ring holds segments, len %d", top, r.len())
		}
	}
}

func slicesFilter(s []uint64, keep func(uint64) bool) []uint64 {
	var out []uint64
	for _, x := range s {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

// TestRingLetsGoOfDrainedSegments fills a ring far beyond one segment and
// drains it, checking that it never holds more than two segments beyond
// what its elements need, so a drained backlog is not kept alive.
func TestRingLetsGoOfDrainedSegments(t *testing.T) {
	var r ring[ref]
	const n = 20 * segSize
	for i := range n {
		r.pushBack(ref(i))
	}
	for i := range n {
		if got := r.popFront(); got != ref(i) {
			t.Fatalf("pop %d returned %d", i, got)
		}
		if need := (r.len() + segMask) >> segBits; r.big.n > need+1 {
			t.Fatalf("after %d pops: %d segments for %d elements", i+1, r.big.n, r.len())
		}
	}
	held := 0
	for _, s := range r.big.s {
		if s != nil {
			held++
		}
	}
	if held != 0 {
		t.Fatalf("an empty ring holds %d segments", held)
	}
}

// TestRingRegrowsIntoItsSpares compacts a long ring to a third of its
// length and grows it back: the segments the compaction let go are kept
// as spares, so growing back allocates nothing, while the spares never
// outnumber the segments in use (one at least), so a ring that drains
// lets go of them as it goes.
func TestRingRegrowsIntoItsSpares(t *testing.T) {
	const n = 30 * segSize
	// MemStats counts the whole process's allocations, so another
	// goroutine's can land in the window: the ring's own count is the
	// least of three tries on fresh rings, as noise only adds.
	var r ring[ref]
	least := uint64(math.MaxUint64)
	for range 3 {
		r = ring[ref]{}
		for i := range n {
			r.pushBack(ref(i + 1))
		}
		r.filter(func(x ref) bool { return x%3 == 0 })
		if got, want := r.big.n, 10; got != want {
			t.Fatalf("%d segments in use after the compaction, want %d", got, want)
		}
		if len(r.big.spares) != r.big.n {
			t.Fatalf("%d spares kept for %d segments in use", len(r.big.spares), r.big.n)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range 10 * segSize {
			r.pushBack(ref(n + i + 1))
		}
		runtime.ReadMemStats(&after)
		least = min(least, after.Mallocs-before.Mallocs)
		if least == 0 {
			break
		}
	}
	if least != 0 {
		t.Fatalf("growing back into the spares allocated %d times", least)
	}
	for r.len() > 0 {
		r.popFront()
		if len(r.big.spares) > max(1, r.big.n) {
			t.Fatalf("%d spares kept for %d segments in use", len(r.big.spares), r.big.n)
		}
	}
}

// TestLongRingsKeepOrder runs queues whose rings outgrow one segment: a
// standard queue and a FIFO queue with a single group of several segments,
// received in batches and acked, half of the copies nacked back once. Every
// message must come out, in send order for the FIFO group, and Residents
// must list the backlog oldest first.
func TestLongRingsKeepOrder(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		w, err := sim.New(sim.Config{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		env := w.Env()
		q, err := New(w, Config{Name: "long", FIFO: fifo, VisibilityTimeout: 1000})
		if err != nil {
			t.Fatal(err)
		}
		const n = 3*segSize + 77
		var ids []sim.ID
		for range n {
			m := env.NewMessage("k", []byte("b"), sim.Headers{})
			if err := q.Send(m, 0); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, env.IDs.Last())
		}
		res := q.AppendResidents(nil, n)
		if len(res) != n {
			t.Fatalf("fifo %v: %d residents listed, want %d", fifo, len(res), n)
		}
		for i, r := range res {
			if r.Msg != ids[i] {
				t.Fatalf("fifo %v: resident %d is %v, want %v", fifo, i, r.Msg, ids[i])
			}
		}
		var got []sim.ID
		nacked := map[sim.ID]bool{}
		for len(got) < n {
			ds, err := q.Receive("w", 10)
			if err != nil || len(ds) == 0 {
				t.Fatalf("fifo %v: receive after %d: %d deliveries, %v", fifo, len(got), len(ds), err)
			}
			for i, d := range ds {
				id := d.Message.ID
				if id%2 == 0 && !nacked[id] {
					nacked[id] = true
					for _, rest := range ds[i:] {
						if err := q.Nack(rest.Receipt, 0); err != nil {
							t.Fatal(err)
						}
					}
					break
				}
				if err := q.Ack(d.Receipt); err != nil {
					t.Fatal(err)
				}
				got = append(got, id)
			}
		}
		if q.Len() != 0 {
			t.Fatalf("fifo %v: %d left", fifo, q.Len())
		}
		seen := map[sim.ID]bool{}
		for i, id := range got {
			if seen[id] {
				t.Fatalf("fifo %v: %v acked twice", fifo, id)
			}
			seen[id] = true
			if fifo && id != ids[i] {
				t.Fatalf("fifo %v: ack %d is %v, want %v in send order", fifo, i, id, ids[i])
			}
		}
	}
}

// TestResidentCopyCostsAbout85Bytes pins what a fresh resident copy
// costs a queue beyond its body: a 64-byte entry, a 4-byte tag and 8
// bytes in each of two rings, with the rings' partly filled segments on
// top. A field added to the entry, or a ring that doubles again, fails it.
func TestResidentCopyCostsAbout85Bytes(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 200k messages")
	}
	for _, c := range []struct {
		fifo bool
		max  float64 // a standard queue's backlog is in all alone: its ready ring holds one run
	}{{false, 88}, {true, 96}} {
		if got := residentBytes(200_000, c.fifo); got > c.max {
			t.Errorf("fifo=%v: %.1f bytes per resident message, want <= %.0f", c.fifo, got, c.max)
		}
	}
}

// TestBacklogIsOneRun pins that a standard queue's never-received backlog
// is not repeated in its ready ring, and that copies that come back or
// are delivered out of order keep their place.
func TestBacklogIsOneRun(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "runs", VisibilityTimeout: 5})
	var ids []sim.ID
	for range 1000 {
		ids = append(ids, r.send(q, "k", 0).ID)
	}
	if n, ok := q.ready.front().isRun(); q.ready.len() != 1 || !ok || n != 1000 || q.readyLen != 1000 {
		t.Fatalf("1000 fresh copies: ready holds %d elements, first run %d (%v), readyLen %d", q.ready.len(), n, ok, q.readyLen)
	}
	if ds := r.recv(q, 3); len(ds) != 3 { // the first three, back after the timeout
		t.Fatalf("receive: %d", len(ds))
	}
	r.to(5)
	last := r.send(q, "k", 0).ID
	if err := checkReady(q, q.Len()); err != nil {
		t.Fatal(err)
	}
	if q.ready.len() != 1+3+1 { // the first run, three returned refs, the run of the last send
		t.Fatalf("ready holds %d elements, want 5", q.ready.len())
	}
	var got []sim.ID
	for {
		ds := r.recv(q, 10)
		if len(ds) == 0 {
			break
		}
		for _, d := range ds {
			got = append(got, d.Message.ID)
		}
	}
	want := append(append(append([]sim.ID{}, ids[3:]...), ids[:3]...), last)
	if !slices.Equal(got, want) {
		t.Fatalf("delivery order: %d copies, tail %v, want tail %v", len(got), got[max(0, len(got)-5):], want[len(want)-5:])
	}
	if q.ready.len() != 0 || q.readyLen != 0 {
		t.Fatalf("drained: ready holds %d elements, readyLen %d", q.ready.len(), q.readyLen)
	}
}

// TestAllRingHoldsTheLiveCopies pins that a copy retried at the front
// of the all ring does not let the refs of the copies received and
// deleted behind it pile up: the ring holds the live copies and at most
// a quarter of them, plus 64, of deleted refs, not twice the backlog, and
// the delivery order is the one the copies were sent in.
func TestAllRingHoldsTheLiveCopies(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "front", VisibilityTimeout: 1 << 30})
	stuck := r.send(q, "k", 0).ID
	if ds := r.recv(q, 1); len(ds) != 1 || ds[0].Message.ID != stuck {
		t.Fatalf("receive the first copy: %v", ds)
	}
	var sent, got []sim.ID
	for range 5000 { // a backlog that stays
		sent = append(sent, r.send(q, "k", 0).ID)
	}
	worst := 0
	for round := range 3000 {
		for range 10 {
			sent = append(sent, r.send(q, "k", 0).ID)
		}
		for _, d := range r.recv(q, 10) {
			got = append(got, d.Message.ID)
			if err := q.Ack(d.Receipt); err != nil {
				t.Fatal(err)
			}
		}
		worst = max(worst, q.all.len()-(q.Len()+q.Len()/4+64))
		if round%50 == 0 {
			if err := checkInternals(q); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	if worst > 20 {
		t.Errorf("all held up to %d refs more than the %d live copies and a quarter of them plus 64", worst, q.Len())
	}
	if !slices.Equal(got, sent[:len(got)]) {
		t.Errorf("delivery order differs from send order")
	}
}

// TestAllRingKeepsWhatItAdds pins that compacting the all ring as a copy
// enters keeps that copy, whose slot is not live yet: copies sent with a
// delay enter the ready order by ref, not as fresh refs, so their deleted
// refs lie beyond allPos and make add filter the whole ring.
func TestAllRingKeepsWhatItAdds(t *testing.T) {
	r := newRig(t)
	q := r.queue(Config{Name: "delayed", VisibilityTimeout: 1 << 30})
	r.send(q, "k", 0)
	if ds := r.recv(q, 1); len(ds) != 1 {
		t.Fatalf("receive the first copy: %v", ds)
	}
	for range 500 {
		r.send(q, "k", 1)
	}
	for round := range 300 {
		for range 10 {
			r.send(q, "k", 1)
		}
		r.to(r.w.Now() + 1)
		for _, d := range r.recv(q, 10) {
			if err := q.Ack(d.Receipt); err != nil {
				t.Fatal(err)
			}
		}
		if err := checkInternals(q); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if n := len(q.AppendResidents(nil, q.Len()+1)); n != q.Len() {
		t.Fatalf("%d residents listed, %d resident", n, q.Len())
	}
}

// TestSmallRingHeaderIs48Bytes pins the size of a ring itself: every FIFO
// group and every queue holds rings, most of them small, so the segments'
// bookkeeping stays behind a pointer that only a large ring sets.
func TestSmallRingHeaderIs48Bytes(t *testing.T) {
	if n := reflect.TypeFor[ring[ref]]().Size(); n != 48 {
		t.Fatalf("a ring is %d bytes", n)
	}
}

// received counts a receive of e by the actor with index ai, as Queue.take
// does, and returns e's receive count.
func (s *slab) received(e *entry, ai int32) int32 {
	c := s.mkCold(e)
	c.receives++
	c.actor = ai
	return c.receives
}
