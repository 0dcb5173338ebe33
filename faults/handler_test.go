package faults

import (
	"errors"
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

func TestHandlerConsultsTheHandlerPoints(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{
		{Name: "poison", Point: HandlerPoison, Match: Match{Key: "bad"}},
		{Name: "flaky", Point: HandlerTransient, Match: Match{Key: "flaky"}, Count: 1, Param: 3},
		{Name: "slow", Point: HandlerSlow, Match: Match{Key: "slow"}, Param: 4},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	h := in.Handler(&sim.Script{Ticks: 1})
	deliver := func(id sim.ID, key string) (*sim.Delivery, error) {
		d := sim.NewDelivery(w.Env(), sim.Message{ID: id, Key: key}, "queue:q", "worker", "worker#1", 1)
		return d, h.Handle(d)
	}
	if _, err := deliver(1, "bad"); sim.Classify(err) != sim.ClassPoison {
		t.Fatalf("poison: %v", err)
	}
	for i := 0; i < 3; i++ { // Param 3: three attempts fail, then it works
		if _, err := deliver(2, "flaky"); sim.Classify(err) != sim.ClassTransient {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	if d, err := deliver(2, "flaky"); err != nil || d.Effects() != 1 {
		t.Fatalf("fourth attempt: %v, %d effects", err, d.Effects())
	}
	d := sim.NewDelivery(w.Env(), sim.Message{ID: 3, Key: "slow"}, "queue:q", "worker", "", 1)
	if got := sim.DurationOf(h, d); got != 5 {
		t.Fatalf("slow handler takes %d ticks, want 1 + 4", got)
	}
	if in.Handler(nil) == nil || (*Injector)(nil).Handler(sim.Effect("x")) == nil {
		t.Fatal("wrappers must not be nil")
	}
}

// TestHandlerFailuresReuseTheirErrors checks that the errors of handler
// firings read as a freshly made one would, class and text, for every
// rule and error text, and that a rule firing again hands out its error
// without allocating.
func TestHandlerFailuresReuseTheirErrors(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{
		{Name: "poison", Point: HandlerPoison, Match: Match{Key: "bad"}},
		{Name: "gone", Point: HandlerPermanent, Match: Match{Key: "gone"}, Error: "account closed"},
		{Name: "flaky", Point: HandlerTransient, Match: Match{Key: "flaky"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	h := in.Handler(sim.Effect(""))
	d := sim.NewDelivery(w.Env(), sim.Message{ID: 1}, "queue:q", "worker", "", 1)
	for _, tc := range []struct {
		key   string
		class sim.Class
		text  string
	}{
		{"bad", sim.ClassPoison, fail(sim.ErrPoison, &Firing{Rule: "poison"}).Error()},
		{"gone", sim.ClassPermanent, fail(sim.ErrPermanent, &Firing{Rule: "gone", Error: "account closed"}).Error()},
		{"flaky", sim.ClassTransient, fail(sim.ErrTransient, &Firing{Rule: "flaky"}).Error()},
	} {
		for round := 1; round <= 2; round++ {
			d.Msg.Key = tc.key
			err := h.Handle(d)
			if sim.Classify(err) != tc.class || err.Error() != tc.text {
				t.Errorf("%s, firing %d: %v (class %v), want %q (class %v)", tc.key, round, err, sim.Classify(err), tc.text, tc.class)
			}
		}
	}
	d.Msg.Key = "flaky"
	if n := testing.AllocsPerRun(20, func() { _ = h.Handle(d) }); n != 0 {
		t.Errorf("a repeated firing allocates %v times", n)
	}
}

// TestHandlerFollowsRulesAddedAndDisabled checks that a wrapper made
// before any handler rule existed fails deliveries as soon as a rule is
// added at each failure point, stops as soon as the rule is disabled
// through its handle, and still fails the further attempts a transient
// firing owes after its rule was disabled.
func TestHandlerFollowsRulesAddedAndDisabled(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{
		{Name: "dup", Point: BrokerDuplicate}, // armed, but no handler point
	}}})
	if err != nil {
		t.Fatal(err)
	}
	h := in.Handler(sim.Effect(""))
	deliver := func(id sim.ID) error {
		return h.Handle(sim.NewDelivery(w.Env(), sim.Message{ID: id, Key: "k"}, "queue:q", "worker", "", 1))
	}
	if err := deliver(1); err != nil {
		t.Fatalf("no handler rule: %v", err)
	}
	for i, tc := range []struct {
		point Point
		class sim.Class
	}{
		{HandlerPoison, sim.ClassPoison},
		{HandlerPermanent, sim.ClassPermanent},
		{HandlerRateLimited, sim.ClassTransient},
		{HandlerTransient, sim.ClassTransient},
	} {
		r, err := in.Add(Rule{Name: string(tc.point), Point: tc.point})
		if err != nil {
			t.Fatal(err)
		}
		id := sim.ID(10 + i)
		if err := deliver(id); sim.Classify(err) != tc.class {
			t.Errorf("%s added: %v, want class %v", tc.point, err, tc.class)
		}
		r.Disable()
		if err := deliver(id); err != nil {
			t.Errorf("%s disabled: %v", tc.point, err)
		}
		if r.Fired() != 1 {
			t.Errorf("%s fired %d times, want 1", tc.point, r.Fired())
		}
	}
	r, err := in.Add(Rule{Name: "flaky", Point: HandlerTransient, Param: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := deliver(20); sim.Classify(err) != sim.ClassTransient {
		t.Fatalf("flaky: %v", err)
	}
	r.Disable()
	for i := 2; i <= 3; i++ { // the firing owes two more failures
		if err := deliver(20); !errors.Is(err, sim.ErrTransient) {
			t.Fatalf("attempt %d after disabling: %v", i, err)
		}
	}
	if err := deliver(20); err != nil {
		t.Fatalf("fourth attempt: %v", err)
	}
}

// TestFiredErrorReadsAsFmt checks that the error of a handler firing reads
// and unwraps exactly as the fmt.Errorf it replaces, with and without an
// error text, and every time it is asked.
func TestFiredErrorReadsAsFmt(t *testing.T) {
	for _, class := range []error{sim.ErrTransient, sim.ErrPermanent, sim.ErrPoison} {
		for _, x := range []Firing{{Rule: "flaky"}, {Rule: "flaky", Error: "connection reset"}} {
			want := fmt.Errorf("%w (rule %s)", class, x.Rule)
			if x.Error != "" {
				want = fmt.Errorf("%w: %s (rule %s)", class, x.Error, x.Rule)
			}
			got := fail(class, &x)
			for range 2 {
				if got.Error() != want.Error() {
					t.Errorf("fail(%v, %+v) reads %q, want %q", class, x, got.Error(), want.Error())
				}
			}
			if !errors.Is(got, class) || errors.Unwrap(got) != class {
				t.Errorf("fail(%v, %+v) does not wrap its class", class, x)
			}
		}
	}
}

// Passes is false while a handler point is armed, and while the wrapper
// owes a message failures of an earlier transient firing after its rule
// was disabled; true once the debt is paid, for a handler the injector did
// not wrap, and for a nil injector.
func TestPassesFollowsArmedPointsAndDebts(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{{Name: "t", Point: HandlerTransient, Probability: 1, Param: 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	var nilIn *Injector
	plain := sim.Effect("")
	h := in.Handler(plain)
	if in.Passes(h) || in.Passes(nil) {
		t.Fatal("passes while handler.transient is armed")
	}
	if !nilIn.Passes(h) {
		t.Fatal("a nil injector does not pass")
	}
	m := w.Env().NewMessage("k", nil, sim.Headers{})
	handle := func() error { return h.Handle(sim.NewDelivery(w.Env(), m, "queue:q", "c", "", 1)) }
	if handle() == nil {
		t.Fatal("the transient rule did not fire")
	}
	if err := in.Disable("t"); err != nil {
		t.Fatal(err)
	}
	if !in.Passes(plain) || !in.Passes(nil) {
		t.Fatal("a handler the injector did not wrap does not pass once no point is armed")
	}
	fails := 0
	for range 5 {
		if in.Passes(h) {
			break
		}
		if handle() != nil {
			fails++
		}
	}
	if !in.Passes(h) || fails != 2 {
		t.Fatalf("passes %v after %d owed failures; want true after 2", in.Passes(h), fails)
	}
}

// TestHandlerContextWhenRead checks the handler points of a plan whose
// rules have no Match, which build a delivery's context only for a
// firing: the fault event names the delivery's component, instance, key
// and message as a Check with the context built up front does. A rule
// with a Match added later to such a point reads the context before any
// rule fires, and still matches: the wrapper made before it builds the
// context up front from then on.
func TestHandlerContextWhenRead(t *testing.T) {
	w, _ := sim.New(sim.Config{Seed: 1})
	env := w.Env()
	var faults []sim.Event
	env.Trace.Attach(sim.SinkFunc(func(e *sim.Event) {
		if e.Kind == sim.KindFault {
			faults = append(faults, *e)
		}
	}))
	in, err := New(w, Config{Plan: Plan{Rules: []Rule{
		{Name: "flaky", Point: HandlerTransient, Count: 1},
		{Name: "slow", Point: HandlerSlow, Count: 1, Param: 2},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	h := in.Handler(sim.Effect(""))
	d := sim.NewDelivery(env, sim.Message{ID: 7, Key: "k1"}, "queue:q", "worker", "worker#2", 1)
	if got := sim.DurationOf(h, d); got != 2 {
		t.Fatalf("slow: %d ticks, want 2", got)
	}
	if err := h.Handle(d); sim.Classify(err) != sim.ClassTransient {
		t.Fatalf("flaky: %v", err)
	}
	if len(faults) != 2 {
		t.Fatalf("%d fault events, want 2", len(faults))
	}
	for _, e := range faults {
		if e.Where != "queue:q" || e.Actor != "worker#2" || e.Key != "k1" || e.Msg != 7 {
			t.Errorf("fault event %+v does not name the delivery", e)
		}
	}
	if _, err := in.Add(Rule{Name: "only-k2", Point: HandlerTransient, Match: Match{Key: "k2"}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(d); err != nil {
		t.Fatalf("k1 after only-k2 was added: %v", err)
	}
	d.Msg.Key = "k2"
	if err := h.Handle(d); sim.Classify(err) != sim.ClassTransient {
		t.Fatalf("k2 after only-k2 was added: %v", err)
	}
}
