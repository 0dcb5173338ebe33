package sim

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestLedgerStorageIsCompactAndPointerFree(t *testing.T) {
	if n := unsafe.Sizeof(record{}); n > 24 {
		t.Errorf("record is %d bytes, want <= 24", n)
	}
	if n := unsafe.Sizeof(delivery{}); n > 8 {
		t.Errorf("delivery is %d bytes, want <= 8", n)
	}
	// A ledger is allocated once per run, so a sweep pays it per seed:
	// the rarely used lineage tables live behind a pointer, and the small
	// fields are packed together, to keep it in the 640-byte size class.
	if n := unsafe.Sizeof(Ledger{}); n > 640 {
		t.Errorf("Ledger is %d bytes, want <= 640", n)
	}
}

func TestStrtabRoundTrip(t *testing.T) {
	var st strtab
	var c strCache
	want := []string{"", "a", "kunde-1", "kunde-1", strings.Repeat("x", strBig-1), strings.Repeat("y", strBig), "é\x00\"", ""}
	// Enough strings to fill several chunks.
	for i := range 30_000 {
		want = append(want, "key-"+strconv.Itoa(i))
	}
	refs := make([]strRef, len(want))
	for i, s := range want {
		refs[i] = c.put(&st, s)
	}
	if len(st.done) < 2 {
		t.Fatalf("only %d full chunks; the test should cross chunk boundaries", len(st.done))
	}
	// Chunks start small and double, and none outgrows what a strRef's
	// 16-bit offset reaches.
	for i, c := range st.done {
		if len(c) > strChunk || i == 0 && len(c) > strFirst {
			t.Fatalf("chunk %d holds %d bytes", i, len(c))
		}
	}
	for i, s := range want {
		if got := st.get(refs[i]); got != s {
			t.Fatalf("string %d: got %q, want %q", i, got, s)
		}
	}
}

// TestStrCacheStoresRecurringKeysOnce: keys of one pattern cycled
// through, as a producer hands them out, are copied into the strtab once
// each while the cache has a slot for every one of them (slotsFirst
// before the strtab remembers strings, slotsMax after), and every string
// put through the cache, recurring, colliding or not, reads back as
// itself.
func TestStrCacheStoresRecurringKeysOnce(t *testing.T) {
	stored := func(st *strtab) int {
		n := st.cur.Len()
		for _, c := range st.done {
			n += len(c)
		}
		return n
	}
	for _, tc := range []struct {
		pattern string
		keys    int
	}{{"order-", slotsFirst}, {"kunde-", 10}, {"k", slotsFirst}, {"tenant-42/order-", slotsFirst}} {
		var st strtab
		var c strCache
		want := 0
		for i := 1; i <= tc.keys; i++ {
			want += len(tc.pattern + strconv.Itoa(i))
		}
		for round := 0; round < 20; round++ {
			for i := 1; i <= tc.keys; i++ {
				s := tc.pattern + strconv.Itoa(i) // a fresh string each time, as a key read from a trace is
				if got := st.get(c.put(&st, s)); got != s {
					t.Fatalf("%q read back as %q", s, got)
				}
			}
		}
		if n := stored(&st); n != want {
			t.Errorf("%d keys %q%%d cycled 20 times stored %d bytes, want %d", tc.keys, tc.pattern, n, want)
		}
	}

	// A long run: once internFrom bytes are stored the cache has slotsMax
	// slots, and a key space of that size cycled through reads back.
	var st strtab
	var c strCache
	for i := 0; stored(&st) < internFrom; i++ {
		if s := "unique-" + strconv.Itoa(i); st.get(c.put(&st, s)) != s || i > internFrom {
			t.Fatalf("%q did not read back, or %d unique keys stored %d bytes", s, i+1, stored(&st))
		}
	}
	c.put(&st, "unique-x") // the store that finds the strtab remembering
	if len(c.slots) != slotsMax {
		t.Fatalf("%d slots after %d bytes stored", len(c.slots), stored(&st))
	}
	before := stored(&st)
	for round := 0; round < 3; round++ {
		for i := range slotsMax {
			s := "kunde-" + strconv.Itoa(i)
			if got := st.get(c.put(&st, s)); got != s {
				t.Fatalf("%q read back as %q", s, got)
			}
		}
	}
	if n := stored(&st) - before; n > slotsMax*len("kunde-255") {
		t.Errorf("%d recurring keys cycled 3 times stored %d bytes", slotsMax, n)
	}
	// The strtab's own index would keep the bytes above down by itself:
	// the grown cache must hold every one of those keys in its slot, so
	// that a repeat is one comparison, not an index lookup.
	for i := range slotsMax {
		s := "kunde-" + strconv.Itoa(i)
		if r := c.slots[slotOf(s, slotsMax)]; r == 0 || st.get(r) != s {
			t.Fatalf("%q is not in its slot of the grown cache (slot holds %d)", s, r)
		}
	}

	// Strings that share their slot, and ones without a counter, still
	// read back as themselves.
	var st2 strtab
	var c2 strCache
	keys := []string{"a", "b", "a1", "b1", "x-0", "y-0", strings.Repeat("z", strBig), "é1", "9", "99999999999999999999999"}
	for round := 0; round < 3; round++ {
		for _, s := range keys {
			if got := st2.get(c2.put(&st2, s)); got != s {
				t.Fatalf("%q read back as %q", s, got)
			}
		}
	}
}

