package stored

// Body names a message body kept in a Bodies arena: 8 bytes where a slice
// header takes 24. The zero Body is the nil body.
//
// The high 32 bits are 1 + the index of the body's chunk (0 only for the
// nil body). The low 32 bits are wholeChunk for a body that has a chunk to
// itself, else its offset in the chunk (16 bits) and its length (16 bits);
// a shared body is at most bigBody bytes, so the two never meet.
type Body uint64

// wholeChunk is the low half of a Body that is its chunk, all of it.
const wholeChunk = 1<<32 - 1

// The arena's sizes. Bodies of at most bigBody bytes are copied into
// shared chunks; the first chunk holds firstChunk bytes and each next one
// twice the last, up to maxChunk, so a model that holds a few messages
// allocates a few hundred bytes and one that holds millions allocates one
// chunk per about 2,500 bodies of 13 bytes. A larger body is not copied:
// the sender's slice, its capacity clipped, becomes a chunk of its own.
const (
	firstChunk = 256
	maxChunk   = 32 << 10
	bigBody    = 1 << 10
)

// Bodies keeps the bodies of the messages a model holds in large
// append-only chunks, so a resident message costs its body's bytes and an
// 8-byte Body, not an allocation of its own and a 24-byte slice header.
//
// Invariants: a byte of a shared chunk is written once, when the body it
// belongs to is kept, and never again (a body larger than bigBody is its
// sender's array, which sim.Message's rules say no one modifies once it is
// handed over), so a body handed out by Get stays valid and
// unchanged for as long as its holder keeps it, after Drop too (the
// collector keeps the chunk alive). A chunk holds the bodies kept in it
// and not yet dropped (live); when none is left and no body will be
// appended to it, the arena lets go of it and reuses its index. Bodies
// leave a queue roughly in the order they entered, so a long run holds
// about the chunks its resident bodies need, plus the one being filled.
//
// The zero Bodies is ready to use. A Bodies is not safe for concurrent use.
type Bodies struct {
	// chunks holds the chunks by index, nil for a released index; a
	// chunk's header is written once, when it is opened.
	chunks [][]byte
	// live counts, by chunk index, the bodies kept and not dropped; a
	// released index's holds 1 + the next released index (0: none).
	live []uint32
	cur  uint32 // 1 + the index of the shared chunk bodies are appended to, 0 for none
	used int    // bytes of that chunk handed out so far
	free uint32 // 1 + the most recently released index, 0 when none is released
}

// Keep stores p and returns its Body: a nil p gives the zero Body, an empty
// one a Body of an empty, non-nil body. A body of at most bigBody bytes is
// copied; the caller may change p afterwards without changing what Get
// returns. O(len(p)) for a copied body, O(1) otherwise; it allocates only
// when it opens a chunk (and the chunk tables may grow then).
func (b *Bodies) Keep(p []byte) Body {
	if p == nil {
		return 0
	}
	n := len(p)
	if n > bigBody {
		k := b.open(p[:n:n])
		b.live[k] = 1
		return Body(uint64(k+1)<<32 | wholeChunk)
	}
	if b.cur == 0 || len(b.chunks[b.cur-1])-b.used < n {
		b.grow(n)
	}
	k, off := b.cur-1, b.used
	copy(b.chunks[k][off:], p)
	b.used = off + n
	b.live[k]++
	return Body(uint64(k+1)<<32 | uint64(off)<<16 | uint64(n))
}

// grow makes a new shared chunk with room for n more bytes the one bodies
// are appended to, releasing the chunk it replaces if that holds no live
// body.
func (b *Bodies) grow(n int) {
	size := firstChunk
	if b.cur != 0 {
		old := b.cur - 1
		size = min(maxChunk, 2*len(b.chunks[old]))
		b.cur = 0
		if b.live[old] == 0 {
			b.release(old)
		}
	}
	k := b.open(make([]byte, max(size, n)))
	b.cur, b.used = k+1, 0
}

// open stores chunk c under a free index, the most recently released one
// if any, and returns the index, whose live count is 0.
func (b *Bodies) open(c []byte) uint32 {
	if b.free == 0 {
		b.chunks = append(b.chunks, c)
		b.live = append(b.live, 0)
		return uint32(len(b.chunks) - 1)
	}
	k := b.free - 1
	b.free = b.live[k]
	b.chunks[k], b.live[k] = c, 0
	return k
}

// release lets go of chunk k, which holds no live body and is not the one
// bodies are appended to, and frees its index.
func (b *Bodies) release(k uint32) {
	b.chunks[k] = nil
	b.live[k] = b.free
	b.free = k + 1
}

// Get returns the body r names, which Keep returned and Drop has not
// dropped. Its capacity is its length, so appending to it never writes
// into a neighbour. O(1), no allocation.
func (b *Bodies) Get(r Body) []byte {
	if r == 0 {
		return nil
	}
	c := b.chunks[r>>32-1]
	if uint32(r) == wholeChunk {
		return c
	}
	off, end := int(uint16(r>>16)), int(uint16(r>>16))+int(uint16(r))
	return c[off:end:end]
}

// Move copies the body r names into the chunk bodies are appended to now,
// drops r and returns the copy's Body, unless r is the nil body, has a
// chunk of its own or is in that chunk already: then it returns r. A
// model moves a body whose message goes back to wait behind the messages
// kept since, so that it does not keep its old chunk from being let go.
// A body Get returned stays valid. O(len) of the body.
func (b *Bodies) Move(r Body) Body {
	if r == 0 || uint32(r) == wholeChunk || uint32(r>>32) == b.cur {
		return r
	}
	n := b.Keep(b.Get(r))
	b.Drop(r)
	return n
}

// Apart copies the body r names into an allocation of its own, drops r
// and returns the copy's Body, unless r is the nil body or has a chunk of
// its own already: then it returns r. A model keeps apart the body of a
// copy that stays while the copies around it leave (a delayed send), so
// that it does not keep their shared chunk from being let go: a shared
// chunk is up to maxChunk bytes, a body kept apart its own length. A body
// Get returned stays valid. O(len) of the body; one allocation, and the
// chunk tables may grow.
func (b *Bodies) Apart(r Body) Body {
	if r == 0 || uint32(r) == wholeChunk {
		return r
	}
	p := b.Get(r)
	c := make([]byte, len(p))
	copy(c, p)
	b.Drop(r)
	k := b.open(c)
	b.live[k] = 1
	return Body(uint64(k+1)<<32 | wholeChunk)
}

// Drop gives r back: the body it names is no longer held, and its chunk is
// released once it holds no live body and no body will be appended to it.
// A body Get returned stays valid. O(1).
func (b *Bodies) Drop(r Body) {
	if r == 0 {
		return
	}
	k := uint32(r>>32 - 1)
	b.live[k]--
	if b.live[k] == 0 && k+1 != b.cur {
		b.release(k)
	}
}

// Held returns the number of chunks the arena holds and their bytes (the
// sizes allocated, a shared chunk's unused tail included). O(chunks).
func (b *Bodies) Held() (chunks, bytes int) {
	for _, c := range b.chunks {
		if c != nil {
			chunks++
			bytes += len(c)
		}
	}
	return chunks, bytes
}
