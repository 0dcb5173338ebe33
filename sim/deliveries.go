package sim

import (
	"encoding/binary"
	"iter"
	"math"
	"slices"
)

// deliveries is one consumer's deliveries by ID: a table whose older
// chunks are packed. A run books a delivery per copy and consumer, and
// once a copy is settled its delivery does not change any more, yet a
// plain table keeps 1 KiB of fresh memory per 128 copies and consumer
// for the rest of the run: with many consumers (a fan-out) writing those
// fresh pages is most of the ledger's time, and over a long run they are
// most of its memory.
//
// So when the table begins chunk c, it packs chunk c-packLag, and the
// chunk's array becomes chunk c: a run that settles its copies promptly
// reuses a few arrays that stay in the cache. Packing is lossless (see
// packChunk): a packed chunk keeps every field of every delivery, so
// every query answers exactly as before, and a write to a packed chunk
// (a late redelivery, a loss) unpacks it first. A chunk unpacked this way
// is packed again later, one such chunk per chunk begun, so the work of
// packing stays O(1) amortised per copy whatever order the events touch
// the copies in, and a run that keeps touching old copies costs at most
// the unpacked table's memory.
//
// A packed chunk of deliveries that were each delivered and applied once
// within a few ticks takes about 200 bytes instead of 1 KiB; it is kept
// in blocks of bytes that are never moved.
type deliveries struct {
	t        table[delivery]
	packed   [][]byte                // by dense chunk number; nil when not packed
	blk      []byte                  // the block packed chunks are appended to
	unpacked []uint64                // chunks unpacked by a write, oldest first, to pack again
	free     []*[tableChunk]delivery // arrays of packed chunks, to reuse
	scratch  *[tableChunk]delivery   // what chunk returns for a packed chunk
	off      bool                    // never pack
}

// packLag is how many chunks a table begins after a chunk before it packs
// it: 512 copies, more than a fan-out's subscribers or a queue's workers
// usually hold unsettled.
const packLag = 4

// maxFree is how many arrays of packed chunks a table keeps for reuse.
const maxFree = 4

// at returns the delivery at i for writing, growing or unpacking the
// table as needed. The pointer is valid until the next call of at.
func (d *deliveries) at(i uint64) *delivery {
	c := i / tableChunk
	if c < uint64(len(d.t.chunks)) {
		if p := d.t.chunks[c]; p != nil {
			if i >= d.t.n {
				d.t.n = i + 1
			}
			return &p[i%tableChunk]
		}
		if c < uint64(len(d.packed)) && d.packed[c] != nil {
			d.unpack(c)
			return d.at(i)
		}
	}
	if c >= uint64(len(d.t.chunks)) || d.t.chunks[c] == nil {
		d.begin(c)
	}
	return d.t.at(i)
}

// begin is called before the table allocates chunk c: it packs the chunk
// packLag before it and one chunk unpacked by a write, and leaves an
// array for chunk c in the table's spare.
func (d *deliveries) begin(c uint64) {
	if d.off {
		return
	}
	if c >= packLag {
		d.pack(c - packLag)
	}
	if len(d.unpacked) > 0 && d.unpacked[0]+packLag <= c {
		k := d.unpacked[0]
		d.unpacked = d.unpacked[1:]
		d.pack(k)
	}
	if n := len(d.free); n > 0 && d.t.spare == nil {
		p := d.free[n-1]
		d.free = d.free[:n-1]
		*p = [tableChunk]delivery{}
		d.t.spare = p
	}
}

// pack packs dense chunk c when it is allocated and its deliveries fit a
// packed chunk (see packChunk).
func (d *deliveries) pack(c uint64) {
	if c >= uint64(len(d.t.chunks)) {
		return
	}
	p := d.t.chunks[c]
	if p == nil {
		return
	}
	if cap(d.blk)-len(d.blk) < maxPacked {
		d.blk = make([]byte, 0, min(packBlock, max(packFirst, 2*cap(d.blk))))
	}
	start := len(d.blk)
	var ok bool
	if d.blk, ok = packChunk(d.blk, p); !ok {
		return
	}
	for uint64(len(d.packed)) <= c {
		d.packed = append(d.packed, nil)
	}
	d.packed[c] = d.blk[start:len(d.blk):len(d.blk)]
	d.t.chunks[c] = nil
	if len(d.free) < maxFree {
		d.free = append(d.free, p)
	}
}