func TestLedgerWideTicksAndManyFields(t *testing.T) {
	const big = Tick(1) << 40
	l := feed(
		Event{Tick: big, Kind: KindSent, Where: "queue:q", Consumer: "billing", Msg: 1, Key: "order-1", Type: "order.placed"},
		Event{Tick: big + 2, Kind: KindReceived, Consumer: "billing", Msg: 1},
		Event{Tick: big + 3, Kind: KindProcessed, Consumer: "billing", Msg: 1},
		Event{Tick: big + 4, Kind: KindLost, Consumer: "billing", Msg: 1, Cause: CauseAckBeforeProcess},
		Event{Tick: -big, Kind: KindSent, Where: "queue:q", Msg: 2},
		Event{Tick: 5, Kind: KindAcked, Msg: 2},
		Event{Tick: big + 8, Kind: KindDeadLettered, Msg: 1},
		Event{Tick: big + 9, Kind: KindRedriven, Where: "queue:q", Consumer: "billing", Msg: 3, Origin: 1},
	)
	c := l.Consumer("billing")
	r, ok := l.Record(1)
	if !ok || r.Created != big || r.Key != "order-1" || r.Type != "order.placed" || r.Sends != 1 || r.Where != "queue:q" {
		t.Errorf("record 1 = %+v", r)
	}
	d := l.Entry(1, c)
	if !d.Expected || d.Delivered != 1 || d.Applied != 1 || d.FirstApplied != big+3 || d.LastSeen != big+4 || d.Lost != CauseAckBeforeProcess {
		t.Errorf("entry 1 = %+v", d)
	}
	r2, _ := l.Record(2)
	if r2.Created != -big || r2.Changed != 5 || r2.State != StateDone {
		t.Errorf("record 2 = %+v", r2)
	}
	if r, _ := l.Record(1); r.Redriven != 3 || r.State != StateRedriven || r.Changed != big+9 {
		t.Errorf("redriven record 1 = %+v", r)
	}
	if r, _ := l.Record(3); r.Origin != 1 || r.State != StatePending {
		t.Errorf("redriven copy = %+v", r)
	}
}

func TestAppendIntMatchesStrconv(t *testing.T) {
	vals := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 1<<31 - 1, 1 << 40, -1, -10, -99, -100, -12345, 1<<63 - 1, -1 << 63}
	for i := int64(0); i < 2000; i++ {
		vals = append(vals, i, i*7919, -i*104729)
	}
	for _, v := range vals {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", v, got, want)
		}
		if v >= 0 {
			if got, want := string(appendUint([]byte("x"), uint64(v))), "x"+strconv.FormatUint(uint64(v), 10); got != want {
				t.Fatalf("appendUint(%d) = %q, want %q", v, got, want)
			}
		}
	}
	if got := string(appendUint(nil, 1<<64-1)); got != "18446744073709551615" {
		t.Fatalf("appendUint(max) = %q", got)
	}
}

