package tui

import (
	"reflect"

	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
)

// lessonDriver returns a driver playing a built-in lesson.
func lessonDriver(t testing.TB, name string) *lab.Session {
	t.Helper()
	s, err := scenario.LoadLesson(name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := lab.Open(s, lab.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.SetLesson(name)
	return d
}

// render draws the controller's snapshot on a w x h simulation screen and
// returns the text.
func render(t testing.TB, c *Controller, w, h int) string {
	t.Helper()
	p := NewPlayer(NewTheme(true), nil)
	p.SetSnapshot(c.Snapshot())
	scr := newScreen(t, w, h)
	draw(scr, p)
	return screenText(scr)
}

// TestBackOneTick: ← after 10 steps shows t=9 and exactly the screen of a
// fresh run stepped 9 times, at every size, for lessons with hand actions
// too.
func TestBackOneTick(t *testing.T) {
	for _, name := range []string{"outbox-relay", "poison-dlq", "replay-projection", "offline-subscriber"} {
		c := NewController(lessonDriver(t, name))
		for i := 0; i < 10; i++ {
			c.Handle(Command{Kind: CmdStep})
		}
		c.Handle(Command{Kind: CmdBack})
		if tick := c.Snapshot().Header.Tick; tick != 9 {
			t.Fatalf("%s: back from t=10 shows t=%d", name, tick)
		}
		fresh := NewController(lessonDriver(t, name))
		for i := 0; i < 9; i++ {
			fresh.Handle(Command{Kind: CmdStep})
		}
		for _, sz := range [][2]int{{80, 24}, {120, 40}, {160, 48}} {
			got, want := render(t, c, sz[0], sz[1]), render(t, fresh, sz[0], sz[1])
			if got != want {
				t.Errorf("%s %dx%d: after back the screen differs from a fresh run at t=9:\n--- back\n%s--- fresh\n%s", name, sz[0], sz[1], got, want)
			}
		}
	}
}

// TestBackReplaysHandActions: going back keeps the hand actions done up to
// the target tick, each at its tick.
func TestBackReplaysHandActions(t *testing.T) {
	c := NewController(lessonDriver(t, "poison-dlq"))
	for i := 0; i < 20; i++ {
		c.Handle(Command{Kind: CmdStep})
	}
	c.Handle(Command{Kind: CmdAction, Action: lab.Redrive("")})
	if n := c.Snapshot().Header.Notice; !strings.HasPrefix(n, "redrove 4 messages from orders-dlq") {
		t.Fatalf("notice %q", n)
	}
	c.Handle(Command{Kind: CmdStep})
	c.Handle(Command{Kind: CmdStep})
	c.Handle(Command{Kind: CmdBack})
	back := c.Snapshot()

	fresh := NewController(lessonDriver(t, "poison-dlq"))
	for i := 0; i < 20; i++ {
		fresh.Handle(Command{Kind: CmdStep})
	}
	fresh.Handle(Command{Kind: CmdAction, Action: lab.Redrive("")})
	fresh.Handle(Command{Kind: CmdStep})
	want := fresh.Snapshot()
	if back.Header.Tick != 21 || back.Ledger != want.Ledger || len(back.Trace) != len(want.Trace) {
		t.Errorf("back: t=%d %+v %d events; fresh: t=%d %+v %d events", back.Header.Tick, back.Ledger, len(back.Trace),
			want.Header.Tick, want.Ledger, len(want.Trace))
	}
	// Going back before the action and forward again keeps it.
	c.Handle(Command{Kind: CmdSeek, Tick: 5})
	c.Handle(Command{Kind: CmdSeek, Tick: 21})
	if got := c.Snapshot(); got.Ledger != want.Ledger || got.Ledger.Redriven == 0 {
		t.Errorf("back to t=5 and forward to t=21: %+v, want %+v", got.Ledger, want.Ledger)
	}
}

func TestPrevNarration(t *testing.T) {
	d := lessonDriver(t, "poison-dlq")
	c := NewController(d)
	c.Handle(Command{Kind: CmdStepNarration})
	c.Handle(Command{Kind: CmdStepNarration})
	c.Handle(Command{Kind: CmdStepNarration})
	at := c.Snapshot().Narration.Index
	c.Handle(Command{Kind: CmdPrevNarration})
	s := c.Snapshot()
	if s.Narration.Index != at-1 || s.Header.Tick != d.Scenario().Narration[at-2].At {
		t.Errorf("from step %d back to step %d at t=%d", at, s.Narration.Index, s.Header.Tick)
	}
	c.Handle(Command{Kind: CmdBack})
	c.Handle(Command{Kind: CmdSeek, Tick: 0})
	c.Handle(Command{Kind: CmdBack})
	if n := c.Snapshot().Header.Notice; n != "already at t=0" {
		t.Errorf("back at t=0: %q", n)
	}
}

// TestDuplicateMarks: outbox-relay's second delivery of m3 is marked on its
// trace line, and so is its second effect.
func TestDuplicateMarks(t *testing.T) {
	c := NewController(lessonDriver(t, "outbox-relay"))
	for i := 0; i < 5; i++ {
		c.Handle(Command{Kind: CmdStep})
	}
	s := c.Snapshot()
	var lines []string
	for i := range s.Trace {
		e := &s.Trace[i]
		if e.Msg == 3 && (e.Kind == sim.KindReceived || e.Kind == sim.KindProcessed) {
			lines = append(lines, string(appendTraceText(nil, e, s.Marks[i])))
		}
	}
	want := []string{"t=3 received m3 by billing", "t=3 processed m3 by billing", "t=5 received m3 (2nd delivery) by billing",
		"t=5 processed m3 (effect 2×) by billing"}
	if len(lines) != len(want) {
		t.Fatalf("m3 lines %q", lines)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d: %q, want it to start with %q", i, lines[i], want[i])
		}
	}
	p := NewPlayer(NewTheme(true), nil)
	p.SetSnapshot(s)
	p.filter = "m3"
	scr := newScreen(t, 80, 24)
	draw(scr, p)
	if text := screenText(scr); !strings.Contains(text, "↻ t=5 received m3 (2nd delivery)") {
		t.Errorf("the mark is not on screen:\n%s", text)
	}
}

// TestLineageMarks: a redriven copy's delivery is a repeat of its origin
// (poison-dlq redrives m2, which the worker had received).
func TestLineageMarks(t *testing.T) {
	c := NewController(lessonDriver(t, "poison-dlq"))
	for !c.d.Done() {
		c.Handle(Command{Kind: CmdStep})
	}
	s := c.Snapshot()
	found := false
	for i := range s.Trace {
		e := &s.Trace[i]
		if e.Kind == sim.KindReceived && s.Marks[i].Kind == lab.MarkRepeat && e.Attempt == 1 {
			found = true // a first receive of a new copy, marked by lineage
		}
	}
	if !found {
		t.Error("no redriven copy's delivery is marked as a repeat")
	}
}

// TestNarrationFits plays every lesson at 80x24 and checks that every
// narration step's full text is on screen.
func TestNarrationFits(t *testing.T) {
	for _, l := range scenario.Lessons() {
		d := lessonDriver(t, l.Name)
		c := NewController(d)
		for step := 0; step < 50 && !d.Done(); step++ {
			c.Handle(Command{Kind: CmdStepNarration})
			s := c.Snapshot()
			if s.Narration.Text == "" {
				continue
			}
			text := render(t, c, 80, 24)
			if !strings.Contains(flatten(text), strings.Join(strings.Fields(s.Narration.Text), " ")) {
				t.Errorf("%s step %d/%d is not fully on screen:\n%s", l.Name, s.Narration.Index, s.Narration.Total, text)
			}
		}
	}
}

// flatten joins the inner text of the screen's framed rows into one line
// of single spaces, so wrapped text can be searched.
func flatten(screen string) string {
	var words []string
	for _, l := range strings.Split(screen, "\n") {
		l = strings.Trim(l, "│║ ")
		words = append(words, strings.Fields(l)...)
	}
	return strings.Join(words, " ")
}

func TestPickerAndNotices(t *testing.T) {
	var sent []Command
	p := NewPlayer(NewTheme(true), func(c Command) { sent = append(sent, c) })
	s := fixture()
	s.Targets = lab.Targets{DLQs: []string{"a-dlq", "b-dlq"}, Consumers: []string{"worker"}}
	p.SetSnapshot(s)
	key := func(r rune) { p.HandleKey(tcell.NewEventKey(tcell.KeyRune, r, tcell.ModNone)) }
	key('d')
	if len(sent) != 0 || p.picker == nil {
		t.Fatal("d with two DLQs did not open the picker")
	}
	key('2')
	if len(sent) != 1 || !reflect.DeepEqual(sent[0].Action, lab.Redrive("b-dlq")) {
		t.Fatalf("picker sent %+v", sent)
	}
	key('c')
	if len(sent) != 2 || !reflect.DeepEqual(sent[1].Action, lab.Crash("")) {
		t.Fatalf("c with one consumer sent %+v", sent)
	}
	// Errors come in words, and a redrive says what it did.
	c := NewController(lessonDriver(t, "poison-dlq"))
	c.Handle(Command{Kind: CmdAction, Action: lab.SeekEarliest("")})
	if n := c.Snapshot().Header.Notice; strings.Contains(n, "runtime error") || !strings.Contains(n, "nothing to replay") {
		t.Errorf("e in poison-dlq: %q", n)
	}
	c.Handle(Command{Kind: CmdAction, Action: lab.Redrive("")})
	if n := c.Snapshot().Header.Notice; n != "redrive" && !strings.Contains(n, "nothing to redrive") {
		t.Errorf("d with an empty DLQ: %q", n)
	}
	c.Handle(Command{Kind: CmdAction, Action: lab.Crash("")})
	if n := c.Snapshot().Header.Notice; n != "crashed worker" {
		t.Errorf("c: %q", n)
	}
}
