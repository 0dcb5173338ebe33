package eventlog

import (
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// A member makes its delivery only when it first hands a record to its
// handler, and then hands every record in that one delivery: a plain
// member whose records are all booked never makes one, and a member with
// its own handler prepares each record in place of the last.
func TestMemberMakesOneDeliveryWhenNeeded(t *testing.T) {
	w, g := sixPartitionGroup(t, GroupConfig{Name: "g"})
	plain, err := NewMember(w, g, MemberConfig{Name: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []*sim.Delivery
	own, err := NewMember(w, g, MemberConfig{Name: "own", Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
		seen = append(seen, d)
		d.Apply("")
		return nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := g.t.Produce(w.Env().NewMessage(string(rune('a'+i%7)), []byte("x"), sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Run(10); err != nil {
		t.Fatal(err)
	}
	if g.Lag() != 0 {
		t.Fatalf("lag %d after the run, want 0", g.Lag())
	}
	if plain.d != nil {
		t.Error("a plain member whose records were all booked made a delivery")
	}
	if len(seen) == 0 {
		t.Fatal("the member with its own handler handled nothing")
	}
	for i, d := range seen {
		if d != own.d {
			t.Fatalf("record %d was handed in another delivery than the member keeps", i)
		}
	}
}
