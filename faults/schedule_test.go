package faults

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

func sched(n int) Schedule {
	var s Schedule
	for i := 1; i <= n; i++ {
		s.Decisions = append(s.Decisions, Decision{Tick: sim.Tick(i), Rule: "r", Point: BrokerDuplicate, Msg: sim.ID(i), Occurrence: 1, Nth: 1})
	}
	return s
}

func msgs(s Schedule) []sim.ID {
	var out []sim.ID
	for _, d := range s.Decisions {
		out = append(out, d.Msg)
	}
	return out
}

func has(s Schedule, ids ...sim.ID) bool {
	n := 0
	for _, d := range s.Decisions {
		for _, id := range ids {
			if d.Msg == id {
				n++
			}
		}
	}
	return n == len(ids)
}

func TestMinimizeFindsOneMinimalSchedules(t *testing.T) {
	cases := []struct {
		name string
		n    int
		fail func(Schedule) bool
		want []sim.ID
	}{
		{"one culprit", 40, func(s Schedule) bool { return has(s, 17) }, []sim.ID{17}},
		{"a pair", 40, func(s Schedule) bool { return has(s, 3, 31) }, []sim.ID{3, 31}},
		{"either of two", 12, func(s Schedule) bool { return has(s, 2) || has(s, 9) }, []sim.ID{2}},
		{"three in one chunk", 9, func(s Schedule) bool { return has(s, 4, 5, 6) }, []sim.ID{4, 5, 6}},
		{"needs no fault", 5, func(Schedule) bool { return true }, nil},
		{"at least three", 10, func(s Schedule) bool { return s.Len() >= 3 }, []sim.ID{3, 4, 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			asked := map[string]bool{}
			fails := func(s Schedule) bool {
				calls++
				k := fmt.Sprint(msgs(s))
				if asked[k] {
					t.Fatalf("asked about %s twice", k)
				}
				asked[k] = true
				return c.fail(s)
			}
			got := Minimize(sched(c.n), fails)
			if !reflect.DeepEqual(msgs(got), c.want) {
				t.Fatalf("got %v, want %v", msgs(got), c.want)
			}
			// 1-minimal: removing any one decision passes.
			for i := range got.Decisions {
				less := Schedule{Decisions: append(append([]Decision(nil), got.Decisions[:i]...), got.Decisions[i+1:]...)}
				if c.fail(less) {
					t.Fatalf("removing %s still fails", got.Decisions[i].Words())
				}
			}
			again := Minimize(sched(c.n), c.fail)
			if !reflect.DeepEqual(again, got) {
				t.Fatal("two minimisations differ")
			}
			t.Logf("%d calls", calls)
		})
	}
	if got := Minimize(Schedule{}, nil); got.Len() != 0 {
		t.Fatal("empty schedule grew")
	}
}

