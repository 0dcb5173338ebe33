package sim

import "iter"

// packedTable is a table by ID whose older chunks are packed. The ledger
// books a record per copy and a delivery per copy and consumer, and once
// a copy is settled they do not change any more, yet a plain table keeps
// its chunks of fresh memory for the rest of the run: writing those fresh
// pages is much of the ledger's time (most of it in a fan-out to many
// consumers), and over a long run they are most of its memory.
//
// So when the table begins chunk c, it packs chunk c-packLag if the codec
// finds every element of it settled, and the chunk's array becomes chunk
// c: a run that settles its copies promptly reuses a few arrays that stay
// in the cache. Packing is lossless: a packed chunk keeps every field of
// every element, so every query answers exactly as before, and a write to
// a packed chunk (a late redelivery, a loss, a redrive) unpacks it first.
// A chunk unpacked this way, or not settled when its turn came, is listed
// and tried again later: a few per chunk begun, and, every 128 events the
// ledger folds (Ledger.tidy), a few of the records' list and of one
// consumer's deliveries in turn (so with n consumers each consumer's list
// is tried every 128n events), stopping at the first still busy. Each try costs O(tableChunk), so packing costs O(1) amortised per
// copy and event whatever order events touch the copies in, and a run
// that keeps touching old copies costs at most the plain table's memory
// (plus the bytes each chunk keeps for packing again, see store). Packed
// chunks are kept in blocks of bytes that are never moved, and the table
// refers to them by packRef, a number, not a slice: the list of them
// holds no pointer for the collector to follow, and costs 8 bytes per
// chunk, not 24.
//
// Pointers that at returns stay valid until the next lookup on the same
// table: a chunk begun may pack an older one and reuse its array. Callers
// that look up other elements of the table while holding a pointer look
// it up again afterwards.
//
// A short run (fewer than packLag chunks) never packs, and pays a nil
// slice and a nil pointer per table for it.
type packedTable[T comparable, C codec[T]] struct {
	t            table[T]
	packed       []packRef // by dense chunk number: its bytes packed, or kept for it while it is unpacked
	*packWork[T]           // nil until the table first packs
	off          bool      // never pack
	codec        C
}

// packWork is what a packedTable needs once it packs.
type packWork[T any] struct {
	tmp     []byte   // where a chunk is packed before it is copied into its bytes
	queued  []uint8  // by dense chunk number: 0 when not listed in later, 1 when listed, 2 plus k when listed after a try found its element k not settled (see retry)
	later   []uint64 // chunks to try packing again, oldest first, from head on
	quiet   []uint64 // by dense chunk number, a bit each: packed, and the codec found it quiet
	head    int
	blk     []byte           // the block packed chunks are appended to, blocks' last
	blocks  [][]byte         // every block, by number, each cut to no bytes and its capacity
	free    []*[tableChunk]T // arrays of packed chunks, to reuse
	scratch *[tableChunk]T   // what chunk returns for a packed chunk
}

// packRef locates the bytes of a packed chunk in its table's blocks: its
// block's number plus one, its offset in the block, its capacity and its
// length. The zero packRef locates none.
type packRef uint64

// The bits of a packRef, from the lowest: length, capacity, offset,
// block. An offset fits as blocks are at most packBlock bytes, a length
// and a capacity as packed chunks take at most maxPacked bytes.
const (
	refLenBits = 13
	refCapBits = 13
	refOffBits = 16
	refLow     = refLenBits + refCapBits + refOffBits
	maxBlocks  = 1<<(64-refLow) - 1 // the most blocks a table refers to
)

// newPackRef returns the packRef of the bytes [off, off+n) of block blk,
// which keep cap bytes for the chunk.
func newPackRef(blk, off, n, cap int) packRef {
	return packRef(uint64(blk+1)<<refLow | uint64(off)<<(refLenBits+refCapBits) | uint64(cap)<<refLenBits | uint64(n))
}

// bytes returns the bytes r locates among blocks: n of them, with the
// chunk's capacity. O(1).
func (r packRef) bytes(blocks [][]byte) []byte {
	blk := int(r>>refLow) - 1
	off := int(r >> (refLenBits + refCapBits) & (1<<refOffBits - 1))
	n, c := int(r&(1<<refLenBits-1)), int(r>>refLenBits&(1<<refCapBits-1))
	return blocks[blk][off : off+n : off+c]
}

// bytesOf returns the bytes of packed chunk c, or nil when it has none.
func (d *packedTable[T, C]) bytesOf(c uint64) []byte {
	if c >= uint64(len(d.packed)) || d.packed[c] == 0 {
		return nil
	}
	return d.packed[c].bytes(d.blocks)
}

