package sim

import (
	"encoding/binary"
	"iter"
	"reflect"
	"slices"
	"strings"
)

// tableChunk is the number of elements per chunk of a table or a list.
// It is small so that a short run (a test or a sweep's seed of a hundred
// messages) allocates a few KiB, not chunks sized for millions: a record
// chunk is 3 KiB, a delivery chunk 1 KiB. Long runs pay one pointer (8
// bytes) in the chunk slice per chunk, 1/16 byte per element.
const tableChunk = 128

// table is a dense array indexed by ID that grows in fixed-size chunks, so
// growing it never copies the elements already stored (a doubling slice
// would copy them all at every doubling, which dominates long runs). An
// index far past the chunks in use (an ID a hostile trace names, such as
// m1000000000000) gets its chunk in a map instead, so memory follows the
// chunks touched, never the largest index.
type table[T any] struct {
	chunks []*[tableChunk]T
	far    map[uint64]*[tableChunk]T // chunks past the dense ones, by chunk number
	n      uint64                    // one past the highest index ever touched by at
	used   uint64                    // chunks allocated
	spare  *[tableChunk]T            // a zeroed array the next new dense chunk takes, if any
}

// A table's slice of chunk pointers reaches any chunk number up to
// denseFree, and beyond it up to denseRatio times the chunks allocated:
// the slice then costs at most 8 x denseRatio bytes per allocated chunk of
// tableChunk elements. A chunk further out goes into the far map.
const (
	denseFree  = 4096
	denseRatio = 64
)

// at returns the element at i, growing the table as needed. Pointers stay
// valid for the table's lifetime, unless the table is a packedTable's:
// packing hands a chunk's array to a later chunk, so there a pointer
// lives only until the next lookup on the same table (see packedTable).
func (t *table[T]) at(i uint64) *T {
	if c := i / tableChunk; c < uint64(len(t.chunks)) {
		if p := t.chunks[c]; p != nil {
			if i >= t.n {
				t.n = i + 1
			}
			return &p[i%tableChunk]
		}
	}
	return t.grow(i)
}

// grow is at for an index whose chunk is not allocated yet, or is far.
func (t *table[T]) grow(i uint64) *T {
	c := i / tableChunk
	if i >= t.n {
		t.n = i + 1
	}
	if c >= uint64(len(t.chunks)) && c > denseFree && c > denseRatio*(t.used+1) {
		p := t.far[c]
		if p == nil {
			if t.far == nil {
				t.far = map[uint64]*[tableChunk]T{}
			}
			p = newChunk[T]()
			t.far[c] = p
			t.used++
		}
		return &p[i%tableChunk]
	}
	for uint64(len(t.chunks)) <= c {
		j := uint64(len(t.chunks))
		p := t.far[j] // a far chunk the dense ones reach now moves in
		if p != nil {
			delete(t.far, j)
		}
		t.chunks = append(t.chunks, p)
	}
	if t.chunks[c] == nil {
		if t.spare != nil {
			t.chunks[c], t.spare = t.spare, nil
		} else {
			t.chunks[c] = newChunk[T]()
		}
		t.used++
	}
	return &t.chunks[c][i%tableChunk]
}

// newChunk returns a zeroed chunk whose memory is already written to.
// Fresh memory from the operating system is mapped on first touch; when
// that touch is a read (the ledger reads a record's flags before it writes
// it), the page is mapped twice, first read-only and then for the write.
// Writing one zero element per page of the new chunk maps every page once,
// up front, in a tight loop.
func newChunk[T any]() *[tableChunk]T {
	p := new([tableChunk]T)
	var zero T
	step := 1
	if size := int(reflect.TypeFor[T]().Size()); size > 0 && size < pageSize {
		step = pageSize / size
	}
	for k := 0; k < tableChunk; k += step {
		p[k] = zero
	}
	p[tableChunk-1] = zero
	return p
}

// pageSize is the smallest page size of the platforms Go runs on.
const pageSize = 4096

// get returns the element at i, or nil when it was never touched (chunks
// are allocated only when an index inside them is).
func (t *table[T]) get(i uint64) *T {
	if i >= t.n {
		return nil
	}
	var c *[tableChunk]T
	if k := i / tableChunk; k < uint64(len(t.chunks)) {
		c = t.chunks[k]
	} else {
		c = t.far[k]
	}
	if c == nil {
		return nil
	}
	return &c[i%tableChunk]
}

// chunk returns chunk number c, or nil when it was never allocated.
func (t *table[T]) chunk(c uint64) *[tableChunk]T {
	if c < uint64(len(t.chunks)) {
		return t.chunks[c]
	}
	return t.far[c]
}