func TestListAndApplyOrder(t *testing.T) {
	l := NewLedger()
	if got := l.ApplyOrder(l.Consumer("billing")); got != nil {
		t.Fatalf("empty apply order = %v", got)
	}
	const n = 3*tableChunk + 5
	for i := n; i >= 1; i-- {
		l.Emit(&Event{Tick: Tick(i), Kind: KindProcessed, Consumer: "billing", Msg: ID(i)})
		l.Emit(&Event{Tick: Tick(i), Kind: KindProcessed, Consumer: "billing", Msg: ID(i)}) // a repeat is not a first application
	}
	c := l.Consumer("billing")
	got := l.ApplyOrder(c)
	if len(got) != n {
		t.Fatalf("apply order has %d IDs, want %d", len(got), n)
	}
	for i, id := range got {
		if id != ID(n-i) {
			t.Fatalf("apply order[%d] = %v, want m%d", i, id, n-i)
		}
	}
	var s list[int]
	for i := range 2500 {
		s.push(i)
	}
	k := 0
	for v := range s.all() {
		if v != k {
			t.Fatalf("list element %d = %d", k, v)
		}
		if k++; k == 1500 {
			break
		}
	}
}

// TestTableMemoryFollowsTheChunksTouched: an index far out (an ID a
// hostile trace names) costs one chunk, not a slice up to it, and the
// table still reads and iterates in index order; a far chunk the dense
// ones reach later moves in with its contents.
func TestTableMemoryFollowsTheChunksTouched(t *testing.T) {
	var tb table[uint64]
	*tb.at(3) = 3
	*tb.at(1_000_000_000_000) = 7
	if len(tb.chunks) > 1 || len(tb.far) != 1 || tb.used != 2 {
		t.Fatalf("%d dense chunks, %d far", len(tb.chunks), len(tb.far))
	}
	if *tb.get(1_000_000_000_000) != 7 || tb.get(500_000_000_000) != nil || *tb.get(3) != 3 {
		t.Fatal("get")
	}
	var got []uint64
	for i, v := range tb.all() {
		if *v != 0 {
			got = append(got, i)
		}
	}
	if len(got) != 2 || got[0] != 3 || got[1] != 1_000_000_000_000 {
		t.Fatalf("all: %v", got)
	}
	var grown table[uint64]
	*grown.at(8000 * tableChunk) = 5 // far while little is allocated
	if len(grown.far) != 1 {
		t.Fatalf("%d far", len(grown.far))
	}
	for c := uint64(0); c < 200; c++ {
		*grown.at(c * tableChunk) = 1 // 200 chunks: 8001 is within reach
	}
	*grown.at(8001 * tableChunk) = 1
	if len(grown.far) != 0 || *grown.get(8000 * tableChunk) != 5 {
		t.Fatalf("the far chunk did not move in: %d far, value %v", len(grown.far), grown.get(8000*tableChunk))
	}
}

// TestLedgerWithAHugeMessageIDStaysSmall folds a trace naming
// m1000000000000 and measures the heap it took.
func TestLedgerWithAHugeMessageIDStaysSmall(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := NewLedger()
	for _, e := range []Event{
		{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1_000_000_000_000},
		{Tick: 2, Kind: KindReceived, Where: "queue:q", Consumer: "w", Msg: 1_000_000_000_000},
		{Tick: 2, Kind: KindProcessed, Where: "queue:q", Consumer: "w", Msg: 1_000_000_000_000},
		{Tick: 2, Kind: KindAcked, Where: "queue:q", Consumer: "w", Msg: 1_000_000_000_000},
	} {
		l.Emit(&e)
	}
	if err := Check(l, NoLoss(), ExactlyOnce("w")); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc); grew > 8<<20 {
		t.Fatalf("the ledger took %d MiB for one message", grew>>20)
	}
	runtime.KeepAlive(l)
}

