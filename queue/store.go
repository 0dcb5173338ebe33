package queue

import (
	"github.com/brokerlab/brokerlab/internal/stored"
	"github.com/brokerlab/brokerlab/sim"
)

// state is where one entry of a queue stands.
type state uint8

const (
	stFree     state = iota // the slot is unused
	stDelayed               // in the delay heap, not yet visible (a delayed send or a nack with delay)
	stReady                 // visible: in the ready ring (standard) or in its group (FIFO)
	stInFlight              // received and not yet acked: in the in-flight heap
	stHeld                  // FIFO only: nacked with a delay; in its group and in the delay heap, keeping the group busy
)

// entry is one resident copy of a message. A broker duplicate or a second
// send of the same message ID is a separate entry. Entries live in a slab of
// chunks that never move, so their addresses are stable and the slab never copies
// them when it grows.
//
// An entry is 64 bytes, 40 of them the message. What only some copies
// need lives in a cold record beside it (see cold): a fresh copy that was
// never received, the bulk of a backlog, has none. The slot's life is its
// tag (see chunk.t), not a field.
type entry struct {
	msg     stored.Slim // shares headers with equal neighbours, its body in slab.bodies (see package stored); Origin and Created: see cold
	entered sim.Tick    // when this copy entered this queue (its age counts from here)
	gen     uint32      // receipt generation: bumped when the slot is taken and on every receive
	hidx    int32       // where the copy is in the delay or in-flight theap (see theap), -1 when in neither; while free, the bits of the slab's next free slot + 1 (0: none)
	cold    uint32      // 1 + index of the copy's cold record in the slab, 0 for none
	state   state
	flags   flags  // fDup, fNacked
	src     uint16 // in a DLQ: 1 + index into Queue.sources of the queue it came from; 0 for none
}

// cold is what an entry needs once it has been received, or when its
// message has an origin, was created before it entered, or was enqueued
// before it entered (a dead letter, a duplicate, a redriven copy, a send
// retried after an outage). An entry without a cold record has received 0
// times, no last receiver (actor -1), no origin, and was created and
// enqueued when it entered. A free record's receives holds the bits of
// the next free record + 1 (0: none). A record is 32 bytes.
type cold struct {
	sentAt   sim.Tick // the copy's enqueue time, which retention counts from: when it entered, or for a standard queue's dead letter when it entered its source
	created  sim.Tick // the message's Created
	origin   sim.ID   // the message's Origin
	receives int32    // receive count of this copy
	actor    int32    // index into Queue.actors of the last receiver, -1 for none
}

// flags are an entry's yes/no facts, packed in one byte.
type flags uint8

const (
	fDup    flags = 1 << iota // the copy is a broker duplicate, which broker.duplicate never copies again
	fNacked                   // in the delay heap after a nack: still in flight for MaxInFlight
)

// has reports whether every flag of f is set.
func (x flags) has(f flags) bool { return x&f == f }

// set sets or clears the flags f.
func (x *flags) set(f flags, on bool) {
	if on {
		*x |= f
	} else {
		*x &^= f
	}
}

// The slab's chunks: below slot chunkSize every chunk holds smallSize
// slots, so a queue of a few messages allocates a few entries and one of
// a hundred wastes at most smallSize-1 of them; from slot chunkSize on
// every chunk holds chunkSize slots, so a queue of millions holds few
// chunks. A chunk's entries and their tags are one allocation (see
// smallChunk and bigChunk). A chunk is allocated when the first of its
// slots is and never moves; only the slice of chunk headers is copied as
// it grows.
const (
	chunkBits  = 8
	chunkSize  = 1 << chunkBits
	chunkMask  = chunkSize - 1
	smallBits  = 4
	smallSize  = 1 << smallBits
	smallMask  = smallSize - 1
	smallCount = chunkSize / smallSize // chunks below slot chunkSize
)

// chunkLen returns the number of slots of chunk k.
func chunkLen(k int) int {
	if k < smallCount {
		return smallSize
	}
	return chunkSize
}