func TestWords(t *testing.T) {
	s := Schedule{Decisions: []Decision{
		{Tick: 4, Point: ConsumerCrashAfterEffect, Msg: 3},
		{Tick: 6, Point: BrokerDuplicate, Msg: 3},
		{Tick: 9, Point: MemberCrash, Consumer: "a1", Group: "audit", Where: "log:events"},
		{Tick: 11, Point: BrokerUnavailable, Where: "queue:orders"},
	}}
	want := "consumer.crash_after_effect on m3 at t=4, then broker.duplicate of m3 at t=6, then member.crash for a1 at log:events at t=9, then broker.unavailable at queue:orders at t=11"
	if got := s.Words(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if (Schedule{}).Words() != "no faults" {
		t.Fatal("empty schedule")
	}
}

func TestPlanYAMLAndGo(t *testing.T) {
	s := Schedule{Decisions: []Decision{
		{Tick: 4, Rule: "crash", Point: ConsumerCrashAfterEffect, Msg: 3, Where: "queue:orders", Consumer: "billing", Key: "order-3", Occurrence: 1, Nth: 1},
		{Tick: 4, Rule: "crash", Point: ConsumerCrashAfterEffect, Msg: 4, Where: "queue:orders", Consumer: "billing", Key: "order-4", Occurrence: 1, Nth: 1},
		{Tick: 6, Rule: "down", Point: BrokerUnavailable, Where: "queue:orders", Occurrence: 1, Nth: 3, Error: `said "no"`},
		{Tick: 7, Rule: "weird", Point: HandlerSlow, Msg: 9, Key: "a*b", Param: 2},
	}}
	p := s.Plan()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	wantYAML := `faults:
  - name: crash
    point: consumer.crash_after_effect
    match:
      key: order-3
      consumer: billing
      where: "queue:orders"
    from: 4
    until: 5
    nth: 1
  - name: crash-2
    point: consumer.crash_after_effect
    match:
      key: order-4
      consumer: billing
      where: "queue:orders"
    from: 4
    until: 5
    nth: 1
  - name: down
    point: broker.unavailable
    match:
      where: "queue:orders"
    from: 6
    until: 7
    nth: 3
    error: "said \"no\""
  - name: weird
    point: handler.slow
    match:
      key: "a\\*b"
    from: 7
    until: 8
    count: 1
    param: 2
`
	if got := p.YAML(); got != wantYAML {
		t.Fatalf("got\n%s\nwant\n%s", got, wantYAML)
	}
	if ok := glob(p.Rules[3].Match.Key, "a*b"); !ok || glob(p.Rules[3].Match.Key, "axxb") {
		t.Fatal("escaped key must match only itself")
	}
	wantGo := `in.Add(faults.Rule{Name: "crash", Point: faults.ConsumerCrashAfterEffect, From: 4, Until: 5, Nth: 1, Match: faults.Match{Key: "order-3", Consumer: "billing", Where: "queue:orders"}})`
	if got := strings.Split(s.Go(), "\n")[0]; got != wantGo {
		t.Fatalf("got  %s\nwant %s", got, wantGo)
	}
	if (Plan{}).YAML() != "faults: []\n" {
		t.Fatal("empty plan")
	}
	for p := range pointConst {
		if !Known(p) {
			t.Fatalf("%s", p)
		}
	}
	if len(pointConst) != len(Points) {
		t.Fatal("a point has no Go constant name")
	}
}

func TestHandles(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{{Name: "dup", Point: BrokerDuplicate, Count: 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := in.Add(Rule{Name: "crash", Point: MemberCrash})
	if err != nil || h.Name() != "crash" {
		t.Fatal(h, err)
	}
	dup, ok := in.Handle("dup")
	if !ok {
		t.Fatal("no handle for a plan rule")
	}
	for i := 0; i < 3; i++ {
		in.Check(BrokerDuplicate, Context{Msg: sim.ID(i + 1)})
		in.Check(MemberCrash, Context{})
	}
	if dup.Fired() != 2 || dup.Opportunities() != 2 || h.Fired() != 3 {
		t.Fatalf("dup fired %d/%d, crash %d", dup.Fired(), dup.Opportunities(), h.Fired())
	}
	h.Disable()
	h.Disable()
	if in.Has(MemberCrash) || !h.Disabled() {
		t.Fatal("disabled handle still targets its point")
	}
	if _, ok := in.Handle("nope"); ok {
		t.Fatal("handle for an unknown rule")
	}
	var nilh *Handle
	nilh.Disable()
	if nilh.Fired() != 0 || nilh.Name() != "" || nilh.Disabled() {
		t.Fatal("nil handle")
	}
	if _, err := in.Add(Rule{Name: "crash", Point: MemberCrash}); !errors.Is(err, ErrInvalidRule) {
		t.Fatal(err)
	}
	if f := in.Fired(); f.Len() != 0 || f.Omitted != 5 || f.Words() != "5 firing(s), not recorded (faults.Config.Record)" {
		t.Fatalf("an injector that does not record listed %d, omitted %d: %s", f.Len(), f.Omitted, f.Words())
	}
}

func TestReplayRefusesWhatItCannotReplay(t *testing.T) {
	w, _ := sim.New(sim.Config{})
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{Schedule{Decisions: []Decision{{Tick: 1, Point: BrokerDuplicate, Msg: 1}}}, "was not recorded"},
		{Schedule{Decisions: []Decision{{Tick: 1, Point: "x.y", Occurrence: 1}}}, "unknown fault point"},
		{Schedule{Omitted: 3}, "not listed"},
		{Schedule{Decisions: []Decision{{Point: BrokerDuplicate, Msg: 1, Occurrence: 1}, {Point: BrokerDuplicate, Msg: 1, Occurrence: 1, Tick: 3}}}, "same opportunity"},
	} {
		_, err := New(w, Config{Replay: &c.s})
		if !errors.Is(err, ErrNotReplayable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}

// Replay fires what it lists, at the opportunity it names, and draws
// nothing: a probability-1 rule of the plan does not fire.
func TestReplayFiresOnlyTheSchedule(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 3})
	env := w.Env()
	s := Schedule{Decisions: []Decision{
		{Tick: 2, Rule: "dup", Point: BrokerDuplicate, Msg: 7, Where: "q", Occurrence: 2},
		{Tick: 3, Rule: "down", Point: BrokerUnavailable, Where: "q", Occurrence: 1, Error: "gone"},
	}}
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{{Name: "dup", Point: BrokerDuplicate}}}, Replay: &s})
	if err != nil {
		t.Fatal(err)
	}
	if !in.Has(BrokerUnavailable) || in.Has(HandlerSlow) {
		t.Fatal("replay must consult exactly the schedule's points")
	}
	var got []string
	for tick := sim.Tick(1); tick <= 4; tick++ {
		env.Clock.Set(tick + 5) // the message's opportunities count over ticks
		if _, ok := in.Check(BrokerDuplicate, Context{Where: "q", Msg: 7}); ok {
			got = append(got, fmt.Sprintf("dup@%d", tick))
		}
		env.Clock.Set(3)
		if f, ok := in.Check(BrokerUnavailable, Context{Where: "q"}); ok {
			got = append(got, fmt.Sprintf("down@%d:%s", tick, f.Error))
		}
	}
	if s := strings.Join(got, " "); s != "down@1:gone dup@2" {
		t.Fatalf("fired %s", s)
	}
	if h, _ := in.Handle("dup"); h.Fired() != 1 {
		t.Fatalf("handle counted %d", h.Fired())
	}
}
