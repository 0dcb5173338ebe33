package tui

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/brokerlab/brokerlab/lab"
)

// rig is a player wired to a synchronous controller: every command a key
// sends is handled at once and its snapshot shown, so key tests need
// neither Run nor sleeps.
type rig struct {
	d    *fakeDriver
	c    *Controller
	p    *Player
	sent []Command
	quit int
}

func newRig() *rig {
	g := &rig{d: newFakeDriver(7)}
	g.c = NewController(g.d)
	g.p = NewPlayer(NewTheme(true), func(cmd Command) {
		g.sent = append(g.sent, cmd)
		g.p.SetSnapshot(g.c.Handle(cmd))
	})
	g.p.SetSnapshot(g.c.Snapshot())
	g.p.SetQuitFunc(func() { g.quit++ })
	g.p.SetRect(0, 0, 80, 24)
	return g
}

// key injects one key through the player's tview input handler.
func (g *rig) key(key tcell.Key, r rune) {
	g.p.InputHandler()(tcell.NewEventKey(key, r, 0), func(tview.Primitive) {})
}

// runes injects each rune of s.
func (g *rig) runes(s string) {
	for _, c := range s {
		g.key(tcell.KeyRune, c)
	}
}

func (g *rig) header() lab.Header { return g.p.Snapshot().Header }

func TestKeyPlayPause(t *testing.T) {
	g := newRig()
	if st := g.header().State; st != lab.StatePaused {
		t.Fatalf("initial state %v, want paused", st)
	}
	g.key(tcell.KeyRune, ' ')
	if st := g.header().State; st != lab.StatePlaying || !g.c.Playing() {
		t.Fatalf("after space: %v, want playing", st)
	}
	g.key(tcell.KeyRune, ' ')
	if st := g.header().State; st != lab.StatePaused {
		t.Fatalf("after second space: %v, want paused", st)
	}
}

func TestKeyStep(t *testing.T) {
	g := newRig()
	g.key(tcell.KeyRune, ' ')
	g.key(tcell.KeyRune, 's')
	if h := g.header(); h.Tick != 1 || h.State != lab.StatePaused {
		t.Fatalf("after s: tick %d state %v, want 1 paused", h.Tick, h.State)
	}
	g.key(tcell.KeyRune, '.')
	if h := g.header(); h.Tick != 2 {
		t.Fatalf("after .: tick %d, want 2", h.Tick)
	}
	g.key(tcell.KeyRune, 'n') // narration points every 5 ticks
	if s := g.p.Snapshot(); s.Header.Tick != 5 || s.Narration.Index != 2 {
		t.Fatalf("after n: tick %d narration %d, want 5 and 2", s.Header.Tick, s.Narration.Index)
	}
	for i := 0; i < 10; i++ {
		g.key(tcell.KeyRune, 'n')
	}
	if h := g.header(); h.Tick != 20 || h.State != lab.StateFinished {
		t.Fatalf("at the end: tick %d state %v, want 20 finished", h.Tick, h.State)
	}
	g.key(tcell.KeyRune, ' ')
	if h := g.header(); h.State != lab.StateFinished || g.c.Playing() {
		t.Fatalf("play at the end: %v, want finished and not playing", h.State)
	}
}

func TestKeySpeed(t *testing.T) {
	g := newRig()
	if v := g.header().Speed; v != 4 {
		t.Fatalf("default speed %v, want 4", v)
	}
	g.key(tcell.KeyRune, '+')
	g.key(tcell.KeyRune, '=')
	if v := g.header().Speed; v != 16 {
		t.Fatalf("after + =: %v, want 16", v)
	}
	if iv := g.c.Interval(); iv != time.Second/16 {
		t.Fatalf("interval %v, want %v", iv, time.Second/16)
	}
	for i := 0; i < 20; i++ {
		g.key(tcell.KeyRune, '-')
	}
	if v := g.header().Speed; v != Speeds[0] {
		t.Fatalf("after many -: %v, want %v", v, Speeds[0])
	}
	for i := 0; i < 20; i++ {
		g.key(tcell.KeyRune, '+')
	}
	if v := g.header().Speed; v != Speeds[len(Speeds)-1] {
		t.Fatalf("after many +: %v, want %v", v, Speeds[len(Speeds)-1])
	}
}