// TestASmallRunAllocatesLittle folds the events of a hundred queue
// lifecycles into fresh ledgers and judges them, as a sweep does for every
// seed, and bounds the bytes that allocates: tables, lists and the string
// table start small instead of at chunks sized for millions of messages,
// and the checkers keep no outcome slice.
func TestASmallRunAllocatesLittle(t *testing.T) {
	const n, runs = 100, 20
	evs := make([]Event, 0, 5*n)
	for i := 1; i <= n; i++ {
		id, key, tick := ID(i), "order-"+strconv.Itoa(i%10), Tick(i/10+1)
		evs = append(evs,
			Event{Tick: tick, Kind: KindSent, Where: "queue:orders", Consumer: "orders", Msg: id, Key: key},
			Event{Tick: tick, Kind: KindReceived, Where: "queue:orders", Consumer: "orders", Msg: id, Key: key},
			Event{Tick: tick, Kind: KindProcessed, Where: "queue:orders", Consumer: "orders", Msg: id, Key: key},
			Event{Tick: tick, Kind: KindAcked, Where: "queue:orders", Consumer: "orders", Msg: id, Key: key})
	}
	checks := []Checker{NoLoss(), AtLeastOnce("orders"), ExactlyOnce("orders"), MaxDuplicates("orders", 0)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		l := NewLedger()
		for i := range evs {
			l.Emit(&evs[i])
		}
		if err := Check(l, checks...); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 16<<10 {
		t.Fatalf("a 100-message run allocated %d bytes in the ledger and checkers, want at most 16 KiB", per)
	}
}

// TestLedgerTypesPastTheIndex: a trace with more distinct message types
// than records index keeps every copy's type, and a recurring key is
// stored once.
func TestLedgerTypesPastTheIndex(t *testing.T) {
	l := NewLedger()
	const n = maxTypes + 100
	for i := 1; i <= n; i++ {
		l.Emit(&Event{Tick: 1, Kind: KindSent, Where: "queue:q", Msg: ID(i), Key: "k" + strconv.Itoa(i%3), Type: "t" + strconv.Itoa(i)})
	}
	for _, i := range []int{1, 2, maxTypes - 1, maxTypes, maxTypes + 1, n} {
		r, ok := l.Record(ID(i))
		if !ok || r.Type != "t"+strconv.Itoa(i) || r.Key != "k"+strconv.Itoa(i%3) {
			t.Fatalf("m%d: %+v", i, r)
		}
	}
	if len(l.types) != maxTypes+1 || len(l.wideTypes) != n-maxTypes {
		t.Fatalf("%d types indexed, %d kept apart", len(l.types), len(l.wideTypes))
	}
	stored := l.strs.cur.Len()
	for _, c := range l.strs.done {
		stored += len(c)
	}
	if stored > internFrom+len("k0k1k2") {
		t.Fatalf("three recurring keys took %d bytes of strings", stored)
	}
}

// TestRecordKeyReferences: a key reference round-trips through a record's
// 48 bits, small and big, and one that does not fit is refused, so the
// ledger keeps that key apart.
func TestRecordKeyReferences(t *testing.T) {
	for _, k := range []strRef{0, 1<<16 | 7, (keyBigBit-1)<<32 | 0xffff_ffff, strRefBig, strRefBig | 5, strRefBig | (keyBigBit-2)<<32 | 0xffff_ffff} {
		var r record
		if !r.setKey(k) {
			t.Fatalf("%#x does not fit", uint64(k))
		}
		if got, ok := r.key(); !ok || got != k {
			t.Fatalf("%#x came back as %#x", uint64(k), uint64(got))
		}
	}
	for _, k := range []strRef{keyBigBit << 32, strRefBig | (keyBigBit-1)<<32} {
		var r record
		if r.setKey(k) {
			t.Fatalf("%#x fits", uint64(k))
		}
		if _, ok := r.key(); ok {
			t.Fatalf("%#x: a refused key reads back", uint64(k))
		}
	}
	l := NewLedger()
	r := l.rec(9)
	l.register(9, r, &Event{Msg: 9, Key: "far"})
	r.setKey(keyBigBit << 32) // as if the strings had outgrown the record's reach
	l.wideKeys = map[ID]string{9: "far"}
	if got, _ := l.Record(9); got.Key != "far" {
		t.Fatalf("key %q", got.Key)
	}
}

// TestIDSeqRoundTrip: IDs in any order, the largest included, read back
// as pushed, across chunk boundaries; in-order IDs take a byte each.
func TestIDSeqRoundTrip(t *testing.T) {
	want := []ID{1, 2, 3, 1<<64 - 1, 5, 0, 1 << 63, 1<<63 - 1, 7, 7, 8, 8, 9}
	for i := range 5000 {
		want = append(want, ID(i*3%1000+1))
	}
	// Runs of IDs whose differences take 1, 2, 3 and 10 bytes, so that
	// varints of every length meet the end of a chunk.
	for i := range 3000 {
		step := []ID{1, 200, 40_000, 1 << 62}[i/50%4]
		want = append(want, want[len(want)-1]+step)
	}
	var s idSeq
	for _, id := range want {
		s.push(id)
	}
	if len(s.chunks) < 3 || s.len() != len(want) {
		t.Fatalf("%d chunks, %d IDs", len(s.chunks), s.len())
	}
	got := s.slice()
	if len(got) != len(want) {
		t.Fatalf("read back %d IDs, pushed %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ID %d: got %d, want %d", i, got[i], want[i])
		}
	}
	var inOrder idSeq
	for i := 1; i <= 10_000; i++ {
		inOrder.push(ID(i))
	}
	bytes := 0
	for _, c := range inOrder.chunks {
		bytes += cap(c)
	}
	if bytes > 2*10_000 {
		t.Fatalf("10,000 IDs in order take %d bytes", bytes)
	}
	if got := inOrder.slice(); len(got) != 10_000 || got[0] != 1 || got[9_999] != 10_000 {
		t.Fatalf("10,000 IDs in order read back as %d IDs", len(got))
	}
	for i, id := range inOrder.slice() {
		if id != ID(i+1) {
			t.Fatalf("ID %d of 10,000 in order: %d", i, id)
		}
	}
	n := 0
	for range inOrder.all() {
		if n++; n == 10 {
			break
		}
	}
}

