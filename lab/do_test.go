package lab

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
)

// handBuilt returns the action a player builds by hand for the file's
// action a, and false when no hand builder makes a's kind.
func handBuilt(a scenario.Action) (scenario.Action, bool) {
	switch {
	case a.Action == scenario.ActionSeek && a.To == eventlog.SeekToEarliest && a.Partition < 0:
		return SeekEarliest(a.Group), true
	case a.Action == scenario.ActionRedrive && a.Count == 0:
		return Redrive(a.Queue), true
	case a.Action == scenario.ActionCrash:
		return Crash(a.Consumer + a.Member), true
	}
	return scenario.Action{}, false
}

// traceWith runs s to the end and returns its text trace; extra, when
// non-nil, is put on the World's timeline before the run starts.
func traceWith(t *testing.T, s *scenario.Scenario, extra func(r *Run)) string {
	t.Helper()
	var buf bytes.Buffer
	r, err := New(s, Options{Sinks: []sim.Sink{sim.NewTextWriter(&buf)}})
	if err != nil {
		t.Fatal(err)
	}
	if extra != nil {
		extra(r)
	}
	r.Finish()
	return buf.String()
}

// TestHandActionsAreFileActions replaces, in every lesson, each timeline
// action that a hand builder can make by the builder's action given to Do
// at the same tick: the trace is byte-identical, so a player's seek,
// redrive and crash are the file's own actions and nothing else.
func TestHandActionsAreFileActions(t *testing.T) {
	n := 0
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range s.Timeline {
			hand, ok := handBuilt(a)
			if !ok {
				continue
			}
			n++
			want := traceWith(t, s, nil)
			// The same timeline, put on the World by hand in file order,
			// with action i built by its hand builder.
			without := *s
			without.Timeline = nil
			got := traceWith(t, &without, func(r *Run) {
				for j := range s.Timeline {
					x := s.Timeline[j]
					if j == i {
						x = hand
					}
					r.World().At(s.Timeline[j].At, actionText(&s.Timeline[j]), func() {
						if err := r.Do(x); err != nil {
							t.Errorf("%s: Do(%+v): %v", l.Name, x, err)
						}
					})
				}
			})
			if got != want {
				t.Errorf("%s: the hand-built %s at t=%d traces differently:\n%s", l.Name, a.Action, a.At, firstDiff([]byte(want), []byte(got)))
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d lesson actions have a hand builder; the test proves little", n)
	}
}

// TestDoEmptySubject checks what a hand action without a subject acts on:
// every dead-letter queue, every group, the first consumer.
func TestDoEmptySubject(t *testing.T) {
	s, err := scenario.LoadLesson("poison-dlq")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for r.Now() < 30 && r.Step() {
	}
	dlq := 0
	for _, q := range r.Queues() {
		if q.IsDLQ {
			dlq += q.Queue.Len()
		}
	}
	if dlq == 0 {
		t.Fatal("no dead letters at t=30; the test proves nothing")
	}
	if err := r.Do(Redrive("")); err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, q := range r.Queues() {
		moved += q.Queue.Metrics().Redriven
		if q.IsDLQ && q.Queue.Len() != 0 {
			t.Errorf("%s still holds %d messages", q.Name, q.Queue.Len())
		}
	}
	if moved != dlq {
		t.Errorf("redrove %d, want %d", moved, dlq)
	}
	var crashed []string
	r.Env().Trace.Attach(sim.SinkFunc(func(e *sim.Event) {
		if e.Kind == sim.KindCrashed {
			crashed = append(crashed, e.Actor)
		}
	}))
	if err := r.Do(Crash("")); err != nil {
		t.Fatal(err)
	}
	if first := s.Actors.Consumers[0].Name; len(crashed) == 0 || !strings.HasPrefix(crashed[0], first) {
		t.Errorf("crashed %v, want the first consumer %s", crashed, first)
	}
	// The lesson has no log: a seek of every group is refused.
	if err := r.Do(SeekEarliest("")); !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), "no consumer group") {
		t.Errorf("seek without groups: %v", err)
	}
}

// TestDoRefuses lists the hand actions a run cannot carry out: each is an
// error that wraps ErrRuntime and names what is wrong.
func TestDoRefuses(t *testing.T) {
	s, err := scenario.LoadLesson("poison-dlq")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a    scenario.Action
		want string
	}{
		{Redrive("nope"), `queue "nope" is not defined`},
		{Crash("nope"), `consumer "nope" is not defined`},
		{SeekEarliest("nope"), `group "nope" is not defined`},
		{scenario.Action{Action: ActionBrokerDown, Count: -1}, "window -1 must be at least 1"},
		{scenario.Action{Action: "fly"}, `action "fly" has no subject it can act on`},
	} {
		err := r.Do(c.a)
		if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Do(%+v) = %v, want an ErrRuntime naming %q", c.a, err, c.want)
		}
	}
	if err := r.Err(); err != nil {
		t.Errorf("a refused hand action is not a runtime error of the file: %v", err)
	}
}

// TestBrokerDownByHand takes the brokers down for three ticks, then for
// the default window: faults fire in exactly those windows, and a file
// cannot ask for it.
func TestBrokerDownByHand(t *testing.T) {
	s, err := scenario.LoadLesson("poison-dlq")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Step()
	var at []sim.Tick
	r.Env().Trace.Attach(sim.SinkFunc(func(e *sim.Event) {
		if e.Kind == sim.KindFault && strings.HasPrefix(e.Rule, "manual-broker-down-") {
			at = append(at, e.Tick)
		}
	}))
	for _, window := range []sim.Tick{3, BrokerDownWindow} {
		at = nil
		from := r.Now()
		down := BrokerDown()
		if window != BrokerDownWindow {
			down.Count = int(window)
		}
		if err := r.Do(down); err != nil {
			t.Fatal(err)
		}
		for r.Now() < from+window+5 && r.Step() {
		}
		if len(at) == 0 {
			t.Fatalf("no fault fired while the brokers were down for %d ticks", window)
		}
		for _, x := range at {
			if x < from || x >= from+window {
				t.Errorf("a fault fired at t=%d, outside [%d, %d)", x, from, from+window)
			}
		}
		if last := at[len(at)-1]; window == BrokerDownWindow && last < from+window-3 {
			t.Errorf("the last fault of the default window fired at t=%d, long before its end t=%d", last, from+window)
		}
	}
	src := "title: t\nrun: {ticks: 5}\ntopology: {queues: [{name: q}]}\ntimeline: [{at: 1, action: " + ActionBrokerDown + "}]\n"
	if _, err := scenario.Load("t.yaml", []byte(src)); err == nil {
		t.Errorf("a file with a %s action loads", ActionBrokerDown)
	}
}