// codec packs chunks of one element type. Its methods must not depend on
// anything but their arguments.
type codec[T any] interface {
	// pack appends p packed to b, at most maxPacked bytes, and returns
	// packDone. It returns b as it was and packUnfit when p does not fit
	// its format, or, when settledOnly is set, packBusy when an element
	// of p is not settled yet (as settled says; a chunk both unsettled and
	// unfit is busy), so that a packer need not scan p once to ask
	// settled and again to pack it.
	pack(b []byte, p *[tableChunk]T, settledOnly bool) ([]byte, packResult)
	// unpack writes packed chunk b into p.
	unpack(p *[tableChunk]T, b []byte)
	// at returns element k of packed chunk b in O(1).
	at(b []byte, k int) T
	// settled reports whether no event is expected to change any element
	// of p any more.
	settled(p *[tableChunk]T) bool
	// busy returns the index of an element of p that is not settled,
	// looking at element from first and then on in turn, wrapping round
	// to the elements before it; -1 when p is settled (busy(p, k) < 0
	// exactly when settled(p) holds, whatever k).
	busy(p *[tableChunk]T, from int) int
	// quiet reports a property of every element of packed chunk b that
	// a query may read without decoding the chunk (see
	// packedTable.quietAt); the codec says what it means.
	quiet(b []byte) bool
}

// packResult is what codec.pack found.
type packResult uint8

const (
	packDone  packResult = iota // packed
	packBusy                    // some element is not settled yet: nothing written
	packUnfit                   // the chunk does not fit the codec's format: nothing written
)

// packLag is how many chunks a table begins after a chunk before it packs
// it: 512 copies, more than a fan-out's subscribers or a queue's workers
// usually hold unsettled.
const packLag = 4

// retries is how many chunks listed for later a table tries to pack
// again per chunk begun, and per tidy: more than one, so that the list
// shrinks when copies settle in the order they came, at O(tableChunk)
// each.
const retries = 2

// maxFree is how many arrays of packed chunks a table keeps for reuse.
const maxFree = 4

// at returns the element at i for writing, growing or unpacking the
// table as needed. The pointer is valid until the next call of at.
func (d *packedTable[T, C]) at(i uint64) *T {
	c := i / tableChunk
	if c < uint64(len(d.t.chunks)) {
		if p := d.t.chunks[c]; p != nil {
			if i >= d.t.n {
				d.t.n = i + 1
			}
			return &p[i%tableChunk]
		}
		if c < uint64(len(d.packed)) && d.packed[c] != 0 {
			d.unpack(c)
			return d.at(i)
		}
	}
	if d.t.far[c] == nil {
		d.begin(c) // a chunk the table has not allocated yet
	}
	return d.t.at(i)
}

// begin is called before the table allocates chunk c: it packs the chunk
// packLag before it, tries again up to two chunks listed for later, and
// leaves an array for chunk c in the table's spare.
func (d *packedTable[T, C]) begin(c uint64) {
	if d.off || c < packLag {
		return
	}
	if d.packWork == nil {
		d.packWork = &packWork[T]{}
	}
	d.pack(c-packLag, -1)
	d.tryLater(c, retries)
	if n := len(d.free); n > 0 && d.t.spare == nil {
		p := d.free[n-1]
		d.free = d.free[:n-1]
		*p = [tableChunk]T{}
		d.t.spare = p
	}
}

// tryLater tries to pack up to n of the chunks listed for later, oldest
// first, that are at least packLag chunks before chunk top, and stops at
// the first that is not settled yet (listing it again, last). A try asks
// first about the element the chunk's previous try found not settled, so
// a chunk held up by one copy, as a long backlog's are, costs one
// element per try while that copy stays unsettled. It costs
// O(n x tableChunk) at most.
func (d *packedTable[T, C]) tryLater(top uint64, n int) {
	for range n {
		if d.waiting() == 0 || d.later[d.head]+packLag > top {
			return
		}
		k := d.later[d.head]
		d.head++
		switch {
		case d.head == len(d.later):
			d.later, d.head = d.later[:0], 0
		case d.head >= 64 && 2*d.head >= len(d.later): // drop the popped half, keeping the capacity
			d.later, d.head = d.later[:copy(d.later, d.later[d.head:])], 0
		}
		from := int(d.queued[k]) - 2
		d.queued[k] = 0
		if !d.pack(k, from) {
			return // the rest were listed after it: likely not settled either
		}
	}
}

// waiting returns how many chunks are listed to be tried again.
func (d *packedTable[T, C]) waiting() int {
	if d.packWork == nil {
		return 0
	}
	return len(d.later) - d.head
}