func TestKeyFilter(t *testing.T) {
	g := newRig()
	g.runes("/m9")
	if !g.p.editing || g.p.Filter() != "m9" {
		t.Fatalf("typing: editing=%v filter=%q", g.p.editing, g.p.Filter())
	}
	g.key(tcell.KeyRune, 'q') // typed into the filter, not quit
	if g.quit != 0 || g.p.Filter() != "m9q" {
		t.Fatalf("q while typing: quit=%d filter=%q", g.quit, g.p.Filter())
	}
	g.key(tcell.KeyBackspace2, 0)
	g.key(tcell.KeyEnter, 0)
	if g.p.editing || g.p.Filter() != "m9" {
		t.Fatalf("after enter: editing=%v filter=%q", g.p.editing, g.p.Filter())
	}
	g.key(tcell.KeyRune, 's') // keys act again once the filter is kept
	if g.header().Tick != 1 {
		t.Fatal("s after the filter did not step")
	}
	s := newScreen(t, 80, 24)
	defer s.Fini()
	draw(s, g.p.trace)
	for y := 1; y < 23; y++ {
		row := strings.TrimSpace(rowText(s, y))
		if row != "" && !contains(row, " m9 ") && !contains(row, "no event") {
			t.Errorf("row %d does not match the filter: %q", y, row)
		}
	}
	g.key(tcell.KeyEscape, 0)
	if g.p.Filter() != "" {
		t.Fatalf("esc did not clear the filter: %q", g.p.Filter())
	}
	g.runes("/kunde")
	g.key(tcell.KeyEscape, 0)
	if g.p.editing || g.p.Filter() != "" {
		t.Fatal("esc while typing must cancel the filter")
	}
}

// rowText returns row y of s between the frame borders.
func rowText(s tcell.Screen, y int) string {
	w, _ := s.Size()
	var b []rune
	for x := 1; x < w-1; x++ {
		c, _, _, _ := s.GetContent(x, y)
		b = append(b, c)
	}
	return string(b)
}

func TestKeyRestartAndActions(t *testing.T) {
	g := newRig()
	g.runes("sss")
	g.key(tcell.KeyRune, 'r')
	if h := g.header(); h.Tick != 0 || h.Seed != 7 {
		t.Fatalf("after r: tick %d seed %d, want 0 and 7", h.Tick, h.Seed)
	}
	g.key(tcell.KeyRune, 'R')
	if h := g.header(); h.Seed == 7 || h.Seed != lab.NextSeed(7) {
		t.Fatalf("after R: seed %d, want NextSeed(7)=%d", h.Seed, lab.NextSeed(7))
	}
	g.key(tcell.KeyRune, 'd') // nothing to redrive at tick 0
	if h := g.header(); !contains(h.Notice, SymFault) || !contains(h.Notice, "nothing to redrive") {
		t.Fatalf("failed action notice %q", h.Notice)
	}
	g.runes("secb")
	want := []string{"replay", "crash", "broker down"}
	if len(g.d.actions) != len(want) {
		t.Fatalf("driver got %v, want %v", g.d.actions, want)
	}
	for i, a := range g.d.actions {
		if got := lab.ActionName(a); got != want[i] {
			t.Errorf("action %d = %v, want %v", i, got, want[i])
		}
	}
}

// TestKeyTable checks every binding: keys with a Command send exactly that
// command, and no key is bound twice.
func TestKeyTable(t *testing.T) {
	seen := map[KeySpec]string{}
	for _, b := range Bindings() {
		for _, ks := range b.Keys {
			if prev, ok := seen[ks]; ok {
				t.Errorf("key %v bound to %q and %q", ks, prev, b.Name)
			}
			seen[ks] = b.Name
		}
		if b.Name == "" || b.Help == "" || b.Label == "" || len(b.Keys) == 0 {
			t.Errorf("binding %+v lacks a name, help, label or key", b.Name)
		}
		if (b.View == nil) == (b.Command.Kind == 0) {
			t.Errorf("binding %q must have either a view handler or a command", b.Name)
		}
		if b.Command.Kind == 0 {
			continue
		}
		for _, ks := range b.Keys {
			g := newRig()
			g.key(ks.Key, ks.Rune)
			if len(g.sent) != 1 || !reflect.DeepEqual(g.sent[0], b.Command) {
				t.Errorf("key %q (%v) sent %v, want %v", b.Label, ks, g.sent, b.Command)
			}
		}
	}
}

