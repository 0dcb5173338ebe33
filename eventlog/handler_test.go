package eventlog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// A failing handler holds its partition: the record is retried at the next
// poll and nothing behind it overtakes it.
func TestHandlerErrorRetriesInOrder(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	fails := map[sim.ID]int{3: 2} // m3 fails twice
	r.member(g, eventlog.MemberConfig{Name: "a", Batch: 4, Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
		if fails[d.Msg.ID] > 0 {
			fails[d.Msg.ID]--
			return errors.New("database busy")
		}
		d.Apply("")
		return nil
	})})
	r.publish(6, "kunde-A")
	r.drain(g, 20)
	if err := sim.Check(r.env.Ledger, sim.NoLoss(), sim.ExactlyOnce("g"), sim.OrderedPerKey("g")); err != nil {
		t.Error(err)
	}
	if n := len(r.events(sim.KindFailed)); n != 2 {
		t.Errorf("%d failures traced, want 2", n)
	}
	for _, e := range r.events(sim.KindFailed) {
		if e.Consumer != "g" || e.Actor != "a" || !e.HasPos || e.Msg != 3 {
			t.Errorf("failed event %+v", e)
		}
	}
	r.refold()
}

// Committed before processing, a record whose handler failed is gone: it
// is booked lost at once, and the records after it in the batch, committed
// too, are read again by the member at its next poll.
func TestCommitBeforeHandlerErrorIsGone(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	on := true
	r.member(g, eventlog.MemberConfig{Name: "a", Commit: eventlog.CommitBefore, Batch: 4, Handler: failOn(&on, 2)})
	r.publish(4, "kunde-A")
	_ = r.w.Run(1)
	if c, _ := g.Committed(0); c != 4 {
		t.Fatalf("committed %d, want 4 (before processing)", c)
	}
	r.drain(g, 10)
	out := r.outcomes("g")
	for id, want := range map[sim.ID]sim.Verdict{1: sim.VerdictApplied, 2: sim.VerdictLost, 3: sim.VerdictApplied, 4: sim.VerdictApplied} {
		if o := out[id]; o.Verdict != want || o.Effects > 1 {
			t.Errorf("%v: %s (%s) %d effects, want %s", id, o.Verdict, o.Cause, o.Effects, want)
		}
	}
	if o := out[2]; o.Cause != sim.CauseCommitBeforeProcess {
		t.Errorf("m2 lost with cause %q", o.Cause)
	}
	r.refold()
}

// Committed before processing, the records a failure left unprocessed are
// lost when the member crashes before it reads them again.
func TestCommitBeforeHandlerErrorThenCrash(t *testing.T) {
	r := newRig(t, 1, eventlog.Config{Partitions: 1})
	g := r.group(eventlog.GroupConfig{Name: "g"})
	on := true
	m := r.member(g, eventlog.MemberConfig{Name: "a", Commit: eventlog.CommitBefore, Batch: 4, Handler: failOn(&on, 2)})
	r.publish(4, "kunde-A")
	_ = r.w.Run(1)
	m.Crash("")
	on = false
	r.drain(g, 10)
	vs := violations(sim.Check(r.env.Ledger, sim.NoLoss()))
	if len(vs) != 3 {
		t.Fatalf("violations %v, want m2..m4 lost", vs)
	}
	for i, v := range vs {
		if v.Msg != sim.ID(i+2) || !strings.Contains(v.Detail, string(sim.CauseCommitBeforeProcess)) {
			t.Errorf("violation %v, want m%d lost (commit before processing)", v, i+2)
		}
	}
	r.refold()
}

