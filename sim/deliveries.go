package sim

import (
	"encoding/binary"
	"math"
	"slices"
)

// deliveries is one consumer's deliveries by ID, older chunks packed.
type deliveries = packedTable[delivery, deliveryCodec]

// deliveryCodec packs chunks of deliveries (see packChunk).
type deliveryCodec struct{}

func (deliveryCodec) pack(b []byte, p *[tableChunk]delivery, settledOnly bool) ([]byte, packResult) {
	return packDeliveries(b, p, settledOnly)
}
func (deliveryCodec) unpack(p *[tableChunk]delivery, b []byte) { unpackChunk(p, b) }
func (deliveryCodec) at(b []byte, k int) delivery              { return packedAt(b, k) }

// settled reports whether the consumer is done with every copy of p it
// was routed (see done).
func (c deliveryCodec) settled(p *[tableChunk]delivery) bool { return c.busy(p, 0) < 0 }

// busy returns the index of a delivery of p the consumer is not done
// with, looking at from first and then on in turn, wrapping round to the
// deliveries before from; -1 when p is settled. O(tableChunk).
func (deliveryCodec) busy(p *[tableChunk]delivery, from int) int {
	for j := range tableChunk {
		k := (from + j) % tableChunk
		if e := &p[k]; *e != (delivery{}) && !e.done() {
			return k
		}
	}
	return -1
}

// done reports whether the consumer is done with the copy of d: it
// handled it (applied, absorbed or failed it), missed or lost it. It reads
// only bits, so deliveries of one shape are all done or all not.
func (d *delivery) done() bool { return d.bits&(delHandled|delMissed) != 0 || d.lostFor() }

// quiet reports whether no delivery of packed chunk b is open: none was
// routed to the consumer without being applied, absorbed, missed or lost
// for it. A deletion of a copy of a quiet chunk therefore loses it for
// nobody (see Ledger.loseUnapplied). Openness does not depend on
// LastSeen, so it tests the chunk's shapes, not its deliveries: O(shapes).
func (deliveryCodec) quiet(b []byte) bool {
	for j := range int(b[5]) {
		if e := unshape(binary.LittleEndian.Uint32(b[packHeader+4*j:]), 0); e.open() {
			return false
		}
	}
	return true
}

// A packed chunk of deliveries is:
//
//	base      4 bytes, the smallest LastSeen of its non-blank deliveries
//	width     1 byte, the bytes of each LastSeen's distance from base: 0,
//	          1, 2 or 4, plus packRuns when the deliveries come as runs
//	shapes    1 byte, the number of distinct shapes, at most maxShapes
//	shape     4 bytes each: firstOff, delivered, handled, bits
//
// then, without packRuns,
//
//	index     tableChunk/2 bytes: per delivery, 0 for a blank one (all
//	          zero), else 1 + its shape's number, in 4 bits
//	distance  tableChunk x width bytes
//
// or, with packRuns, the chunk as at most maxRuns runs of neighbours
// with the same index and distance:
//
//	runs      1 byte, their number
//	run       2 + width bytes each: its first delivery's number, its
//	          index, its distance
//
// A shape is a delivery's fields but LastSeen; copies handled alike share
// one, so a chunk rarely has more than a few. Copies delivered in order
// and handled alike, as a fan-out's are, are seen at a few ticks, in
// order: a chunk of them packs as a few runs, in some twenty bytes rather
// than the two hundred of an index and a distance per delivery.
const (
	packHeader = 6
	maxShapes  = 15
	packRuns   = 0x80
	maxRuns    = 16
)

// shapeOf returns the fields of e but LastSeen as one number.
func shapeOf(e *delivery) uint32 {
	return uint32(uint8(e.firstOff)) | uint32(e.delivered)<<8 | uint32(e.handled)<<16 | uint32(e.bits)<<24
}

// shapeDone reports whether a delivery of shape s is done (see
// delivery.done); a blank one, of shape 0, is not.
func shapeDone(s uint32) bool {
	e := unshape(s, 0)
	return e.done()
}

// blank reports whether e was never written.
func blank(e *delivery) bool { return *e == delivery{} }

