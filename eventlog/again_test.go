package eventlog

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// A partition's sorted list of remembered records, with its run of
// records applied after one delivery, answers as the map it replaced did,
// under random remembering in and out of offset order, effects on runs of
// consecutive records, pruning by commits and forgetting by retention.
func TestAgainListMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	runs := 0
	for round := range 200 {
		var gp groupPart
		want := map[int64]seen{}
		floor := int64(0)
		next := int64(0) // the next record of a batch handled in offset order
		for step := range 300 {
			off := floor + int64(r.IntN(40))
			op := r.IntN(9)
			if op >= 5 { // an effect on the next record of a batch
				if op == 5 {
					next = off
				}
				off, op = next, 2
				next++
			}
			switch op {
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
				gp.rememberApplied(off)
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
			if gp.runLo < gp.runHi {
				runs++
				if n := len(gp.again); n > 0 && gp.again[n-1].off >= gp.runLo {
					t.Fatalf("round %d, step %d: offset %d listed, not below the run [%d, %d)", round, step, gp.again[n-1].off, gp.runLo, gp.runHi)
				}
			}
			for o := floor - 1; o < floor+50; o++ {
				if got := gp.isApplied(o); got != want[o].applied {
					t.Fatalf("round %d, step %d: offset %d applied %v, want %v", round, step, o, got, want[o].applied)
				}
			}
			got := gp.remembered()
			if len(got) != len(want) {
				t.Fatalf("round %d, step %d: %d remembered, want %d", round, step, len(got), len(want))
			}
			for i, x := range got {
				if i > 0 && got[i-1].off >= x.off {
					t.Fatalf("round %d, step %d: not in offset order at %d", round, step, i)
				}
				if w, ok := want[x.off]; !ok || w != x.seen {
					t.Fatalf("round %d, step %d: offset %d remembered as %+v, want %+v (%v)", round, step, x.off, x.seen, w, ok)
				}
			}
		}
	}
	if runs < 1000 {
		t.Fatalf("a run was held after %d steps, want the run exercised", runs)
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

// remembered returns what the group remembers, in offset order: again
// followed by the run. O(remembered). The
// model never needs it whole, so it lives with the tests that compare it.
func (gp *groupPart) remembered() []againRec {
	out := append([]againRec{}, gp.again...)
	for off := gp.runLo; off < gp.runHi; off++ {
		out = append(out, againRec{off: off, seen: seen{applied: true}})
	}
	return out
}

// recall finds a listed offset, or where an offset not listed belongs, as
// a library binary search does: in lists of every length up to 40, for
// every offset from below the first to past the last.
func TestRecallMatchesBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for n := range 41 {
		for range 20 {
			var gp groupPart
			off := int64(r.IntN(3))
			for range n {
				gp.again = append(gp.again, againRec{off: off})
				off += 1 + int64(r.IntN(3))
			}
			for x := int64(-1); x <= off+1; x++ {
				i, ok := gp.recall(x)
				j, found := slices.BinarySearchFunc(gp.again, x, func(a againRec, x int64) int { return cmp.Compare(a.off, x) })
				if i != j || ok != found {
					t.Fatalf("list of %d: recall(%d) = %d, %v; want %d, %v", n, x, i, ok, j, found)
				}
			}
		}
	}
}

// attempt counts every delivery of a record to the group, from 1, as a
// group reading forward and moving back (a crash, a rebalance, a seek)
// delivers them, with effects applied in between: first deliveries past
// every record read and redeliveries alike.
func TestAttemptCountsDeliveries(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	for round := range 100 {
		g := &Group{}
		var gp groupPart
		count := map[int64]int{}
		pos := int64(0)
		for step := range 400 {
			switch r.IntN(10) {
			case 0: // move back
				pos = max(0, pos-int64(r.IntN(8)))
			case 1: // an effect on a record read
				if pos > 0 {
					gp.rememberApplied(int64(r.IntN(int(pos))))
				}
			default: // deliver the record at pos
				count[pos]++
				if got := g.attempt(&gp, pos); got != count[pos] {
					t.Fatalf("round %d, step %d: delivery %d of offset %d counted as %d", round, step, count[pos], pos, got)
				}
				pos++
			}
		}
	}
}