// all yields the index and element of every allocated slot below len, in
// index order, from 1 (index 0 is unused). It costs O(allocated chunks x
// tableChunk), never O(the highest index).
func (t *table[T]) all() iter.Seq2[uint64, *T] {
	return func(yield func(uint64, *T) bool) {
		each := func(c uint64, p *[tableChunk]T) bool {
			for k := range p {
				i := c*tableChunk + uint64(k)
				if i >= t.n {
					return false
				}
				if i > 0 && !yield(i, &p[k]) {
					return false
				}
			}
			return true
		}
		for c, p := range t.chunks {
			if p != nil && !each(uint64(c), p) {
				return
			}
		}
		if len(t.far) == 0 {
			return
		}
		keys := make([]uint64, 0, len(t.far))
		for c := range t.far {
			keys = append(keys, c)
		}
		slices.Sort(keys)
		for _, c := range keys {
			if !each(c, t.far[c]) {
				return
			}
		}
	}
}

// len returns one past the highest index touched.
func (t *table[T]) len() uint64 { return t.n }

// strChunk is the largest size of one chunk of a strtab, strFirst the
// size of its first: chunk sizes double from strFirst up to strChunk, so a
// short run's strings take a few hundred bytes and a long run's still cost
// one pointer per 64 KiB. strBig is the length from which a string is kept
// as it is instead of being copied into a chunk.
const (
	strChunk = 64 << 10
	strFirst = 256
	strBig   = 1 << 12
)

// strRef names a string held by a strtab. The zero strRef is "". A small
// string is chunk<<32 | offset<<16 | length; a big one has the top bit set
// and indexes strtab.big. A strRef holds no pointer, so tables of them are
// never scanned by the garbage collector.
type strRef uint64

const strRefBig strRef = 1 << 63

// strtab stores strings in append-only chunks of bytes, so the records
// that refer to them are pointer-free. A chunk is written once and never
// moved: substrings of it stay valid, and reading a string back does not
// allocate. Storing a string costs a copy of its bytes; only one pointer
// per chunk (at most 64 KiB, and per big string) is left for the collector
// to scan. A chunk is never copied: a full one is kept as it is and the
// next, twice as large up to strChunk, is begun.
type strtab struct {
	done   []string          // full chunks
	cur    strings.Builder   // the chunk being filled; it never grows past strChunk
	big    []string          // strings of at least strBig bytes
	seen   map[string]strRef // the first maxInterned distinct strings stored through intern
	stored int               // bytes stored through intern, counted up to internFrom
}

// put stores s and returns its reference.
func (t *strtab) put(s string) strRef {
	switch {
	case s == "":
		return 0
	case len(s) >= strBig:
		t.big = append(t.big, s)
		return strRefBig | strRef(len(t.big)-1)
	}
	if t.cur.Cap()-t.cur.Len() < len(s) {
		if t.cur.Len() > 0 {
			t.done = append(t.done, t.cur.String())
		}
		size := min(strChunk, max(strFirst, 2*t.cur.Cap(), len(s)))
		t.cur = strings.Builder{}
		t.cur.Grow(size)
	}
	off := t.cur.Len()
	t.cur.WriteString(s)
	return strRef(uint64(len(t.done))<<32 | uint64(off)<<16 | uint64(len(s)))
}

// get returns the string behind r without allocating.
func (t *strtab) get(r strRef) string {
	switch {
	case r == 0:
		return ""
	case r&strRefBig != 0:
		return t.big[r&^strRefBig]
	}
	c, off, n := int(r>>32), int(r>>16&0xffff), int(r&0xffff)
	var s string
	if c < len(t.done) {
		s = t.done[c]
	} else {
		s = t.cur.String()
	}
	return s[off : off+n]
}

// strCache remembers the last string stored through it, so a run of
// messages sharing a key or type stores it once, and, in a small
// direct-mapped cache, where recently stored strings are, so keys that
// recur in turn (a workload's key space, cycled through) are neither
// copied again nor looked up in the strtab's index. The cache is made on
// the first string stored, with slotsFirst slots (128 bytes, less than
// the copies it saves a short run of a few distinct keys), and grows once
// to slotsMax slots when the strtab begins to remember strings (see
// intern), so a long run's recurring keys cost a hash of their last bytes
// and a comparison instead of a map lookup. A slot holds the reference of
// the last string that hashed to it; a miss costs what storing cost
// without the cache, plus the hash.
type strCache struct {
	s     string
	r     strRef
	slots []strRef // by slotOf; nil until the first string is stored
}

