package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
)

// TestTabStripShowsCurrentTab cycles through every tab of every lesson at
// the widths a player (or a compare side) gets and checks that the current
// tab is on the strip, in brackets: a cut strip once hid it behind "+N›".
func TestTabStripShowsCurrentTab(t *testing.T) {
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p := NewPlayer(NewTheme(true), nil)
		p.SetSnapshot(d.Step())
		for _, w := range []int{40, 60, 80} {
			scr := newScreen(t, w, 24)
			seen := map[string]bool{}
			for i := 0; i < 20; i++ {
				title := p.tab.title(&p.snap)
				if seen[title] {
					break
				}
				seen[title] = true
				draw(scr, p)
				if text := screenText(scr); !strings.Contains(strings.Split(text, "\n")[1], "["+title) {
					t.Errorf("%s at %d columns: tab %q is not on the strip:\n%s", l.Name, w, title, text)
				}
				p.moveFocus(1)
			}
			scr.Fini()
		}
	}
}

// TestCompactTraceKeepsLines: a narrow, short compact layout (one side of
// a compare view at 80x24) still gives the trace several lines, not one.
func TestCompactTraceKeepsLines(t *testing.T) {
	p := cmpPair(t)
	c := NewController(p)
	for i := 0; i < 3; i++ {
		c.Handle(Command{Kind: CmdStep})
	}
	v := NewCompare(NewTheme(true), nil)
	v.SetFrame(p.Frame(c.Snapshot()))
	text := cmpDraw(t, v, 80, 24)
	rows, in := 0, false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "┌ trace"):
			in = true
		case strings.HasPrefix(l, "└"):
			in = false
		case in:
			rows++
		}
	}
	if rows < 4 {
		t.Errorf("the trace has %d rows per side at 80x24, want at least 4:\n%s", rows, text)
	}
}

// TestSummaryKeysAt80x24: every lesson's end summary at 80x24 shows its
// keys and its verdict line, however long the summary is.
func TestSummaryKeysAt80x24(t *testing.T) {
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := NewController(d)
		for i := 0; i < 100 && !d.Done(); i++ {
			c.Handle(Command{Kind: CmdStepNarration})
		}
		p := NewPlayer(NewTheme(true), nil)
		p.SetOverlays(true)
		p.SetSnapshot(c.Snapshot())
		if !p.OverlayVisible() {
			t.Fatalf("%s: no summary at the end (state %v)", l.Name, c.Snapshot().Header.State)
		}
		scr := newScreen(t, 80, 24)
		draw(scr, p)
		text := screenText(scr)
		scr.Fini()
		for _, want := range []string{"esc close", "expectations hold"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: %q is not on the summary:\n%s", l.Name, want, text)
			}
		}
	}
}
