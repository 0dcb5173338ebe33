package eventlog_test

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/sim"
)

// A failing handler holds its partition: the record is retried at the next
// poll and nothing behind it overtakes it.
func TestHandlerErrorRetriesInOrder(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	fails := map[sim.ID]int{3: 2} // m3 fails twice
	r.member(g, eventlog.MemberConfig{Name: "a", Batch: 4, Handler: func(rec eventlog.Record) error {
		if fails[rec.Message.ID] > 0 {
			fails[rec.Message.ID]--
			return errors.New("database busy")
		}
		return nil
	}})
	for i := 0; i < 6; i++ {
		_ = r.topic.Publish(r.env.NewMessage("kunde-A", nil, sim.Headers{}))
	}
	r.drain(g, 20)
	if err := sim.Check(r.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("g"), sim.OrderedPerKey("g")); err != nil {
		t.Error(err)
	}
	if n := len(r.events(sim.KindFailed)); n != 2 {
		t.Errorf("%d failures traced, want 2", n)
	}
	rep := eventlog.CheckHistory(nil)
	if rep.Err() != nil {
		t.Error(rep.Err())
	}
}

// Committed before processing, a record whose handler failed is lost when
// the member crashes before the retry.
func TestCommitBeforeHandlerErrorThenCrash(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	failing := true
	m := r.member(g, eventlog.MemberConfig{Name: "a", Commit: eventlog.CommitBefore, Batch: 4, Handler: func(rec eventlog.Record) error {
		if rec.Message.ID == 2 && failing {
			return errors.New("bug")
		}
		return nil
	}})
	for i := 0; i < 4; i++ {
		_ = r.topic.Publish(r.env.NewMessage("kunde-A", nil, sim.Headers{}))
	}
	_ = r.w.Run(1)
	if c, _ := g.Committed(0); c != 4 {
		t.Fatalf("committed %d, want 4 (before processing)", c)
	}
	m.Crash("")
	failing = false
	r.drain(g, 10)
	vs := violations(sim.Check(r.env.Ledger, sim.NoLoss()))
	if len(vs) != 3 {
		t.Fatalf("violations %v, want m2..m4 lost", vs)
	}
	for i, v := range vs {
		if v.Msg != sim.ID(i+2) {
			t.Errorf("lost %v, want m%d", v.Msg, i+2)
		}
	}
}