func TestKeyFocusScrollHelpQuit(t *testing.T) {
	g := newRig()
	if f := g.p.Focused(); f != "queue orders" {
		t.Fatalf("initial focus %q", f)
	}
	var order []string
	for i := 0; i < 8; i++ {
		g.key(tcell.KeyTab, 0)
		order = append(order, g.p.Focused())
	}
	want := []string{"topic prices", "log payments", "outbox shop", "metrics", "verdict", "trace", "narration 1/5", "queue orders"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("tab order %q, want %q", order, want)
		}
	}
	g.key(tcell.KeyBacktab, 0)
	if f := g.p.Focused(); f != "narration 1/5" {
		t.Fatalf("backtab: %q", f)
	}
	g.key(tcell.KeyBacktab, 0) // trace
	s := newScreen(t, 80, 24)
	defer s.Fini()
	draw(s, g.p)
	g.key(tcell.KeyUp, 0)
	g.key(tcell.KeyRune, 'k')
	if g.p.trace.scroll != 2 {
		t.Fatalf("trace scroll %d, want 2", g.p.trace.scroll)
	}
	g.key(tcell.KeyRune, 'j')
	if g.p.trace.scroll != 1 {
		t.Fatalf("trace scroll %d, want 1", g.p.trace.scroll)
	}
	g.key(tcell.KeyEnd, 0)
	if g.p.trace.scroll != 0 {
		t.Fatal("end did not follow the trace")
	}
	g.key(tcell.KeyRune, '?')
	if !g.p.HelpVisible() {
		t.Fatal("? did not open the help")
	}
	g.key(tcell.KeyEscape, 0)
	if g.p.HelpVisible() {
		t.Fatal("esc did not close the help")
	}
	g.key(tcell.KeyRune, 'm') // no menu: not bound
	g.key(tcell.KeyRune, 'q')
	if g.quit != 1 {
		t.Fatalf("q called quit %d times", g.quit)
	}
	g.key(tcell.KeyCtrlC, 0)
	if g.quit != 2 {
		t.Fatal("ctrl-c did not quit")
	}
}

func TestHintsFromTable(t *testing.T) {
	p := fixturePlayer(true)
	th := NewTheme(true)
	for _, w := range []int{79, 159} {
		l := hintsLine(p.bindings, p, &th, w)
		text := ""
		for _, s := range l {
			text += s.text
		}
		if width(text) > w {
			t.Errorf("hints wider than %d: %q", w, text)
		}
		for _, b := range p.bindings {
			if b.Hint == 1 && !contains(text, b.Label+" "+b.Name) {
				t.Errorf("width %d: essential hint %q missing from %q", w, b.Name, text)
			}
		}
	}
	help := helpLines(p.bindings, p, &th, 76)
	for _, b := range p.bindings {
		if b.When != nil {
			continue
		}
		found := false
		for _, l := range help {
			if len(l) >= 2 && contains(l[0].text, helpLabel(&b)) && contains(l[1].text, b.Help[:10]) {
				found = true
			}
		}
		if !found {
			t.Errorf("binding %q missing from the help overlay", b.Name)
		}
	}
}

