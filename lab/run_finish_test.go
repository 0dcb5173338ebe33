package lab

import (
	"reflect"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// TestVerdictOnlyEqualsFinish: for every lesson, variant and valid test
// file, the report Probe and Shrink read (verdictOnly, without the ledger
// summary) has the outcomes, errors and verdict of Execute's, and Finish
// called after it fills in the same summary Execute's report has.
func TestVerdictOnlyEqualsFinish(t *testing.T) {
	labels, ss := auditFiles(t)
	for i, s := range ss {
		want, wantErr := Execute(s, Options{})
		r, err := New(s, Options{})
		if err != nil {
			t.Fatalf("%s: %v", labels[i], err)
		}
		got := r.verdictOnly()
		if !reflect.DeepEqual(got.Stats, sim.Stats{}) {
			t.Errorf("%s: verdictOnly took the ledger summary", labels[i])
		}
		if !reflect.DeepEqual(got.Outcomes, want.Outcomes) || !reflect.DeepEqual(got.Errors, want.Errors) || got.Pass != want.Pass ||
			got.Ticks != want.Ticks || got.Drained != want.Drained || (r.Err() == nil) != (wantErr == nil) {
			t.Errorf("%s: verdictOnly %+v, Execute %+v", labels[i], got, want)
		}
		if fin := r.Finish(); fin != got || !reflect.DeepEqual(fin.Stats, want.Stats) {
			t.Errorf("%s: Finish after verdictOnly: stats %+v, Execute's %+v", labels[i], fin.Stats, want.Stats)
		}
		if f, failed, err := Probe(s, s.Seed, Options{}); err != nil {
			t.Fatalf("%s: %v", labels[i], err)
		} else if wf, wfailed := FailureOf(want, wantErr); failed != wfailed || f != wf {
			t.Errorf("%s: Probe %v %v, Execute %v %v", labels[i], f, failed, wf, wfailed)
		}
	}
}
