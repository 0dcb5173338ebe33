package sim

import (
	"math/rand/v2"
	"testing"
)

// routedByGet is Ledger.routed as written before it read plain chunks in
// place: the reference the fast path must agree with.
func routedByGet(l *Ledger, id ID) bool {
	for _, b := range l.consumers {
		if e, ok := b.entries.get(uint64(id)); ok && e.bits&delExpected != 0 {
			return true
		}
	}
	return false
}

// TestRoutedReadsEveryChunkAlike checks routed against routedByGet for
// every copy of a ledger whose consumers expect different copies, with
// chunks plain and packed, and a copy far past the others (kept in a far
// chunk).
func TestRoutedReadsEveryChunkAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	l := NewLedger()
	consumers := []string{"a", "b", "c"}
	const n = 3000
	for id := ID(1); id <= n; id++ {
		e := Event{Kind: KindSent, Tick: Tick(id), Msg: id, Key: "k", Where: "queue:q"}
		if rng.IntN(4) > 0 {
			e.Consumer = consumers[rng.IntN(len(consumers))]
		}
		l.Emit(&e)
		if id%7 != 0 && e.Consumer != "" { // most settle, so older chunks pack
			l.Emit(&Event{Kind: KindReceived, Tick: Tick(id), Msg: id, Consumer: e.Consumer})
			l.Emit(&Event{Kind: KindProcessed, Tick: Tick(id), Msg: id, Consumer: e.Consumer})
			l.Emit(&Event{Kind: KindAcked, Tick: Tick(id), Msg: id, Consumer: e.Consumer})
		}
	}
	far := ID(1) << 40
	l.Emit(&Event{Kind: KindSent, Tick: n + 1, Msg: far, Key: "k", Where: "queue:q", Consumer: "c"})
	packed := 0
	for _, b := range l.consumers {
		packed += len(b.entries.packed)
	}
	if packed == 0 {
		t.Fatal("no chunk of deliveries was packed; the test should read packed chunks too")
	}
	for id := ID(0); id <= n+tableChunk; id++ {
		if got, want := l.routed(id), routedByGet(l, id); got != want {
			t.Fatalf("routed(%d) = %v, want %v", id, got, want)
		}
	}
	if !l.routed(far) || l.routed(far+1) {
		t.Fatalf("routed of the far copy and its neighbour: %v %v, want true false", l.routed(far), l.routed(far+1))
	}
}
