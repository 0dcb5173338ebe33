package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// auditFiles returns every lesson, every variant of one, and every file
// in testdata/valid (and its variants), loaded, with a label.
func auditFiles(t *testing.T) (labels []string, out []*scenario.Scenario) {
	t.Helper()
	add := func(label string, base *scenario.Scenario) {
		labels, out = append(labels, label), append(out, base)
		for _, vr := range base.Variants {
			v, err := base.Variant(vr.Name)
			if err != nil {
				t.Fatalf("%s/%s: %v", label, vr.Name, err)
			}
			labels, out = append(labels, label+"/"+vr.Name), append(out, v)
		}
	}
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		add(l.Name, s)
	}
	files, _ := filepath.Glob("../scenario/testdata/valid/*.yaml")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scenario.Load(f, src)
		if err != nil {
			t.Fatal(err)
		}
		add(strings.TrimSuffix(filepath.Base(f), ".yaml"), s)
	}
	return labels, out
}

// componentMetrics lists every folded component metric of s.
func componentMetrics(s *scenario.Scenario) []scenario.Metric {
	var ms []scenario.Metric
	add := func(kind, name string) {
		for _, f := range foldedFields[kind] {
			ms = append(ms, scenario.Metric{Kind: kind, Name: name, Field: f})
		}
	}
	for _, q := range s.Topology.Queues {
		add("queue", q.Name)
	}
	for _, x := range s.Topology.Topics {
		add("topic", x.Name)
	}
	for _, l := range s.Topology.Logs {
		add("log", l.Name)
	}
	for _, g := range s.Topology.Groups {
		add("group", g.Name)
	}
	for _, x := range s.Topology.Services {
		add("outbox", x.Name)
	}
	for _, x := range s.Actors.Sagas {
		add("saga", x.Name)
	}
	return ms
}

// TestMetricFoldEqualsTheModels plays every lesson, variant and valid
// test file and requires, after every tick, each metric the MetricFold
// re-derives from the events to equal the models' own counters.
func TestMetricFoldEqualsTheModels(t *testing.T) {
	labels, ss := auditFiles(t)
	compared := 0
	for i, s := range ss {
		fold := NewMetricFold(s)
		r, err := New(s, Options{Sinks: []sim.Sink{fold}})
		if err != nil {
			t.Fatalf("%s: %v", labels[i], err)
		}
		ms := componentMetrics(s)
		bad := map[string]bool{}
		for more := true; more; {
			more = r.Step()
			for _, m := range ms {
				want, err := r.measureModel(m)
				if err != nil {
					continue // not measurable here (a queue without a DLQ)
				}
				fold.SetNow(r.World().Now())
				got, ok := fold.Value(m)
				compared++
				if !ok || got != want {
					if !bad[m.String()] {
						t.Errorf("%s at t=%d: %s folded %v (%v), the model says %v", labels[i], r.World().Now(), m, got, ok, want)
					}
					bad[m.String()] = true
				}
			}
		}
	}
	t.Logf("%d files, %d metric values compared", len(ss), compared)
}
