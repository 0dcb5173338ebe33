package eventlog_test

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

func TestRetentionByAgeAndSize(t *testing.T) {
	cases := []struct {
		name string
		cfg  eventlog.Config
	}{
		{"age", eventlog.Config{RetentionTicks: 4}},
		{"records", eventlog.Config{RetentionRecords: 8}},
		{"bytes", eventlog.Config{RetentionBytes: 8 * int64(len("kunde-A")+len("p-10"))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 1, c.cfg)
			err := r.w.AddFunc("p", sim.PhaseProducer, func(now sim.Tick) {
				for i := 0; i < 2; i++ {
					_ = r.topic.Publish(r.env.NewMessage("kunde-A", []byte("p-10"), sim.Headers{}))
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			_ = r.w.Run(20)
			// Retention runs in the broker phase, before this tick's 2 records.
			pm := r.topic.Metrics().Partitions[0]
			if pm.End != 40 || pm.LogStart < 30 || pm.Records != int(pm.End-pm.LogStart) || pm.Records > 10 {
				t.Errorf("partition %+v", pm)
			}
			if _, err := r.topic.Fetch(0, pm.LogStart-1, 1, nil); err == nil {
				t.Error("fetch below the log start succeeded")
			}
			if n := len(r.events(sim.KindExpired)); int64(n) != pm.LogStart {
				t.Errorf("%d expirations traced, log start %d", n, pm.LogStart)
			}
			// Nobody was reading: nothing counts as lost.
			if st := r.env.Ledger.Stats(); st.Lost != 0 || st.Expired != int(pm.LogStart) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// slowRun has a slow group (one record per tick) and a retention of 6
// records while 2 arrive per tick, so retention overtakes the group.
func slowRun(t *testing.T, reset eventlog.Reset, seekFirst bool) (*rig, *eventlog.Group) {
	r := newRig(t, 4, eventlog.Config{RetentionRecords: 6})
	g := r.group(eventlog.GroupConfig{Name: "slow", Reset: reset})
	if seekFirst {
		if err := g.SeekEarliest(eventlog.AllPartitions); err != nil {
			t.Fatal(err)
		}
	}
	r.member(g, eventlog.MemberConfig{Name: "s1", Batch: 1})
	r.producer("p", keys5, 2, 10)
	_ = r.w.Run(30)
	return r, g
}

func TestRetentionOvertakesResetEarliest(t *testing.T) {
	r, g := slowRun(t, eventlog.ResetEarliest, false)
	causes := lossCauses(t, r, "slow")
	if causes[sim.CauseRetention] == 0 || len(causes) != 1 {
		t.Errorf("losses %v, want retention only", causes)
	}
	resets := 0
	for _, e := range r.events(sim.KindSeeked) {
		if strings.Contains(e.Detail, "auto.offset.reset=earliest") {
			resets++
		}
	}
	if resets == 0 {
		t.Error("no auto.offset.reset traced")
	}
	if g.Metrics().Lag != 0 {
		t.Errorf("lag %d", g.Metrics().Lag)
	}
	vs := violations(sim.Check(r.env.Ledger, sim.NoLoss()))
	if len(vs) != causes[sim.CauseRetention] {
		t.Errorf("NoLoss reports %d, ledger has %d retention losses", len(vs), causes[sim.CauseRetention])
	}
}

func TestRetentionOvertakesResetLatest(t *testing.T) {
	r, _ := slowRun(t, eventlog.ResetLatest, false)
	causes := lossCauses(t, r, "slow")
	if causes[sim.CauseRetention] == 0 || causes[sim.CauseOffsetReset] == 0 || len(causes) != 2 {
		t.Errorf("losses %v, want retention and offset reset", causes)
	}
}

func TestRetentionOvertakesResetNone(t *testing.T) {
	r, g := slowRun(t, eventlog.ResetNone, true)
	var stuck []sim.Event
	for _, e := range r.events(sim.KindRejected) {
		if strings.Contains(e.Detail, "auto.offset.reset=none") {
			stuck = append(stuck, e)
		}
	}
	if len(stuck) != 1 {
		t.Fatalf("%d out-of-range rejections traced, want 1", len(stuck))
	}
	m := g.Metrics().Partitions[0]
	if m.Position >= m.LogStart || m.Lag == 0 {
		t.Errorf("group moved although reset is none: %+v", m)
	}
	// An operator seek unblocks the group.
	if err := g.SeekEarliest(0); err != nil {
		t.Fatal(err)
	}
	r.drain(g, 20)
	causes := lossCauses(t, r, "slow")
	if causes[sim.CauseRetention] == 0 || len(causes) != 1 {
		t.Errorf("losses %v", causes)
	}
	// A fresh group with reset none and nothing committed cannot start.
	fresh := r.group(eventlog.GroupConfig{Name: "fresh", Reset: eventlog.ResetNone})
	r.member(fresh, eventlog.MemberConfig{Name: "f1"})
	_ = r.topic.Publish(r.env.NewMessage("k", nil, sim.Headers{}))
	_ = r.w.Run(2)
	if m := fresh.Metrics(); m.Commits != 0 || m.Partitions[0].Position != -1 {
		t.Errorf("fresh group read without an offset: %+v", m)
	}
	// Its record is still pending, and the checkers say so instead of
	// passing.
	vs := violations(sim.Check(r.env.Ledger, sim.AtLeastOnce("fresh")))
	if len(vs) != 1 || !strings.Contains(vs[0].Detail, "still pending") {
		t.Errorf("violations %v", vs)
	}
}

// The log.retention_overtake fault deletes records a slow group has not
// read; a fast group that already applied them loses nothing.
func TestRetentionOvertakeFault(t *testing.T) {
	r := newRig(t, 8, eventlog.Config{Partitions: 2},
		faults.Rule{Name: "overtake", Point: faults.RetentionOvertake, From: 5, Count: 1, Param: 3, Match: faults.Match{Group: "slow"}})
	fast := r.group(eventlog.GroupConfig{Name: "fast"})
	slow := r.group(eventlog.GroupConfig{Name: "slow"})
	r.member(fast, eventlog.MemberConfig{Name: "f1", Batch: 100})
	for i := 0; i < 10; i++ {
		_ = r.topic.Publish(r.env.NewMessage(keys5[i%5], nil, sim.Headers{}))
	}
	_ = r.w.Run(6)
	for p := 0; p < 2; p++ {
		if s := r.topic.Start(p); s != 3 {
			t.Errorf("p%d log start %d, want 3", p, s)
		}
	}
	if err := sim.Check(r.env.Ledger, sim.ExactlyOnce("fast")); err != nil {
		t.Error(err)
	}
	// slow lost 6 records to retention; the other 4 are still pending, as
	// NoLoss says while slow has no member.
	lost, pending := 0, 0
	for _, v := range violations(sim.Check(r.env.Ledger, sim.NoLoss())) {
		switch {
		case v.Consumer != "slow":
			t.Errorf("unexpected %v", v)
		case strings.Contains(v.Detail, "lost (retention)"):
			lost++
		case strings.Contains(v.Detail, "still pending"):
			pending++
		default:
			t.Errorf("unexpected %v", v)
		}
	}
	if lost != 6 || pending != 4 {
		t.Errorf("%d retention losses and %d pending, want 6 and 4", lost, pending)
	}
	r.member(slow, eventlog.MemberConfig{Name: "s1"})
	r.drain(slow, 10)
	if got := lossCauses(t, r, "slow"); got[sim.CauseRetention] != 6 {
		t.Errorf("slow losses %v", got)
	}
}