// tidy tries to pack some of the chunks listed for later (see
// tryLater), so that chunks left unsettled when their turn came are
// packed once they settle even when no chunk is begun any more, as when
// a backlog drains at the end of a run. The longer the list, the more it
// tries, up to maxTidy chunks: O(maxTidy x tableChunk) at most.
func (d *packedTable[T, C]) tidy() {
	if d.waiting() > 0 && !d.off {
		d.tryLater(uint64(len(d.t.chunks)), min(maxTidy, retries+d.waiting()/32))
	}
}

// maxTidy is the most chunks one tidy tries to pack.
const maxTidy = 16

// pack packs dense chunk c when it is allocated, every element of it is
// settled and it fits the codec's format; a chunk that is not settled yet
// is listed to be tried again later, and pack reports false. from is the
// element of c an earlier try found not settled, or -1 for none. With
// one, the chunk is asked about from that element on (see codec.busy)
// and listed again with the element it is found busy at, so that a chunk
// held up by one copy costs one element per try; without one, the codec
// asks while it packs, and a busy chunk is listed to be asked from its
// start. Either way the chunk is packed exactly when it is settled. It
// costs O(tableChunk).
func (d *packedTable[T, C]) pack(c uint64, from int) bool {
	if c >= uint64(len(d.t.chunks)) {
		return true
	}
	p := d.t.chunks[c]
	if p == nil {
		return true
	}
	if from >= 0 {
		if k := d.codec.busy(p, from); k >= 0 {
			d.retry(c, k)
			return false
		}
	}
	switch d.store(c, p, from < 0) { // with from, settled as busy found
	case packBusy:
		d.retry(c, 0) // the next try asks from the start, and finds where
		return false
	case packDone:
		if len(d.free) < maxFree {
			d.free = append(d.free, p)
		}
	}
	return true
}

// store packs chunk c, whose array is p, when it fits the codec's format
// and, if settledOnly is set, every element of it is settled, and
// reports what codec.pack found; it also reports packUnfit, leaving the
// chunk plain for good, when the table has used every block a packRef can
// number (2^22 blocks of packBlock bytes, far beyond any run). A chunk packed for the first time is
// packed straight into the block, when the block has room for any packed
// chunk, rather than packed aside and copied there: the bytes and where
// they go are the same either way. A chunk packed again after a write unpacked it reuses
// its bytes when it fits them, and else takes twice as many (up to
// maxPacked), so a chunk that keeps being unpacked and packed again, as
// a poison message's does, leaves at most about 2 x maxPacked bytes
// behind in all.
func (d *packedTable[T, C]) store(c uint64, p *[tableChunk]T, settledOnly bool) packResult {
	slot := d.bytesOf(c)
	var ref packRef
	if slot == nil && cap(d.blk)-len(d.blk) >= maxPacked {
		start := len(d.blk)
		b, res := d.codec.pack(d.blk, p, settledOnly)
		if res != packDone {
			return res
		}
		d.blk = b
		ref = newPackRef(len(d.blocks)-1, start, len(b)-start, len(b)-start)
	} else {
		var res packResult
		if d.tmp, res = d.codec.pack(d.tmp[:0], p, settledOnly); res != packDone {
			return res
		}
		n := len(d.tmp)
		if cap(slot) < n {
			size := n
			if slot != nil {
				size = min(maxPacked, max(n, 2*cap(slot)))
			}
			if cap(d.blk)-len(d.blk) < size {
				if len(d.blocks) == maxBlocks {
					return packUnfit // no packRef reaches another block
				}
				d.blk = make([]byte, 0, min(packBlock, max(packFirst, 2*cap(d.blk))))
				d.blocks = append(d.blocks, d.blk)
			}
			start := len(d.blk)
			d.blk = d.blk[:start+size]
			ref = newPackRef(len(d.blocks)-1, start, n, size)
		} else {
			ref = d.packed[c]&^(1<<refLenBits-1) | packRef(n) // the same bytes, n of them used
		}
		slot = ref.bytes(d.blocks)
		copy(slot, d.tmp)
	}
	for uint64(len(d.packed)) <= c {
		d.packed = append(d.packed, 0)
	}
	d.packed[c] = ref
	d.setQuiet(c, d.codec.quiet(ref.bytes(d.blocks)))
	d.t.chunks[c] = nil
	return packDone
}

// setQuiet records whether packed chunk c is quiet (see codec.quiet).
func (d *packedTable[T, C]) setQuiet(c uint64, on bool) {
	w, bit := c/64, uint64(1)<<(c%64)
	if !on {
		if w < uint64(len(d.quiet)) {
			d.quiet[w] &^= bit
		}
		return
	}
	for uint64(len(d.quiet)) <= w {
		d.quiet = append(d.quiet, 0)
	}
	d.quiet[w] |= bit
}