// The blocks packed chunks are kept in start at packFirst bytes and
// double up to packBlock.
const (
	packFirst = 1024 // more than maxPacked
	packBlock = 64 << 10
)

// unpack makes packed chunk c a plain chunk again.
func (d *deliveries) unpack(c uint64) {
	var p *[tableChunk]delivery
	if n := len(d.free); n > 0 {
		p = d.free[n-1]
		d.free = d.free[:n-1]
	} else {
		p = newChunk[delivery]()
	}
	unpackChunk(p, d.packed[c])
	d.packed[c] = nil // its bytes stay in their block, unused
	d.t.chunks[c] = p
	d.unpacked = append(d.unpacked, c)
}

// get returns the delivery at i and true, or false when its chunk was
// never touched. It never changes the table.
func (d *deliveries) get(i uint64) (delivery, bool) {
	if p := d.t.get(i); p != nil {
		return *p, true
	}
	c := i / tableChunk
	if i < d.t.n && c < uint64(len(d.packed)) && d.packed[c] != nil {
		return packedAt(d.packed[c], int(i%tableChunk)), true
	}
	return delivery{}, false
}

// chunk returns chunk number c, or nil when it was never allocated. A
// packed chunk is unpacked into a scratch array that the next call of
// chunk overwrites.
func (d *deliveries) chunk(c uint64) *[tableChunk]delivery {
	if p := d.t.chunk(c); p != nil {
		return p
	}
	if c < uint64(len(d.packed)) && d.packed[c] != nil {
		if d.scratch == nil {
			d.scratch = new([tableChunk]delivery)
		}
		unpackChunk(d.scratch, d.packed[c])
		return d.scratch
	}
	return nil
}

// chunkNumbers calls f with the number of every allocated chunk, packed
// or not, in no particular order.
func (d *deliveries) chunkNumbers(f func(c uint64)) {
	for c, p := range d.t.chunks {
		if p != nil || c < len(d.packed) && d.packed[c] != nil {
			f(uint64(c))
		}
	}
	for c := range d.t.far {
		f(c)
	}
}

