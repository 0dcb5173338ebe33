package sim

import "testing"

// A loss is fixed, counted in Tally.Fixed of no-loss and at-least-once
// and told by LostForGood, only when no later event can undo it: its
// cause is one the models never take back, and its copy left every
// broker without a way back (never re-sent, not held, not parked, not
// carried on by another copy). Every other loss, and a message still
// pending, is not.
func TestLostForGoodOnlyWhenNothingCanUndoIt(t *testing.T) {
	published := func(cause Cause, extra ...Event) []Event {
		evs := []Event{
			{Tick: 1, Kind: KindPublished, Where: "topic:t", Msg: 1, Key: "k"},
			{Tick: 1, Kind: KindDelivered, Where: "topic:t", Consumer: "s", Msg: 1},
		}
		evs = append(evs, extra...)
		return append(evs, Event{Tick: 2, Kind: KindLost, Where: "topic:t", Consumer: "s", Msg: 1, Cause: cause})
	}
	cases := []struct {
		name  string
		evs   []Event
		final bool
	}{
		{"an ephemeral delivery failed", published(CauseHandlerFailed), true},
		{"a disconnect threw the buffered copy away", published(CauseDisconnect), true},
		{"acked before processing", []Event{
			{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "q", Msg: 1, Key: "k"},
			{Tick: 1, Kind: KindReceived, Where: "queue:q", Consumer: "q", Msg: 1},
			{Tick: 1, Kind: KindAcked, Where: "queue:q", Consumer: "q", Msg: 1},
			{Tick: 2, Kind: KindLost, Where: "queue:q", Consumer: "q", Msg: 1, Cause: CauseAckBeforeProcess},
		}, true},
		{"deleted by retention", []Event{
			{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "q", Msg: 1, Key: "k"},
			{Tick: 2, Kind: KindExpired, Where: "queue:q", Msg: 1},
		}, true},
		{"a seek moved past a record the log still holds", []Event{
			{Tick: 0, Kind: KindSubscribed, Where: "log:l", Consumer: "g", Detail: "earliest"},
			{Tick: 1, Kind: KindProduced, Where: "log:l", Msg: 1, Key: "k"},
			{Tick: 2, Kind: KindLost, Where: "log:l", Consumer: "g", Msg: 1, Cause: CauseSeek},
		}, false},
		{"a final cause, but the copy came from an outbox that may publish it again", []Event{
			{Tick: 1, Kind: KindStored, Where: "outbox:o", Msg: 1, Key: "k"},
			{Tick: 1, Kind: KindPublished, Where: "topic:t", Msg: 1, Key: "k"},
			{Tick: 1, Kind: KindDelivered, Where: "topic:t", Consumer: "s", Msg: 1},
			{Tick: 2, Kind: KindLost, Where: "topic:t", Consumer: "s", Msg: 1, Cause: CauseHandlerFailed},
		}, false},
		{"acked before processing, but a broker duplicate is still held", []Event{
			{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "q", Msg: 1, Key: "k"},
			{Tick: 1, Kind: KindDuplicated, Where: "queue:q", Msg: 1},
			{Tick: 1, Kind: KindReceived, Where: "queue:q", Consumer: "q", Msg: 1},
			{Tick: 1, Kind: KindAcked, Where: "queue:q", Consumer: "q", Msg: 1},
			{Tick: 2, Kind: KindLost, Where: "queue:q", Consumer: "q", Msg: 1, Cause: CauseAckBeforeProcess},
		}, false},
		{"still pending", []Event{
			{Tick: 1, Kind: KindSent, Where: "queue:q", Consumer: "q", Msg: 1, Key: "k"},
			{Tick: 1, Kind: KindReceived, Where: "queue:q", Consumer: "q", Msg: 1},
		}, false},
	}
	for _, c := range cases {
		l := feed(c.evs...)
		consumer := l.Consumers()[0]
		if got := l.LostForGood(1, consumer); got != c.final {
			t.Errorf("%s: LostForGood %v, want %v", c.name, got, c.final)
		}
		for _, check := range []string{"no-loss", "at-least-once"} {
			tl, ok := l.Tally(check, "", 0)
			want := 0
			if c.final {
				want = 1
			}
			if !ok || tl.Count != 1 || tl.Fixed != want {
				t.Errorf("%s: %s: Tally %+v, want 1 violation, %d fixed", c.name, check, tl, want)
			}
			if c.final && (tl.First.Msg != 1 || tl.First.Tick != 2) {
				t.Errorf("%s: %s: first fixed violation %v, want m1 at t=2", c.name, check, tl.First)
			}
		}
	}
}
