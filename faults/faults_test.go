package faults

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenPlan exercises every rule kind: probability, window, count, nth and
// match, at several points.
func goldenPlan() Plan {
	return Plan{Rules: []Rule{
		{Name: "flaky-handler", Point: HandlerTransient, Probability: 0.3, Param: 2},
		{Name: "poison-kunde-2", Point: HandlerPoison, Match: Match{Key: "kunde-2"}},
		{Name: "crash-w1", Point: ConsumerCrashBeforeProcess, Probability: 0.2, Match: Match{Consumer: "worker-1"}, Count: 3},
		{Name: "outage", Point: BrokerUnavailable, From: 20, Until: 25},
		{Name: "dup", Point: BrokerDuplicate, Probability: 0.1, Match: Match{Type: "order.*"}},
		{Name: "second-send", Point: BrokerDelay, Nth: 2, Param: 4},
	}}
}

func decisions(seed uint64) []byte {
	w, _ := sim.New(sim.Config{Seed: seed})
	env := w.Env()
	var buf bytes.Buffer
	env.Trace.Attach(sim.NewTextWriter(&buf))
	in, err := New(w, Config{Plan: goldenPlan()})
	if err != nil {
		panic(err)
	}
	points := []Point{HandlerTransient, HandlerPoison, ConsumerCrashBeforeProcess, BrokerUnavailable, BrokerDuplicate, BrokerDelay}
	for tick := 1; tick <= 40; tick++ {
		env.Clock.Set(sim.Tick(tick))
		for i, p := range points {
			c := Context{
				Where:    "queue:orders",
				Consumer: fmt.Sprintf("worker-%d", 1+(tick+i)%2),
				Key:      fmt.Sprintf("kunde-%d", (tick*7+i)%3),
				Type:     []string{"order.placed", "invoice.sent"}[tick%2],
				Msg:      sim.ID(tick),
			}
			if f, ok := in.Check(p, c); ok {
				fmt.Fprintf(&buf, "  -> %s param=%d\n", f.Rule, f.Param)
			}
		}
	}
	for _, s := range in.Stats() {
		fmt.Fprintf(&buf, "stat %s %s opportunities=%d fired=%d\n", s.Name, s.Point, s.Opportunities, s.Fired)
	}
	return buf.Bytes()
}

// TestDecisionSequenceGolden freezes the decisions for seeds 1, 2 and 3: a
// change here changes the replay of every recorded run.
func TestDecisionSequenceGolden(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		got := decisions(seed)
		if !bytes.Equal(got, decisions(seed)) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
		path := filepath.Join("testdata", fmt.Sprintf("decisions-seed%d.golden", seed))
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("seed %d decisions changed:\n%s", seed, got)
		}
	}
	if bytes.Equal(decisions(1), decisions(2)) {
		t.Fatal("seeds 1 and 2 made identical decisions")
	}
}

func TestAddingARuleDoesNotShiftOthers(t *testing.T) {
	run := func(extra bool) string {
		w, _ := sim.New(sim.Config{Seed: 9})
		plan := Plan{Rules: []Rule{{Name: "a", Point: BrokerDuplicate, Probability: 0.5}}}
		if extra {
			plan.Rules = append([]Rule{{Name: "z", Point: HandlerSlow, Probability: 0.5}}, plan.Rules...)
		}
		in, _ := New(w, Config{Plan: plan})
		var b strings.Builder
		for i := 0; i < 50; i++ {
			in.Check(HandlerSlow, Context{})
			_, ok := in.Check(BrokerDuplicate, Context{})
			fmt.Fprint(&b, map[bool]int{true: 1, false: 0}[ok])
		}
		return b.String()
	}
	if run(false) != run(true) {
		t.Fatal("a rule at another point changed this rule's decisions")
	}
}