// shapeSet numbers the distinct shapes of a chunk's elements from 1, at
// most maxShapes of them. Neighbours mostly share a shape, so it checks
// the last one first; otherwise a lookup costs O(maxShapes).
type shapeSet[S comparable] struct {
	shapes  [maxShapes]S
	n       int
	last    S
	lastIdx uint8
}

// index returns the number of shape s, adding it when new, and false
// when s would be one shape more than maxShapes.
func (x *shapeSet[S]) index(s S) (uint8, bool) {
	if x.lastIdx != 0 && s == x.last {
		return x.lastIdx, true
	}
	j := 0
	for j < x.n && x.shapes[j] != s {
		j++
	}
	if j == x.n {
		if x.n == maxShapes {
			return 0, false
		}
		x.shapes[x.n] = s
		x.n++
	}
	x.last, x.lastIdx = s, uint8(j+1)
	return x.lastIdx, true
}

// maxDeliveries is the largest size of a packed chunk of deliveries.
const maxDeliveries = packHeader + 4*maxShapes + tableChunk/2 + 4*tableChunk

// packChunk appends p packed to b, and reports false, leaving b as it
// was, when p has more than maxShapes shapes. It is packDeliveries
// whether p is settled or not.
func packChunk(b []byte, p *[tableChunk]delivery) ([]byte, bool) {
	b, res := packDeliveries(b, p, false)
	return b, res == packDone
}