// TestDeliveryCountsPastTheirFields: a copy delivered, applied and
// skipped more often than its fields count (and than 16 bits would) keeps
// its counts exact.
func TestDeliveryCountsPastTheirFields(t *testing.T) {
	l := NewLedger()
	const n = 1<<16 + 3
	l.Emit(&Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1})
	for range n {
		l.Emit(&Event{Tick: 2, Kind: KindRedelivered, Where: "queue:q", Consumer: "w", Msg: 1})
		l.Emit(&Event{Tick: 2, Kind: KindProcessed, Where: "queue:q", Consumer: "w", Msg: 1})
		l.Emit(&Event{Tick: 2, Kind: KindSkipped, Where: "queue:q", Consumer: "w", Msg: 1})
	}
	c := l.Consumer("w")
	if e := l.Entry(1, c); e.Delivered != n || e.Applied != n || e.Skipped != n || e.FirstApplied != 2 {
		t.Fatalf("%+v", e)
	}
	if got := l.DuplicateEffects("w"); got != n-1 {
		t.Fatalf("%d duplicate effects, want %d", got, n-1)
	}
	if got := l.Duplicates("w"); got != n-1 {
		t.Fatalf("%d duplicates, want %d", got, n-1)
	}
}

// TestDeliveryLossCauses: a delivery's loss cause reads back, a later loss
// replaces it, and causes past what a delivery holds inline read back too.
func TestDeliveryLossCauses(t *testing.T) {
	l := NewLedger()
	l.Emit(&Event{Tick: 3, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1})
	l.Emit(&Event{Tick: 4, Kind: KindLost, Where: "queue:q", Consumer: "w", Msg: 1, Cause: CauseOverflow})
	c := l.Consumer("w")
	if e := l.Entry(1, c); e.Lost != CauseOverflow {
		t.Fatalf("%+v", e)
	}
	l.Emit(&Event{Tick: 5, Kind: KindLost, Where: "queue:q", Consumer: "w", Msg: 1, Cause: CauseDisconnect})
	l.Emit(&Event{Tick: 6, Kind: KindExpired, Where: "queue:q", Msg: 1}) // already lost: no new loss
	if e := l.Entry(1, c); e.Lost != CauseDisconnect || e.LastSeen != 5 || !e.Expected {
		t.Fatalf("%+v", e)
	}
	if got := len(l.Losses()); got != 2 {
		t.Fatalf("%d losses stand, want 2", got)
	}
	// Many distinct causes: every one reads back on its own copy.
	const n = causeWide + 10
	for i := 2; i < n; i++ {
		id := ID(i)
		l.Emit(&Event{Tick: 7, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: id})
		l.Emit(&Event{Tick: 8, Kind: KindLost, Where: "queue:q", Consumer: "w", Msg: id, Cause: Cause("cause-" + strconv.Itoa(i))})
	}
	for i := 2; i < n; i++ {
		if e := l.Entry(ID(i), c); e.Lost != Cause("cause-"+strconv.Itoa(i)) || e.Delivered != 0 || !e.Expected {
			t.Fatalf("copy %d: %+v", i, e)
		}
	}
	// An expiry loses an unapplied copy with a cause past the inline ones.
	l.Emit(&Event{Tick: 9, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: n})
	l.Emit(&Event{Tick: 10, Kind: KindExpired, Where: "queue:q", Msg: n, Cause: "cause-late"})
	if e := l.Entry(n, c); e.Lost != "cause-late" || e.LastSeen != 10 {
		t.Fatalf("%+v", e)
	}
}