// smallChunk and bigChunk are the memory of a chunk of entries and of
// their tags, allocated together. An object with pointers above 512
// bytes carries an 8-byte allocation header, so 16 entries (1,024 bytes)
// alone take the 1,152-byte size class and 256 entries (16,384 bytes) the
// 18,432-byte one: the tags (64 and 1,024 bytes) fit in what the class
// leaves over, and a chunk costs one allocation instead of two and no
// more memory than its entries alone. TestChunkSizeClasses pins it.
type (
	smallChunk struct {
		e [smallSize]entry
		t [smallSize]uint32
	}
	bigChunk struct {
		e [chunkSize]entry
		t [chunkSize]uint32
	}
)

// chunk is the header of one chunk: a pointer to its memory, small for a
// chunk below slot chunkSize, big for the others, the other one nil. Two
// pointers are 16 bytes where two slice headers would take 48, so the
// table of the first 8 chunks is one 128-byte allocation; and an entry or
// tag is found by indexing an array, with no bound to load.
//
// A chunk's t holds, by slot, the slot's life: bumped when alloc hands
// the slot out (lives run from 1 to lifeMax), with tagFree set until the
// entry leaves stFree and again when it is released. A ring's ref is
// checked against these 4 bytes per slot instead of the entry itself: the
// compactions of long rings read one tag per ref, not one entry.
type chunk struct {
	small *smallChunk
	big   *bigChunk
}

// newChunk allocates chunk k, of chunkLen(k) slots.
func newChunk(k int) chunk {
	if k < smallCount {
		return chunk{small: new(smallChunk)}
	}
	return chunk{big: new(bigChunk)}
}

// slab holds entries by slot number. Freed slots are reused last-in
// first-out, which is deterministic; the list of free slots runs through
// the free entries themselves (see entry.hidx), so it costs no memory of
// its own.
type slab struct {
	chunks []chunk // see chunkLen; the entries and tags never move or get copied
	n      uint32  // slots handed out so far
	free   uint32  // 1 + the most recently freed slot, 0 when none is free

	colds []coldChunk // the cold records, chunked as the entries are
	nc    uint32      // cold records handed out so far
	cfree uint32      // 1 + the most recently freed cold record, 0 when none is free

	// bodies holds the entries' bodies, packed; a chunk of it is let go
	// once every body in it is released and it is not the one being
	// filled, as copies leave roughly in the order they entered. A
	// delayed copy's body is kept apart (see accept).
	bodies stored.Bodies
}

// tagFree marks the tag of a slot whose entry is stFree; the other bits
// keep its last life, which is at most lifeMax.
const (
	tagFree = 1 << 31
	lifeMax = tagFree - 1
)

// live reports whether r names the current life of a slot that is not
// free.
func (s *slab) live(r ref) bool {
	i := r.slot()
	return i < s.n && *s.tag(i) == r.life()
}

// ref returns the ref of slot i's current life.
func (s *slab) ref(i uint32) ref { return mkref(i, *s.tag(i)&^tagFree) }

// setState moves the entry in slot i to state st, which is not stFree. A
// copy that goes back from in flight to waiting (a nack, an expired
// visibility timeout) moves its body to the arena's newest chunk: it now
// waits behind the copies sent since and leaves about when they do, and
// its body would otherwise keep the chunk of the copies it entered with
// from being let go. O(1), plus the copy of a small body.
func (s *slab) setState(i uint32, e *entry, st state) {
	if e.state == stInFlight && st != stInFlight {
		e.msg.Move(&s.bodies)
	}
	e.state = st
	*s.tag(i) &^= tagFree
}

// loc returns the chunk of slot i and its index there. at, tag and coldAt
// write the same arithmetic out inside the branch that picks a chunk's
// small or big array, which loc's two results would make them take
// twice; the slab's tests check where each slot and record lands.
func loc(i uint32) (k, j uint32) {
	if i < chunkSize {
		return i >> smallBits, i & smallMask
	}
	return i>>chunkBits + smallCount - 1, i & chunkMask
}

