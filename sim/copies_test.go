package sim

import (
	"reflect"
	"strings"
	"testing"
)

// TestQueuedDuplicateKeepsTheMessagePending: a broker duplicate still in
// the queue after the first copy was acked is a copy at-least-once
// delivery will hand out again, so at_most_once and exactly_once cannot
// hold yet; once both copies are settled they do.
//
// SQS (developer guide, "Amazon SQS at-least-once delivery"): on rare
// occasions a copy of a message is delivered again, so consumers must be
// idempotent; a copy is the unit of delivery, and deleting one copy does
// not delete the other.
func TestQueuedDuplicateKeepsTheMessagePending(t *testing.T) {
	l := feed(
		Event{Tick: 1, Kind: KindSent, Where: "queue:pay", Consumer: "pay", Msg: 1},
		Event{Tick: 1, Kind: KindReceived, Where: "queue:pay", Consumer: "pay", Actor: "w", Msg: 1, Attempt: 1},
		Event{Tick: 1, Kind: KindDuplicated, Where: "queue:pay", Consumer: "pay", Msg: 1},
		Event{Tick: 1, Kind: KindProcessed, Where: "queue:pay", Consumer: "pay", Actor: "w", Msg: 1},
		Event{Tick: 1, Kind: KindAcked, Where: "queue:pay", Consumer: "pay", Actor: "w", Msg: 1},
	)
	for _, c := range []Checker{AtMostOnce("pay"), ExactlyOnce("pay")} {
		v := c.Violations(l)
		if len(v) != 1 || !strings.Contains(v[0].Detail, "a copy is still held") {
			t.Errorf("%s with the duplicate queued: %v", c.Name(), v)
		}
	}
	if r, _ := l.Record(1); r.State != StatePending {
		t.Fatalf("state %v", r.State)
	}
	// The duplicate delivered and recognised: both copies settled.
	for _, e := range []Event{
		{Tick: 2, Kind: KindReceived, Where: "queue:pay", Consumer: "pay", Actor: "w", Msg: 1, Attempt: 1},
		{Tick: 2, Kind: KindSkipped, Where: "queue:pay", Consumer: "pay", Actor: "w", Msg: 1},
		{Tick: 2, Kind: KindAcked, Where: "queue:pay", Consumer: "pay", Actor: "w", Msg: 1},
	} {
		l.Emit(&e)
	}
	if err := Check(l, AtMostOnce("pay"), ExactlyOnce("pay"), NoLoss()); err != nil {
		t.Fatal(err)
	}
	if r, _ := l.Record(1); r.State != StateDone {
		t.Fatalf("state %v", r.State)
	}
}

// TestLossBeforeConsumersNamesTheOrigin: a copy lost before any consumer
// is reported under its origin, as every other violation is, and names
// the copy.
func TestLossBeforeConsumersNamesTheOrigin(t *testing.T) {
	l := feed(
		Event{Tick: 1, Kind: KindPublished, Where: "topic:t", Msg: 1},
		Event{Tick: 1, Kind: KindLost, Where: "topic:t", Msg: 2, Origin: 1, Cause: CauseForwardFailed},
	)
	v := NoLoss().Violations(l)
	if len(v) != 1 || v[0].Msg != 1 || v[0].Detail != "lost before any consumer (forward failed): its copy m2" {
		t.Fatalf("%v", v)
	}
}

// TestIdempotentHandlersShareATable: two handlers given one DedupTable
// skip what either applied; with tables of their own they do not.
func TestIdempotentHandlersShareATable(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	m := env.NewMessage("k", nil, Headers{})
	apply := func(h Handler) int {
		d := NewDelivery(env, m, "log:l", "g", "w", 1)
		if err := h.Handle(d); err != nil {
			t.Fatal(err)
		}
		return d.Effects()
	}
	var shared DedupTable
	a, b := KeyByMessageID.WrapIn(Effect(""), &shared), KeyByMessageID.WrapIn(Effect(""), &shared)
	if apply(a) != 1 || apply(b) != 0 || shared.Len() != 1 {
		t.Fatalf("shared: the second member applied again (%d keys)", shared.Len())
	}
	a, b = KeyByMessageID.Wrap(Effect("")), KeyByMessageID.Wrap(Effect(""))
	if apply(a) != 1 || apply(b) != 1 {
		t.Fatal("own tables: the second member should not know what the first applied")
	}
}

// TestStatsWithoutTheCacheEqualsStatsWithIt: Stats folds one consumer's
// outcomes at a time when no current cache holds them all, and gives
// what it gives from the cache.
func TestStatsWithoutTheCacheEqualsStatsWithIt(t *testing.T) {
	l := NewLedger()
	for i := ID(1); i <= 50; i++ {
		for _, e := range []Event{
			{Tick: 1, Kind: KindPublished, Where: "topic:t", Msg: i},
			{Tick: 1, Kind: KindDelivered, Where: "topic:t", Consumer: "a", Msg: i},
			{Tick: 1, Kind: KindProcessed, Where: "topic:t", Consumer: "a", Msg: i},
			{Tick: 1, Kind: KindMissed, Where: "topic:t", Consumer: "b", Msg: i},
			{Tick: 1, Kind: KindDelivered, Where: "topic:t", Consumer: "c", Msg: i},
			{Tick: 1, Kind: KindDelivered, Where: "topic:t", Consumer: "c", Msg: i},
			{Tick: 1, Kind: KindLost, Where: "topic:t", Consumer: "c", Msg: i, Cause: CauseDisconnect},
		} {
			l.Emit(&e)
		}
	}
	cold := l.Stats()
	_ = l.Outcomes("")
	warm := l.Stats()
	if !reflect.DeepEqual(cold, warm) || cold.Delivered != 150 || cold.Missed != 50 || cold.Lost != 50 || cold.Duplicates != 50 {
		t.Fatalf("cold %+v\nwarm %+v", cold, warm)
	}
}