// TestDeliveryFieldsMatchAPlainFold folds a random stream of deliveries,
// effects, skips, misses and losses, with ticks that step, jump, go back
// and reach the ends of a Tick, and compares every Entry with a plain fold
// of the same events into Entry values: the compact delivery and its
// fields kept in full must read back exactly.
func TestDeliveryFieldsMatchAPlainFold(t *testing.T) {
	r := NewStream(7, "deliveries")
	l := NewLedger()
	consumers := []string{"a", "b", "c"}
	type key struct {
		id ID
		c  string
	}
	want := map[key]*Entry{}
	causes := []Cause{CauseOverflow, CauseDisconnect, CauseRetention}
	for i := range 40 {
		causes = append(causes, Cause("cause-"+strconv.Itoa(i)))
	}
	tick := Tick(0)
	for range 200_000 {
		switch r.IntN(10) {
		case 0:
			tick += Tick(r.IntN(1000))
		case 1:
			tick -= Tick(r.IntN(300))
		case 2:
			if r.IntN(100) == 0 {
				tick = []Tick{math.MaxInt64, math.MinInt64, math.MaxInt32 + 1, math.MinInt32}[r.IntN(4)]
			}
		default:
			tick += Tick(r.IntN(3))
		}
		id, c := ID(1+r.IntN(20)), consumers[r.IntN(len(consumers))]
		e := want[key{id, c}]
		if e == nil {
			e = &Entry{}
			want[key{id, c}] = e
		}
		ev := &Event{Tick: tick, Where: "queue:q", Consumer: c, Msg: id}
		switch k := r.IntN(20); {
		case k < 8:
			ev.Kind = KindRedelivered
			e.Expected, e.Delivered, e.LastSeen = true, e.Delivered+1, tick
		case k < 13:
			ev.Kind = KindProcessed
			e.Expected, e.Handled, e.Applied = true, true, e.Applied+1
			switch e.Applied {
			case 1:
				e.FirstApplied = tick
			case 2:
				e.SecondApplied = tick
			}
		case k < 16:
			ev.Kind = KindSkipped
			e.Expected, e.Handled, e.Skipped = true, true, e.Skipped+1
		case k < 17:
			ev.Kind = KindMissed
			e.Expected, e.Missed, e.LastSeen = true, true, tick
		case k < 18:
			ev.Kind = KindFailed
			e.Handled = true
		default:
			ev.Kind, ev.Cause = KindLost, causes[r.IntN(len(causes))]
			e.Expected, e.Lost, e.LastSeen = true, ev.Cause, tick
		}
		l.Emit(ev)
	}
	for k, e := range want {
		if got := l.Entry(k.id, l.Consumer(k.c)); got != *e {
			t.Errorf("%v for %s: got %+v, want %+v", k.id, k.c, got, *e)
		}
	}
}

