package eventlog_test

import (
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// TestAlreadyApplied checks that a handler returning ErrAlreadyApplied moves
// the member past the record without a second effect.
func TestAlreadyApplied(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{}, faults.Rule{Name: "crash", Point: faults.ConsumerCrashBeforeCommit, Nth: 1})
	g, err := r.topic.NewGroup(eventlog.GroupConfig{Name: "g"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[sim.ID]bool{}
	m, err := g.Join(eventlog.MemberConfig{Name: "m", Handler: func(rec eventlog.Record) error {
		if seen[rec.Message.ID] {
			return fmt.Errorf("dedup: %w", eventlog.ErrAlreadyApplied)
		}
		seen[rec.Message.ID] = true
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := r.topic.Produce(r.env.NewMessage("k", []byte("v"), sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	_ = r.w.Add(sim.PhaseConsumer, "m", m)
	if err := r.w.Run(10); err != nil {
		t.Fatal(err)
	}
	if err := sim.Check(r.env.Ledger, sim.ExactlyOnce("g")); err != nil {
		t.Error(err)
	}
	n := 0
	for _, e := range r.rec.Events() {
		if e.Kind == sim.KindDeduplicated {
			n++
		}
	}
	if n != 3 || g.Metrics().Lag != 0 {
		t.Errorf("deduplicated %d, lag %d", n, g.Metrics().Lag)
	}
}
