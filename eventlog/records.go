package eventlog

// recChunk is the number of entries in a full chunk of a partition (256
// entries of 64 bytes: 16 KiB).
const recChunk = 256

// The small chunks: a partition's entries [0, recChunk) start in chunks of
// 4, 6, 11, 21, 41, 75, 49 and 49 entries (smallSizes), so a small topic
// allocates about what it holds, never more than twice that, and never a
// full chunk: each chunk holds at most two entries more than the chunks
// before it. For the 64-byte record entries each fills its size class of
// the allocator but for less than an entry: an object above 512 bytes
// that holds pointers carries an 8-byte header, so a chunk of n > 8
// entries takes 64n+8 bytes, and 11, 21, 41, 75 and 49 entries fit the
// 768-, 1408-, 2688-, 4864- and 3200-byte classes with 56 bytes to spare,
// where 12 or 22 entries would round up to 896 or 1536 bytes
// (TestSmallChunksFitTheirClass). The 24-byte aside entries hold no
// pointers, and their chunks round up by 40 bytes at most but for those
// of 75 and 49 entries (248 and 104 bytes). A partition of 5 to 10 records holds 10
// entries, of 11 to 21 holds 21 and of 22 to 42 holds 42, in at most four
// chunks, which its chunk headers have room for (recHeader). A partition
// the log is made with holds its first chunk from the start (see
// partition.seed), so it holds 4 entries even while it is empty.
const (
	recFirst = 4 // entries of the first chunk
	recSmall = 8 // small chunks covering [0, recChunk)
)

// smallSizes are the sizes of the small chunks, in order; they add up to
// recChunk. smallCap and smallAt are derived from them once: the layout is
// written here and nowhere else.
var smallSizes = [recSmall]int{recFirst, 6, 11, 21, 41, 75, 49, 49}

// smallCap[k] is the number of entries the first k small chunks hold.
var smallCap [recSmall + 1]int

// smallAt[i] locates entry i < recChunk while the small chunks are held:
// in chunk k, at index j.
var smallAt [recChunk]struct{ k, j uint8 }

func init() {
	i := 0
	for k, n := range smallSizes {
		smallCap[k+1] = smallCap[k] + n
		for j := range n {
			smallAt[i].k, smallAt[i].j = uint8(k), uint8(j)
			i++
		}
	}
	if i != recChunk {
		panic("eventlog: the small chunks do not cover a chunk")
	}
}

// recHeader is the room for chunks a partition's records take with their
// first: the first four small chunks (42 entries), in a 96-byte header, as
// most partitions of a small topic hold no more; a fifth grows it as
// append does.
const recHeader = 4

// records is a sequence of a partition's entries (or of what it keeps
// beside them, see partition), indexed from 0, in chunks that are never
// copied: appending adds a chunk when the last is full, so a
// partition of n records costs its entries, at most twice n while it is
// small and n plus one chunk after, plus one pointer per chunk, never the
// old and new arrays of a doubling slice. Entries [0, recChunk) live in
// the small chunks until dropFront first lets go of them; every chunk after
// holds recChunk entries, entry i of them in chunk i/recChunk (shifted by
// the small chunks while they are there). dropFront shifts every index
// down by recChunk.
//
// fill is how many entries of the last chunk are held: n minus what the
// chunks before it hold, so push writes there without working out which
// chunk entry n is in.
type records[T any] struct {
	chunks [][]T
	n      int   // entries held
	fill   int32 // entries held in the last chunk (0 without chunks)
	full   bool  // the small chunks are gone: every chunk holds recChunk entries
	spare  []T   // a dropped full chunk, cleared, kept for the next push that needs one
}

// len returns the number of entries held.
func (r *records[T]) len() int { return r.n }

// at returns entry i, 0 <= i < len. The pointer stays valid until the
// entry's chunk is dropped or the records are truncated below i. O(1).
func (r *records[T]) at(i int) *T {
	switch {
	case r.full:
		return &r.chunks[i/recChunk][i%recChunk]
	case i >= recChunk:
		return &r.chunks[i/recChunk+recSmall-1][i%recChunk]
	}
	s := smallAt[i]
	return &r.chunks[s.k][s.j]
}

// capacity returns the entries the first k chunks hold.
func (r *records[T]) capacity(k int) int {
	switch {
	case r.full:
		return k * recChunk
	case k == 0:
		return 0
	case k <= recSmall:
		return smallCap[k]
	}
	return (k - recSmall + 1) * recChunk
}

// seed gives empty records their first chunk, first (recFirst entries),
// and the room for their chunk headers, hdr (empty, with room for
// recHeader), which the caller allocated with something else: a log made
// with several partitions allocates their headers once for all, and each
// partition holds its first chunk (see New and partition.seed), so none
// allocates for its first records. hdr must be capped (a three-index
// slice), so that appending the chunk past its room moves the headers
// out rather than writing into a neighbour's.
func (r *records[T]) seed(hdr [][]T, first []T) {
	r.chunks = append(hdr[:0:cap(hdr)], first)
	r.fill = 0
}

// push appends e. O(1); it allocates only when the last chunk is full
// (grow).
func (r *records[T]) push(e T) { *r.add() = e }

// add appends an entry and returns it, zero, for the caller to fill in
// field by field: an entry with pointers is then written with a barrier
// per pointer, not copied as a whole with the generic bulk barrier. The
// pointer is valid as at's. O(1); it allocates only when the last chunk
// is full (grow).
func (r *records[T]) add() *T {
	if k := len(r.chunks); k > 0 {
		if c := r.chunks[k-1]; int(r.fill) < len(c) {
			e := &c[r.fill]
			r.fill++
			r.n++
			return e
		}
	}
	r.grow()
	r.fill = 1
	r.n++
	return &r.chunks[len(r.chunks)-1][0]
}

// grow appends the next chunk, the last being full (or there being none).
func (r *records[T]) grow() {
	k := len(r.chunks)
	var c []T
	switch {
	case !r.full && k < recSmall:
		c = make([]T, smallSizes[k])
	case r.spare != nil:
		c, r.spare = r.spare, nil
	default:
		c = make([]T, recChunk)
	}
	if r.chunks == nil {
		r.chunks = make([][]T, 0, recHeader)
	}
	r.chunks = append(r.chunks, c)
}

// dropFront forgets entries [0, recChunk), which must all be cleared
// already and must not be the last ones held: the small chunks, or the
// first full chunk. Every index moves down by recChunk.
func (r *records[T]) dropFront() {
	k := 1
	if !r.full {
		k = recSmall
	}
	c := r.chunks[0]
	clear(r.chunks[:k])
	r.chunks = r.chunks[k:]
	r.full = true
	r.n -= recChunk
	if len(c) == recChunk && r.spare == nil {
		r.spare = c
	}
}

// truncate clears entries [n, len) and keeps the first n. Chunks past the
// one holding entry n-1 are let go; the first chunk is kept for reuse.
func (r *records[T]) truncate(n int) {
	var zero T
	for i := n; i < r.n; i++ {
		*r.at(i) = zero
	}
	keep := 1
	for r.capacity(keep) < n {
		keep++
	}
	for k := keep; k < len(r.chunks); k++ {
		if r.spare == nil && len(r.chunks[k]) == recChunk {
			r.spare = r.chunks[k]
		}
		r.chunks[k] = nil
	}
	if keep < len(r.chunks) {
		r.chunks = r.chunks[:keep]
	}
	r.n = n
	r.fill = 0
	if k := len(r.chunks); k > 0 {
		r.fill = int32(n - r.capacity(k-1))
	}
}
