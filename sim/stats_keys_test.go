package sim

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// keyStatsByScan is KeyStats as a scan over every outcome: the reference
// the kept sums are tested against.
func keyStatsByScan(l *Ledger, consumers []string, limit int) ([]KeyEffects, int) {
	col := map[string]int{}
	for i, c := range consumers {
		if _, ok := col[c]; !ok {
			col[c] = i
		}
	}
	var rows []KeyEffects
	at := map[string]int{}
	more := 0
	for _, o := range l.Outcomes("") {
		c, ok := col[o.Consumer]
		if !ok {
			continue
		}
		i, ok := at[o.Key]
		if !ok {
			if len(rows) == limit {
				more++
				at[o.Key] = -1
				continue
			}
			i = len(rows)
			at[o.Key] = i
			rows = append(rows, KeyEffects{Key: o.Key, Cells: make([]KeyCell, len(consumers))})
		}
		if i < 0 {
			continue
		}
		rows[i].Cells[c].count(1, o.Effects, max(o.Effects, 1)-1, o.Skipped, 1)
	}
	if len(rows) == 0 {
		rows = []KeyEffects{}
	}
	return rows, more
}

// TestKeyStatsKeptEqualsTheScan folds random traces (hostile ones
// included: lineages, losses, repeats, keys past the limit) and compares
// the per-key sums the ledger keeps with a scan over every outcome, at
// random points, for a few sets of consumers (one the trace never names
// among them).
func TestKeyStatsKeptEqualsTheScan(t *testing.T) {
	sets := [][]string{{"billing", "audit"}, {"mail"}, {"audit", "nobody", "billing", "mail"}}
	compared := 0
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 2))
		l := NewLedger()
		n := 50 + r.IntN(400)
		events := 200 + r.IntN(3000)
		set := sets[seed%uint64(len(sets))]
		limit := 1 + r.IntN(6) // the trace has 5 keys: some rows are left out
		for i := range events {
			e := randomEvent(r, n, Tick(i/7))
			l.Emit(&e)
			if r.IntN(30) == 0 || i == events-1 {
				if r.IntN(3) == 0 {
					l.Stats() // refolds the touched chunks first
				}
				got, more := l.KeyStats(set, limit)
				want, wantMore := keyStatsByScan(l, set, limit)
				if len(got) == 0 {
					got = []KeyEffects{}
				}
				if !reflect.DeepEqual(got, want) || more != wantMore {
					t.Fatalf("seed %d, after event %d (%+v):\nkept %+v, %d more\nscan %+v, %d more", seed, i, e, got, more, want, wantMore)
				}
				compared++
			}
		}
	}
	if compared < 100 {
		t.Fatalf("only %d comparisons", compared)
	}
}

// TestKeyStatsOtherConsumers: asking for other consumers folds their
// sums afresh, and asking again for the first ones does too.
func TestKeyStatsOtherConsumers(t *testing.T) {
	l := NewLedger()
	for i := 1; i <= 3*tableChunk; i++ {
		c := "billing"
		if i%3 == 0 {
			c = "audit"
		}
		l.Emit(&Event{Tick: 1, Kind: KindSent, Where: "queue:" + c, Consumer: c, Msg: ID(i), Key: "k" + string(rune('a'+i%4))})
		l.Emit(&Event{Tick: 2, Kind: KindReceived, Where: "queue:" + c, Consumer: c, Msg: ID(i)})
		l.Emit(&Event{Tick: 2, Kind: KindProcessed, Where: "queue:" + c, Consumer: c, Msg: ID(i)})
	}
	for _, set := range [][]string{{"billing"}, {"audit", "billing"}, {"billing"}} {
		got, more := l.KeyStats(set, 64)
		want, wantMore := keyStatsByScan(l, set, 64)
		if !reflect.DeepEqual(got, want) || more != wantMore || len(got) != 4 {
			t.Fatalf("%v: kept %+v, %d more\nscan %+v, %d more", set, got, more, want, wantMore)
		}
	}
}
