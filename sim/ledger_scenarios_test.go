package sim_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// ledgerScenarios returns every built-in lesson and every scenario file of
// the scenario package's valid and explore testdata, each variant as a
// scenario of its own, by name.
func ledgerScenarios(t *testing.T) map[string]*scenario.Scenario {
	t.Helper()
	out := map[string]*scenario.Scenario{}
	add := func(name string, s *scenario.Scenario) {
		out[name] = s
		for _, v := range s.Variants {
			vs, err := s.Variant(v.Name)
			if err != nil {
				t.Fatalf("%s variant %s: %v", name, v.Name, err)
			}
			out[name+"/"+v.Name] = vs
		}
	}
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		add("lesson:"+l.Name, s)
	}
	for _, dir := range []string{"valid", "explore"} {
		files, err := filepath.Glob(filepath.Join("..", "scenario", "testdata", dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no scenario files in %s: %v", dir, err)
		}
		for _, f := range files {
			s, err := scenario.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			add(dir+":"+filepath.Base(f), s)
		}
	}
	return out
}

// TestStatsKeptOnEveryScenario runs every lesson, variant and testdata
// scenario and compares the summary the ledger keeps with a scan over
// every record, outcome and loss, every few events and at the end.
func TestStatsKeptOnEveryScenario(t *testing.T) {
	for name, s := range ledgerScenarios(t) {
		t.Run(name, func(t *testing.T) {
			var l *sim.Ledger
			n, compared := 0, 0
			compare := func() {
				compared++
				if got, want := l.Stats(), sim.StatsByScan(l); !reflect.DeepEqual(got, want) {
					t.Fatalf("after %d events:\nkept %+v\nscan %+v", n, got, want)
				}
			}
			sink := sim.SinkFunc(func(e *sim.Event) {
				if n++; l != nil && n%7 == 0 {
					compare()
				}
			})
			r, err := lab.New(s, lab.Options{Sinks: []sim.Sink{sink}})
			if err != nil {
				t.Fatal(err)
			}
			l = r.World().Ledger()
			r.Finish()
			compare()
			if n == 0 || compared < 2 {
				t.Fatalf("%d events, %d comparisons: nothing was compared", n, compared)
			}
		})
	}
}
