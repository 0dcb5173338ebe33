package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/scenario"
)

// At 80x24 the intro box is as wide as the screen, so it takes the rows
// between the tab line and the hints: its top border is the row right
// under the tabs, and no sliver of a panel (a top border doubled above
// the box's own) shows between them, for every built-in lesson.
func TestFullWidthIntroTakesTheHeight(t *testing.T) {
	for _, l := range scenario.Lessons() {
		p := NewPlayer(NewTheme(true), nil)
		p.SetOverlays(true)
		p.SetSnapshot(lessonDriver(t, l.Name).Snapshot())
		scr := newScreen(t, 80, 24)
		draw(scr, p)
		rows := strings.Split(screenText(scr), "\n")
		scr.Fini()
		if !strings.HasPrefix(rows[2], "╔ ") || !strings.HasPrefix(rows[22], "╚") || !strings.HasPrefix(rows[23], " space") {
			t.Errorf("%s: the intro box does not span rows 2 to 22 under the tabs:\n%s", l.Name, strings.Join(rows, "\n"))
		}
	}
}

// The end summary at 80x24 is as wide as the screen too, whatever the
// length of its lines: a box a few columns narrower left slivers of the
// panels beside it ("╔ log╔ the end: ...").
func TestEndSummaryTakesTheWidth(t *testing.T) {
	checked := 0
	for _, l := range scenario.Lessons() {
		d := lessonDriver(t, l.Name)
		c := NewController(d)
		p := NewPlayer(NewTheme(true), nil)
		p.SetOverlays(true)
		p.SetSnapshot(c.Snapshot())
		for i := 0; i < 2000 && !d.Done(); i++ {
			c.Handle(Command{Kind: CmdStep})
		}
		c.Handle(Command{Kind: CmdStep})
		p.SetSnapshot(c.Snapshot())
		if p.overlay != overlaySummary {
			continue
		}
		checked++
		scr := newScreen(t, 80, 24)
		draw(scr, p)
		rows := strings.Split(screenText(scr), "\n")
		scr.Fini()
		if !strings.HasPrefix(rows[2], "╔ the end") || !strings.HasSuffix(rows[2], "╗") || len([]rune(rows[2])) != 80 {
			t.Errorf("%s: the end summary does not take the screen's width:\n%s", l.Name, strings.Join(rows, "\n"))
		}
	}
	if checked < len(scenario.Lessons())/2 {
		t.Fatalf("only %d of %d lessons ended on their summary", checked, len(scenario.Lessons()))
	}
}
