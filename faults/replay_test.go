package faults_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// busyPlan draws at many points of a queue and a log, with and without
// messages, so replay and Plan meet every kind of opportunity.
func busyPlan() faults.Plan {
	return faults.Plan{Rules: []faults.Rule{
		{Name: "crash-after", Point: faults.ConsumerCrashAfterEffect, Probability: 0.1},
		{Name: "crash-before", Point: faults.ConsumerCrashBeforeProcess, Probability: 0.05},
		{Name: "dup", Point: faults.BrokerDuplicate, Probability: 0.1},
		{Name: "delay", Point: faults.BrokerDelay, Probability: 0.1, Param: 2},
		{Name: "reorder", Point: faults.BrokerReorder, Probability: 0.1},
		{Name: "ack-lost", Point: faults.BrokerAckLost, Probability: 0.05},
		{Name: "down", Point: faults.BrokerUnavailable, Probability: 0.05},
		{Name: "flaky", Point: faults.HandlerTransient, Probability: 0.1},
		{Name: "slow", Point: faults.HandlerSlow, Probability: 0.1, Param: 3},
		{Name: "member-crash", Point: faults.MemberCrash, Probability: 0.02},
		{Name: "before-commit", Point: faults.ConsumerCrashBeforeCommit, Probability: 0.05},
	}}
}

// busyRun runs a queue with two workers and a log group with two members
// under cfg and returns the text trace and the injector.
func busyRun(t testing.TB, seed uint64, cfg faults.Config) (string, *faults.Injector) {
	t.Helper()
	tr, in, _ := busyWorld(t, seed, cfg)
	return tr, in
}

