package sim

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// On hostile traces (every event kind, unknown copies, origins that are
// not older, repeats), Check over loss-only checkers (which leave out the
// outcomes a delivery shows are no loss) reports exactly the violations
// it reports when another checker makes it fold every outcome, and the
// kept counts (Tally) count exactly what each checker's Violations lists.
func TestCheckOfLossesOnHostileTraces(t *testing.T) {
	only := func(l *Ledger, name string, cs ...Checker) []Violation {
		var ce *CheckError
		if !errors.As(Check(l, cs...), &ce) {
			return nil
		}
		var out []Violation
		for _, v := range ce.Violations {
			if v.Check == name {
				out = append(out, v)
			}
		}
		return out
	}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		l := NewLedger()
		n, events := 20+r.IntN(300), 50+r.IntN(1500)
		for i := range events {
			e := randomEvent(r, n, Tick(i/7))
			l.Emit(&e)
		}
		// The walks tell a linked copy by Ledger.lineage, the others by
		// the record's flag: both must name the same copies.
		inList := map[ID]bool{}
		for _, id := range l.linkedIDs() {
			inList[id] = true
		}
		for i := range l.recs.len() {
			if flagged := l.recFlags(ID(i))&recLinked != 0; flagged != inList[ID(i)] {
				t.Fatalf("seed %d, m%d: linked flag %v, in the lineage list %v", seed, i, flagged, inList[ID(i)])
			}
		}
		for _, c := range []string{"", "billing", "audit", "mail", "nosuch"} {
			if a, b := only(l, "at-least-once", AtLeastOnce(c)), only(l, "at-least-once", AtLeastOnce(c), AtMostOnce(c)); !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d, at-least-once(%q): loss-only %v, every outcome %v", seed, c, a, b)
			}
			for _, k := range []struct {
				c Checker
				n int
			}{{NoLoss(), 0}, {AtLeastOnce(c), 0}, {AtMostOnce(c), 0}, {ExactlyOnce(c), 0}, {OrderedPerKey(c), 0}, {MaxDuplicates(c, 0), 0}, {MaxDuplicates(c, 3), 3}} {
				tl, ok := l.Tally(k.c.Name(), c, k.n)
				if v := k.c.Violations(l); !ok || tl.Count != len(v) {
					t.Fatalf("seed %d, %s(%q): tally %d (ok %v), violations %d", seed, k.c.Name(), c, tl.Count, ok, len(v))
				}
			}
		}
		if a, b := only(l, "no-loss", NoLoss()), only(l, "no-loss", NoLoss(), AtMostOnce("")); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d, no-loss: loss-only %v, every outcome %v", seed, a, b)
		}
	}
}