// packDeliveries appends p packed to b and returns packDone, or returns b
// as it was and packUnfit when p has more than maxShapes shapes, or, when
// settledOnly is set, packBusy when a delivery of p is not done. Whether
// one is done depends on its shape alone, so it is asked once per shape
// the pass meets, not once per delivery. It costs one pass over p, and a
// second one when its deliveries come as more than maxRuns runs; a chunk
// with more than maxShapes shapes costs, when settledOnly is set, one
// more to ask whether it has settled.
func packDeliveries(b []byte, p *[tableChunk]delivery, settledOnly bool) ([]byte, packResult) {
	var set shapeSet[uint32]
	var index [tableChunk]uint8
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	// The shape of the previous delivery, and its number, in registers:
	// neighbours nearly always share one, and then the set is not asked.
	// Shape 0 always takes the long way, as a blank delivery has it too.
	last, lastIdx := uint32(0), uint8(0)
	// Runs of neighbours with the same index and LastSeen (a blank's
	// LastSeen does not count: its distance is 0 whatever it is), counted
	// and, up to maxRuns of them, their first deliveries noted, so that
	// the runs are written from starts without a second pass over p.
	runs, runIdx, runSeen := 1, uint8(0), tick32(0)
	var starts [maxRuns]uint8 // starts[0] is 0: the first run begins the chunk
	for k := range p {
		e := &p[k]
		s := shapeOf(e)
		if s != last || s == 0 {
			if s == 0 && e.lastSeen == 0 {
				if runIdx != 0 {
					if runs < maxRuns {
						starts[runs] = uint8(k)
					}
					runs, runIdx = runs+1, 0
				}
				continue // blank
			}
			if settledOnly && !shapeDone(s) {
				return b, packBusy
			}
			i, ok := set.index(s)
			if !ok {
				if settledOnly && !(deliveryCodec{}).settled(p) {
					return b, packBusy // a later shape is not done
				}
				return b, packUnfit
			}
			last, lastIdx = s, i
		}
		index[k] = lastIdx
		if lastIdx != runIdx || e.lastSeen != runSeen {
			if k > 0 {
				if runs < maxRuns {
					starts[runs] = uint8(k)
				}
				runs++
			}
			runIdx, runSeen = lastIdx, e.lastSeen
		}
		lo, hi = min(lo, int32(e.lastSeen)), max(hi, int32(e.lastSeen))
	}
	shapes, n := set.shapes, set.n
	if n == 0 {
		lo, hi = 0, 0 // every delivery is blank
	}
	w := widthOf(uint64(int64(hi) - int64(lo)))
	form := byte(w)
	if runs <= maxRuns {
		form |= packRuns
	}
	b = slices.Grow(b, packHeader+4*n+tableChunk/2+w*tableChunk)
	b = binary.LittleEndian.AppendUint32(b, uint32(lo))
	b = append(b, form, byte(n))
	for _, s := range shapes[:n] {
		b = binary.LittleEndian.AppendUint32(b, s)
	}
	if form&packRuns != 0 {
		return packRunsOf(b, p, &index, starts[:runs], w, uint32(lo)), packDone
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
	return b, packDone
}

// packRunsOf appends the runs of p, whose deliveries' indexes are index
// and whose runs begin at the deliveries numbered starts, with distances
// of width w from base lo (see packChunk). It reads one delivery per
// run: O(maxRuns).
func packRunsOf(b []byte, p *[tableChunk]delivery, index *[tableChunk]uint8, starts []uint8, w int, lo uint32) []byte {
	b = append(b, byte(len(starts)))
	for _, k := range starts {
		var v uint32
		if index[k] != 0 {
			v = uint32(p[k].lastSeen) - lo
		}
		b = appendDistance(append(b, k, index[k]), w, v)
	}
	return b
}

// runAt returns the index and distance of delivery k of the runs of a
// packed chunk (see packChunk), which begin at runs and hold distances
// of width w. O(maxRuns).
func runAt(runs []byte, w, k int) (uint8, uint32) {
	n, size := int(runs[0]), 2+w
	j := 0
	for j+1 < n && int(runs[1+(j+1)*size]) <= k {
		j++
	}
	r := runs[1+j*size:]
	return r[1], distance(r[2:], w, 0)
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
	n, w := int(b[5]), int(b[4]&^packRuns)
	var idx uint8
	var dist uint32
	if b[4]&packRuns != 0 {
		idx, dist = runAt(b[packHeader+4*n:], w, k)
	} else {
		idx = b[packHeader+4*n+k/2] >> (4 * (k % 2)) & 0xf
		dist = distance(b[packHeader+4*n+tableChunk/2:], w, k)
	}
	if idx == 0 {
		return delivery{}
	}
	s := binary.LittleEndian.Uint32(b[packHeader+4*(int(idx)-1):])
	return unshape(s, binary.LittleEndian.Uint32(b)+dist)
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

// putDistance writes v as the k-th distance of width w in dist: the
// inverse of distance.
func putDistance(dist []byte, w, k int, v uint32) {
	switch w {
	case 1:
		dist[k] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(dist[2*k:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(dist[4*k:], v)
	}
}

// appendDistance appends v as one distance of width w to b, as
// putDistance writes one in place.
func appendDistance(b []byte, w int, v uint32) []byte {
	switch w {
	case 1:
		return append(b, byte(v))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(v))
	case 4:
		return binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

// unshape returns the delivery of shape s seen at lastSeen.
func unshape(s, lastSeen uint32) delivery {
	return delivery{lastSeen: tick32(lastSeen), firstOff: int8(uint8(s)), delivered: uint8(s >> 8), handled: uint8(s >> 16), bits: uint8(s >> 24)}
}

// unpackChunk writes packed chunk b into p.
func unpackChunk(p *[tableChunk]delivery, b []byte) {
	n, w := int(b[5]), int(b[4]&^packRuns)
	base := binary.LittleEndian.Uint32(b)
	var shapes [maxShapes]uint32
	for j := range n {
		shapes[j] = binary.LittleEndian.Uint32(b[packHeader+4*j:])
	}
	if b[4]&packRuns != 0 {
		runs := b[packHeader+4*n:]
		r, size := int(runs[0]), 2+w
		for j := range r {
			run := runs[1+j*size:]
			end := tableChunk
			if j+1 < r {
				end = int(runs[1+(j+1)*size])
			}
			e := delivery{}
			if idx := run[1]; idx != 0 {
				e = unshape(shapes[idx-1], base+distance(run[2:], w, 0))
			}
			for k := int(run[0]); k < end; k++ {
				p[k] = e
			}
		}
		return
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

// packAll packs every chunk of records and of deliveries that fits a
// packed chunk, whatever its age and whether settled or not. Runs never
// need it; tests call it after every event to check that every query
// reads packed chunks right and every write unpacks them.
func (l *Ledger) packAll() {
	l.recs.packAll()
	for _, b := range l.consumers {
		b.entries.packAll()
	}
}
