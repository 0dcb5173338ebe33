package lab

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// naiveBilling is the explore fixture: billing and shipping consumers
// under five probabilistic fault rules.
const naiveBilling = "../scenario/testdata/explore/naive-billing.yaml"

// outcome returns the outcome whose text is text, failing the test when
// there is none.
func outcome(t *testing.T, rep *Report, text string) Outcome {
	t.Helper()
	for _, o := range rep.Outcomes {
		if o.Text == text {
			return o
		}
	}
	t.Fatalf("no outcome %q in %v", text, rep.Outcomes)
	return Outcome{}
}

// counting is a handler that applies one effect per delivery and counts
// its calls.
type counting struct {
	calls  int
	fixed  bool
	failOn string // a key it fails permanently for, until fixed
}

func (c *counting) Handle(d *sim.Delivery) error {
	c.calls++
	if !c.fixed && c.failOn != "" && d.Msg.Key == c.failOn {
		return sim.ErrPoison
	}
	d.Apply("charged")
	return nil
}

func (c *counting) Fix() { c.fixed = true }

func TestBindLessonConsumerChangesOutcome(t *testing.T) {
	s, err := scenario.LoadLesson("idempotent-consumer")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Execute(s, Options{})
	if err != nil || !rep.Pass {
		t.Fatalf("the lesson as written: err %v, pass %v", err, rep.Pass)
	}
	if vs := rep.Violations(); len(vs) != 0 {
		t.Fatalf("a passing report has violations: %v", vs)
	}
	// The lesson's safe consumer is idempotent by message ID; a naive Go
	// handler bound in its place charges every duplicate.
	naive := &counting{}
	rep, err = Execute(s, Options{Handlers: map[string]sim.Handler{"safe": naive}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass {
		t.Fatal("a naive handler bound to safe: the report passes")
	}
	o := outcome(t, rep, "exactly_once(safe)")
	if o.Pass || len(o.Violations) == 0 || o.Check != scenario.CheckExactlyOnce {
		t.Fatalf("exactly_once(safe): pass %v, check %q, violations %v", o.Pass, o.Check, o.Violations)
	}
	if naive.calls == 0 {
		t.Fatal("the bound handler was never called")
	}
	vs := rep.Violations()
	if len(vs) != len(o.Violations) {
		t.Fatalf("Violations() = %d, the failing check has %d", len(vs), len(o.Violations))
	}
	for _, v := range vs {
		if v.Msg == 0 || v.Tick == 0 || v.Check == "" {
			t.Errorf("violation without message, tick or check: %+v", v)
		}
	}
	if f := rep.Failures(); len(f) != 2 || f[0].Text != "exactly_once(safe)" || f[1].Check != "" {
		t.Errorf("Failures() = %v, want exactly_once(safe) and the duplicate_effects metric of safe-in", f)
	}
}

func TestBindUnknownName(t *testing.T) {
	s := loadFixture(t)
	s.File = "orders.yaml"
	_, err := New(s, Options{Handlers: map[string]sim.Handler{"biling": sim.Effect("")}})
	want := `lab: no consumer "biling" in orders.yaml; it has: billing, shipping (did you mean "billing"?)`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
	var be *BindError
	if !errors.Is(err, ErrUnknownHandler) || !errors.As(err, &be) || be.Name != "biling" {
		t.Fatalf("error %v does not wrap ErrUnknownHandler as a *BindError", err)
	}
	// Every bad name at once, in name order; a nil handler is refused.
	_, err = New(s, Options{Handlers: map[string]sim.Handler{"zz": sim.Effect(""), "billing": nil, "aa": sim.Effect("")}})
	if err == nil {
		t.Fatal("bad names accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"aa"`) || !strings.Contains(lines[1], `"billing"`) ||
		!strings.Contains(lines[1], "nil") || !strings.Contains(lines[2], `"zz"`) {
		t.Fatalf("errors:\n%v", err)
	}
	// A lesson names its file as lessons/NAME.yaml.
	l, err := scenario.LoadLesson("idempotent-consumer")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(l, Options{Handlers: map[string]sim.Handler{"nave": sim.Effect("")}})
	if err == nil || !strings.HasPrefix(err.Error(), `lab: no consumer "nave" in lessons/idempotent-consumer.yaml; it has: naive, safe`) {
		t.Fatalf("lesson error: %v", err)
	}
}

func loadFixture(t *testing.T) *scenario.Scenario {
	t.Helper()
	s, err := scenario.LoadFile(naiveBilling)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBindIdempotentPassesWhereNaiveFails(t *testing.T) {
	s := loadFixture(t)
	seed := uint64(5) // a seed at which the broker duplicates an order
	naive, err := Execute(s, Options{Seed: &seed, Handlers: map[string]sim.Handler{"billing": sim.Effect("charged")}})
	if err != nil {
		t.Fatal(err)
	}
	if o := outcome(t, naive, "exactly_once(billing)"); o.Pass || len(o.Violations) == 0 {
		t.Fatalf("naive handler at seed %d: exactly_once(billing) %+v", seed, o)
	}
	safe, err := Execute(s, Options{Seed: &seed,
		Handlers: map[string]sim.Handler{"billing": sim.Idempotent(sim.Effect("charged"), sim.ByMessageID)}})
	if err != nil {
		t.Fatal(err)
	}
	if !safe.Pass {
		var b strings.Builder
		safe.WriteText(&b)
		t.Fatalf("idempotent handler at seed %d fails:\n%s", seed, b.String())
	}
	if safe.Stats.Absorbed == 0 {
		t.Fatal("the idempotent handler absorbed nothing: the seed does not duplicate")
	}
}

// The fault plan applies to a bound handler: a handler.* firing fails the
// attempt before the bound handler runs.
func TestBindFaultPlanStillApplies(t *testing.T) {
	s := loadFixture(t)
	for seed := uint64(1); seed <= 20; seed++ {
		h := &counting{}
		rec := &sim.Recorder{}
		if _, err := Execute(s, Options{Seed: &seed, Sinks: []sim.Sink{rec}, Handlers: map[string]sim.Handler{"billing": h}}); err != nil {
			t.Fatal(err)
		}
		delivered, processed, failedFirst := 0, 0, 0
		for _, e := range rec.Events() {
			switch {
			case e.Where != "queue:orders":
			case e.Kind == sim.KindReceived || e.Kind == sim.KindRedelivered:
				delivered++
			case e.Kind == sim.KindProcessed:
				processed++
			case e.Kind == sim.KindFault && e.Rule == "flaky":
				failedFirst++
			}
		}
		if h.calls != processed || h.calls != delivered-failedFirst {
			t.Fatalf("seed %d: bound handler called %d times (%d effects) for %d deliveries and %d handler.transient firings",
				seed, h.calls, processed, delivered, failedFirst)
		}
		if failedFirst > 0 {
			return
		}
	}
	t.Fatal("no seed in 1..20 fired handler.transient at billing: the test proves nothing")
}

func TestBindMemberAndSubscriber(t *testing.T) {
	s, err := scenario.LoadLesson("offline-subscriber")
	if err != nil {
		t.Fatal(err)
	}
	member, sub := &counting{}, &counting{}
	rep, err := Execute(s, Options{Handlers: map[string]sim.Handler{"analytics-1": member, "mailer": sub}})
	if err != nil {
		t.Fatal(err)
	}
	if member.calls == 0 || sub.calls == 0 {
		t.Fatalf("calls: member %d, subscriber %d", member.calls, sub.calls)
	}
	if rep.Stats.Delivered == 0 {
		t.Fatal("nothing delivered")
	}
	// A subscriber that fails every copy applies nothing: the report changes.
	before, err := Execute(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fail := sim.HandlerFunc(func(*sim.Delivery) error { return sim.ErrPermanent })
	after, err := Execute(s, Options{Handlers: map[string]sim.Handler{"mailer": fail}})
	if err != nil {
		t.Fatal(err)
	}
	if after.Stats.Lost <= before.Stats.Lost {
		t.Fatalf("a failing bound subscriber lost %d, the scripted one %d", after.Stats.Lost, before.Stats.Lost)
	}
}

func TestBindFixHandler(t *testing.T) {
	s, err := scenario.LoadLesson("poison-dlq")
	if err != nil {
		t.Fatal(err)
	}
	// A Fixer is fixed by the timeline's fix_handler, as the script is.
	h := &counting{failOn: "kunde-2"}
	rec := &sim.Recorder{}
	rep, err := Execute(s, Options{Sinks: []sim.Sink{rec}, Handlers: map[string]sim.Handler{"worker": h}})
	if err != nil {
		t.Fatal(err)
	}
	if !h.fixed {
		t.Fatal("fix_handler did not fix the bound Fixer")
	}
	dead := 0
	for _, e := range rec.Events() {
		if e.Kind == sim.KindDeadLettered && e.Key == "kunde-2" {
			dead++
		}
	}
	if dead == 0 || !rep.Pass {
		t.Fatalf("the bound handler's poison key was dead-lettered %d times; pass %v", dead, rep.Pass)
	}
	// A handler without Fix makes fix_handler a positioned runtime error.
	_, err = Execute(s, Options{Handlers: map[string]sim.Handler{"worker": sim.Effect("")}})
	if err == nil || !strings.Contains(err.Error(), "lessons/poison-dlq.yaml:") || !strings.Contains(err.Error(), "no Fix method") {
		t.Fatalf("fix_handler on a handler without Fix: %v", err)
	}
}
