package lab

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// effectsByScan folds the ledger's outcomes into per-consumer effect
// counts, in the ledger's consumer order: the scan the session's kept
// effects are tested against.
func effectsByScan(l *sim.Ledger) []EffectView {
	var out []EffectView
	at := map[string]int{}
	for _, name := range l.Consumers() {
		at[name] = len(out)
		out = append(out, EffectView{Consumer: name})
	}
	for _, o := range l.Outcomes("") {
		i, ok := at[o.Consumer]
		if !ok {
			continue
		}
		ev := &out[i]
		ev.Applied += o.Effects
		ev.Absorbed += o.Skipped
		if o.Effects > 1 {
			ev.Repeated += o.Effects - 1
		}
		ev.Worst = max(ev.Worst, o.Effects)
		if o.Deliveries > 1 {
			ev.Repeats += o.Deliveries - 1
		}
	}
	return out
}

// allScenarios returns every lesson and valid testdata scenario by name.
func allScenarios(t *testing.T) map[string]*scenario.Scenario {
	t.Helper()
	all := map[string]*scenario.Scenario{}
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		all["lesson:"+l.Name] = s
	}
	files, err := filepath.Glob(filepath.Join("..", "scenario", "testdata", "valid", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata scenarios: %v", err)
	}
	for _, f := range files {
		s, err := scenario.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all[filepath.Base(f)] = s
	}
	return all
}

// sortedNames returns the keys of all in order, so a failure names the
// same scenario on every run.
func sortedNames(all map[string]*scenario.Scenario) []string {
	var names []string
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestSessionEffectsKept plays every lesson and valid testdata scenario
// in a session and compares the per-consumer effects of every frame with
// a scan over every outcome, and the per-key effect table of the compared
// consumers, where the scenario has them, with effectKeysOf.
func TestSessionEffectsKept(t *testing.T) {
	all := allScenarios(t)
	tables := 0
	for _, name := range sortedNames(all) {
		s := all[name]
		d, err := Open(s, SessionOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		refs, names := compared(s)
		frames, nonzero := 0, 0
		for !d.run.Done() && d.Now() < 2000 {
			snap := d.Step()
			frames++
			l := d.run.Env().Ledger
			want := effectsByScan(l)
			if !reflect.DeepEqual(snap.Effects, want) {
				t.Fatalf("%s t=%d: kept %+v, scan %+v", name, d.Now(), snap.Effects, want)
			}
			for _, e := range want {
				if e.Applied > 0 {
					nonzero++
				}
			}
			if refs != nil {
				scan := effectKeysOf(l, refs, names)
				if snap.EffectTable == nil || !reflect.DeepEqual(*snap.EffectTable, scan) {
					t.Fatalf("%s t=%d: kept table %+v, scan %+v", name, d.Now(), snap.EffectTable, scan)
				}
				tables++
			}
		}
		if frames == 0 {
			t.Errorf("%s: no frame compared", name)
		}
		if nonzero == 0 {
			t.Logf("%s: no effect applied", name)
		}
	}
	if tables == 0 {
		t.Error("no scenario compares consumers: the per-key table was never checked")
	}
}

// TestEffectTableKeptEqualsTheScan runs every lesson and valid testdata
// scenario and, at random ticks, compares the per-key table the ledger
// keeps with effectKeysOf's scan over every outcome, for every consumer
// the ledger knows and for a random few of them (a new set folds afresh,
// and is then kept). A session's own table is compared every frame by
// TestSessionEffectsKept, and after going back by
// TestEffectTableAfterSeek.
func TestEffectTableKeptEqualsTheScan(t *testing.T) {
	all := allScenarios(t)
	rnd := rand.New(rand.NewPCG(24, 1))
	compares, rows := 0, 0
	for _, name := range sortedNames(all) {
		r, err := New(all[name], Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		l := r.Env().Ledger
		var set []string
		for r.Step() && r.Now() < 2000 {
			if rnd.IntN(4) != 0 && !r.Done() {
				continue
			}
			cs := l.Consumers()
			if len(cs) == 0 {
				continue
			}
			if set == nil || rnd.IntN(8) == 0 {
				set = slices.Clone(cs)
				if rnd.IntN(2) == 0 {
					rnd.Shuffle(len(set), func(i, j int) { set[i], set[j] = set[j], set[i] })
					set = set[:1+rnd.IntN(len(set))]
				}
			}
			got, want := effectsViewOf(l, set, set), effectKeysOf(l, set, set)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s t=%d %v: kept %+v\nscan %+v", name, r.Now(), set, got, want)
			}
			compares++
			rows += len(want.Keys)
		}
	}
	if compares < 100 || rows == 0 {
		t.Fatalf("%d comparisons, %d rows: too few to hold the table to the scan", compares, rows)
	}
}

// TestEffectTableAfterSeek: after going back and forth in a session whose
// lesson compares consumers, the table is the scan's.
func TestEffectTableAfterSeek(t *testing.T) {
	all := allScenarios(t)
	rnd := rand.New(rand.NewPCG(24, 2))
	checked := 0
	for _, name := range sortedNames(all) {
		s := all[name]
		refs, names := compared(s)
		if refs == nil {
			continue
		}
		d, err := Open(s, SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range 6 {
			snap := d.Seek(sim.Tick(rnd.IntN(80)))
			scan := effectKeysOf(d.run.Env().Ledger, refs, names)
			if snap.EffectTable == nil || !reflect.DeepEqual(*snap.EffectTable, scan) {
				t.Fatalf("%s t=%d: kept table %+v, scan %+v", name, d.Now(), snap.EffectTable, scan)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no scenario compares consumers")
	}
}

// effectKeysOf folds the ledger's outcomes into per-key effect counts of
// the logical consumers named by refs (the ledger's names: a queue
// consumer is its queue), shown as names, in first-seen key order, at most
// maxProjKeys keys, by a scan over every outcome: the reference the kept
// table (effectsViewOf) is tested against. O(origins x consumers).
func effectKeysOf(l *sim.Ledger, refs, names []string) EffectsView {
	v := EffectsView{Consumers: names}
	col := map[string]int{}
	for i, c := range refs {
		col[c] = i
	}
	at := map[string]int{}
	for _, o := range l.Outcomes("") {
		c, ok := col[o.Consumer]
		if !ok {
			continue
		}
		i, ok := at[o.Key]
		if !ok {
			if len(v.Keys) == maxProjKeys {
				v.MoreKeys++
				at[o.Key] = -1
				continue
			}
			i = len(v.Keys)
			at[o.Key] = i
			v.Keys = append(v.Keys, EffectKey{Key: o.Key, Cells: make([]EffectCell, len(names))})
		}
		if i < 0 {
			continue
		}
		cell := &v.Keys[i].Cells[c]
		cell.Effects += o.Effects
		cell.Origins++
		cell.Absorbed += o.Skipped
		if o.Effects > 1 {
			cell.Repeated += o.Effects - 1
		}
	}
	return v
}