// The handler fault points apply to group members, through the handler
// wrapped with the injector: transient failures are retried (commit
// after), a poison record is gone with commit before, and handler.slow
// keeps the member busy.
func TestHandlerFaultsApplyToMembers(t *testing.T) {
	r := newRig(t, 3, eventlog.Config{Partitions: 1},
		faults.Rule{Name: "flaky", Point: faults.HandlerTransient, Param: 2, Count: 1, Match: faults.Match{Key: "kunde-B", Group: "after"}},
		faults.Rule{Name: "poison", Point: faults.HandlerPoison, Match: faults.Match{Key: "kunde-C", Group: "before"}},
		faults.Rule{Name: "slow", Point: faults.HandlerSlow, Param: 3, Count: 1, Match: faults.Match{Consumer: "s1"}})
	after := r.group(eventlog.GroupConfig{Name: "after"})
	before := r.group(eventlog.GroupConfig{Name: "before"})
	slow := r.group(eventlog.GroupConfig{Name: "slow"})
	r.member(after, eventlog.MemberConfig{Name: "a1", Batch: 1})
	r.member(before, eventlog.MemberConfig{Name: "b1", Commit: eventlog.CommitBefore, Batch: 1})
	s1 := r.member(slow, eventlog.MemberConfig{Name: "s1", Batch: 3})
	r.publish(3, "kunde-A", "kunde-B", "kunde-C")
	_ = r.w.Run(1)
	if !s1.Busy() || s1.Outstanding() != 3 {
		t.Fatalf("s1 busy=%v outstanding=%d, want busy with 3", s1.Busy(), s1.Outstanding())
	}
	if n := len(r.events(sim.KindProcessed)); n != 2 { // a1 and b1 applied m1; s1's effect waits
		t.Errorf("%d effects at t=1, want 2", n)
	}
	_ = r.w.Run(2) // t=2, t=3: still busy
	if !s1.Busy() {
		t.Error("s1 finished early")
	}
	for _, g := range []*eventlog.Group{after, before, slow} {
		r.drain(g, 30)
	}
	if err := sim.Check(r.env.Ledger, sim.ExactlyOnce("after"), sim.ExactlyOnce("slow")); err != nil {
		t.Error(err)
	}
	vs := violations(sim.Check(r.env.Ledger, sim.AtLeastOnce("before")))
	if len(vs) != 1 || vs[0].Msg != 3 || !strings.Contains(vs[0].Detail, "commit before processing") {
		t.Errorf("before: %v, want m3 (poison) lost", vs)
	}
	fails := 0
	for _, e := range r.events(sim.KindFailed) {
		if e.Consumer == "after" {
			fails++
		}
	}
	if fails != 2 {
		t.Errorf("after failed %d times on kunde-B, want 2", fails)
	}
	// The slow record's effect landed when the work ended: t=1 + 3.
	for _, e := range r.events(sim.KindProcessed) {
		if e.Consumer == "slow" && e.Msg == 1 && e.Tick != 4 {
			t.Errorf("slow effect at t=%d, want 4", e.Tick)
		}
	}
	r.refold()
}

// A handler that crashes, removes or removes and rejoins its own member
// still leaves the crash-after-effect point the record it handled: the
// point's event names the record, and a rule matching its key sees it.
// Ending the member's batch lets go of its records, so the point must
// know the record before the handler runs.
func TestCrashAfterEffectKnowsTheRecordWhenTheHandlerEndsItsMember(t *testing.T) {
	for _, end := range []struct {
		name string
		do   func(m *eventlog.Member)
	}{
		{"crash", func(m *eventlog.Member) { m.Crash("") }},
		{"leave", func(m *eventlog.Member) { m.Leave() }},
		{"leave and rejoin", func(m *eventlog.Member) { m.Leave(); m.Rejoin() }},
	} {
		t.Run(end.name, func(t *testing.T) {
			r := newRig(t, 3, eventlog.Config{Partitions: 1},
				faults.Rule{Name: "after", Point: faults.ConsumerCrashAfterEffect, Probability: 1, Match: faults.Match{Key: "kunde-*"}})
			g := r.group(eventlog.GroupConfig{Name: "g"})
			var m *eventlog.Member
			m = r.member(g, eventlog.MemberConfig{Name: "a", Batch: 4, Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
				d.Apply("")
				end.do(m)
				return nil
			})})
			r.publish(3, "kunde-A")
			r.Must(r.w.Run(1))
			fired := r.events(sim.KindFault)
			if len(fired) != 1 || fired[0].Msg == 0 || fired[0].Key != "kunde-A" {
				t.Fatalf("fault events %+v, want one naming the first record, key kunde-A", fired)
			}
			if st := r.in.Stats()[0]; st.Opportunities != 1 || st.Fired != 1 {
				t.Errorf("rule stats %+v, want one opportunity, fired", st)
			}
		})
	}
}
