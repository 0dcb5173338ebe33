package sim

import (
	"errors"
	"slices"
	"strconv"
	"testing"
)

// A World keeps its components in phase order, and in the order added
// within a phase, whether they fit in the room New makes or not.
func TestWorldOrderPastItsFirstRoom(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	phases := []Phase{PhaseConsumer, PhaseBroker, PhaseObserver, PhaseConsumer, PhaseProducer, PhaseBroker, PhaseRelay, PhaseConsumer, PhaseProducer}
	var want []string
	for p := PhaseBroker; p <= PhaseObserver; p++ {
		for i, q := range phases {
			if q == p {
				want = append(want, "c"+strconv.Itoa(i))
			}
		}
	}
	for i, p := range phases {
		if err := w.AddFunc("c"+strconv.Itoa(i), p, func(Tick) {}); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.Components(); !slices.Equal(got, want) {
		t.Errorf("components %v, want %v", got, want)
	}
}

// A World made with room for worldFirst components adds that many without
// growing its list.
func TestWorldFirstRoom(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := cap(w.members)
	for i := range worldFirst {
		if err := w.AddFunc("c"+strconv.Itoa(i), PhaseConsumer, func(Tick) {}); err != nil {
			t.Fatal(err)
		}
	}
	if c < worldFirst || cap(w.members) != c {
		t.Errorf("room %d, then %d after %d adds: want %d throughout", c, cap(w.members), worldFirst, worldFirst)
	}
}

// A name is refused once it is taken, whether the World finds it by
// scanning its members or in its index of names (past namesFrom), and
// after the index is built as before.
func TestWorldRefusesTakenNames(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * namesFrom {
		name := "c" + strconv.Itoa(i)
		if err := w.AddFunc(name, Phase(i%5), func(Tick) {}); err != nil {
			t.Fatalf("%d components: adding %s: %v", i, name, err)
		}
		for _, j := range []int{0, i / 2, i} {
			if err := w.AddFunc("c"+strconv.Itoa(j), PhaseConsumer, func(Tick) {}); !errors.Is(err, ErrDuplicateName) {
				t.Fatalf("%d components: adding c%d again: %v, want ErrDuplicateName", i+1, j, err)
			}
		}
	}
	if n := len(w.Components()); n != 3*namesFrom {
		t.Errorf("%d components, want %d", n, 3*namesFrom)
	}
}
