package sim

import (
	"encoding/binary"
	"math"
	"slices"
)

// records is the ledger's records by ID, older chunks packed.
type records = packedTable[record, recordCodec]

// recordCodec packs chunks of records. A packed chunk is:
//
//	shapes    1 byte, the number of distinct shapes, at most maxShapes
//	widths    1 byte per column: the bytes of each value's distance from
//	          the column's base, 0, 1, 2 or 4
//	bases     4 bytes per column, the column's smallest value
//	shape     8 bytes each: keyHi, typ, where, State, flags
//	index     tableChunk/2 bytes: per record, 0 for a blank one (all zero),
//	          else 1 + its shape's number, in 4 bits
//	columns   per column, tableChunk distances of its width
//
// The columns are the key's offset and length in its chunk of strings,
// Created, Changed and Sends. Copies of one run share a type, a
// component, a state and flags, and come in at nearly the same ticks, so
// a chunk of settled copies packs to 3 to 6 bytes a record instead of 24.
type recordCodec struct{}

// The columns of a packed chunk of records.
const (
	colKeyOff = iota
	colKeyLen
	colCreated
	colChanged
	colSends
	recordCols
)

// The layout of a packed chunk of records.
const (
	recWidths = 1
	recBases  = recWidths + recordCols
	recShapes = recBases + 4*recordCols
)

// maxRecords is the largest size of a packed chunk of records.
const maxRecords = recShapes + 8*maxShapes + tableChunk/2 + 4*recordCols*tableChunk

// recShape returns the fields of r that are not columns as one number.
func recShape(r *record) uint64 {
	return uint64(r.keyHi) | uint64(r.typ)<<16 | uint64(r.where)<<32 | uint64(r.State)<<48 | uint64(r.flags)<<56
}

// column returns value col of r.
func column(r *record, col int) uint32 {
	switch col {
	case colKeyOff:
		return r.keyLo >> 16
	case colKeyLen:
		return r.keyLo & 0xffff
	case colCreated:
		return uint32(r.created)
	case colChanged:
		return uint32(r.changed)
	}
	return r.sends
}

// settled reports whether every copy of p left its broker (done,
// dead-lettered, delivered, lost...), so that no event is expected to
// change its record.
func (c recordCodec) settled(p *[tableChunk]record) bool { return c.busy(p, 0) < 0 }

// busy returns the index of a record of p whose copy has not left its
// broker yet, looking at from first and then on in turn, wrapping round
// to the records before from; -1 when p is settled. A chunk found busy
// at some record is usually still busy there when it is tried again, so
// that try costs one record, not a scan of the chunk. O(tableChunk).
func (recordCodec) busy(p *[tableChunk]record, from int) int {
	for j := range tableChunk {
		k := (from + j) % tableChunk
		if r := &p[k]; (r.State == StatePending || r.State == StateCreated) && *r != (record{}) {
			return k
		}
	}
	return -1
}

// quiet is false: no query reads a summary of a packed chunk of records.
func (recordCodec) quiet([]byte) bool { return false }

// pack appends p packed to b, or returns b as it was and packUnfit when p
// has more than maxShapes shapes, or packBusy when settledOnly is set and
// p is not settled. It costs a pass over p to find the shapes and each
// column's range, one more per column whose values differ, and, when
// settledOnly is set, a first pass to ask whether p has settled.
func (c recordCodec) pack(b []byte, p *[tableChunk]record, settledOnly bool) ([]byte, packResult) {
	if settledOnly && !c.settled(p) {
		return b, packBusy
	}
	var set shapeSet[uint64]
	var index [tableChunk]uint8
	var lo, hi [recordCols]uint32
	for col := range recordCols {
		lo[col] = math.MaxUint32
	}
	for k := range p {
		r := &p[k]
		if *r == (record{}) {
			continue // blank
		}
		i, ok := set.index(recShape(r))
		if !ok {
			return b, packUnfit
		}
		index[k] = i
		// The columns one by one, as column returns them: a loop over
		// them would switch on the column for every record.
		v := [recordCols]uint32{r.keyLo >> 16, r.keyLo & 0xffff, uint32(r.created), uint32(r.changed), r.sends}
		lo[0], hi[0] = min(lo[0], v[0]), max(hi[0], v[0])
		lo[1], hi[1] = min(lo[1], v[1]), max(hi[1], v[1])
		lo[2], hi[2] = min(lo[2], v[2]), max(hi[2], v[2])
		lo[3], hi[3] = min(lo[3], v[3]), max(hi[3], v[3])
		lo[4], hi[4] = min(lo[4], v[4]), max(hi[4], v[4])
	}
	shapes, n := set.shapes, set.n
	var bases [recordCols]uint32
	var widths [recordCols]int
	size := recShapes + 8*n + tableChunk/2
	for col := range recordCols {
		if lo[col] > hi[col] {
			lo[col], hi[col] = 0, 0 // every record is blank
		}
		bases[col], widths[col] = lo[col], widthOf(uint64(hi[col]-lo[col]))
		size += widths[col] * tableChunk
	}
	b = slices.Grow(b, size)
	b = append(b, byte(n))
	for _, w := range widths {
		b = append(b, byte(w))
	}
	for _, v := range bases {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	for _, s := range shapes[:n] {
		b = binary.LittleEndian.AppendUint64(b, s)
	}
	for k := 0; k < tableChunk; k += 2 {
		b = append(b, index[k]|index[k+1]<<4)
	}
	for col, w := range widths {
		if w == 0 {
			continue // every value is the base
		}
		at := len(b)
		b = b[:at+w*tableChunk]
		dist := b[at:]
		for k := range p {
			var v uint32
			if index[k] != 0 {
				v = column(&p[k], col) - bases[col]
			}
			putDistance(dist, w, k, v)
		}
	}
	return b, packDone
}

// at returns record k of packed chunk b. It costs O(1).
func (recordCodec) at(b []byte, k int) record {
	n := int(b[0])
	idx := b[recShapes+8*n+k/2] >> (4 * (k % 2)) & 0xf
	if idx == 0 {
		return record{}
	}
	var cols [recordCols]uint32
	off := recShapes + 8*n + tableChunk/2
	for col := range recordCols {
		w := int(b[recWidths+col])
		cols[col] = binary.LittleEndian.Uint32(b[recBases+4*col:]) + distance(b[off:], w, k)
		off += w * tableChunk
	}
	return unshapeRecord(binary.LittleEndian.Uint64(b[recShapes+8*(int(idx)-1):]), &cols)
}

// unshapeRecord returns the record of shape s and column values cols.
func unshapeRecord(s uint64, cols *[recordCols]uint32) record {
	return record{keyLo: cols[colKeyOff]<<16 | cols[colKeyLen], keyHi: uint16(s), typ: uint16(s >> 16), where: uint16(s >> 32),
		State: State(s >> 48), flags: uint8(s >> 56), created: tick32(cols[colCreated]), changed: tick32(cols[colChanged]), sends: cols[colSends]}
}

// unpack writes packed chunk b into p.
func (c recordCodec) unpack(p *[tableChunk]record, b []byte) {
	for k := range p {
		p[k] = c.at(b, k)
	}
}
