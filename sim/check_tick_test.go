package sim

import (
	"slices"
	"strings"
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

// A message still pending in a queue that no consumer ever took anything
// from is named by the queue it waits in, not as a consumer's, and is
// pending as of the tick the run reached (Reach), not of the last send. A
// queue whose worker did receive keeps naming its logical consumer.
func TestPendingInAQueueNoConsumerReadsNamesTheQueue(t *testing.T) {
	l := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:orders", Consumer: "orders", Msg: 1, Key: "k"},
		Event{Tick: 2, Kind: KindSent, Where: "queue:orders", Consumer: "orders", Msg: 2, Key: "k"},
	)
	l.Reach(30)
	want := "no-loss: m1 key=k t=1: still pending in queue:orders at t=30, and no consumer took anything from it; the run ended before it was settled"
	for _, ch := range []Checker{NoLoss(), AtLeastOnce("orders")} {
		vs := ch.Violations(l)
		if len(vs) != 2 || vs[0].Consumer != "" || strings.Replace(vs[0].String(), ch.Name(), "no-loss", 1) != want {
			t.Errorf("%s: got %v, want first %q", ch.Name(), vs, want)
		}
		if first := l.FirstViolations(ch, "", 0, 1); len(first) != 1 || first[0] != vs[0] {
			t.Errorf("%s: FirstViolations %v, want %v", ch.Name(), first, vs[0])
		}
	}
	read := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:orders", Consumer: "orders", Msg: 1, Key: "k"},
		Event{Tick: 2, Kind: KindReceived, Where: "queue:orders", Actor: "w", Consumer: "orders", Msg: 1},
	)
	read.Reach(30)
	vs := NoLoss().Violations(read)
	if len(vs) != 1 || vs[0].String() != "no-loss: m1 key=k consumer=orders t=2: still pending at t=30 (queue:orders) after 1 deliveries without an effect; the run ended before it was settled" {
		t.Errorf("a queue a worker read: got %v", vs)
	}
}