// at returns the entry in slot i, which alloc has handed out. O(1).
func (s *slab) at(i uint32) *entry {
	if i < chunkSize {
		return &s.chunks[i>>smallBits].small.e[i&smallMask]
	}
	return &s.chunks[i>>chunkBits+smallCount-1].big.e[i&chunkMask]
}

// tag returns the tag of slot i, which alloc has handed out. O(1).
func (s *slab) tag(i uint32) *uint32 {
	if i < chunkSize {
		return &s.chunks[i>>smallBits].small.t[i&smallMask]
	}
	return &s.chunks[i>>chunkBits+smallCount-1].big.t[i&chunkMask]
}

// alloc hands out a slot, the most recently freed one if any, and makes
// its entry a new life with no receives, heap index, actor, source or
// flags. O(1); it allocates only when it opens a new chunk.
func (s *slab) alloc() uint32 {
	var i uint32
	if s.free > 0 {
		i = s.free - 1
		s.free = uint32(s.at(i).hidx)
	} else {
		if s.n == s.capacity() {
			if s.chunks == nil {
				s.chunks = make([]chunk, 0, 8) // the chunks of 128 slots, in one 128-byte allocation
			}
			s.chunks = append(s.chunks, newChunk(len(s.chunks)))
		}
		i = s.n
		s.n++
	}
	t := s.tag(i)
	life := *t&^tagFree + 1
	if life > lifeMax { // after lifeMax lives of the slot
		life = 1
	}
	*t = life | tagFree
	e := s.at(i)
	e.gen++
	e.hidx = -1
	e.src = 0
	e.flags = 0
	return i
}

// release frees slot i for reuse, dropping the entry's references to its
// message, its body and its cold record. O(1).
func (s *slab) release(i uint32) {
	e := s.at(i)
	e.msg.Drop(&s.bodies) // drop references to key, body and headers
	e.state = stFree
	*s.tag(i) |= tagFree
	if e.cold != 0 {
		c := s.coldAt(e.cold - 1)
		c.receives = int32(s.cfree)
		s.cfree = e.cold
		e.cold = 0
	}
	e.hidx = int32(s.free)
	s.free = i + 1
}

// coldChunk is the header of one chunk of cold records, chunked as the
// entries are (see chunk): a pointer to its records, small for a chunk
// below record chunkSize, big for the others, the other one nil.
type coldChunk struct {
	small *[smallSize]cold
	big   *[chunkSize]cold
}

// newColdChunk allocates chunk k of cold records, of chunkLen(k) records.
func newColdChunk(k int) coldChunk {
	if k < smallCount {
		return coldChunk{small: new([smallSize]cold)}
	}
	return coldChunk{big: new([chunkSize]cold)}
}

// coldAt returns cold record k, which mkCold has handed out. O(1).
func (s *slab) coldAt(k uint32) *cold {
	if k < chunkSize {
		return &s.colds[k>>smallBits].small[k&smallMask]
	}
	return &s.colds[k>>chunkBits+smallCount-1].big[k&chunkMask]
}

// mkCold returns e's cold record, giving e one with the defaults if it has
// none: the most recently freed record if any, else a new one. O(1); it
// allocates only when it opens a new chunk of records.
func (s *slab) mkCold(e *entry) *cold {
	if e.cold != 0 {
		return s.coldAt(e.cold - 1)
	}
	var k uint32
	if s.cfree > 0 {
		k = s.cfree - 1
		s.cfree = uint32(s.coldAt(k).receives)
	} else {
		if s.nc == capacity(len(s.colds)) {
			s.colds = append(s.colds, newColdChunk(len(s.colds)))
		}
		k = s.nc
		s.nc++
	}
	e.cold = k + 1
	c := s.coldAt(k)
	*c = cold{sentAt: e.entered, created: e.entered, actor: -1}
	return c
}