func TestMenuKeys(t *testing.T) {
	m := NewMenu(NewTheme(true), testLessons())
	var chosen []string
	quit := 0
	m.SetSelectFunc(func(l Lesson) { chosen = append(chosen, l.Name) })
	m.SetQuitFunc(func() { quit++ })
	h := m.InputHandler()
	press := func(k tcell.Key, r rune) { h(tcell.NewEventKey(k, r, 0), func(tview.Primitive) {}) }
	press(tcell.KeyDown, 0)
	press(tcell.KeyRune, 'j')
	press(tcell.KeyRune, 'k')
	press(tcell.KeyEnter, 0)
	press(tcell.KeyEnd, 0)
	press(tcell.KeyDown, 0)
	press(tcell.KeyEnter, 0)
	press(tcell.KeyRune, 'q')
	if len(chosen) != 2 || chosen[0] != "outbox" || chosen[1] != "architecture" || quit != 1 {
		t.Fatalf("chosen %v quit %d", chosen, quit)
	}
	s := newScreen(t, 80, 24)
	defer s.Fini()
	draw(s, m) // the selection (last lesson) must be scrolled into view
	found := false
	for y := 0; y < 24; y++ {
		if contains(rowText(s, y), "▶ "+n(len(testLessons()))+" ") {
			found = true
		}
	}
	if !found {
		t.Fatal("selected lesson not visible after scrolling")
	}
}

func TestMouse(t *testing.T) {
	g := newRig()
	s := newScreen(t, 80, 24)
	defer s.Fini()
	draw(s, g.p)
	h := g.p.MouseHandler()
	// Row 12 is inside the trace in the 80x24 layout (see the golden file).
	h(tview.MouseLeftClick, tcell.NewEventMouse(10, 12, tcell.Button1, 0), func(tview.Primitive) {})
	if f := g.p.Focused(); f != "trace" {
		t.Fatalf("click focused %q, want trace", f)
	}
	h(tview.MouseScrollUp, tcell.NewEventMouse(10, 12, tcell.WheelUp, 0), func(tview.Primitive) {})
	if g.p.trace.scroll != 1 {
		t.Fatalf("wheel up: trace scroll %d, want 1", g.p.trace.scroll)
	}
}

// TestMenuTwoDigits: with more than nine lessons, two digits typed within
// the window pick a two-digit number; slower, or when the longer number
// names no lesson, each digit stands alone. The hint names the real range.
func TestMenuTwoDigits(t *testing.T) {
	var ls []Lesson
	for i := 1; i <= 13; i++ {
		ls = append(ls, Lesson{Name: "l" + n(i), Title: "Lesson " + n(i)})
	}
	m := NewMenu(NewTheme(true), ls)
	clock := time.Unix(0, 0)
	m.now = func() time.Time { return clock }
	typed := func(gap time.Duration, keys string) int {
		for _, r := range keys {
			m.HandleKey(tcell.NewEventKey(tcell.KeyRune, r, 0))
			clock = clock.Add(gap)
		}
		return m.Selected() + 1
	}
	for _, c := range []struct {
		keys string
		gap  time.Duration
		want int
	}{
		{"13", 100 * time.Millisecond, 13},
		{"10", 100 * time.Millisecond, 10},
		{"7", 0, 7},
		{"13", 2 * time.Second, 3},         // too slow: 1, then 3
		{"19", 100 * time.Millisecond, 9},  // no lesson 19: 1, then 9
		{"131", 100 * time.Millisecond, 1}, // 13, then a new 1
		{"0", 0, 1},                        // 0 alone picks nothing
	} {
		clock = clock.Add(time.Minute)
		if got := typed(c.gap, c.keys); got != c.want {
			t.Errorf("%q %v apart: lesson %d, want %d", c.keys, c.gap, got, c.want)
		}
	}
	m.HandleKey(tcell.NewEventKey(tcell.KeyRune, '1', 0))
	m.HandleKey(tcell.NewEventKey(tcell.KeyDown, 0, 0)) // any other key ends the number
	m.HandleKey(tcell.NewEventKey(tcell.KeyRune, '2', 0))
	if got := m.Selected() + 1; got != 2 {
		t.Errorf("1, down, 2: lesson %d, want 2", got)
	}
	s := newScreen(t, 80, 24)
	defer s.Fini()
	draw(s, m)
	if hint := rowText(s, 23); !contains(hint, "1-13 pick") {
		t.Errorf("hint %q does not say 1-13", hint)
	}
}
