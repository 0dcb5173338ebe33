package stored

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
)

// kept is what the model of TestBodiesMatchTheirSenders remembers of one
// body the arena holds: its Body and the bytes it was kept with.
type kept struct {
	r    Body
	want []byte
}

// TestBodiesMatchTheirSenders keeps, moves and drops bodies at random,
// small and large, nil and empty among them, mostly in the order they were
// kept, and checks against a plain model after every step: every body
// held reads back as kept (nil stays nil, empty stays empty and non-nil),
// with its capacity clipped to its length; every body handed out earlier
// still reads as it did, dropped or moved since or not (no byte of the
// arena is written twice); and the arena holds no more chunks than its
// live bodies need: every released chunk's index is reused before a new
// one is opened, and the chunks it holds never outnumber twice the ones
// the live bodies touch plus the one being filled.
func TestBodiesMatchTheirSenders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b Bodies
	var live []kept
	type handed struct{ got, want []byte }
	var out []handed
	body := func() []byte {
		switch rng.IntN(20) {
		case 0:
			return nil
		case 1:
			return []byte{}
		case 2:
			p := make([]byte, bigBody+1+rng.IntN(3*bigBody))
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			return p
		}
		p := make([]byte, 1+rng.IntN(40), 64) // spare capacity the arena must not hand out
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		return p
	}
	for step := range 200_000 {
		freeBefore, openBefore := b.free, len(b.chunks)
		switch op := rng.IntN(100); {
		case op < 50 || len(live) == 0:
			p := body()
			want := bytes.Clone(p)
			r := b.Keep(p)
			if len(p) <= bigBody {
				for i := range p {
					p[i]++ // the sender reuses its buffer: a kept copy must not change
				}
			}
			live = append(live, kept{r, want})
		case op < 55:
			i := rng.IntN(len(live))
			live[i].r = b.Move(live[i].r)
		case op < 57:
			i := rng.IntN(len(live))
			live[i].r = b.Apart(live[i].r)
		default:
			i := 0 // mostly the oldest, as a queue's copies leave
			if rng.IntN(10) == 0 {
				i = rng.IntN(len(live))
			}
			if rng.IntN(4) == 0 {
				got := b.Get(live[i].r)
				out = append(out, handed{got, bytes.Clone(got)})
			}
			b.Drop(live[i].r)
			live = append(live[:i], live[i+1:]...)
		}
		if step%997 != 0 {
			continue
		}
		touched := map[uint64]bool{}
		for j, k := range live {
			got := b.Get(k.r)
			if (got == nil) != (k.want == nil) || !bytes.Equal(got, k.want) || cap(got) != len(got) {
				t.Fatalf("step %d: body %d reads %v (cap %d), want %v", step, j, got, cap(got), k.want)
			}
			if k.r != 0 {
				touched[uint64(k.r>>32)] = true
			}
		}
		for j, h := range out {
			if !bytes.Equal(h.got, h.want) {
				t.Fatalf("step %d: handed-out body %d changed to %v, was %v", step, j, h.got, h.want)
			}
		}
		held, _ := b.Held()
		if held > 2*len(touched)+1 {
			t.Fatalf("step %d: %d chunks held for %d live bodies in %d chunks", step, held, len(live), len(touched))
		}
		if b.free != 0 && held == len(b.chunks) {
			t.Fatalf("step %d: a released index is not marked free", step)
		}
		if freeBefore != 0 && len(b.chunks) > openBefore {
			t.Fatalf("step %d: a new chunk index was opened while index %d was free", step, freeBefore-1)
		}
	}
}

// TestBodiesReleaseChunksInOrder keeps many small bodies and drops them in
// the order they were kept, 3,000 (36 KB) live at a time: once the chunks
// reach their full size the arena holds only the chunks the live bodies
// are in (at most three), whatever the number of bodies kept so far.
func TestBodiesReleaseChunksInOrder(t *testing.T) {
	var b Bodies
	var live []Body
	p := []byte("shop#1234567")
	opened := 0
	for i := range 100_000 {
		if i == 10_000 {
			opened = len(b.chunks)
		}
		live = append(live, b.Keep(p))
		if i >= 3_000 {
			b.Drop(live[0])
			live = live[1:]
		}
		if held, _ := b.Held(); i >= 10_000 && held > 3 {
			t.Fatalf("after %d bodies: %d chunks held", i+1, held)
		}
	}
	if len(b.chunks) != opened {
		t.Fatalf("%d chunk indices opened after the first 10,000 bodies, %d before: released ones are not reused", len(b.chunks)-opened, opened)
	}
}

// TestBodiesCostNoAllocationBeyondChunks checks the promised costs: Keep
// allocates only when it opens a chunk (and grows the table of chunks),
// Get and Drop never.
func TestBodiesCostNoAllocationBeyondChunks(t *testing.T) {
	var b Bodies
	p := []byte("kunde-42 placed an order")
	const n = 10_000
	rs := make([]Body, 0, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		rs = append(rs, b.Keep(p))
	}
	runtime.ReadMemStats(&after)
	chunks := len(b.chunks)
	if got := after.Mallocs - before.Mallocs; got > uint64(3*chunks) {
		t.Fatalf("%d allocations to keep %d bodies in %d chunks", got, n, chunks)
	}
	if min := n * len(p) / maxChunk; chunks > min+8 {
		t.Fatalf("%d chunks for %d bytes", chunks, n*len(p))
	}
	runtime.ReadMemStats(&before)
	for _, r := range rs {
		if len(b.Get(r)) != len(p) {
			t.Fatal("wrong body")
		}
		b.Drop(r)
	}
	runtime.ReadMemStats(&after)
	if got := after.Mallocs - before.Mallocs; got != 0 {
		t.Fatalf("%d allocations to get and drop %d bodies", got, n)
	}
}

// TestBodiesApart: a body kept apart keeps its bytes, has a chunk of its
// own, and no longer holds the shared chunk it was in, which is let go
// once its other bodies are dropped.
func TestBodiesApart(t *testing.T) {
	var b Bodies
	if got := b.Apart(0); got != 0 {
		t.Fatalf("Apart of the nil body = %v", got)
	}
	x := b.Keep([]byte("stays"))
	rest := make([]Body, 0, 64)
	for range 64 {
		rest = append(rest, b.Keep(make([]byte, 100))) // past the first chunk, so it is not the one being filled
	}
	y := b.Apart(x)
	if string(b.Get(y)) != "stays" || uint32(y) != wholeChunk {
		t.Fatalf("apart body %q, low half %x", b.Get(y), uint32(y))
	}
	if b.Apart(y) != y {
		t.Error("Apart of a body with a chunk of its own moved it")
	}
	for _, r := range rest {
		b.Drop(r)
	}
	chunks, _ := b.Held()
	// What is left: the apart body's chunk and the one being filled.
	if chunks != 2 {
		t.Errorf("the arena holds %d chunks, want 2", chunks)
	}
	b.Drop(y)
	if chunks, _ := b.Held(); chunks != 1 {
		t.Errorf("after the apart body is dropped the arena holds %d chunks, want 1", chunks)
	}
}