// busyWorld is busyRun that also returns the world.
func busyWorld(t testing.TB, seed uint64, cfg faults.Config) (string, *faults.Injector, *sim.World) {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w.Trace().Attach(sim.NewTextWriter(&buf))
	in, err := faults.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	apply := sim.HandlerFunc(func(d *sim.Delivery) error { d.Apply("did " + d.Msg.Key); return nil })
	q, err := queue.New(w, queue.Config{Name: "orders", Faults: in, VisibilityTimeout: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := queue.NewConsumer(w, queue.ConsumerConfig{Queue: q, Name: "billing", Instances: 2, Handler: apply}); err != nil {
		t.Fatal(err)
	}
	p1, err := producer.New(w, producer.Config{Name: "shop", Target: q, Count: 30, KeyPattern: "order-%d", KeyCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	lg, err := eventlog.New(w, eventlog.Config{Name: "events", Partitions: 2, Faults: in})
	if err != nil {
		t.Fatal(err)
	}
	g, err := eventlog.NewGroup(w, lg, eventlog.GroupConfig{Name: "audit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a1", "a2"} {
		if _, err := eventlog.NewMember(w, g, eventlog.MemberConfig{Name: n, Handler: apply}); err != nil {
			t.Fatal(err)
		}
	}
	p2, err := producer.New(w, producer.Config{Name: "feed", Target: lg, Count: 30, KeyPattern: "k-%d", KeyCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.RunUntil(func() bool { return p1.Done() && p2.Done() && q.Len() == 0 && g.CaughtUp() }, 300)
	return buf.String(), in, w
}

// Shrinking a real run: "the queue's consumer applied two or more
// duplicate effects" needs at least two firings; Minimize finds a
// 1-minimal schedule (every firing of it matters), and its plan fails
// alone.
func TestMinimizeARealRunToTwoFirings(t *testing.T) {
	fails := func(seed uint64, s faults.Schedule) bool {
		_, _, w := busyWorld(t, seed, faults.Config{Plan: busyPlan(), Replay: &s})
		return w.Ledger().DuplicateEffects("orders") >= 2
	}
	shrunk, sizes := 0, map[int]int{}
	for seed := uint64(1); seed <= 30 && shrunk < 8; seed++ {
		_, in, w := busyWorld(t, seed, faults.Config{Plan: busyPlan(), Record: true})
		if w.Ledger().DuplicateEffects("orders") < 2 {
			continue
		}
		full := in.Fired()
		calls := 0
		min := faults.Minimize(full, func(s faults.Schedule) bool { calls++; return fails(seed, s) })
		if min.Len() == 0 || min.Len() >= full.Len() {
			t.Fatalf("seed %d: %d firings shrunk to %d: %s", seed, full.Len(), min.Len(), min.Words())
		}
		if !fails(seed, min) {
			t.Fatalf("seed %d: the minimal schedule %s does not fail", seed, min.Words())
		}
		for i := range min.Decisions { // 1-minimal: every firing matters
			less := faults.Schedule{Decisions: append(append([]faults.Decision(nil), min.Decisions[:i]...), min.Decisions[i+1:]...)}
			if fails(seed, less) {
				t.Fatalf("seed %d: without %s it still fails: not minimal", seed, min.Decisions[i].Words())
			}
		}
		sizes[min.Len()]++
		_, rin, _ := busyWorld(t, seed, faults.Config{Plan: busyPlan(), Replay: &min})
		_, _, pw := busyWorld(t, seed, faults.Config{Plan: rin.Fired().Plan()})
		if pw.Ledger().DuplicateEffects("orders") < 2 {
			t.Fatalf("seed %d: the plan of %s does not fail:\n%s", seed, min.Words(), rin.Fired().Plan().YAML())
		}
		t.Logf("seed %d: %d firings to %d in %d replays: %s", seed, full.Len(), min.Len(), calls, min.Words())
		shrunk++
	}
	if sizes[2] == 0 {
		t.Errorf("no run shrank to two firings: %v", sizes)
	}
	if shrunk == 0 {
		t.Fatal("no seed had two duplicate effects: the test judged nothing")
	}
}

// withoutRules blanks the rule names, which a Plan renames.
func withoutRules(s faults.Schedule) []faults.Decision {
	out := append([]faults.Decision(nil), s.Decisions...)
	for i := range out {
		out[i].Rule = ""
	}
	return out
}

func TestReplayReproducesTheTraceAndPlanFiresTheSchedule(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	total := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		plain, _ := busyRun(t, seed, faults.Config{Plan: busyPlan()})
		recorded, in := busyRun(t, seed, faults.Config{Plan: busyPlan(), Record: true})
		if plain != recorded {
			t.Fatalf("seed %d: recording changed the run", seed)
		}
		s := in.Fired()
		total += s.Len()
		if s.Len() == 0 {
			t.Fatalf("seed %d: nothing fired", seed)
		}
		replayed, rin := busyRun(t, seed, faults.Config{Plan: busyPlan(), Replay: &s})
		if replayed != recorded {
			t.Fatalf("seed %d: replay differs from the recorded run:\n%s", seed, firstDiff(recorded, replayed))
		}
		if got := rin.Fired(); !reflect.DeepEqual(got, s) {
			t.Fatalf("seed %d: replay fired %s\nwant %s", seed, got.Words(), s.Words())
		}
		for _, r := range busyPlan().Rules {
			h, _ := in.Handle(r.Name)
			rh, _ := rin.Handle(r.Name)
			if h.Fired() != rh.Fired() {
				t.Fatalf("seed %d: rule %s fired %d times, %d in the replay", seed, r.Name, h.Fired(), rh.Fired())
			}
		}
		// The explicit plan, run normally, fires the same decisions.
		plan := s.Plan()
		for _, r := range plan.Rules {
			if r.Probability != 0 || r.Until != r.From+1 {
				t.Fatalf("seed %d: plan rule %#v is not a one-tick deterministic rule", seed, r)
			}
		}
		_, pin := busyRun(t, seed, faults.Config{Plan: plan, Record: true})
		if got := pin.Fired(); !reflect.DeepEqual(withoutRules(got), withoutRules(s)) {
			t.Fatalf("seed %d: the plan fired\n%s\nwant\n%s\nplan:\n%s", seed, got.Words(), s.Words(), plan.YAML())
		}
	}
	t.Logf("%d seeds, %d firings replayed", seeds, total)
}

// A replayed subset fires only decisions of the subset; its own Fired,
// turned into a plan, fires exactly it again.
func TestReplayOfASubsetFiresNothingElse(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		_, in := busyRun(t, seed, faults.Config{Plan: busyPlan(), Record: true})
		full := in.Fired()
		var sub faults.Schedule
		for i, d := range full.Decisions {
			if i%3 == 0 {
				sub.Decisions = append(sub.Decisions, d)
			}
		}
		_, rin := busyRun(t, seed, faults.Config{Plan: busyPlan(), Replay: &sub})
		got := rin.Fired()
		if got.Len() > sub.Len() {
			t.Fatalf("seed %d: replay of %d decisions fired %d", seed, sub.Len(), got.Len())
		}
		listed := map[string]bool{}
		for _, d := range sub.Decisions {
			listed[ident(d)] = true
		}
		for _, d := range got.Decisions {
			if !listed[ident(d)] {
				t.Fatalf("seed %d: replay fired %s, which is not in the schedule", seed, d.Words())
			}
		}
		_, pin := busyRun(t, seed, faults.Config{Plan: got.Plan(), Record: true})
		if p := pin.Fired(); !reflect.DeepEqual(withoutRules(p), withoutRules(got)) {
			t.Fatalf("seed %d: plan of the replay fired %s\nwant %s", seed, p.Words(), got.Words())
		}
	}
}

// ident is a decision's opportunity without its tick for messages (which
// a shorter run may shift).
func ident(d faults.Decision) string {
	if d.Msg != 0 {
		d.Tick = 0
	}
	d.Nth = 0
	return fmt.Sprintf("%+v", d)
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(al), len(bl))
}
