package eventlog

// recChunk is the number of entries in a full chunk of a partition (256
// entries of 88 bytes: 22 KiB).
const recChunk = 256

// recFirst is the capacity a partition's first chunk starts with, so a
// small topic allocates a few hundred bytes per partition, not a full
// chunk.
const recFirst = 4

// records is a partition's entries, indexed from 0, in chunks of recChunk
// entries. Appending never copies an entry once the first chunk is full:
// a new chunk is added instead, so a partition of n records costs n
// entries plus one pointer per chunk, never the twice-n of a doubling
// slice. Only the first chunk, while it is the only one, grows by
// doubling up to recChunk entries (at most recChunk entries copied in a
// partition's life between two resets). Entry i lives in chunk
// i/recChunk at i%recChunk; dropping whole chunks from the front
// (dropFront) shifts every index down by recChunk.
type records struct {
	chunks [][]entry
	n      int     // entries held
	spare  []entry // a dropped full chunk, cleared, kept for the next push that needs one
}

// len returns the number of entries held.
func (r *records) len() int { return r.n }

// at returns entry i, 0 <= i < len. The pointer stays valid until the
// entry's chunk is dropped or the records are truncated below i.
func (r *records) at(i int) *entry { return &r.chunks[i/recChunk][i%recChunk] }

// push appends e. O(1); amortised O(1) while the first chunk grows.
func (r *records) push(e entry) {
	k, j := r.n/recChunk, r.n%recChunk
	switch {
	case k == len(r.chunks) && k == 0:
		r.chunks = append(r.chunks, make([]entry, recFirst))
	case k == len(r.chunks):
		c := r.spare
		r.spare = nil
		if c == nil {
			c = make([]entry, recChunk)
		}
		r.chunks = append(r.chunks, c)
	case j == len(r.chunks[k]): // the first chunk, still growing
		c := make([]entry, min(2*len(r.chunks[k]), recChunk))
		copy(c, r.chunks[k])
		r.chunks[k] = c
	}
	r.chunks[k][j] = e
	r.n++
}

// dropFront forgets the first chunk, whose entries must all be cleared
// already and which must not be the last one in use; every index moves
// down by recChunk.
func (r *records) dropFront() {
	c := r.chunks[0]
	r.chunks[0] = nil
	r.chunks = r.chunks[1:]
	r.n -= recChunk
	if len(c) == recChunk && r.spare == nil {
		r.spare = c
	}
}

// truncate clears entries [n, len) and keeps the first n. Chunks beyond
// the one holding entry n-1 are let go; the first chunk is kept for reuse.
func (r *records) truncate(n int) {
	for i := n; i < r.n; i++ {
		*r.at(i) = entry{}
	}
	keep := max(1, (n+recChunk-1)/recChunk)
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
}
