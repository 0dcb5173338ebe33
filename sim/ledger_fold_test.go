package sim

import (
	"reflect"
	"testing"
)

// TestLedgerFoldedCalls checks that SentTo and AckedDone record exactly
// what the calls they fold record.
func TestLedgerFoldedCalls(t *testing.T) {
	one, two := NewLedger(), NewLedger()
	c1, c2 := one.Consumer("q"), two.Consumer("q")
	for i := 1; i <= 3000; i++ {
		m := Message{ID: ID(i), Key: "k", Headers: Headers{Type: "t"}, Created: Tick(i)}
		if i%3 == 0 {
			one.Register(&m) // some are registered before they are sent
			two.Register(&m)
		}
		one.Register(&m)
		one.Sent(m.ID, Tick(i+1))
		one.Expect(m.ID, c1)
		two.SentTo(&m, c2, Tick(i+1))
		if i%2 == 0 {
			one.Delivered(m.ID, c1, Tick(i+2))
			two.Delivered(m.ID, c2, Tick(i+2))
			one.Acked(m.ID, c1)
			one.SetState(m.ID, StateDone, Tick(i+3))
			two.AckedDone(m.ID, c2, Tick(i+3))
		}
	}
	if !reflect.DeepEqual(one.Records(), two.Records()) {
		t.Fatal("records differ")
	}
	for i := 1; i <= 3000; i++ {
		if a, b := one.Delivery(ID(i), c1), two.Delivery(ID(i), c2); a != b {
			t.Fatalf("m%d: delivery %+v, want %+v", i, b, a)
		}
	}
	if !reflect.DeepEqual(one.Stats(), two.Stats()) {
		t.Fatal("stats differ")
	}
}