// quietAt reports whether the element at i lies in a packed chunk that
// the codec found quiet when it packed it: then codec.quiet holds for the
// element as it stands, because a packed chunk does not change until it
// is unpacked, which clears the bit. It reads one bit, not the packed
// bytes, and never changes the table. False says nothing about i.
func (d *packedTable[T, C]) quietAt(i uint64) bool {
	if d.packWork == nil {
		return false
	}
	w := i / tableChunk / 64
	return w < uint64(len(d.quiet)) && d.quiet[w]&(1<<(i/tableChunk%64)) != 0
}

// The hint retry keeps for an element k of a chunk, k + 2, fits a uint8
// (packWork.queued): this fails to compile when a chunk grows past that.
const _ uint8 = tableChunk + 1

// retry lists chunk c to be tried again, unless it is listed already,
// and notes that its element k was found not settled, to be asked about
// first when the chunk is tried again; k is -1 when no element was
// singled out.
func (d *packedTable[T, C]) retry(c uint64, k int) {
	for uint64(len(d.queued)) <= c {
		d.queued = append(d.queued, 0)
	}
	if d.queued[c] == 0 {
		d.later = append(d.later, c)
	}
	d.queued[c] = uint8(k + 2)
}

// maxPacked is the largest size of a packed chunk of any codec.
const maxPacked = 4 << 10

// The blocks packed chunks are kept in start at packFirst bytes and
// double up to packBlock.
const (
	packFirst = maxPacked
	packBlock = 64 << 10
)

// unpack makes packed chunk c a plain chunk again, and lists it to be
// packed again later.
func (d *packedTable[T, C]) unpack(c uint64) {
	var p *[tableChunk]T
	if n := len(d.free); n > 0 {
		p = d.free[n-1]
		d.free = d.free[:n-1]
	} else {
		p = newChunk[T]()
	}
	d.codec.unpack(p, d.bytesOf(c))
	d.setQuiet(c, false)
	d.t.chunks[c] = p // d.packed[c] stays, for the chunk packed again
	d.retry(c, -1)
}

// get returns the element at i and true, or false when its chunk was
// never touched. It never changes the table.
func (d *packedTable[T, C]) get(i uint64) (T, bool) {
	if p := d.t.get(i); p != nil {
		return *p, true
	}
	c := i / tableChunk
	if b := d.bytesOf(c); i < d.t.n && b != nil {
		return d.codec.at(b, int(i%tableChunk)), true
	}
	var zero T
	return zero, false
}

// chunk returns chunk number c, or nil when it was never allocated. A
// packed chunk is unpacked into a scratch array that the next call of
// chunk overwrites.
func (d *packedTable[T, C]) chunk(c uint64) *[tableChunk]T {
	if p := d.t.chunk(c); p != nil {
		return p
	}
	if b := d.bytesOf(c); b != nil {
		if d.scratch == nil {
			d.scratch = new([tableChunk]T)
		}
		d.codec.unpack(d.scratch, b)
		return d.scratch
	}
	return nil
}

// chunkNumbers calls f with the number of every allocated chunk, packed
// or not, in no particular order.
func (d *packedTable[T, C]) chunkNumbers(f func(c uint64)) {
	for c, p := range d.t.chunks {
		if p != nil || c < len(d.packed) && d.packed[c] != 0 {
			f(uint64(c))
		}
	}
	for c := range d.t.far {
		f(c)
	}
}

// all yields the index and element of every allocated slot below len, in
// index order, from 1, as table.all does. A packed chunk is unpacked into
// an array of the iteration's own.
func (d *packedTable[T, C]) all() iter.Seq2[uint64, *T] {
	return func(yield func(uint64, *T) bool) {
		var buf *[tableChunk]T
		for c := range d.t.chunks {
			p := d.t.chunks[c]
			if p == nil {
				b := d.bytesOf(uint64(c))
				if b == nil {
					continue
				}
				if buf == nil {
					buf = new([tableChunk]T)
				}
				d.codec.unpack(buf, b)
				p = buf
			}
			for k := range p {
				i := uint64(c)*tableChunk + uint64(k)
				if i >= d.t.n {
					return
				}
				if i > 0 && !yield(i, &p[k]) {
					return
				}
			}
		}
		if len(d.t.far) == 0 {
			return
		}
		for i, p := range d.t.all() {
			if i/tableChunk >= uint64(len(d.t.chunks)) && !yield(i, p) {
				return
			}
		}
	}
}

// len returns one past the highest index touched.
func (d *packedTable[T, C]) len() uint64 { return d.t.n }

// packAll packs every dense chunk that fits the codec's format, settled
// or not (see Ledger.packAll).
func (d *packedTable[T, C]) packAll() {
	if d.packWork == nil {
		d.packWork = &packWork[T]{}
	}
	for c, p := range d.t.chunks {
		if p != nil {
			d.store(uint64(c), p, false)
		}
	}
}