// all yields the index and delivery of every allocated slot below len, in
// index order, from 1, as table.all does. A packed chunk is unpacked into
// an array of the iteration's own.
func (d *deliveries) all() iter.Seq2[uint64, *delivery] {
	return func(yield func(uint64, *delivery) bool) {
		var buf *[tableChunk]delivery
		for c := range d.t.chunks {
			p := d.t.chunks[c]
			if p == nil {
				if c >= len(d.packed) || d.packed[c] == nil {
					continue
				}
				if buf == nil {
					buf = new([tableChunk]delivery)
				}
				unpackChunk(buf, d.packed[c])
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
func (d *deliveries) len() uint64 { return d.t.n }

// A packed chunk is:
//
//	base      4 bytes, the smallest LastSeen of its non-blank deliveries
//	width     1 byte, the bytes of each LastSeen's distance from base: 0, 1, 2 or 4
//	shapes    1 byte, the number of distinct shapes, at most maxShapes
//	shape     4 bytes each: firstOff, delivered, handled, bits
//	index     tableChunk/2 bytes: per delivery, 0 for a blank one (all
//	          zero), else 1 + its shape's number, in 4 bits
//	distance  tableChunk x width bytes
//
// A shape is a delivery's fields but LastSeen; copies handled alike share
// one, so a chunk rarely has more than a few.
const (
	packHeader = 6
	maxShapes  = 15
)

// shapeOf returns the fields of e but LastSeen as one number.
func shapeOf(e *delivery) uint32 {
	return uint32(uint8(e.firstOff)) | uint32(e.delivered)<<8 | uint32(e.handled)<<16 | uint32(e.bits)<<24
}

// blank reports whether e was never written.
func blank(e *delivery) bool { return *e == delivery{} }

// maxPacked is the largest size of a packed chunk.
const maxPacked = packHeader + 4*maxShapes + tableChunk/2 + 4*tableChunk

// packChunk appends p packed to b, and reports false, leaving b as it
// was, when p has more than maxShapes shapes. It costs one pass over p
// and one over the packed bytes.
func packChunk(b []byte, p *[tableChunk]delivery) ([]byte, bool) {
	var shapes [maxShapes]uint32
	var index [tableChunk]uint8
	n := 0
	last, lastIdx := uint32(0), uint8(0)
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for k := range p {
		e := p[k]
		if e == (delivery{}) {
			continue // blank
		}
		if s := shapeOf(&e); lastIdx == 0 || s != last {
			j := 0
			for j < n && shapes[j] != s {
				j++
			}
			if j == n {
				if n == maxShapes {
					return b, false
				}
				shapes[n] = s
				n++
			}
			last, lastIdx = s, uint8(j+1)
		}
		index[k] = lastIdx
		lo, hi = min(lo, int32(e.lastSeen)), max(hi, int32(e.lastSeen))
	}
	if lastIdx == 0 {
		lo, hi = 0, 0 // every delivery is blank
	}
	w := widthOf(uint64(int64(hi) - int64(lo)))
	b = slices.Grow(b, packHeader+4*n+tableChunk/2+w*tableChunk)
	b = binary.LittleEndian.AppendUint32(b, uint32(lo))
	b = append(b, byte(w), byte(n))
	for _, s := range shapes[:n] {
		b = binary.LittleEndian.AppendUint32(b, s)
	}
	for k := 0; k < tableChunk; k += 2 {
		b = append(b, index[k]|index[k+1]<<4)
	}
	at := len(b)
	b = b[:at+w*tableChunk]
	dist := b[at:]
	switch w {
	case 1:
		for k := range p {
			if index[k] != 0 {
				dist[k] = byte(uint32(p[k].lastSeen) - uint32(lo))
			} else {
				dist[k] = 0
			}
		}
	case 2:
		for k := range p {
			var v uint32
			if index[k] != 0 {
				v = uint32(p[k].lastSeen) - uint32(lo)
			}
			binary.LittleEndian.PutUint16(dist[2*k:], uint16(v))
		}
	case 4:
		for k := range p {
			var v uint32
			if index[k] != 0 {
				v = uint32(p[k].lastSeen) - uint32(lo)
			}
			binary.LittleEndian.PutUint32(dist[4*k:], v)
		}
	}
	return b, true
}

// widthOf returns the bytes a distance up to span takes.
func widthOf(span uint64) int {
	switch {
	case span == 0:
		return 0
	case span <= 0xff:
		return 1
	case span <= 0xffff:
		return 2
	}
	return 4
}

// packedAt returns delivery k of packed chunk b. It costs O(1).
func packedAt(b []byte, k int) delivery {
	n := int(b[5])
	idx := b[packHeader+4*n+k/2] >> (4 * (k % 2)) & 0xf
	if idx == 0 {
		return delivery{}
	}
	w := int(b[4])
	s := binary.LittleEndian.Uint32(b[packHeader+4*(int(idx)-1):])
	return unshape(s, binary.LittleEndian.Uint32(b)+distance(b[packHeader+4*n+tableChunk/2:], w, k))
}

// distance returns the k-th distance of width w in dist.
func distance(dist []byte, w, k int) uint32 {
	switch w {
	case 1:
		return uint32(dist[k])
	case 2:
		return uint32(binary.LittleEndian.Uint16(dist[2*k:]))
	case 4:
		return binary.LittleEndian.Uint32(dist[4*k:])
	}
	return 0
}

// unshape returns the delivery of shape s seen at lastSeen.
func unshape(s, lastSeen uint32) delivery {
	return delivery{lastSeen: tick32(lastSeen), firstOff: int8(uint8(s)), delivered: uint8(s >> 8), handled: uint8(s >> 16), bits: uint8(s >> 24)}
}

// unpackChunk writes packed chunk b into p.
func unpackChunk(p *[tableChunk]delivery, b []byte) {
	n, w := int(b[5]), int(b[4])
	base := binary.LittleEndian.Uint32(b)
	var shapes [maxShapes]uint32
	for j := range n {
		shapes[j] = binary.LittleEndian.Uint32(b[packHeader+4*j:])
	}
	index := b[packHeader+4*n : packHeader+4*n+tableChunk/2]
	dist := b[packHeader+4*n+tableChunk/2:]
	for k := range p {
		idx := index[k/2] >> (4 * (k % 2)) & 0xf
		if idx == 0 {
			p[k] = delivery{}
			continue
		}
		p[k] = unshape(shapes[idx-1], base+distance(dist, w, k))
	}
}

// packAll packs every chunk of deliveries of every consumer that fits a
// packed chunk, whatever its age. Runs never need it; tests call it after
// every event to check that every query reads packed chunks right and
// every write unpacks them.
func (l *Ledger) packAll() {
	for _, b := range l.consumers {
		for c := range b.entries.t.chunks {
			b.entries.pack(uint64(c))
		}
		b.entries.unpacked = b.entries.unpacked[:0]
	}
}