// receives returns how many times e has been received. O(1).
func (s *slab) receives(e *entry) int32 {
	if e.cold == 0 {
		return 0
	}
	return s.coldAt(e.cold - 1).receives
}

// actor returns the index into Queue.actors of e's last receiver, -1 for
// none. O(1).
func (s *slab) actor(e *entry) int32 {
	if e.cold == 0 {
		return -1
	}
	return s.coldAt(e.cold - 1).actor
}

// sentAt returns e's enqueue time, which retention counts from: when it
// entered, or for a standard queue's dead letter when it entered its
// source. O(1).
func (s *slab) sentAt(e *entry) sim.Tick {
	if e.cold == 0 {
		return e.entered
	}
	return s.coldAt(e.cold - 1).sentAt
}

// hold makes e, freshly allocated, a copy of m that entered at tick now
// with enqueue time sentAt; a small body is copied into the slab's arena.
// A fresh message sent now costs no cold record.
func (s *slab) hold(e *entry, m *stored.Message, sentAt, now sim.Tick) {
	m.SlimInto(&e.msg, &s.bodies)
	e.entered = now
	if sentAt != now || m.Created != now || m.Origin != 0 {
		c := s.mkCold(e)
		c.sentAt, c.created, c.origin = sentAt, m.Created, m.Origin
	}
}

// origin returns the Origin of e's message. O(1).
func (s *slab) origin(e *entry) sim.ID {
	if e.cold == 0 {
		return 0
	}
	return s.coldAt(e.cold - 1).origin
}

// created returns the Created of e's message. O(1).
func (s *slab) created(e *entry) sim.Tick {
	if e.cold == 0 {
		return e.entered
	}
	return s.coldAt(e.cold - 1).created
}

// stored returns e's message as it was stored, its body the copy the
// slab holds. O(1), no allocation.
func (s *slab) stored(e *entry) stored.Message {
	return e.msg.Message(&s.bodies, s.origin(e), s.created(e))
}

// body returns e's body, the copy the slab holds, its capacity clipped to
// its length. O(1), no allocation.
func (s *slab) body(e *entry) []byte { return e.msg.Body(&s.bodies) }

// capacity returns the number of slots of the chunks allocated so far.
func (s *slab) capacity() uint32 { return capacity(len(s.chunks)) }

// capacity returns the number of slots of the first k chunks.
func capacity(k int) uint32 {
	if k <= smallCount {
		return uint32(k) * smallSize
	}
	return uint32(k-smallCount+1) * chunkSize
}

// ref names one life of a slot: a ring may keep a ref after the entry left
// it (lazy deletion); the life number tells stale refs apart.
type ref uint64

func mkref(slot, life uint32) ref { return ref(uint64(slot)<<32 | uint64(life)) }
func (r ref) slot() uint32        { return uint32(r >> 32) }
func (r ref) life() uint32        { return uint32(r) }

// fresh marks a ref in a standard queue's all ring whose copy became
// visible as it entered and whose place in the ready order is held by a
// run (see Queue.ready), so the ready ring need not repeat it. Lives are
// at most lifeMax, so the bit is free; a marked ref names no live slot
// until the mark is cleared.
const fresh ref = tagFree

// run returns a ref that stands, in the ready ring, for the next n fresh
// refs of the all ring. Life 0 is no slot's life, so a run is never taken
// for a ref.
func run(n uint32) ref { return mkref(n, 0) }

// isRun reports whether r is a run, and returns its length.
func (r ref) isRun() (uint32, bool) { return r.slot(), r.life() == 0 }

// ring is a double-ended queue: push at either end, pop at the front,
// each O(1) amortised, never copying more than segSize elements.
//
// Up to segSize elements it is one power-of-two circular buffer that
// doubles as it fills (a small queue, a FIFO group of a few messages,
// costs a few dozen bytes, and the ring itself 48). Beyond that it holds
// its elements in segments of segSize (see segs): growing adds a segment
// and never copies an element or keeps an old array alive, and a segment
// that popFront or a compaction empties leaves the table, kept as a spare
// for growing back only while the spares do not outnumber the segments
// in use, so a draining ring frees as it drains.
type ring[T any] struct {
	buf  []T // small mode: the circular buffer
	head int // small mode: index in buf of the first element; large mode: index in the first segment
	n    int
	big  *segs[T] // large mode, nil in small mode
}

