package lab

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestSubjectFoldSeek: a group seek is one replay however many partitions
// it moves (one event each, same tick); a member's seek after a failure is
// not a replay.
func TestSubjectFoldSeek(t *testing.T) {
	f := newSubjectFold(nil, []string{"g"}, map[string]string{"g": "log:l"})
	emit := func(e sim.Event) { f.Emit(&e) }
	for i, k := range []string{"a", "b", "a"} {
		emit(sim.Event{Tick: 1, Kind: sim.KindProduced, Where: "log:l", Msg: sim.ID(i + 1), Key: k})
		emit(sim.Event{Tick: 1, Kind: sim.KindProcessed, Where: "log:l", Consumer: "g", Actor: "g1", Msg: sim.ID(i + 1), Key: k, HasPos: true})
	}
	emit(sim.Event{Tick: 2, Kind: sim.KindSeeked, Where: "log:l", Consumer: "g", Actor: "g1", HasPos: true})
	if v := f.projs[0].view(); v.Seeked {
		t.Fatalf("a member's seek counted as a replay: %+v", v)
	}
	emit(sim.Event{Tick: 3, Kind: sim.KindSeeked, Where: "log:l", Consumer: "g", Actor: "g", HasPos: true, Partition: 0})
	emit(sim.Event{Tick: 3, Kind: sim.KindSeeked, Where: "log:l", Consumer: "g", Actor: "g", HasPos: true, Partition: 1})
	emit(sim.Event{Tick: 3, Kind: sim.KindProcessed, Where: "log:l", Consumer: "g", Actor: "g1", Msg: 1, Key: "a", HasPos: true})
	v := f.projs[0].view()
	want := []ProjectionKey{{Key: "a", Records: 2, Before: 2, Applied: 1, IDs: []sim.ID{1}}, {Key: "b", Records: 1, Before: 1}}
	if !v.Seeked || v.SeekAt != 3 || v.Before != 3 || !reflect.DeepEqual(v.Keys, want) {
		t.Errorf("after the seek: %+v", v)
	}
}

func TestBitset(t *testing.T) {
	var b bitset
	for _, id := range []sim.ID{1, 63, 64, 1_000_000} {
		if b.has(id) {
			t.Fatalf("%v in the empty set", id)
		}
		b.set(id)
		if !b.has(id) {
			t.Fatalf("%v not in the set after set", id)
		}
	}
	if b.has(2) || b.has(65) || b.has(999_999) || b.has(5_000_000) {
		t.Error("an ID never set is in the set")
	}
}
