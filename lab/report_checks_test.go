package lab

import (
	"reflect"
	"testing"
)

// TestReportViolationsAreEachCheckers: for every lesson, variant and valid
// test file, at its own seed and three others, each check outcome of the
// report carries exactly what its checker's Violations returns on the
// ledger as the run ended, whether the report proved the checks clean
// with one shared walk (checksHold) or ran each checker; both paths are
// taken. The kept counts Finish reads say the checks hold exactly when
// the walk does.
func TestReportViolationsAreEachCheckers(t *testing.T) {
	labels, ss := auditFiles(t)
	shared, each := 0, 0
	for i, s := range ss {
		for _, seed := range []uint64{s.Seed, 1, 2, 3} {
			r, err := New(s, Options{Seed: &seed})
			if err != nil {
				t.Fatalf("%s: %v", labels[i], err)
			}
			for r.Step() {
			}
			hold := r.checksHold(false)
			r.Env().Ledger.Stats()
			if kept := r.checksHold(true); kept != hold {
				t.Errorf("%s seed %d: the checks hold by the walk: %v, by the kept counts: %v", labels[i], seed, hold, kept)
			}
			rep := r.Finish()
			for k := range s.Expect {
				e := &s.Expect[k]
				c := s.Checker(*e)
				if c == nil || e.Judged() {
					continue
				}
				if want := c.Violations(r.Env().Ledger); !reflect.DeepEqual(rep.Outcomes[k].Violations, want) {
					t.Errorf("%s seed %d: %s: report %#v, checker %#v", labels[i], seed, e, rep.Outcomes[k].Violations, want)
				}
				if hold {
					shared++
				} else {
					each++
				}
			}
		}
	}
	if shared == 0 || each == 0 {
		t.Fatalf("%d outcomes proved by the shared walk, %d by their own checker: want both paths", shared, each)
	}
	t.Logf("%d check outcomes by the shared walk, %d by their own checker", shared, each)
}