// segs holds a large ring's segments in a small circular table of
// power-of-two length. At most two segments are partly empty. Emptied
// segments are kept for reuse, as many as are in use and at least one, so
// a ring that crosses a segment boundary back and forth does not allocate
// each time, and one that a compaction halved grows back into the
// segments it let go instead of new ones.
type segs[T any] struct {
	s      [][]T // the table
	first  int   // index in s of the first segment
	n      int   // segments in use
	spares [][]T // emptied segments kept for the next ones needed
}

// segBits sets the segment size of a large ring: 1,024 elements, 8 KiB
// of refs.
const (
	segBits = 10
	segSize = 1 << segBits
	segMask = segSize - 1
)

func (r *ring[T]) len() int { return r.n }

// at returns the i-th element from the front, 0 <= i < len. O(1).
func (r *ring[T]) at(i int) T { return *r.slot(i) }

// slot returns the place of the i-th element from the front.
func (r *ring[T]) slot(i int) *T {
	if r.big == nil {
		return &r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	g, o := r.big, r.head+i
	return &g.s[(g.first+o>>segBits)&(len(g.s)-1)][o&segMask]
}

// grow makes room for one more element in small mode: it doubles the
// buffer, or at segSize elements turns the ring into large mode, with the
// buffer, rotated to start at index 0, as its first segment.
func (r *ring[T]) grow() {
	c := len(r.buf) * 2
	if c == 0 {
		c = 16
	}
	if c <= segSize {
		nb := make([]T, c)
		for i := 0; i < r.n; i++ {
			nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
		return
	}
	first := r.buf
	if r.head != 0 {
		first = make([]T, segSize)
		for i := 0; i < r.n; i++ {
			first[i] = r.buf[(r.head+i)&segMask]
		}
	}
	r.big = &segs[T]{s: make([][]T, 4), n: 1}
	r.big.s[0] = first
	r.buf, r.head = nil, 0
}

// newSeg returns an empty segment, the most recently emptied spare if
// there is one.
func (g *segs[T]) newSeg() []T {
	if k := len(g.spares) - 1; k >= 0 {
		s := g.spares[k]
		g.spares[k] = nil
		g.spares = g.spares[:k]
		return s
	}
	return make([]T, segSize)
}

// keep takes the emptied segment s, no longer in the table, as a spare,
// and lets go of the spares beyond max(1, segments in use). O(1)
// amortised.
func (g *segs[T]) keep(s []T) {
	g.spares = append(g.spares, s)
	for len(g.spares) > max(1, g.n) {
		k := len(g.spares) - 1
		g.spares[k] = nil
		g.spares = g.spares[:k]
	}
}

// room makes the table hold one more segment. It copies only segment
// headers, 24 bytes per segSize elements.
func (g *segs[T]) room() {
	if g.n < len(g.s) {
		return
	}
	ns := make([][]T, 2*len(g.s))
	for i := 0; i < g.n; i++ {
		ns[i] = g.s[(g.first+i)&(len(g.s)-1)]
	}
	g.s, g.first = ns, 0
}

func (r *ring[T]) pushBack(v T) {
	if r.big == nil {
		if r.n == len(r.buf) {
			r.grow()
		}
		if r.big == nil {
			r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
			r.n++
			return
		}
	}
	if g := r.big; r.head+r.n == g.n<<segBits {
		g.room()
		g.s[(g.first+g.n)&(len(g.s)-1)] = g.newSeg()
		g.n++
	}
	*r.slot(r.n) = v
	r.n++
}

func (r *ring[T]) pushFront(v T) {
	if r.big == nil {
		if r.n == len(r.buf) {
			r.grow()
		}
		if r.big == nil {
			r.head = (r.head - 1) & (len(r.buf) - 1)
			r.buf[r.head] = v
			r.n++
			return
		}
	}
	g := r.big
	if r.head == 0 {
		g.room()
		g.first = (g.first - 1) & (len(g.s) - 1)
		g.s[g.first] = g.newSeg()
		g.n++
		r.head = segSize
	}
	r.head--
	g.s[g.first][r.head] = v
	r.n++
}

func (r *ring[T]) front() T { return *r.slot(0) }

// back returns the place of the last element; the ring is not empty.
func (r *ring[T]) back() *T { return r.slot(r.n - 1) }

func (r *ring[T]) popFront() T {
	var zero T
	p := r.slot(0)
	v := *p
	*p = zero
	r.n--
	if r.big == nil {
		r.head = (r.head + 1) & (len(r.buf) - 1)
		return v
	}
	r.head++
	if r.head == segSize || r.n == 0 {
		r.dropFront()
	}
	return v
}

// dropFront lets go of the first segment, which holds no element, keeping
// it as a spare. An empty large ring holds no segment in its table.
func (r *ring[T]) dropFront() {
	g := r.big
	s := g.s[g.first]
	g.s[g.first] = nil
	g.first = (g.first + 1) & (len(g.s) - 1)
	g.n--
	g.keep(s)
	r.head = 0
	if r.n == 0 {
		g.n, g.first = 0, 0
	}
}

// filter keeps the elements for which keep returns true, in order. It is
// O(len) and used only for amortised compaction of lazily deleted refs; a
// large ring lets go of the segments it no longer needs.
func (r *ring[T]) filter(keep func(T) bool) {
	w := 0
	for i := 0; i < r.n; i++ {
		v := r.at(i)
		if keep(v) {
			*r.slot(w) = v
			w++
		}
	}
	r.truncate(w)
}

// truncate drops the elements from the w-th on, 0 <= w <= len; a large
// ring lets go of the segments it no longer needs. O(len-w).
func (r *ring[T]) truncate(w int) {
	var zero T
	for i := w; i < r.n; i++ {
		*r.slot(i) = zero
	}
	r.n = w
	g := r.big
	if g == nil {
		return
	}
	used := (r.head + r.n + segMask) >> segBits // segments that hold an element
	if r.n == 0 {
		used = 0
	}
	for g.n > used {
		k := (g.first + g.n - 1) & (len(g.s) - 1)
		s := g.s[k]
		g.s[k] = nil
		g.n--
		g.keep(s)
	}
	if g.n == 0 {
		g.first, r.head = 0, 0
	}
}

// reset empties the ring and lets go of its buffers.
func (r *ring[T]) reset() { *r = ring[T]{} }

// theap is a min-queue of slots ordered by (due, message ID, slot): a
// sorted run beside a heap. Slots mostly come in the order of their keys
// (a queue's visibility timeout is one for all, so copies received later
// are due later, and a batch is received in the order of its IDs) and
// mostly leave in that order too (a consumer acks its batch as it
// received it), so a slot whose key is no less than the run's last one is
// appended to the run, and only the others go to the heap. The least slot
// is the run's first or the heap's least; taking the run's first costs
// O(1), where a heap would sink its last item from the top to the bottom.
//
// Each item carries its sort key, so comparisons do not touch the
// entries, and each entry records where its item is (hidx: its heap
// index, or -2 minus its index in the run), so removal and re-keying cost
// O(1) in the run and O(log n) in the heap. An item removed from the
// middle of the run stays as a gone item, still holding its key so the
// run stays sorted, until the run's front reaches it or a compaction
// drops it. An item costs 24 bytes.
//
// No two items have the same key (a slot is in at most one theap at a
// time, and there once), so the order in which items leave is that of
// their keys, whatever went to the run and whatever to the heap: the
// split, like the heap's arity, changes the cost, never the trace.
//
// The run lives behind a pointer, made at the first slot that goes to
// it: a Queue holds two theaps, and stays in its size class (see
// TestStructSizes).
type theap struct {
	s   *slab
	a   []hitem // the heap
	run *hrun   // nil until a slot first goes to the run
}

// hrun is a theap's run. Its items from rh on are in the order of their
// keys; the items before rh have left. The item at rh is live when any
// is; n counts the live items, the others are gone.
type hrun struct {
	items []hitem
	rh, n int
}

// heapArity is the number of children of a heap node. An item that
// leaves the heap from its top is replaced by the last item, which sinks
// back towards the bottom: with four children a level, it sinks through
// half as many levels as in a binary heap, writing half as many entries'
// indices, for the price of comparing four children, which lie side by
// side in one or two cache lines, instead of two.
const heapArity = 4

// hitem is one element of a theap: a slot and the key it is ordered by,
// and in the run whether it has left (a byte of what would be padding).
type hitem struct {
	due  sim.Tick
	id   sim.ID
	slot uint32
	gone bool
}

func (x *hitem) less(y *hitem) bool {
	if x.due != y.due {
		return x.due < y.due
	}
	if x.id != y.id {
		return x.id < y.id
	}
	return x.slot < y.slot
}

// runIdx returns the hidx of the run's item i, and runAt the run's index
// of hidx h, which is at most -2.
func runIdx(i int) int32 { return int32(-2 - i) }
func runAt(h int32) int  { return int(-2 - h) }

// len returns how many slots the queue holds.
func (h *theap) len() int {
	if h.run == nil {
		return len(h.a)
	}
	return len(h.a) + h.run.n
}

// place puts it at index i of the heap and records the index in its entry.
func (h *theap) place(i int, it hitem) {
	h.a[i] = it
	h.s.at(it.slot).hidx = int32(i)
}

func (h *theap) up(j int) {
	it := h.a[j]
	for j > 0 {
		i := (j - 1) / heapArity
		if !it.less(&h.a[i]) {
			break
		}
		h.place(j, h.a[i])
		j = i
	}
	h.place(j, it)
}

func (h *theap) down(i int) bool {
	i0 := i
	it := h.a[i]
	n := len(h.a)
	for {
		c := heapArity*i + 1
		if c >= n {
			break
		}
		j := c // the least of i's children
		for k, end := c+1, min(c+heapArity, n); k < end; k++ {
			if h.a[k].less(&h.a[j]) {
				j = k
			}
		}
		if !h.a[j].less(&it) {
			break
		}
		h.place(i, h.a[j])
		i = j
	}
	h.place(i, it)
	return i > i0
}

// firstHeap is the room the heap or the run takes at its first push: 96
// bytes, so the in-flight set of a consumer that receives a few messages
// at a time, or the delayed set of a few retries, costs one allocation
// instead of one for each doubling up to its size.
const firstHeap = 4

// push adds slot, keyed by due and its entry's message ID: at the end of
// the run when its key is no less than the run's last, else to the heap.
// The item holds the entry's due tick (delayed or held: visible at; in
// flight: the visibility deadline); the entry does not. O(1) amortised in
// the run, O(log n) in the heap.
func (h *theap) push(slot uint32, due sim.Tick) {
	e := h.s.at(slot)
	it := hitem{due: due, id: e.msg.ID, slot: slot}
	if h.run == nil {
		h.run = &hrun{items: make([]hitem, 0, firstHeap)}
	}
	r := h.run
	if n := len(r.items); r.n == 0 || !it.less(&r.items[n-1]) {
		r.items = append(r.items, it)
		r.n++
		e.hidx = runIdx(n)
		return
	}
	if h.a == nil {
		h.a = make([]hitem, 0, firstHeap)
	}
	h.a = append(h.a, it)
	h.up(len(h.a) - 1)
}

// least returns the hidx of the least slot; the queue is not empty.
func (h *theap) least() int32 {
	if r := h.run; r != nil && r.n > 0 && (len(h.a) == 0 || r.items[r.rh].less(&h.a[0])) {
		return runIdx(r.rh)
	}
	return 0
}

// item returns the item at hidx i.
func (h *theap) item(i int32) *hitem {
	if i < 0 {
		return &h.run.items[runAt(i)]
	}
	return &h.a[i]
}

// peekDue returns the due tick of the least slot; the queue is not empty.
func (h *theap) peekDue() sim.Tick { return h.item(h.least()).due }

// pop removes the least slot and returns it; the queue is not empty.
func (h *theap) pop() uint32 { return h.remove(h.least()) }

// remove removes the slot whose hidx is i and returns it.
func (h *theap) remove(i int32) uint32 {
	if i < 0 {
		return h.run.remove(h.s, runAt(i))
	}
	slot := h.a[i].slot
	n := len(h.a) - 1
	last := h.a[n]
	h.a = h.a[:n]
	if int(i) != n {
		h.place(int(i), last)
		h.fix(i, last.due)
	}
	h.s.at(slot).hidx = -1
	return slot
}

// remove removes the run's item i, whose slot is in s: the run drops it,
// and the gone items that then lead or end the run, at once when it is
// the first or the last; an item in between is marked gone. When the run
// holds more than twice its live items plus 64, it is compacted. O(1)
// amortised.
func (r *hrun) remove(s *slab, i int) uint32 {
	slot := r.items[i].slot
	s.at(slot).hidx = -1
	r.n--
	switch {
	case r.n == 0: // the run starts again from the start of its array
		r.items, r.rh = r.items[:0], 0
	case i == r.rh:
		r.rh++
		for r.items[r.rh].gone {
			r.rh++
		}
	case i == len(r.items)-1:
		n := i
		for r.items[n-1].gone {
			n--
		}
		r.items = r.items[:n]
	default:
		r.items[i].gone = true
	}
	if len(r.items) > 2*r.n+64 {
		r.compact(s)
	}
	return slot
}

// compact moves the run's live items to its start, in order, and records
// their new indices in their entries, in s. O(len(items)).
func (r *hrun) compact(s *slab) {
	w := 0
	for i := r.rh; i < len(r.items); i++ {
		if it := r.items[i]; !it.gone {
			r.items[w] = it
			s.at(it.slot).hidx = runIdx(w)
			w++
		}
	}
	r.items, r.rh = r.items[:w], 0
}

// fix sets the due tick of the item at hidx i and restores the order: in
// the heap it moves the item; an item of the run leaves it and is pushed
// again.
func (h *theap) fix(i int32, due sim.Tick) {
	if i < 0 {
		h.push(h.run.remove(h.s, runAt(i)), due)
		return
	}
	h.a[i].due = due
	if !h.down(int(i)) {
		h.up(int(i))
	}
}

func (h *theap) reset() { h.a, h.run = nil, nil }

// fill sets every field of *m to e's message as it was sent, headers
// copied by value, in place (a sim.Message is 152 bytes; building it in
// a temporary would copy it twice). The body is the copy the slab holds,
// its capacity clipped to its length, so a handler appending to it never
// writes into a neighbour. O(1), no allocation.
func (s *slab) fill(m *sim.Message, e *entry) {
	if e.cold == 0 {
		m.ID, m.Key, m.Body, m.Headers = e.msg.ID, e.msg.Key, e.msg.Body(&s.bodies), *e.msg.Headers()
		m.Created, m.Origin = e.entered, 0
		return
	}
	s.fillCold(m, e, s.coldAt(e.cold-1))
}

// fillCold is fill for an entry whose cold record c the caller holds.
func (s *slab) fillCold(m *sim.Message, e *entry, c *cold) {
	m.ID, m.Key, m.Body, m.Headers = e.msg.ID, e.msg.Key, e.msg.Body(&s.bodies), *e.msg.Headers()
	m.Created, m.Origin = c.created, c.origin
}
