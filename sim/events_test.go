package sim

import "testing"

// TestDeliveryEvent checks that a delivery's event carries every field of
// the delivery, the log position included, and the world's tick.
func TestDeliveryEvent(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(3); err != nil {
		t.Fatal(err)
	}
	m := Message{ID: 7, Key: "k1"}
	d := NewDelivery(w.Env(), m, "log:orders", "billing", "billing-1", 2)
	d.Corr, d.HasPos, d.Partition, d.Offset = "c9", true, 1, 42
	got := d.Event(KindFailed)
	want := Event{Tick: 3, Kind: KindFailed, Where: "log:orders", Actor: "billing-1", Consumer: "billing", Msg: 7, Key: "k1",
		Corr: "c9", Attempt: 2, HasPos: true, Partition: 1, Offset: 42}
	if got != want {
		t.Errorf("Event:\n got %+v\nwant %+v", got, want)
	}
	var bare Delivery
	bare.Reset(nil, m, "queue:q", "q", "", 1)
	if e := bare.Event(KindProcessed); e.Tick != 0 || e.Actor != "q" || e.Msg != 7 || e.HasPos {
		t.Errorf("delivery without a world: %+v", e)
	}
}

// TestLost checks the fields Lost sets and the ones it leaves to the
// caller.
func TestLost(t *testing.T) {
	m := Message{ID: 3, Key: "k", Origin: 1, Headers: Headers{CorrelationID: "c1", Type: "order.placed"}}
	got := Lost("queue:orders", "worker#2", "orders", &m, CauseAckBeforeProcess)
	want := Event{Kind: KindLost, Where: "queue:orders", Actor: "worker#2", Consumer: "orders", Msg: 3, Key: "k", Corr: "c1",
		Cause: CauseAckBeforeProcess}
	if got != want {
		t.Errorf("Lost:\n got %+v\nwant %+v", got, want)
	}
}
