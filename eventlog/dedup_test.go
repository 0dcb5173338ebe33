package eventlog_test

import (
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// An idempotent handler (sim.Idempotent) absorbs the records a crash
// before the commit makes the member read again: they are skipped, not
// applied twice, and the group is exactly-once.
func TestIdempotentHandlerAbsorbsRereads(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{}, faults.Rule{Name: "crash", Point: faults.ConsumerCrashBeforeCommit, Nth: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	r.publish(3, "k")
	r.member(g, eventlog.MemberConfig{Name: "m", Handler: sim.Idempotent(sim.Effect("charge"), sim.ByMessageID)})
	if err := r.w.Run(10); err != nil {
		t.Fatal(err)
	}
	if err := sim.Check(r.env.Ledger, sim.ExactlyOnce("g")); err != nil {
		t.Error(err)
	}
	skipped := r.events(sim.KindSkipped)
	if len(skipped) != 3 || g.Metrics().Lag != 0 {
		t.Errorf("skipped %d, lag %d", len(skipped), g.Metrics().Lag)
	}
	for _, e := range skipped {
		if e.Consumer != "g" || e.Actor != "m" || !e.HasPos {
			t.Errorf("skipped event %+v", e)
		}
	}
	if st := r.env.Ledger.Stats(); st.Absorbed != 3 || st.DuplicateEffects != 0 {
		t.Errorf("stats %+v", st)
	}
	// Without the wrapper, the same run applies every record twice.
	r2 := newRig(t, 1, eventlog.Config{}, faults.Rule{Name: "crash", Point: faults.ConsumerCrashBeforeCommit, Nth: 1})
	g2 := r2.group(eventlog.GroupConfig{Name: "g"})
	r2.publish(3, "k")
	r2.member(g2, eventlog.MemberConfig{Name: "m", Handler: sim.Effect("charge")})
	_ = r2.w.Run(10)
	if err := sim.Check(r2.env.Ledger, sim.ExactlyOnce("g")); len(violations(err)) != 3 {
		t.Errorf("naive handler: %v, want 3 double effects", err)
	}
	r.refold()
}
