package lab

import (
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// TestGroupViewResumesAtTheLogStart: in retention-lag, retention deletes
// records below group B's committed offset; the view's offset for B is
// where the group resumes, the log start, the same offset its lag is
// counted from, never an offset the log no longer has.
func TestGroupViewResumesAtTheLogStart(t *testing.T) {
	s, err := scenario.LoadLesson("retention-lag")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(s, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	below := 0
	for tick := 1; tick <= 60 && !d.Done(); tick++ {
		snap := d.Step()
		for _, l := range snap.Logs {
			for _, g := range l.Groups {
				for p, c := range g.Committed {
					part := l.Partitions[p]
					if c < part.Start || c > part.End {
						below++
						t.Errorf("t=%d: group %s partition %d at %d, outside the log's %d..%d (lag %d)", snap.Header.Tick, g.Name, p, c, part.Start, part.End, g.Lag[p])
					}
					if lag := part.End - c; g.Lag[p] > lag {
						t.Errorf("t=%d: group %s partition %d: lag %d from offset %d to end %d", snap.Header.Tick, g.Name, p, g.Lag[p], c, part.End)
					}
				}
			}
		}
		if below > 5 {
			t.FailNow()
		}
	}
}