// The sizes of a strCache's slots: slotsFirst until its strtab remembers
// strings, slotsMax from then on. Both are powers of two.
const (
	slotsFirst = 16
	slotsMax   = 256
)

// put stores s in t unless it equals the last string put through c. The
// common case, a repeat, is small enough to be inlined.
func (c *strCache) put(t *strtab, s string) strRef {
	if same(s, c.s) { // c.r is 0 while c.s is "", which is right for ""
		return c.r
	}
	return c.store(t, s)
}

// store is put for a string that differs from the last one: put has
// compared them already, so store does not compare them again. O(len(s))
// for find's comparison, plus what intern costs on a miss.
func (c *strCache) store(t *strtab, s string) strRef {
	if s == "" {
		return 0
	}
	c.s, c.r = s, c.find(t, s)
	return c.r
}

// find returns the reference of a string equal to s stored through c
// before, when its slot still holds it, and otherwise stores s in t
// (intern) and gives it the slot. O(len(s)) for the comparison, plus what
// intern costs on a miss.
func (c *strCache) find(t *strtab, s string) strRef {
	if c.slots == nil {
		c.slots = make([]strRef, slotsFirst)
	}
	i := slotOf(s, len(c.slots))
	if r := c.slots[i]; r != 0 && t.get(r) == s {
		return r
	}
	r := t.intern(s)
	if len(c.slots) < slotsMax && t.stored >= internFrom {
		c.slots = make([]strRef, slotsMax) // the strtab remembers from now on: a long run
		i = slotOf(s, slotsMax)
	}
	c.slots[i] = r
	return r
}

// slotOf returns the slot of s in a strCache of n slots (a power of two).
// Keys are mostly made from a pattern with a counter at the end
// ("order-7"), so the slot is the counter's value, plus a multiplicative
// hash of what comes before it (its length and last eight bytes): up to n
// keys of one pattern with consecutive counters never share a slot, and a
// string without a counter gets its slot from the hash alone. O(1): it
// reads at most 27 bytes.
func slotOf(s string, n int) int {
	var v uint64
	k := len(s)
	for p := uint64(1); k > 0 && len(s)-k < 19 && s[k-1]-'0' <= 9; k-- {
		v += uint64(s[k-1]-'0') * p
		p *= 10
	}
	var x uint64
	for j := max(0, k-8); j < k; j++ {
		x = x<<8 | uint64(s[j])
	}
	return int(v+(x*0x9E3779B97F4A7C15^uint64(k)*0xC2B2AE3D27D4EB4F)>>40) & (n - 1)
}

// maxInterned is how many distinct strings a strtab remembers, so that a
// string stored again (a workload's keys recur) is not copied again. Past
// it, new strings are copied every time they are stored: the index stays
// bounded when every message has a key of its own. internFrom is how many
// bytes a strtab stores before it begins to remember: a short run's keys
// cost less copied than indexed.
const (
	maxInterned = 4096
	internFrom  = 4096
)

// intern is put for a string that may have been stored before: once
// internFrom bytes were stored, it returns the reference of the earlier
// copy when the strtab remembers one. It costs a map lookup.
func (t *strtab) intern(s string) strRef {
	if t.stored < internFrom {
		t.stored += len(s)
		return t.put(s)
	}
	if r, ok := t.seen[s]; ok {
		return r
	}
	r := t.put(s)
	if len(t.seen) < maxInterned && r&strRefBig == 0 {
		if t.seen == nil {
			t.seen = map[string]strRef{}
		}
		t.seen[t.get(r)] = r // the strtab's own copy, so the caller's string is not kept
	}
	return r
}

// list is an append-only sequence stored in fixed-size chunks, so appending
// never copies the elements already stored (a slice would copy them all at
// every doubling, and clear the new half).
type list[T any] struct {
	chunks []*[tableChunk]T
	n      int
}

// push appends v.
func (s *list[T]) push(v T) {
	c := s.n / tableChunk
	if c == len(s.chunks) {
		s.chunks = append(s.chunks, new([tableChunk]T))
	}
	s.chunks[c][s.n%tableChunk] = v
	s.n++
}

// len returns the number of elements.
func (s *list[T]) len() int { return s.n }

// all yields the elements in order.
func (s *list[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := 0; i < s.n; i++ {
			if !yield(s.chunks[i/tableChunk][i%tableChunk]) {
				return
			}
		}
	}
}

// slice returns a copy of the elements in order, nil when there are none.
func (s *list[T]) slice() []T {
	if s.n == 0 {
		return nil
	}
	out := make([]T, 0, s.n)
	for _, c := range s.chunks {
		out = append(out, c[:min(tableChunk, s.n-len(out))]...)
	}
	return out
}

