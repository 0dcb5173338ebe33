package sim

import (
	"strconv"
	"testing"
)

// ref hands every consumer name the handle of its first use, however the
// names follow one another: the same name again, the next consumer in
// turn (a fan-out), a jump back, a new name, and past the 32 consumers
// from which the map is used.
func TestRefIsFirstUseOrderWhateverTheLookupOrder(t *testing.T) {
	l := NewLedger()
	want := map[string]ConsumerRef{}
	look := func(name string) {
		t.Helper()
		c := l.ref(name)
		if w, ok := want[name]; ok && c != w {
			t.Fatalf("ref(%q) = %d, first use gave %d", name, c, w)
		}
		if _, ok := want[name]; !ok {
			if int(c) != len(want) {
				t.Fatalf("new consumer %q got handle %d, want %d", name, c, len(want))
			}
			want[name] = c
		}
		if l.consumers[c].name != name {
			t.Fatalf("ref(%q) = %d, the book of %q", name, c, l.consumers[c].name)
		}
	}
	for round := range 3 {
		for i := range 40 {
			look("s" + strconv.Itoa(i))
			look("s" + strconv.Itoa(i))
			look("s" + strconv.Itoa((i*7+round)%40))
		}
		for i := 39; i >= 0; i-- {
			look("s" + strconv.Itoa(i))
		}
	}
	if l.ref("") != NoConsumer || len(want) != 40 || len(l.consumers) != 40 {
		t.Fatalf("%d names, %d books", len(want), len(l.consumers))
	}
}
