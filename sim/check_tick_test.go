package sim

import (
	"slices"
	"testing"
)

// An effect applied twice is a violation at the tick of the second
// effect, which is when at-most-once and exactly-once broke: a reader who
// goes to the tick of the first effect sees nothing wrong yet. The tick is
// the same through the checker's walk, the kept tally and FirstViolations,
// for one copy applied twice and for an origin applied once on each of two
// copies (a redrive).
func TestDuplicateEffectViolationIsAtTheSecondEffect(t *testing.T) {
	twice := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "q", Msg: 1, Key: "k"},
		Event{Tick: 2, Kind: KindReceived, Where: "queue:q", Consumer: "q", Msg: 1},
		Event{Tick: 3, Kind: KindProcessed, Where: "queue:q", Consumer: "q", Msg: 1},
		Event{Tick: 7, Kind: KindRedelivered, Where: "queue:q", Consumer: "q", Msg: 1},
		Event{Tick: 8, Kind: KindProcessed, Where: "queue:q", Consumer: "q", Msg: 1},
		Event{Tick: 8, Kind: KindAcked, Where: "queue:q", Consumer: "q", Msg: 1},
		Event{Tick: 9, Kind: KindRedelivered, Where: "queue:q", Consumer: "q", Msg: 1},
		Event{Tick: 12, Kind: KindProcessed, Where: "queue:q", Consumer: "q", Msg: 1},
	)
	redriven := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "q", Msg: 1, Key: "k"},
		Event{Tick: 2, Kind: KindReceived, Where: "queue:q", Consumer: "q", Msg: 1},
		Event{Tick: 2, Kind: KindProcessed, Where: "queue:q", Consumer: "q", Msg: 1},
		Event{Tick: 4, Kind: KindDeadLettered, Where: "queue:q", Msg: 1},
		Event{Tick: 6, Kind: KindRedriven, Where: "queue:q", Consumer: "q", Msg: 2, Origin: 1, Key: "k"},
		Event{Tick: 9, Kind: KindReceived, Where: "queue:q", Consumer: "q", Msg: 2},
		Event{Tick: 10, Kind: KindProcessed, Where: "queue:q", Consumer: "q", Msg: 2},
		Event{Tick: 10, Kind: KindAcked, Where: "queue:q", Consumer: "q", Msg: 2},
	)
	for _, c := range []struct {
		name string
		l    *Ledger
		want Tick
	}{{"one copy", twice, 8}, {"a redriven copy", redriven, 10}} {
		for _, ch := range []Checker{AtMostOnce("q"), ExactlyOnce("q"), AtMostOnce(""), ExactlyOnce("")} {
			vs := ch.Violations(c.l)
			if len(vs) != 1 || vs[0].Tick != c.want {
				t.Errorf("%s: %s: got %v, want one violation at t=%d", c.name, ch.Name(), vs, c.want)
			}
			first := c.l.FirstViolations(ch, "q", 0, 3)
			if !slices.Equal(first, vs) {
				t.Errorf("%s: %s: FirstViolations %v, want %v", c.name, ch.Name(), first, vs)
			}
			if tl, ok := c.l.Tally(ch.Name(), "q", 0); !ok || tl.Fixed != 1 || tl.First != vs[0] {
				t.Errorf("%s: %s: Tally first %v, want %v", c.name, ch.Name(), tl.First, vs[0])
			}
		}
	}
}