// TestFirstAppliedFarFromLastSeen: a copy applied long after its delivery,
// or delivered again long after its effect, keeps its first effect's tick,
// and one that comes back within reach of its delivery stops keeping it
// apart.
func TestFirstAppliedFarFromLastSeen(t *testing.T) {
	l := NewLedger()
	l.Emit(&Event{Tick: 5, Kind: KindSent, Where: "queue:q", Consumer: "w", Msg: 1})
	l.Emit(&Event{Tick: 5, Kind: KindReceived, Where: "queue:q", Consumer: "w", Msg: 1})
	l.Emit(&Event{Tick: 500, Kind: KindProcessed, Where: "queue:q", Consumer: "w", Msg: 1})
	c := l.Consumer("w")
	if e := l.Entry(1, c); e.FirstApplied != 500 || e.LastSeen != 5 {
		t.Fatalf("%+v", e)
	}
	// Kept in the consumer's own table, not the map of wide values: a
	// subscriber that buffers its copies for long makes one per copy.
	if len(l.wide) != 0 || l.consumers[c].firstWide.get(1) == nil {
		t.Fatalf("the far first effect is kept in the map (%d) or nowhere", len(l.wide))
	}
	l.Emit(&Event{Tick: 450, Kind: KindRedelivered, Where: "queue:q", Consumer: "w", Msg: 1})
	if e := l.Entry(1, c); e.FirstApplied != 500 || e.LastSeen != 450 || len(l.wide) != 0 {
		t.Fatalf("%+v, %d kept in full", e, len(l.wide))
	}
	l.Emit(&Event{Tick: 9000, Kind: KindRedelivered, Where: "queue:q", Consumer: "w", Msg: 1})
	l.Emit(&Event{Tick: 9001, Kind: KindProcessed, Where: "queue:q", Consumer: "w", Msg: 1})
	if e := l.Entry(1, c); e.FirstApplied != 500 || e.LastSeen != 9000 || e.Applied != 2 || e.Delivered != 3 {
		t.Fatalf("%+v", e)
	}
}

// TestManyConsumersAndComponents: past the names the ledger finds by a
// scan, it finds every consumer and component by its map, the earlier
// ones included.
func TestManyConsumersAndComponents(t *testing.T) {
	l := NewLedger()
	const n = 3 * scanMax
	for i := 1; i <= n; i++ {
		s := strconv.Itoa(i)
		l.Emit(&Event{Tick: Tick(i), Kind: KindSent, Where: "queue:q" + s, Consumer: "c" + s, Msg: ID(i)})
	}
	for i := 1; i <= n; i++ {
		s := strconv.Itoa(i)
		l.Emit(&Event{Tick: Tick(n + i), Kind: KindReceived, Where: "queue:q" + s, Consumer: "c" + s, Msg: ID(i)})
	}
	if got := len(l.Consumers()); got != n {
		t.Fatalf("%d consumers, want %d", got, n)
	}
	for i := 1; i <= n; i++ {
		s := strconv.Itoa(i)
		c := l.Consumer("c" + s)
		if l.ConsumerName(c) != "c"+s {
			t.Fatalf("consumer c%s has handle %d, named %q", s, c, l.ConsumerName(c))
		}
		if e := l.Entry(ID(i), c); e.Delivered != 1 || !e.Expected {
			t.Fatalf("c%s: %+v", s, e)
		}
		if r, _ := l.Record(ID(i)); r.Where != "queue:q"+s {
			t.Fatalf("m%d is in %q", i, r.Where)
		}
	}
	if l.Consumer("") != NoConsumer || l.Consumer("nobody") != NoConsumer {
		t.Fatal("an unknown consumer has a handle")
	}
}
