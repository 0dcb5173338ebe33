package lab

import (
	"path/filepath"
	"reflect"
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

// TestSessionEffectsKept plays every lesson and valid testdata scenario
// in a session and compares the per-consumer effects of every frame with
// a scan over every outcome.
func TestSessionEffectsKept(t *testing.T) {
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
	for name, s := range all {
		d, err := Open(s, SessionOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		frames, nonzero := 0, 0
		for !d.run.Done() && d.Now() < 2000 {
			snap := d.Step()
			frames++
			want := effectsByScan(d.run.Env().Ledger)
			if !reflect.DeepEqual(snap.Effects, want) {
				t.Fatalf("%s t=%d: kept %+v, scan %+v", name, d.Now(), snap.Effects, want)
			}
			for _, e := range want {
				if e.Applied > 0 {
					nonzero++
				}
			}
		}
		if frames == 0 {
			t.Errorf("%s: no frame compared", name)
		}
		if nonzero == 0 {
			t.Logf("%s: no effect applied", name)
		}
	}
}
