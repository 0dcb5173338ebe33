package sim

import (
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// PackAll packs every chunk of deliveries of l (see Ledger.packAll).
var PackAll = (*Ledger).packAll

// newPlainLedger returns a ledger that never packs a chunk.
func newPlainLedger() *Ledger {
	l := NewLedger()
	l.noPack, l.recs.off = true, true
	return l
}

// TestPackChunkRoundTrip packs chunks of many shapes, blanks and tick
// spans (among them ticks kept in Ledger.wide) and reads every delivery
// back, one at a time and as a whole chunk.
func TestPackChunkRoundTrip(t *testing.T) {
	r := NewStream(3, "pack")
	spans := []int64{0, 1, 200, 255, 256, 60000, 65535, 65536, 1 << 31, math.MaxUint32}
	for round := range 400 {
		var p [tableChunk]delivery
		span := spans[round%len(spans)]
		base := int64(r.IntN(1000)) - 500
		if round%7 == 0 {
			base = int64(tickWide)
		}
		shapes := 1 + round%maxShapes
		for k := range p {
			if r.Chance(0.2) {
				continue // blank
			}
			s := r.IntN(shapes)
			v := base
			if span > 0 {
				v += int64(r.IntN(int(min(span, math.MaxInt32)))) + int64(k%2)*(span-min(span, math.MaxInt32))
			}
			v = max(min(v, math.MaxInt32), math.MinInt32)
			p[k] = delivery{lastSeen: tick32(v), firstOff: int8(s - 3), delivered: uint8(s), handled: uint8(s * 17), bits: uint8(s) | 1}
		}
		b, ok := packChunk([]byte("x"), &p)
		if !ok {
			t.Fatalf("round %d: %d shapes did not fit", round, shapes)
		}
		if len(b) > 1+maxDeliveries || b[0] != 'x' {
			t.Fatalf("round %d: packed %d bytes, at most %d, after what was there", round, len(b)-1, maxPacked)
		}
		b = b[1:]
		var back [tableChunk]delivery
		unpackChunk(&back, b)
		if back != p {
			t.Fatalf("round %d: chunk changed by packing\n got %v\nwant %v", round, back, p)
		}
		for k := range p {
			if got := packedAt(b, k); got != p[k] {
				t.Fatalf("round %d: delivery %d is %+v, want %+v", round, k, got, p[k])
			}
		}
	}
	// Chunks of runs of deliveries alike (blank runs among them), as a
	// fan-out's are, from one run to more than maxRuns, read back whole
	// and one at a time.
	for round := range 400 {
		var p [tableChunk]delivery
		cuts := []int{0}
		for range round % (maxRuns + 4) {
			cuts = append(cuts, 1+r.IntN(tableChunk-1))
		}
		slices.Sort(cuts)
		span := spans[round%len(spans)]
		for j, from := range cuts {
			to := tableChunk
			if j+1 < len(cuts) {
				to = cuts[j+1]
			}
			var e delivery
			if !r.Chance(0.2) {
				s := r.IntN(3)
				e = delivery{lastSeen: tick32(int64(r.IntN(int(min(span, math.MaxInt32)) + 1))), firstOff: int8(s), delivered: 1, handled: uint8(s), bits: delExpected | uint8(s)}
			}
			for k := from; k < to; k++ {
				p[k] = e
			}
		}
		b, ok := packChunk(nil, &p)
		if !ok {
			t.Fatalf("runs round %d did not fit", round)
		}
		var back [tableChunk]delivery
		if unpackChunk(&back, b); back != p {
			t.Fatalf("runs round %d: chunk changed by packing\n got %v\nwant %v", round, back, p)
		}
		for k := range p {
			if got := packedAt(b, k); got != p[k] {
				t.Fatalf("runs round %d: delivery %d is %+v, want %+v", round, k, got, p[k])
			}
		}
		if len(cuts) <= maxRuns && b[4]&packRuns == 0 {
			t.Fatalf("runs round %d: %d runs packed without packRuns", round, len(cuts))
		}
	}
	// Deliveries of shape 0 (every field but LastSeen zero) between
	// blanks, which have shape 0 too.
	var zeros [tableChunk]delivery
	for k := range zeros {
		if k%3 != 1 {
			zeros[k] = delivery{lastSeen: tick32(k + 1)}
		}
	}
	if b, ok := packChunk(nil, &zeros); !ok {
		t.Fatal("a chunk of one shape did not fit")
	} else {
		var back [tableChunk]delivery
		if unpackChunk(&back, b); back != zeros {
			t.Fatalf("chunk of shape 0 changed by packing\n got %v\nwant %v", back, zeros)
		}
	}
	var many [tableChunk]delivery
	for k := range many {
		many[k] = delivery{lastSeen: 1, delivered: uint8(k), bits: delExpected}
	}
	if b, ok := packChunk([]byte("x"), &many); ok || string(b) != "x" {
		t.Fatal("a chunk of 128 shapes was packed")
	}
}

// longRunEvents returns the events of n messages for three consumers: a
// queue's workers, and two subscribers of a fan-out that follows it (a
// copy per message, made from it). Some messages come back long after
// their chunk was packed: redelivered, dead-lettered and redriven,
// expired before one consumer applied them, lost, dropped; some wait
// tens of thousands of ticks, and a few are seen at ticks past a tick32.
func longRunEvents(n int) []Event {
	r := NewStream(5, "long")
	var evs []Event
	later := map[int][]Event{} // by the message count after which they happen
	at := func(i int, e ...Event) { later[i] = append(later[i], e...) }
	next := ID(n + 1) // IDs of copies made later
	for i := 1; i <= n; i++ {
		id, t := ID(i), Tick(i/10+1)
		key := "k" + strconv.Itoa(i%13)
		evs = append(evs, Event{Tick: t, Kind: KindSent, Where: "q", Consumer: "workers", Msg: id, Key: key, Type: "t"},
			Event{Tick: t, Kind: KindReceived, Where: "q", Consumer: "workers", Msg: id})
		switch {
		case i%211 == 0: // expires unapplied, long after
			at(i+1500, Event{Tick: t + 300, Kind: KindExpired, Where: "q", Msg: id})
		case i%173 == 0: // dead-lettered, then redriven and applied
			c := next
			next++
			evs = append(evs, Event{Tick: t + 1, Kind: KindFailed, Where: "q", Consumer: "workers", Msg: id})
			at(i+900, Event{Tick: t + 70000, Kind: KindDeadLettered, Where: "q", Msg: id},
				Event{Tick: t + 70001, Kind: KindRedriven, Where: "q", Consumer: "workers", Msg: c, Origin: id, Key: key},
				Event{Tick: t + 70002, Kind: KindReceived, Where: "q", Consumer: "workers", Msg: c},
				Event{Tick: t + 70002, Kind: KindProcessed, Where: "q", Consumer: "workers", Msg: c},
				Event{Tick: t + 70003, Kind: KindAcked, Where: "q", Consumer: "workers", Msg: c})
		case i%61 == 0: // redelivered much later, applied twice
			at(i+700, Event{Tick: t + 400, Kind: KindRedelivered, Where: "q", Consumer: "workers", Msg: id},
				Event{Tick: t + 400, Kind: KindProcessed, Where: "q", Consumer: "workers", Msg: id},
				Event{Tick: t + 401, Kind: KindAcked, Where: "q", Consumer: "workers", Msg: id})
			evs = append(evs, Event{Tick: t + 1, Kind: KindProcessed, Where: "q", Consumer: "workers", Msg: id})
		case i%499 == 0: // seen at a tick past a tick32
			evs = append(evs, Event{Tick: math.MaxInt32 + Tick(i), Kind: KindProcessed, Where: "q", Consumer: "workers", Msg: id},
				Event{Tick: math.MaxInt32 + Tick(i), Kind: KindAcked, Where: "q", Consumer: "workers", Msg: id})
		default:
			evs = append(evs, Event{Tick: t + Tick(r.IntN(3)), Kind: KindProcessed, Where: "q", Consumer: "workers", Msg: id},
				Event{Tick: t + 3, Kind: KindAcked, Where: "q", Consumer: "workers", Msg: id})
		}
		if i%5 == 0 { // a fan-out copy for two subscribers
			c := next
			next++
			evs = append(evs, Event{Tick: t, Kind: KindPublished, Where: "topic", Msg: c, Origin: id, Key: key})
			for _, s := range []string{"s1", "s2"} {
				switch {
				case i%45 == 0 && s == "s2":
					at(i+600, Event{Tick: t + 90, Kind: KindDropped, Where: "topic", Consumer: s, Msg: c})
				case i%35 == 0:
					at(i+2000, Event{Tick: t + 200, Kind: KindDelivered, Where: "topic", Consumer: s, Msg: c},
						Event{Tick: t + 200, Kind: KindSkipped, Where: "topic", Consumer: s, Msg: c})
				default:
					evs = append(evs, Event{Tick: t, Kind: KindDelivered, Where: "topic", Consumer: s, Msg: c},
						Event{Tick: t, Kind: KindProcessed, Where: "topic", Consumer: s, Msg: c})
				}
			}
		}
		evs = append(evs, later[i]...)
		delete(later, i)
	}
	for i := n + 1; len(later) > 0; i++ {
		evs = append(evs, later[i]...)
		delete(later, i)
	}
	return evs
}

// TestPackedLedgerMatchesPlain folds a long run, whose late events touch
// many packed chunks, into a ledger that packs and one that never does,
// and holds every answer of the first to the second: the dump of every
// record and delivery, outcomes, losses, stats, key stats, tallies and
// checker verdicts, at several points of the run.
func TestPackedLedgerMatchesPlain(t *testing.T) {
	evs := longRunEvents(20000)
	packed, plain := NewLedger(), newPlainLedger()
	checks := []Checker{NoLoss(), AtLeastOnce("workers"), AtMostOnce("workers"), ExactlyOnce("s1"), OrderedPerKey("workers"), MaxDuplicates("", 1)}
	compare := func(at int) {
		t.Helper()
		if got, want := packed.Dump(), plain.Dump(); got != want {
			t.Fatalf("after %d events: the dumps differ", at)
		}
		for _, name := range []string{"", "workers", "s1", "s2"} {
			if got, want := packed.Outcomes(name), plain.Outcomes(name); !reflect.DeepEqual(got, want) {
				t.Fatalf("after %d events: outcomes of %q differ", at, name)
			}
		}
		if got, want := packed.Losses(), plain.Losses(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d events: losses differ", at)
		}
		if got, want := packed.Stats(), plain.Stats(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d events: stats differ\n got %+v\nwant %+v", at, got, want)
		}
		if got, want := packed.statsByScan(), plain.Stats(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d events: stats by scan differ", at)
		}
		gotRows, gotMore := packed.KeyStats([]string{"workers", "s1", "s2"}, 10)
		wantRows, wantMore := plain.KeyStats([]string{"workers", "s1", "s2"}, 10)
		if !reflect.DeepEqual(gotRows, wantRows) || gotMore != wantMore {
			t.Fatalf("after %d events: key stats differ", at)
		}
		for _, c := range checks {
			for _, name := range []string{"", "workers", "s1"} {
				g, gok := packed.Tally(c.Name(), name, 1)
				w, wok := plain.Tally(c.Name(), name, 1)
				if gok != wok || !reflect.DeepEqual(g, w) {
					t.Fatalf("after %d events: tally %s %q differs: %+v vs %+v", at, c.Name(), name, g, w)
				}
			}
			if g, w := packed.FirstViolations(c, "", 1, 5), plain.FirstViolations(c, "", 1, 5); !reflect.DeepEqual(g, w) {
				t.Fatalf("after %d events: first violations of %s differ", at, c.Name())
			}
		}
		g, w := Check(packed, checks...), Check(plain, checks...)
		if (g == nil) != (w == nil) || g != nil && g.Error() != w.Error() {
			t.Fatalf("after %d events: verdicts differ:\n%v\n%v", at, g, w)
		}
		if w == nil {
			t.Fatal("the run has no violation to compare")
		}
	}
	for i := range evs {
		packed.Emit(&evs[i])
		plain.Emit(&evs[i])
		if i%40009 == 40008 {
			compare(i + 1)
		}
	}
	compare(len(evs))
	packs, unpacks := 0, 0
	for c, p := range packed.recs.packed {
		if p != 0 && packed.recs.t.chunks[c] == nil {
			packs++
		}
	}
	if packs < 50 {
		t.Fatalf("only %d chunks of records packed: the test does not exercise packing", packs)
	}
	for _, b := range packed.consumers {
		for c, p := range b.entries.packed {
			if p != 0 && b.entries.t.chunks[c] == nil {
				packs++
			}
		}
		unpacks += b.entries.waiting()
		if b.entries.t.used == 0 {
			t.Fatalf("consumer %s has no deliveries", b.name)
		}
	}
	if len(plain.recs.packed) != 0 {
		t.Fatal("the plain ledger packed records")
	}
	for _, b := range plain.consumers {
		if len(b.entries.packed) != 0 {
			t.Fatal("the plain ledger packed")
		}
	}
	if packs < 200 {
		t.Fatalf("only %d chunks packed: the test does not exercise packing", packs)
	}
	t.Logf("%d events, %d chunks packed, %d listed to try again at the end", len(evs), packs, unpacks)
}

// TestPackRecordsRoundTrip packs chunks of records with keys in several
// chunks of strings, wide ticks, many states and blanks, and reads every
// record back, one at a time and as a whole chunk.
func TestPackRecordsRoundTrip(t *testing.T) {
	r := NewStream(4, "records")
	var c recordCodec
	for round := range 300 {
		var p [tableChunk]record
		shapes := 1 + round%maxShapes
		spread := []uint32{0, 3, 300, 70000, math.MaxUint32}[round%5]
		for k := range p {
			if r.Chance(0.15) {
				continue // blank
			}
			s := r.IntN(shapes)
			v := func() uint32 {
				if spread == 0 {
					return 7
				}
				return uint32(r.IntN(int(min(spread, math.MaxInt32)))) + uint32(k%2)*(spread-min(spread, math.MaxInt32))
			}
			p[k] = record{keyLo: v()<<16 | v()&0xffff, keyHi: uint16(s), typ: uint16(s * 3), where: uint16(s + 1), State: State(s % 10),
				flags: uint8(s) | recRegistered, created: tick32(v()), changed: tick32(v()), sends: v()}
		}
		b, res := c.pack([]byte("x"), &p, false)
		if res != packDone {
			t.Fatalf("round %d: %d shapes did not fit", round, shapes)
		}
		if len(b) > 1+maxRecords || len(b) > 1+maxPacked || b[0] != 'x' {
			t.Fatalf("round %d: packed %d bytes, at most %d, after what was there", round, len(b)-1, maxRecords)
		}
		b = b[1:]
		var back [tableChunk]record
		c.unpack(&back, b)
		if back != p {
			t.Fatalf("round %d: chunk changed by packing", round)
		}
		for k := range p {
			if got := c.at(b, k); got != p[k] {
				t.Fatalf("round %d: record %d is %+v, want %+v", round, k, got, p[k])
			}
		}
	}
	var many [tableChunk]record
	for k := range many {
		many[k] = record{typ: uint16(k), flags: recRegistered}
	}
	if b, res := c.pack([]byte("x"), &many, false); res != packUnfit || string(b) != "x" {
		t.Fatal("a chunk of 128 shapes was packed")
	}
}

// TestRepackReusesBytes unpacks and packs the same chunk again and again,
// as a poison message redelivered every tick does, and checks that it
// reuses the chunk's bytes instead of taking new ones each time.
func TestRepackReusesBytes(t *testing.T) {
	var d deliveries
	for i := uint64(1); i < (packLag+2)*tableChunk; i++ {
		*d.at(i) = delivery{lastSeen: 1, delivered: 1, bits: delExpected | delHandled}
	}
	if d.packed[0] == 0 || d.t.chunks[0] != nil {
		t.Fatal("chunk 0 was not packed")
	}
	tick := tick32(1)
	cycle := func() {
		tick++
		e := d.at(5) // unpacks chunk 0
		e.lastSeen = tick
		e.delivered = uint8(tick%200) + 1
		d.tidy() // packs it again
	}
	cycle()
	if allocs := testing.AllocsPerRun(1000, cycle); allocs > 0.01 {
		t.Fatalf("%v allocations per repack: packing again takes new bytes", allocs)
	}
	if d.t.chunks[0] != nil {
		t.Fatal("chunk 0 was not packed again")
	}
	if e, _ := d.get(5); e.lastSeen != tick || e.delivered != uint8(tick%200)+1 {
		t.Fatalf("delivery 5 is %+v after %d cycles", e, tick)
	}
}

// TestQuietChunks deletes copies whose deliveries lie in packed chunks:
// one chunk holds a delivery whose handler failed (settled, so the chunk
// packs, but still open: deleting the copy loses it), the others only
// applied ones. The packing ledger must record the same losses as a plain
// one, and no chunk it marks quiet may hold an open delivery.
func TestQuietChunks(t *testing.T) {
	packed, plain := NewLedger(), newPlainLedger()
	emit := func(e Event) {
		packed.Emit(&e)
		plain.Emit(&e)
	}
	const n = (packLag + 4) * tableChunk
	const late = tableChunk + 72 // routed to the workers only after its chunk was packed
	for i := ID(1); i <= n; i++ {
		t := Tick(i)
		if i == late {
			emit(Event{Tick: t, Kind: KindSent, Where: "q", Msg: i, Key: "k"})
			continue
		}
		emit(Event{Tick: t, Kind: KindSent, Where: "q", Consumer: "workers", Msg: i, Key: "k"})
		emit(Event{Tick: t, Kind: KindReceived, Where: "q", Consumer: "workers", Msg: i})
		if i == 5 || i == 3*tableChunk+9 {
			emit(Event{Tick: t, Kind: KindFailed, Where: "q", Consumer: "workers", Msg: i})
		} else {
			emit(Event{Tick: t, Kind: KindProcessed, Where: "q", Consumer: "workers", Msg: i})
		}
	}
	b := packed.consumers[0]
	quiet := 0
	for c := uint64(0); c < packLag; c++ {
		if b.entries.t.chunks[c] != nil {
			t.Fatalf("chunk %d was not packed: the test does not exercise packed chunks", c)
		}
		p := b.entries.chunk(c)
		open := false
		for k := range p {
			open = open || p[k].open()
		}
		if got := b.entries.quietAt(c * tableChunk); got != !open {
			t.Fatalf("chunk %d: quiet %v, but an open delivery: %v", c, got, open)
		}
		if !open {
			quiet++
		}
	}
	if quiet == 0 || quiet == packLag {
		t.Fatalf("%d of %d packed chunks quiet: the test needs both kinds", quiet, packLag)
	}
	// A write unpacks the quiet chunk and opens a delivery in it.
	emit(Event{Tick: n, Kind: KindReceived, Where: "q", Consumer: "workers", Msg: late})
	if b.entries.quietAt(late) {
		t.Fatal("an unpacked chunk is still marked quiet")
	}
	for i := ID(1); i <= packLag*tableChunk; i++ {
		emit(Event{Tick: n + 1, Kind: KindExpired, Where: "q", Msg: i})
	}
	if got, want := packed.Losses(), plain.Losses(); !reflect.DeepEqual(got, want) || len(want) != 3 {
		t.Fatalf("losses %+v, want %+v (three)", got, want)
	}
	if got, want := packed.Dump(), plain.Dump(); got != want {
		t.Fatal("the dumps differ")
	}
}

// packChunkTwoPass is packChunk as it was before it noted where runs
// begin while counting them: a second pass over the chunk wrote the runs.
// TestPackChunkOnePass holds packChunk to its bytes.
func packChunkTwoPass(b []byte, p *[tableChunk]delivery) ([]byte, bool) {
	var set shapeSet[uint32]
	var index [tableChunk]uint8
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	// The shape of the previous delivery, and its number, in registers:
	// neighbours nearly always share one, and then the set is not asked.
	// Shape 0 always takes the long way, as a blank delivery has it too.
	last, lastIdx := uint32(0), uint8(0)
	// Runs of neighbours with the same index and LastSeen (a blank's
	// LastSeen does not count: its distance is 0 whatever it is).
	runs, runIdx, runSeen := 1, uint8(0), tick32(0)
	for k := range p {
		e := &p[k]
		s := shapeOf(e)
		if s != last || s == 0 {
			if s == 0 && e.lastSeen == 0 {
				if runIdx != 0 {
					runs, runIdx = runs+1, 0
				}
				continue // blank
			}
			i, ok := set.index(s)
			if !ok {
				return b, false
			}
			last, lastIdx = s, i
		}
		index[k] = lastIdx
		if lastIdx != runIdx || e.lastSeen != runSeen {
			if k > 0 {
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
		return packRunsTwoPass(b, p, &index, w, uint32(lo)), true
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

// packRunsTwoPass appends the runs of p, whose deliveries' indexes are index,
// with distances of width w from base lo (see packChunk); the caller
// counted at most maxRuns of them.
func packRunsTwoPass(b []byte, p *[tableChunk]delivery, index *[tableChunk]uint8, w int, lo uint32) []byte {
	at := len(b)
	b = append(b, 0)
	var last uint32
	for k := range p {
		var v uint32
		if index[k] != 0 {
			v = uint32(p[k].lastSeen) - lo
		}
		if k > 0 && index[k] == index[k-1] && v == last {
			continue // the run goes on
		}
		last = v
		b = append(b, byte(k), index[k])
		switch w {
		case 1:
			b = append(b, byte(v))
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		b[at]++
	}
	return b
}

// TestPackChunkOnePass packs chunks of runs (blank runs, runs of one
// delivery, runs that differ only in LastSeen or only in shape, up to
// more runs than maxRuns) and random chunks, and requires the very bytes
// of the two-pass packer.
func TestPackChunkOnePass(t *testing.T) {
	r := NewStream(9, "onepass")
	for round := range 3000 {
		var p [tableChunk]delivery
		cuts := []int{0}
		for range round % (maxRuns + 6) {
			cuts = append(cuts, r.IntN(tableChunk))
		}
		slices.Sort(cuts)
		for j, from := range cuts {
			to := tableChunk
			if j+1 < len(cuts) {
				to = cuts[j+1]
			}
			var e delivery
			switch r.IntN(4) {
			case 0: // blank
			case 1: // shape 0, seen
				e = delivery{lastSeen: tick32(1 + r.IntN(3))}
			default:
				s := r.IntN(3)
				e = delivery{lastSeen: tick32(r.IntN(3) * []int{1, 300, 70000}[round%3]), delivered: 1, handled: uint8(s), bits: delExpected | uint8(s)}
			}
			for k := from; k < to; k++ {
				p[k] = e
			}
			if round%5 == 0 && from < to && r.Chance(0.5) {
				p[from].lastSeen++ // a run of one before the rest
			}
		}
		if round%3 == 0 { // settle the chunk, as most are when their turn comes
			for k := range p {
				if p[k] != (delivery{}) {
					p[k].bits |= delHandled
				}
			}
		}
		if round%11 == 0 { // one delivery not done, anywhere
			k := r.IntN(tableChunk)
			p[k].lastSeen, p[k].bits = 1, delExpected
		}
		got, gok := packChunk([]byte("x"), &p)
		want, wok := packChunkTwoPass([]byte("x"), &p)
		if gok != wok || string(got) != string(want) {
			t.Fatalf("round %d: packed\n %v, want\n %v", round, got, want)
		}
		// Packing only settled chunks: busy exactly when settled says
		// so, and else the same bytes.
		wantRes := packUnfit
		switch {
		case !(deliveryCodec{}).settled(&p):
			wantRes, want = packBusy, []byte("x")
		case wok:
			wantRes = packDone
		}
		if got, res := packDeliveries([]byte("x"), &p, true); res != wantRes || string(got) != string(want) {
			t.Fatalf("round %d: packing settled only found %d, want %d", round, res, wantRes)
		}
	}
	// More shapes than fit, all done but the last one met.
	var many [tableChunk]delivery
	for k := range many {
		many[k] = delivery{lastSeen: 1, delivered: uint8(k), bits: delExpected | delHandled}
	}
	many[tableChunk-1].bits = delExpected
	if b, res := packDeliveries([]byte("x"), &many, true); res != packBusy || string(b) != "x" {
		t.Fatalf("an unsettled chunk of 128 shapes packed as %d", res)
	}
	many[tableChunk-1].bits |= delMissed
	if b, res := packDeliveries([]byte("x"), &many, true); res != packUnfit || string(b) != "x" {
		t.Fatalf("a settled chunk of 128 shapes packed as %d", res)
	}
}

// BenchmarkPackChunk packs a chunk of a fan-out's deliveries: one shape,
// seen at a few ticks in order. The TwoPass variant is the packer before
// it noted where runs begin.
func BenchmarkPackChunk(b *testing.B) {
	var p [tableChunk]delivery
	for k := range p {
		p[k] = delivery{lastSeen: tick32(100 + k/50), firstOff: 0, delivered: 1, handled: 1, bits: delExpected | delHandled}
	}
	buf := make([]byte, 0, maxPacked)
	for _, f := range []struct {
		name string
		pack func([]byte, *[tableChunk]delivery) ([]byte, bool)
	}{{"OnePass", packChunk}, {"TwoPass", packChunkTwoPass}} {
		b.Run(f.name, func(b *testing.B) {
			for range b.N {
				buf, _ = f.pack(buf[:0], &p)
			}
		})
	}
}

// TestPackRef locates bytes at the edges of every field of a packRef:
// the last offset of a block, the largest length and capacity, a block
// number past what a short run uses.
func TestPackRef(t *testing.T) {
	blocks := make([][]byte, 300)
	for i := range blocks {
		blocks[i] = make([]byte, 0, packBlock)
	}
	for _, c := range []struct{ blk, off, n, cap int }{
		{0, 0, 0, 0}, {0, 0, 1, 1}, {1, 17, 20, 40}, {299, packBlock - maxPacked, maxPacked, maxPacked}, {5, packBlock - 1, 1, 1}, {7, 100, 0, maxPacked},
	} {
		r := newPackRef(c.blk, c.off, c.n, c.cap)
		if r == 0 {
			t.Fatalf("%+v: the zero packRef", c)
		}
		b := r.bytes(blocks)
		if len(b) != c.n || cap(b) != c.cap {
			t.Fatalf("%+v: %d bytes of capacity %d", c, len(b), cap(b))
		}
		if c.cap > 0 && &b[:1][0] != &blocks[c.blk][:c.off+1][c.off] {
			t.Fatalf("%+v: the bytes are not where they were put", c)
		}
	}
}

// packRecordsOld is recordCodec.pack as it was when it scanned a chunk
// once per column to find the column's range, and wrote every column,
// even one of width 0. TestPackRecordsOnePass holds pack to its bytes.
func packRecordsOld(b []byte, p *[tableChunk]record) ([]byte, bool) {
	var set shapeSet[uint64]
	var index [tableChunk]uint8
	for k := range p {
		r := &p[k]
		if *r == (record{}) {
			continue // blank
		}
		i, ok := set.index(recShape(r))
		if !ok {
			return b, false
		}
		index[k] = i
	}
	shapes, n := set.shapes, set.n
	var bases [recordCols]uint32
	var widths [recordCols]int
	size := recShapes + 8*n + tableChunk/2
	for col := range recordCols {
		lo, hi := uint32(math.MaxUint32), uint32(0)
		for k := range p {
			if index[k] != 0 {
				v := column(&p[k], col)
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if lo > hi {
			lo, hi = 0, 0 // every record is blank
		}
		bases[col], widths[col] = lo, widthOf(uint64(hi-lo))
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
		at := len(b)
		b = b[:at+w*tableChunk]
		dist := b[at:]
		for k := range p {
			var v uint32
			if index[k] != 0 {
				v = column(&p[k], col) - bases[col]
			}
			switch w {
			case 1:
				dist[k] = byte(v)
			case 2:
				binary.LittleEndian.PutUint16(dist[2*k:], uint16(v))
			case 4:
				binary.LittleEndian.PutUint32(dist[4*k:], v)
			}
		}
	}
	return b, true
}

// TestPackRecordsOnePass packs chunks of records whose columns vary or
// not, with blanks, and requires the very bytes of the packer that found
// each column's range in a pass of its own.
func TestPackRecordsOnePass(t *testing.T) {
	r := NewStream(8, "recpass")
	for round := range 2000 {
		var p [tableChunk]record
		vary := r.IntN(1 << recordCols) // the columns whose values differ
		val := func(col int, k int) uint32 {
			if vary&(1<<col) == 0 {
				return 1000 + uint32(col)
			}
			return uint32(r.IntN([]int{2, 300, 70000, math.MaxInt32}[(round+col)%4]))
		}
		for k := range p {
			if round%4 == 0 && r.Chance(0.3) {
				continue // blank
			}
			s := r.IntN(1 + round%3)
			p[k] = record{keyLo: val(colKeyOff, k)<<16 | val(colKeyLen, k)&0xffff, keyHi: uint16(s), typ: 1, where: 2, State: StateDone,
				flags: recRegistered, created: tick32(val(colCreated, k)), changed: tick32(val(colChanged, k)), sends: val(colSends, k)}
		}
		if round == 7 {
			p = [tableChunk]record{} // every record blank
		}
		got, res := recordCodec{}.pack([]byte("x"), &p, false)
		want, ok := packRecordsOld([]byte("x"), &p)
		if (res == packDone) != ok || string(got) != string(want) {
			t.Fatalf("round %d: packed\n %v, want\n %v", round, got, want)
		}
	}
}

// BenchmarkPackRecords packs a chunk of settled records of one run: one
// shape, a key and a tick or two apart. Old is the packer that scanned
// the chunk once per column.
func BenchmarkPackRecords(b *testing.B) {
	var p [tableChunk]record
	for k := range p {
		p[k] = record{keyLo: 5<<16 | 8, typ: 1, where: 1, State: StateDone, flags: recRegistered, created: tick32(100 + k/16), changed: tick32(101 + k/16), sends: 1}
	}
	buf := make([]byte, 0, maxPacked)
	b.Run("OnePass", func(b *testing.B) {
		for range b.N {
			buf, _ = recordCodec{}.pack(buf[:0], &p, true)
		}
	})
	b.Run("Old", func(b *testing.B) {
		for range b.N {
			if (recordCodec{}).settled(&p) {
				buf, _ = packRecordsOld(buf[:0], &p)
			}
		}
	})
}
