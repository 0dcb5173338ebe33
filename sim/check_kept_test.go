package sim

import (
	"reflect"
	"testing"
)

// walkTally counts check's violations from its walk (Violations), as
// Tally counts them.
func walkTally(l *Ledger, c Checker, name string, n int) Tally {
	vs := c.Violations(l)
	t := Tally{Count: len(vs), Duplicates: l.Duplicates(name)}
	for _, v := range vs {
		fixed := false
		switch c.Name() {
		case "at-most-once", "exactly-once":
			fixed = v.Msg != 0 && l.Effects(v.Msg, v.Consumer) > 1
		case "ordered-per-key":
			fixed = v.Msg != 0
		case "max-duplicates":
			fixed = n >= 0 && (name == "" || l.Consumer(name) != NoConsumer) && t.Duplicates > n
		}
		if fixed {
			if t.Fixed == 0 {
				t.First = v
			}
			t.Fixed++
		}
	}
	return t
}

// TestTallyFollowsLineages feeds a ledger events by hand, among them a
// copy applied as its own origin and given an origin later, and one made
// the origin of a redriven copy after it was applied, and holds every
// tally to its checker's walk after each event.
func TestTallyFollowsLineages(t *testing.T) {
	l := NewLedger()
	evs := []Event{
		{Tick: 1, Kind: KindSent, Where: "q", Consumer: "c", Msg: 1, Key: "A"},
		{Tick: 1, Kind: KindSent, Where: "q", Consumer: "c", Msg: 2, Key: "A"},
		{Tick: 1, Kind: KindSent, Where: "q", Consumer: "c", Msg: 3, Key: "A"},
		{Tick: 2, Kind: KindReceived, Where: "q", Consumer: "c", Msg: 3},
		{Tick: 2, Kind: KindProcessed, Where: "q", Consumer: "c", Msg: 3},
		{Tick: 3, Kind: KindReceived, Where: "q", Consumer: "c", Msg: 2},
		{Tick: 3, Kind: KindProcessed, Where: "q", Consumer: "c", Msg: 2},
		// m3 turns out to be a copy of m1: its order is m1's now, and
		// m2 after it is no inversion any more.
		{Tick: 4, Kind: KindDeduplicated, Where: "q", Msg: 3, Origin: 1},
		{Tick: 5, Kind: KindAcked, Where: "q", Consumer: "c", Msg: 2},
		{Tick: 6, Kind: KindRedriven, Where: "q", Consumer: "c", Msg: 4, Origin: 2, Key: "A"},
		{Tick: 7, Kind: KindReceived, Where: "q", Consumer: "c", Msg: 4},
		{Tick: 7, Kind: KindProcessed, Where: "q", Consumer: "c", Msg: 4},
		{Tick: 8, Kind: KindSent, Where: "q", Consumer: "c", Msg: 5, Key: "A"},
		{Tick: 8, Kind: KindSent, Where: "q", Consumer: "c", Msg: 6, Key: "A"},
		{Tick: 9, Kind: KindReceived, Where: "q", Consumer: "c", Msg: 6},
		{Tick: 9, Kind: KindProcessed, Where: "q", Consumer: "c", Msg: 6},
		{Tick: 9, Kind: KindReceived, Where: "q", Consumer: "c", Msg: 5},
		{Tick: 9, Kind: KindProcessed, Where: "q", Consumer: "c", Msg: 5},
	}
	checks := []func(string) Checker{
		func(string) Checker { return NoLoss() }, AtLeastOnce, AtMostOnce, ExactlyOnce, OrderedPerKey,
		func(name string) Checker { return MaxDuplicates(name, 0) },
	}
	inversions := 0
	for i := range evs {
		l.Emit(&evs[i])
		for _, name := range []string{"c", "", "nobody"} {
			for _, mk := range checks {
				c := mk(name)
				got, ok := l.Tally(c.Name(), name, 0)
				want := walkTally(l, c, name, 0)
				if !ok || got != want {
					t.Fatalf("after event %d (%s m%d): %s(%q): kept %+v\nwalk %+v", i, evs[i].Kind, evs[i].Msg, c.Name(), name, got, want)
				}
				vs := c.Violations(l)
				for _, k := range []int{1, 2, 10} {
					if first := l.FirstViolations(c, name, 0, k); !reflect.DeepEqual(first, vs[:min(k, len(vs))]) && len(first)+len(vs) > 0 {
						t.Fatalf("after event %d: %s(%q): first %d %+v\nwalk %+v", i, c.Name(), name, k, first, vs[:min(k, len(vs))])
					}
				}
				if c.Name() == "ordered-per-key" && name == "c" {
					inversions += got.Fixed
				}
			}
		}
	}
	if inversions == 0 {
		t.Fatal("no inversion was ever counted: the test judges nothing")
	}
	if _, ok := l.Tally("exactly_once", "c", 0); ok {
		t.Error("Tally knows a check spelled as in scenario files; it takes checker names")
	}
}

// TestOrderTallyAcrossRuns applies copies mostly in order, as runs of
// IDs each one after the previous that the ledger stores as runs growing
// in place, with some held back behind such a run, and holds the kept
// ordered-per-key tally to the walk after each application: the kept
// fold reads a run while it still grows, and across chunks.
func TestOrderTallyAcrossRuns(t *testing.T) {
	l := NewLedger()
	const n = 3000
	for i := 1; i <= n; i++ {
		l.Emit(&Event{Tick: 1, Kind: KindSent, Where: "q", Consumer: "c", Msg: ID(i), Key: string(rune('A' + i%3))})
	}
	// Every 97th copy is held back behind the next ten, which make a run:
	// the copies of its key in the run overtake it.
	order := make([]ID, 0, n)
	var held ID
	for i := 1; i <= n; i++ {
		switch {
		case i%97 == 0:
			held = ID(i)
			continue
		case held != 0 && ID(i) == held+10:
			order = append(order, ID(i), held)
			held = 0
			continue
		}
		order = append(order, ID(i))
	}
	for i, id := range order {
		l.Emit(&Event{Tick: Tick(2 + i), Kind: KindProcessed, Where: "q", Consumer: "c", Msg: id})
		if i < 600 || i%61 == 0 || i == n-1 {
			got, ok := l.Tally("ordered-per-key", "c", 0)
			if want := walkTally(l, OrderedPerKey("c"), "c", 0); !ok || got != want {
				t.Fatalf("after applying m%d (%d of %d): kept %+v\nwalk %+v", id, i+1, n, got, want)
			}
		}
	}
	if got, _ := l.Tally("ordered-per-key", "c", 0); got.Fixed == 0 {
		t.Fatal("no inversion was counted: the test judges nothing")
	}
	if len(l.consumers[0].order.chunks) < 2 {
		t.Fatal("the first applications fit one chunk: the test crosses none")
	}
}
