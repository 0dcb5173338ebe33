package eventlog

import (
	"fmt"
	"slices"
	"testing"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// A member makes its delivery only when it first hands a record to its
// handler, and then hands every record in that one delivery: a plain
// member whose records are all booked never makes one, and a member with
// its own handler prepares each record in place of the last.
func TestMemberMakesOneDeliveryWhenNeeded(t *testing.T) {
	w, g := sixPartitionGroup(t, GroupConfig{Name: "g"})
	plain, err := NewMember(w, g, MemberConfig{Name: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []*sim.Delivery
	own, err := NewMember(w, g, MemberConfig{Name: "own", Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
		seen = append(seen, d)
		d.Apply("")
		return nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := g.t.Produce(w.Env().NewMessage(string(rune('a'+i%7)), []byte("x"), sim.Headers{})); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Run(10); err != nil {
		t.Fatal(err)
	}
	if g.Lag() != 0 {
		t.Fatalf("lag %d after the run, want 0", g.Lag())
	}
	if plain.d != nil {
		t.Error("a plain member whose records were all booked made a delivery")
	}
	if len(seen) == 0 {
		t.Fatal("the member with its own handler handled nothing")
	}
	for i, d := range seen {
		if d != own.d {
			t.Fatalf("record %d was handed in another delivery than the member keeps", i)
		}
	}
}

// TestMembersNeverShareABatch runs a group whose members crash, fail,
// take their time, are pulled by hand and lose retained records, and
// checks after every tick that no two members hold one batch buffer, or
// one buffer of outstanding records, and that the group's spares are held
// by none of them: the members use one buffer of each in turn
// (Member.handBack), never at once. The spare batch buffer points at no
// entry, which would keep one the log let go of alive.
func TestMembersNeverShareABatch(t *testing.T) {
	w, err := sim.New(sim.Config{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	in, err := faults.New(w, faults.Config{Plan: faults.Plan{Rules: []faults.Rule{
		{Name: "crash", Point: faults.MemberCrash, Probability: 0.03},
		{Name: "after", Point: faults.ConsumerCrashAfterEffect, Probability: 0.03},
		{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.05},
		{Name: "slow", Point: faults.HandlerSlow, Probability: 0.05, Param: 2},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(w, Config{Name: "orders", Faults: in, Partitions: 6, RetentionRecords: 8})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(w, l, GroupConfig{Name: "g"})
	if err != nil {
		t.Fatal(err)
	}
	var ms []*Member
	for i, cfg := range []MemberConfig{{Name: "a"}, {Name: "b", Batch: 4}, {Name: "c", Batch: 25}, {Name: "d", Pull: true}} {
		cfg.RestartAfter = sim.Tick(1 + i%2)
		m, err := NewMember(w, g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	first := func(b []held) *held {
		if cap(b) == 0 {
			return nil
		}
		return &b[:1][0]
	}
	firstOut := func(b []outRec) *outRec {
		if cap(b) == 0 {
			return nil
		}
		return &b[:1][0]
	}
	shared, busy := 0, 0
	for tick := range 300 {
		for i := range 7 {
			if _, err := l.Produce(w.Env().NewMessage(string(rune('a'+(tick+i)%9)), []byte("x"), sim.Headers{})); err != nil {
				t.Fatal(err)
			}
		}
		if tick%3 == 0 {
			ms[3].Poll(5)
		}
		w.Tick()
		holders, outHolders := map[*held]string{}, map[*outRec]string{}
		if p := first(g.spare); p != nil {
			holders[p] = "the spare"
		}
		if p := firstOut(g.spareOut); p != nil {
			outHolders[p] = "the spare"
		}
		for _, m := range ms {
			if p := first(m.got); p != nil {
				if who, ok := holders[p]; ok {
					t.Fatalf("tick %d: member %s holds the batch buffer %s holds", tick, m.cfg.Name, who)
				}
				holders[p] = m.cfg.Name
			}
			if p := firstOut(m.outBuf); p != nil {
				if who, ok := outHolders[p]; ok {
					t.Fatalf("tick %d: member %s holds the buffer of outstanding records %s holds", tick, m.cfg.Name, who)
				}
				outHolders[p] = m.cfg.Name
			}
			if p, q := firstOut(m.out), firstOut(m.outBuf); p != nil && (q == nil || cap(m.out) > cap(m.outBuf)) {
				t.Fatalf("tick %d: member %s has outstanding records outside its buffer", tick, m.cfg.Name)
			}
		}
		if g.spare != nil && g.spareOut != nil {
			shared++
		}
		for i, h := range g.spare[:cap(g.spare)] {
			if h.e != nil || h.a != nil {
				t.Fatalf("tick %d: the spare batch buffer still points at the entry of record %d", tick, i)
			}
		}
		for _, m := range ms {
			if m.Busy() {
				busy++
			}
		}
	}
	if shared == 0 || busy == 0 {
		t.Errorf("the spare was left %d times and members were busy %d times, want both", shared, busy)
	}
}

// A member that owns a few partitions keeps their list in its own room,
// and one that owns more than fit there moves it out, with room for
// every partition of the group; either way the list is the assignment's.
func TestMemberKeepsAFewPartitionsInItsRoom(t *testing.T) {
	w, g := sixPartitionGroup(t, GroupConfig{Name: "g"})
	a, err := NewMember(w, g, MemberConfig{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.owned) != 6 || cap(a.owned) < 6 {
		t.Fatalf("a member alone owns %v (room for %d), want the 6 partitions", a.owned, cap(a.owned))
	}
	var ms []*Member
	for _, name := range []string{"b", "c"} {
		m, err := NewMember(w, g, MemberConfig{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		if got, want := fmt.Sprint(m.Assigned()), fmt.Sprint(g.asg[slices.IndexFunc(g.asg, func(x Assignment) bool { return x.Member == m.cfg.Name })].Partitions); got != want {
			t.Errorf("member %s owns %s, the assignment says %s", m.cfg.Name, got, want)
		}
		if len(m.owned) == 0 || &m.owned[:1][0] != &m.ownRoom[0] {
			t.Errorf("member %s keeps its %d partitions outside its room", m.cfg.Name, len(m.owned))
		}
	}
}
