package queue

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestReceiveIntoAUsedBufferOverwritesEverything checks that a receive
// appending to a reused buffer, whose slots still hold earlier
// deliveries, hands out exactly what a receive into a fresh buffer does:
// take overwrites the slots it reuses without zeroing them first, so a
// field it forgot would show an earlier delivery's value here.
func TestReceiveIntoAUsedBufferOverwritesEverything(t *testing.T) {
	receive := func(buf []Delivery) []Delivery {
		w, _ := sim.New(sim.Config{Seed: 3})
		q, err := New(w, Config{Name: "orders"})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range []sim.Headers{{}, {Type: "t"}, {}} {
			m := w.Env().NewMessage("", nil, h)
			if i == 0 {
				m.Key = "k"
			}
			if err := q.Send(m, 0); err != nil {
				t.Fatal(err)
			}
		}
		got, err := q.AppendReceive(buf, "w", 3)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	used := make([]Delivery, 4)
	for i := range used {
		used[i] = Delivery{
			Message: sim.Message{ID: 99, Origin: 98, Created: 97, Key: "old", Body: []byte("old"),
				Headers: sim.Headers{Type: "old", Source: "old", CorrelationID: "old", CausationID: 96, SchemaVersion: 2,
					Extra: []sim.Header{{Name: "old", Value: "old"}}}},
			Receipt:      Receipt{q: &Queue{}, id: 95, slot: 94, gen: 93},
			ReceiveCount: 92,
		}
	}
	want := receive(nil)
	got := receive(used[:0])
	if len(got) != 3 || !reflect.DeepEqual(got[0].Message, want[0].Message) {
		t.Fatalf("got %d deliveries, want 3 equal to a fresh buffer's", len(got))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Receipt.q == nil || g.Receipt.id != w.Receipt.id || g.Receipt.slot != w.Receipt.slot || g.Receipt.gen != w.Receipt.gen {
			t.Errorf("delivery %d: receipt %v, want %v", i, g.Receipt, w.Receipt)
		}
		g.Receipt, w.Receipt = Receipt{}, Receipt{} // from two queues
		if !reflect.DeepEqual(g, w) {
			t.Errorf("delivery %d from a used buffer\n%+v\nwant\n%+v", i, g, w)
		}
	}
}
