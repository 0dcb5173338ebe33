package eventlog

import (
	"math/rand/v2"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// A partition's sorted list of remembered records answers as the map it
// replaced did, under random remembering in and out of offset order,
// pruning by commits and forgetting by retention.
func TestAgainListMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for round := range 200 {
		var gp groupPart
		want := map[int64]seen{}
		floor := int64(0)
		for step := range 300 {
			off := floor + int64(r.IntN(40))
			switch r.IntN(5) {
			case 0, 1: // a delivery of a record read before
				x := gp.remember(off)
				if x.n == 0 {
					x.n = 1
				}
				x.n++
				w := want[off]
				if w.n == 0 {
					w.n = 1
				}
				w.n++
				want[off] = w
			case 2: // an effect
				gp.remember(off).applied = true
				w := want[off]
				w.applied = true
				want[off] = w
			case 3: // a commit passing [from, to)
				from, to := off, off+int64(r.IntN(10))
				gp.pruneRange(from, to)
				for k, w := range want {
					if k >= from && k < to && w.n == 0 {
						delete(want, k)
					}
				}
			case 4: // retention deletes the first records
				floor += int64(r.IntN(3))
				gp.forgetTo(floor - 1)
				for k := range want {
					if k < floor {
						delete(want, k)
					}
				}
			}
			if len(gp.again) != len(want) {
				t.Fatalf("round %d, step %d: %d remembered, want %d", round, step, len(gp.again), len(want))
			}
			for i, x := range gp.again {
				if i > 0 && gp.again[i-1].off >= x.off {
					t.Fatalf("round %d, step %d: not in offset order at %d", round, step, i)
				}
				if w, ok := want[x.off]; !ok || w != x.seen {
					t.Fatalf("round %d, step %d: offset %d remembered as %+v, want %+v (%v)", round, step, x.off, x.seen, w, ok)
				}
			}
		}
	}
}

// The partitions of a group made with its topic start their lists of
// remembered records in one allocation: one that outgrows its room
// leaves its neighbours' records as they were.
func TestAgainListsKeepTheirOwn(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(w, Config{Name: "orders", Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(w, l, GroupConfig{Name: "g"})
	if err != nil {
		t.Fatal(err)
	}
	n := [3]int64{5 * againFirst, againFirst, 2}
	for p := range n {
		for off := int64(0); off < n[p]; off += 2 {
			g.markApplied(p, off)
		}
	}
	for p := range n {
		for off := int64(0); off < 6*againFirst; off++ {
			if got, want := g.applied(p, off), off < n[p] && off%2 == 0; got != want {
				t.Fatalf("partition %d offset %d: applied %v, want %v", p, off, got, want)
			}
		}
	}
}
