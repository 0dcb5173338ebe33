package sim

import (
	"math/rand/v2"
	"testing"
)

// TestCodecBusyFindsEveryUnsettledElement checks busy against the
// definition of settled, element by element, from every starting point:
// busy must report an unsettled element wherever it lies relative to
// from, so that where a chunk's earlier try stopped never changes whether
// it is packed.
func TestCodecBusyFindsEveryUnsettledElement(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var recs [tableChunk]record
		var dels [tableChunk]delivery
		busyRec, busyDel := -1, -1
		for k := range tableChunk {
			if rng.IntN(3) > 0 {
				recs[k] = record{flags: recRegistered, sends: 1, State: StateDone}
				dels[k] = delivery{lastSeen: 1, delivered: 1, bits: delExpected | delHandled, handled: 1}
			}
		}
		// At most one unsettled element of each, anywhere.
		if round%4 != 0 {
			busyRec, busyDel = rng.IntN(tableChunk), rng.IntN(tableChunk)
			recs[busyRec] = record{flags: recRegistered, sends: 1, State: StatePending}
			dels[busyDel] = delivery{lastSeen: 1, delivered: 1, bits: delExpected}
		}
		for from := range tableChunk {
			if got := (recordCodec{}).busy(&recs, from); got != busyRec {
				t.Fatalf("round %d: records busy from %d = %d, want %d", round, from, got, busyRec)
			}
			if got := (deliveryCodec{}).busy(&dels, from); got != busyDel {
				t.Fatalf("round %d: deliveries busy from %d = %d, want %d", round, from, got, busyDel)
			}
		}
	}
}

// TestTryLaterAsksTheWholeChunkAfterItsHint drives a table of records
// through the case the hint must not get wrong: a chunk held up by one
// copy, which settles while a copy before it in the chunk becomes pending
// again. The try must not pack the chunk then, and must pack it once
// every copy is settled.
func TestTryLaterAsksTheWholeChunkAfterItsHint(t *testing.T) {
	var d records
	for i := uint64(1); i < tableChunk; i++ {
		*d.at(i) = record{flags: recRegistered, sends: 1, State: StateDone}
	}
	d.at(5).State = StatePending
	d.at(packLag * tableChunk) // chunk 0's turn, and a retry: busy at copy 5
	if d.t.chunks[0] == nil || d.waiting() != 1 || d.queued[0] != 2+5 {
		t.Fatalf("chunk 0 after its turn: plain %v, waiting %d, hint %d; want plain, 1, 5", d.t.chunks[0] != nil, d.waiting(), int(d.queued[0])-2)
	}
	p := d.t.chunks[0]
	d.tidy() // still busy there
	if d.t.chunks[0] == nil || d.waiting() != 1 || d.queued[0] != 2+5 {
		t.Fatalf("chunk 0 after a try: plain %v, waiting %d, hint %d; want plain, 1, 5", d.t.chunks[0] != nil, d.waiting(), int(d.queued[0])-2)
	}
	p[5].State, p[2].State = StateDone, StatePending
	d.tidy()
	if d.t.chunks[0] == nil {
		t.Fatal("chunk 0 was packed with copy 2 still pending")
	}
	if d.queued[0] != 2+2 {
		t.Fatalf("chunk 0 listed with hint %d, want 2", int(d.queued[0])-2)
	}
	p[2].State = StateDone
	d.tidy()
	if d.t.chunks[0] != nil || d.bytesOf(0) == nil || d.waiting() != 0 {
		t.Fatal("chunk 0 was not packed once every copy settled")
	}
	for i := uint64(1); i < tableChunk; i++ {
		if r, ok := d.get(i); !ok || r != (record{flags: recRegistered, sends: 1, State: StateDone}) {
			t.Fatalf("record %d after packing: %+v", i, r)
		}
	}
}
