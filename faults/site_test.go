package faults

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// consult runs the golden plan's opportunities for 40 ticks against an
// injector made with cfg, asking either through Has and CheckRef or
// through Sites resolved before the run (points no rule targets among
// them), and returns the trace, the firings and the stats. Halfway it
// adds a rule for a point no rule targeted and one for a point a rule
// targets, and disables another by name; at tick 30 it disables a
// point's only rule through its Handle. Sites must see all of it as Has
// and CheckRef do.
func consult(t *testing.T, cfg Config, sites bool) ([]byte, Schedule) {
	t.Helper()
	w, _ := sim.New(sim.Config{Seed: 7})
	env := w.Env()
	var buf bytes.Buffer
	env.Trace.Attach(sim.NewTextWriter(&buf))
	cfg.Plan = goldenPlan()
	in, err := New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	points := []Point{HandlerTransient, HandlerPoison, ConsumerCrashBeforeProcess, BrokerUnavailable, BrokerDuplicate, BrokerDelay, BrokerReorder, HandlerSlow}
	var at []Site
	for _, p := range points {
		at = append(at, in.Site(p))
	}
	for tick := 1; tick <= 40; tick++ {
		env.Clock.Set(sim.Tick(tick))
		if tick == 20 {
			if _, err := in.Add(Rule{Name: "late-reorder", Point: BrokerReorder, Probability: 0.5}); err != nil {
				t.Fatal(err)
			}
			if _, err := in.Add(Rule{Name: "late-delay", Point: BrokerDelay, Probability: 0.5, Param: 2}); err != nil {
				t.Fatal(err)
			}
			if err := in.Disable("dup"); err != nil {
				t.Fatal(err)
			}
		}
		if tick == 30 {
			// The point's only rule, switched off through its handle:
			// the point is no longer armed, though still consulted.
			h, ok := in.Handle("poison-kunde-2")
			if !ok {
				t.Fatal("no handle for poison-kunde-2")
			}
			h.Disable()
		}
		for i, p := range points {
			c := Context{Where: "queue:orders", Consumer: fmt.Sprintf("worker-%d", 1+(tick+i)%2),
				Key: fmt.Sprintf("kunde-%d", (tick*7+i)%3), Type: []string{"order.placed", "invoice.sent"}[tick%2], Msg: sim.ID(tick)}
			var armed, consulted bool
			var f *Firing
			if sites {
				armed, consulted = at[i].Armed(), at[i].Consulted()
				f = at[i].Check(&c)
			} else {
				armed = in.Has(p)
				f = in.CheckRef(p, &c)
				consulted = f != nil || in.head(p) != nil || in.rec != nil && in.rec.replay != nil && in.rec.replays(p)
			}
			if f != nil && !consulted {
				t.Fatalf("tick %d %s fired, but the site said it is not consulted", tick, p)
			}
			fmt.Fprintf(&buf, "t=%d %s armed=%v consulted=%v", tick, p, armed, consulted)
			if f != nil {
				fmt.Fprintf(&buf, " -> %s param=%d", f.Rule, f.Param)
			}
			buf.WriteByte('\n')
		}
	}
	for _, s := range in.Stats() {
		fmt.Fprintf(&buf, "stat %s %s opportunities=%d fired=%d\n", s.Name, s.Point, s.Opportunities, s.Fired)
	}
	fmt.Fprintf(&buf, "fired %+v\n", in.Fired())
	return buf.Bytes(), in.Fired()
}

// TestSiteDecidesAsHasAndCheckRef checks that consulting points through
// Sites resolved up front fires, draws, counts and records exactly what
// Has and CheckRef do, in a plain run, a recording one and a replay of
// it, with a rule added and another disabled during the run.
func TestSiteDecidesAsHasAndCheckRef(t *testing.T) {
	_, rec := consult(t, Config{Record: true}, false)
	if len(rec.Decisions) == 0 {
		t.Fatal("the recording run fired nothing")
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"plain", Config{}}, {"recording", Config{Record: true}}, {"replay", Config{Replay: &rec}}} {
		want, _ := consult(t, tc.cfg, false)
		got, _ := consult(t, tc.cfg, true)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: through Sites\n%s\nthrough Has and CheckRef\n%s", tc.name, got, want)
		}
		if !bytes.Contains(want, []byte("->")) {
			t.Errorf("%s: nothing fired: the comparison proves nothing", tc.name)
		}
	}
}

// TestZeroSiteNeverFires checks the Site of a nil injector, of a point
// that is not a fault point, and the zero Site.
func TestZeroSiteNeverFires(t *testing.T) {
	var nilIn *Injector
	w, _ := sim.New(sim.Config{Seed: 1})
	in, _ := New(w, Config{Plan: Plan{Rules: []Rule{{Name: "always", Point: BrokerDelay}}}})
	for _, s := range []Site{{}, nilIn.Site(BrokerDelay), in.Site("no.such_point")} {
		if s.Armed() || s.Consulted() || s.Check(&Context{}) != nil {
			t.Errorf("%+v fires", s)
		}
	}
	if s := in.Site(BrokerDelay); !s.Armed() || s.Check(&Context{}) == nil {
		t.Error("the site of an always-firing rule does not fire")
	}
}

// TestSiteAllocatesNothing checks the cost Site promises: resolving and
// consulting a point no rule targets allocates nothing.
func TestSiteAllocatesNothing(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, _ := New(w, Config{Plan: goldenPlan()})
	c := &Context{Where: "queue:orders"}
	if n := testing.AllocsPerRun(100, func() {
		s := in.Site(BrokerReorder)
		if s.Armed() || s.Consulted() || s.Check(c) != nil {
			t.Fatal("an untargeted point fired")
		}
	}); n != 0 {
		t.Fatalf("%v allocations per resolve and consultation", n)
	}
}
