package stored

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestStoreKeepsTheMessage checks that a stored message gives back the
// message it was made from, headers included (a nil Extra stays nil, an
// empty one empty), and that consecutive equal headers share one copy
// while different ones do not.
func TestStoreKeepsTheMessage(t *testing.T) {
	var c Cache
	msgs := []sim.Message{
		{ID: 1, Key: "k", Body: []byte("b"), Created: 3},
		{ID: 2, Key: "k", Body: nil, Headers: sim.Headers{Type: "t", Source: "s", SchemaVersion: 2}, Origin: 1},
		{ID: 3, Headers: sim.Headers{Type: "t", Source: "s", SchemaVersion: 2}},
		{ID: 4, Headers: sim.Headers{Type: "t", Source: "s", SchemaVersion: 2, Extra: []sim.Header{}}},
		{ID: 5, Headers: sim.Headers{Type: "t", CorrelationID: "c", CausationID: 9, Extra: []sim.Header{{Name: "a", Value: "b"}}}},
		{ID: 6, Headers: sim.Headers{Type: "t", CorrelationID: "c", CausationID: 9, Extra: []sim.Header{{Name: "a", Value: "c"}}}},
		{ID: 7, Headers: sim.Headers{Type: "t", CorrelationID: "d", CausationID: 9, Extra: []sim.Header{{Name: "a", Value: "c"}}}},
	}
	var st []Message
	for i := range msgs {
		st = append(st, c.Store(&msgs[i]))
	}
	for i := range msgs {
		if got := st[i].Message(); !reflect.DeepEqual(got, msgs[i]) {
			t.Errorf("message %d came back as %+v, want %+v", i, got, msgs[i])
		}
	}
	if st[0].h != nil || !reflect.DeepEqual(*st[0].Headers(), sim.Headers{}) {
		t.Error("zero headers took a pointer or came back non-zero")
	}
	if st[1].h != st[2].h {
		t.Error("equal consecutive headers are not shared")
	}
	if st[2].h == st[3].h || st[4].h == st[5].h || st[5].h == st[6].h {
		t.Error("different headers are shared")
	}
}

// TestStoreAllocatesOnlyForNewHeaders checks the cost Store promises: no
// allocation for zero headers or a repeat of the previous ones.
func TestStoreAllocatesOnlyForNewHeaders(t *testing.T) {
	var c Cache
	m := sim.Message{ID: 1, Headers: sim.Headers{Type: "t", Source: "s"}}
	c.Store(&m)
	zero := sim.Message{ID: 2}
	if n := testing.AllocsPerRun(100, func() { c.Store(&m); c.Store(&zero); c.Store(&m) }); n != 0 {
		t.Fatalf("%v allocations per repeat", n)
	}
}

// TestSlimKeepsTheRest checks that a Slim and the Origin and Created kept
// apart give back the stored message, headers shared, not copied, and the
// body from the arena.
func TestSlimKeepsTheRest(t *testing.T) {
	var c Cache
	var b Bodies
	for _, m := range []sim.Message{
		{ID: 1, Key: "k", Body: []byte("b"), Created: 3},
		{ID: 2, Headers: sim.Headers{Type: "t", Extra: []sim.Header{}}, Origin: 1, Created: 9},
	} {
		st := c.Store(&m)
		s := st.Slim(&b)
		back := s.Message(&b, st.Origin, st.Created)
		if !reflect.DeepEqual(back, st) || s.Headers() != st.Headers() {
			t.Errorf("message %d came back as %+v, want %+v", m.ID, back, st)
		}
		if got := back.Message(); !reflect.DeepEqual(got, m) {
			t.Errorf("message %d came back as %+v, want %+v", m.ID, got, m)
		}
	}
}

// TestSlimIntoIsSlim checks that SlimInto writes over a used Slim exactly
// what Slim returns, and that Drop leaves the zero Slim.
func TestSlimIntoIsSlim(t *testing.T) {
	var c Cache
	var b, b2 Bodies
	dst := Slim{ID: 9, Key: "old", body: 1<<32 | 5, h: &sim.Headers{Type: "old"}}
	for _, m := range []sim.Message{
		{ID: 1, Key: "k", Body: []byte("b"), Created: 3},
		{ID: 2, Headers: sim.Headers{Type: "t", Extra: []sim.Header{}}, Origin: 1, Created: 9},
		{ID: 3},
	} {
		st := c.Store(&m)
		want := st.Slim(&b)
		st.SlimInto(&dst, &b2)
		if dst != want {
			t.Errorf("message %d: SlimInto wrote %+v, Slim returns %+v", m.ID, dst, want)
		}
		dst.Drop(&b2)
		if dst != (Slim{}) {
			t.Errorf("message %d: Drop left %+v", m.ID, dst)
		}
		dst = Slim{ID: 9, Key: "old", h: &sim.Headers{}}
	}
}