// idSeq is an append-only sequence of IDs, stored as the difference from
// the previous ID (zigzag varint) in chunks of bytes that are never
// copied: IDs that arrive roughly in order, as first applications do,
// take one or two bytes each instead of eight, and a run of IDs each one
// after the previous, as a consumer that applies copies in order makes,
// takes two bytes per 255 IDs. Chunks start at seqFirst bytes and double
// up to seqChunk; the last one is being filled, its first at bytes used.
// Reading it back is sequential.
//
// An entry is a varint of the zigzag difference, never 0, or a run: the
// byte 0 (the difference 0 is never a varint) and a count byte, the
// number of IDs that follow, each one more than the one before; a count
// of 0 stands for the same ID once more. The last entry, when it is a run,
// grows in place: push adds one to its count.
type idSeq struct {
	chunks [][]byte // the full chunks, cut to the bytes written, then cur
	cur    []byte   // the chunk being filled, nil before the first push
	at     int      // the bytes of cur used
	run    int      // the offset in cur of the count of the run written last; 0 when the last entry is no run
	last   ID       // the ID pushed last
	n      int
}

const (
	seqFirst = 64
	seqChunk = 4096
	maxRun   = 0xff // the largest count of a run
)

// push appends id. The common case, the ID after the last one, adds one
// to the count of the last run: a byte written in place, and no pointer
// (a slice header stored back would be a pointer write the collector
// has to see). O(1) amortised.
func (s *idSeq) push(id ID) {
	d := int64(id - s.last) // the difference modulo 2^64, read as signed
	s.last = id
	s.n++
	if d == 1 && s.run != 0 && s.cur[s.run] < maxRun {
		s.cur[s.run]++
		return
	}
	s.pushEntry(d)
}

// pushEntry appends a new entry for the difference d, beginning a chunk
// when the one being filled may not hold it: an entry never straddles two
// chunks.
func (s *idSeq) pushEntry(d int64) {
	if len(s.cur)-s.at < binary.MaxVarintLen64 {
		size := seqFirst
		if s.cur != nil {
			size = min(seqChunk, 2*len(s.cur))
		}
		if k := len(s.chunks) - 1; k >= 0 {
			s.chunks[k] = s.cur[:s.at] // a full chunk keeps only the bytes written
		}
		s.cur, s.at = make([]byte, size), 0
		s.chunks = append(s.chunks, s.cur)
	}
	s.run = 0
	switch d {
	case 1: // a run of one, to grow
		s.cur[s.at], s.cur[s.at+1] = 0, 1
		s.run = s.at + 1
		s.at += 2
	case 0: // the same ID again
		s.cur[s.at], s.cur[s.at+1] = 0, 0
		s.at += 2
	default:
		s.at += binary.PutUvarint(s.cur[s.at:], uint64(d<<1)^uint64(d>>63))
	}
}

// seqEntry decodes the entry of an idSeq at the start of c: a difference
// d, or, when run is at least 0, a run of run IDs (see idSeq), in n
// bytes; n is 0 when c holds no whole entry (never so for what push
// wrote).
func seqEntry(c []byte) (d int64, run, n int) {
	if len(c) >= 2 && c[0] == 0 {
		return 0, int(c[1]), 2
	}
	z, n := binary.Uvarint(c)
	if n <= 0 || z == 0 {
		return 0, -1, 0
	}
	return int64(z>>1) ^ -int64(z&1), -1, n
}

// len returns the number of IDs.
func (s *idSeq) len() int { return s.n }

// used returns the bytes written so far of chunk k: all of it but for
// the last chunk, which is being filled.
func (s *idSeq) used(k int) []byte {
	if k == len(s.chunks)-1 {
		return s.chunks[k][:s.at]
	}
	return s.chunks[k]
}

// all yields the IDs in order.
func (s *idSeq) all() iter.Seq[ID] {
	return func(yield func(ID) bool) {
		var id ID
		for k := range s.chunks {
			c := s.used(k)
			for len(c) > 0 {
				d, run, n := seqEntry(c)
				if n == 0 {
					return // push writes only whole entries; never reached
				}
				c = c[n:]
				if run == 0 {
					if !yield(id) { // the same ID again
						return
					}
				}
				for range run {
					id++
					if !yield(id) {
						return
					}
				}
				if run < 0 {
					id += ID(d)
					if !yield(id) {
						return
					}
				}
			}
		}
	}
}

// slice returns the IDs in order as a new slice, nil when there are none.
func (s *idSeq) slice() []ID {
	if s.n == 0 {
		return nil
	}
	out := make([]ID, 0, s.n)
	for id := range s.all() {
		out = append(out, id)
	}
	return out
}
