package sim

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestLedgerStorageIsCompactAndPointerFree(t *testing.T) {
	if n := unsafe.Sizeof(record{}); n > 32 {
		t.Errorf("record is %d bytes, want <= 32", n)
	}
	if n := unsafe.Sizeof(delivery{}); n > 24 {
		t.Errorf("delivery is %d bytes, want <= 24", n)
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
	for i, s := range want {
		if got := st.get(refs[i]); got != s {
			t.Fatalf("string %d: got %q, want %q", i, got, s)
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