func TestRuleKinds(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	rec := &sim.Recorder{}
	env.Trace.Attach(rec)
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{
		{Name: "window", Point: BrokerUnavailable, From: 3, Until: 5},
		{Name: "twice", Point: HandlerPermanent, Count: 2},
		{Name: "third", Point: HandlerSlow, Nth: 3, Param: 7},
		{Name: "glob", Point: HandlerPoison, Match: Match{Key: "kunde-*", Where: "queue:orders"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for tick := sim.Tick(1); tick <= 6; tick++ {
		env.Clock.Set(tick)
		_, down := in.Check(BrokerUnavailable, Context{})
		_, perm := in.Check(HandlerPermanent, Context{})
		f, slow := in.Check(HandlerSlow, Context{})
		_, poison := in.Check(HandlerPoison, Context{Key: []string{"kunde-1", "other"}[tick%2], Where: "queue:orders"})
		got = append(got, fmt.Sprintf("%d:%v%v%v%v/%d", tick, b(down), b(perm), b(slow), b(poison), f.Param))
	}
	want := "1:0100/0 2:0101/0 3:1010/7 4:1001/0 5:0000/0 6:0001/0"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("got  %s\nwant %s", s, want)
	}
	if n := len(rec.Events()); n != 8 {
		t.Fatalf("%d fault events traced, want 8", n)
	}
	if e := rec.Events()[0]; e.Kind != sim.KindFault || e.Rule != "twice" || e.Detail != string(HandlerPermanent) {
		t.Fatalf("first event %+v", e)
	}
	if err := in.Disable("glob"); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.Check(HandlerPoison, Context{Key: "kunde-1", Where: "queue:orders"}); ok || in.Has(HandlerPoison) {
		t.Fatal("disabled rule fired")
	}
	if err := in.Disable("nope"); !errors.Is(err, ErrUnknownRule) {
		t.Fatalf("disable unknown: %v", err)
	}
	if _, err := in.Add(Rule{Name: "manual", Point: MemberCrash}); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.Check(MemberCrash, Context{Group: "g"}); !ok {
		t.Fatal("rule added at run time did not fire")
	}
	if _, err := in.Add(Rule{Name: "manual", Point: MemberCrash}); !errors.Is(err, ErrInvalidRule) {
		t.Fatalf("duplicate add: %v", err)
	}
}

func b(x bool) int {
	if x {
		return 1
	}
	return 0
}

func TestValidateReportsEveryProblem(t *testing.T) {
	bad := Plan{Rules: []Rule{
		{Point: BrokerDelay},
		{Name: "x", Point: "no.such.point"},
		{Name: "p", Point: BrokerDelay, Probability: 1.5},
		{Name: "w", Point: BrokerDelay, From: 5, Until: 5},
		{Name: "n", Point: BrokerDelay, Count: -1},
		{Name: "g", Point: BrokerDelay, Match: Match{Key: "["}},
		{Name: "ok", Point: BrokerDelay},
		{Name: "ok", Point: BrokerDelay},
	}}
	err := bad.Validate()
	if err == nil {
		t.Fatal("invalid plan accepted")
	}
	msg := err.Error()
	for _, want := range []string{"needs a name", "unknown fault point", "outside [0, 1]", "is empty", "negative", "bad pattern", "used twice"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if !errors.Is(err, ErrInvalidRule) {
		t.Fatal("errors must wrap ErrInvalidRule")
	}
	w0, _ := sim.New(sim.Config{})
	if _, err := New(w0, Config{Plan: bad}); err == nil {
		t.Fatal("New accepted an invalid plan")
	}
}

func TestNilInjectorNeverFires(t *testing.T) {
	var in *Injector
	if _, ok := in.Check(BrokerDuplicate, Context{}); ok || in.Has(BrokerDuplicate) || in.Stats() != nil {
		t.Fatal("nil injector fired")
	}
}

func TestPointsAreSortedAndDocumented(t *testing.T) {
	for i, p := range Points {
		if i > 0 && Points[i-1].Point >= p.Point {
			t.Fatalf("points not sorted at %s", p.Point)
		}
		if p.Doc == "" || !Known(p.Point) {
			t.Fatalf("%s undocumented or unknown", p.Point)
		}
	}
	if len(Points) != 26 {
		t.Fatalf("%d points", len(Points))
	}
}

// index, a lookup by hash, finds every point where Points has it, and
// nothing for a name that is no point, or only a prefix of one.
func TestIndexIsThePositionInPoints(t *testing.T) {
	for i, p := range Points {
		if got := index(p.Point); got != i {
			t.Errorf("index(%s) = %d, want %d", p.Point, got, i)
		}
	}
	for _, p := range []Point{"", "handler", "handler.transien", "handler.transient ", "nope"} {
		if got := index(p); got != -1 || Known(p) {
			t.Errorf("index(%q) = %d, Known %v; want -1, false", p, got, Known(p))
		}
	}
}

// TestNewAllocatesPerPlanNotPerRule checks that New makes a plan's rules
// and points in a few allocations however many rules it has, and that
// rules added later, at a new point or one already targeted, fire in plan
// order after them.
func TestNewAllocatesPerPlanNotPerRule(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	plan := Plan{Rules: []Rule{
		{Name: "flaky", Point: HandlerTransient, Probability: 0.05},
		{Name: "dup", Point: BrokerDuplicate, Probability: 0.02},
		{Name: "crash", Point: ConsumerCrashAfterEffect, Probability: 0.02},
		{Name: "dup-b", Point: BrokerDuplicate, Match: Match{Key: "b"}},
	}}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := New(w, Config{Plan: plan}); err != nil {
			t.Fatal(err)
		}
	})
	// The injector, its rules and the Match of its last rule.
	if allocs > 3 {
		t.Errorf("a plan of %d rules took %v allocations, want at most 3", len(plan.Rules), allocs)
	}
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{{Name: "only-a", Point: BrokerDuplicate, Match: Match{Key: "a"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Rule{{Name: "dup", Point: BrokerDuplicate}, {Name: "late", Point: BrokerDelay}, {Name: "never", Point: BrokerDuplicate}} {
		if _, err := in.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]string{"a": "only-a", "b": "dup"} {
		if f, ok := in.Check(BrokerDuplicate, Context{Key: key}); !ok || f.Rule != want {
			t.Errorf("key %s: %+v %v, want rule %s", key, f, ok, want)
		}
	}
	if f, ok := in.Check(BrokerDelay, Context{}); !ok || f.Rule != "late" {
		t.Errorf("delay: %+v %v, want rule late", f, ok)
	}
	got := 0
	for r := in.head(BrokerDuplicate); r != nil; r = r.next {
		got++
	}
	if got != 3 {
		t.Errorf("broker.duplicate has %d rules, want 3", got)
	}
}
