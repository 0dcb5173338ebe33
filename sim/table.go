package sim

// tableChunk is the number of elements per chunk of a table.
const tableChunk = 1024

// table is a dense array indexed by ID that grows in fixed-size chunks, so
// growing it never copies the elements already stored (a doubling slice
// would copy them all at every doubling, which dominates long runs).
type table[T any] struct {
	chunks []*[tableChunk]T
	n      uint64 // one past the highest index ever touched by at
}

// at returns the element at i, growing the table as needed. Pointers stay
// valid for the table's lifetime.
func (t *table[T]) at(i uint64) *T {
	c := i / tableChunk
	for uint64(len(t.chunks)) <= c {
		t.chunks = append(t.chunks, nil)
	}
	if t.chunks[c] == nil {
		t.chunks[c] = new([tableChunk]T)
	}
	if i >= t.n {
		t.n = i + 1
	}
	return &t.chunks[c][i%tableChunk]
}

// get returns the element at i, or nil when it was never touched (chunks
// are allocated only when an index inside them is).
func (t *table[T]) get(i uint64) *T {
	if i >= t.n {
		return nil
	}
	c := t.chunks[i/tableChunk]
	if c == nil {
		return nil
	}
	return &c[i%tableChunk]
}

// len returns one past the highest index touched.
func (t *table[T]) len() uint64 { return t.n }
