package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
)

// At 80x24 the intro box is as wide as the screen. When it would leave
// fewer than four rows above and below it, it takes the rows between the
// tab line and the hints; otherwise it is centred. Either way no sliver of
// a panel shows right above it (a top border doubled above the box's own),
// for every built-in lesson (their intros are long: TestShortIntroStaysCentred
// covers a short one).
func TestFullWidthIntroTakesTheHeight(t *testing.T) {
	for _, l := range scenario.Lessons() {
		p := NewPlayer(NewTheme(true), nil)
		p.SetOverlays(true)
		p.SetSnapshot(lessonDriver(t, l.Name).Snapshot())
		rows := strings.Split(drawnText(t, p, 80, 24), "\n")
		top := -1
		for i, r := range rows {
			if strings.HasPrefix(r, "║ space start") {
				top = i - 1
				break
			}
		}
		if top < 2 || !strings.HasPrefix(rows[top], "╔ ") {
			t.Errorf("%s: no intro box under the tabs:\n%s", l.Name, strings.Join(rows, "\n"))
			continue
		}
		if top > 2 {
			if above := rows[top-1]; strings.HasPrefix(above, "╔") || strings.HasPrefix(above, "┌") {
				t.Errorf("%s: a panel's top border right above the intro box:\n%s", l.Name, strings.Join(rows, "\n"))
			}
		} else if !strings.HasPrefix(rows[22], "╚") {
			t.Errorf("%s: the intro box starts under the tabs but does not reach the hints:\n%s", l.Name, strings.Join(rows, "\n"))
		}
	}
}

// A short intro, as an exercise replay has, stays a box centred over the
// panels, which show around it: the narration panel's title among them.
func TestShortIntroStaysCentred(t *testing.T) {
	d := lab.NewPlayback(lab.Recording{Title: "Repair the outbox", Lesson: "exercise outbox", Seed: 1, End: 5,
		Description: "transactional outbox: the order and its event commit together",
		Steps:       []lab.RecordedStep{{At: 0, Text: "Seed 1."}}})
	p := NewPlayer(NewTheme(true), nil)
	p.SetOverlays(true)
	p.SetSnapshot(d.Snapshot())
	text := drawnText(t, p, 80, 24)
	rows := strings.Split(text, "\n")
	if strings.HasPrefix(rows[2], "╔ Repair") || !strings.Contains(text, "╔ Repair the outbox") || !strings.Contains(text, "narration 1/1") {
		t.Errorf("the short intro does not stay centred with the narration panel in sight:\n%s", text)
	}
}

// The end summary at 80x24 is as wide as the screen too, whatever the
// length of its lines: a box a few columns narrower left slivers of the
// panels beside it ("╔ log╔ the end: ..."). Centred or not, no more than
// the tab line and a panel's border and first row show above it.
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
		rows := strings.Split(drawnText(t, p, 80, 24), "\n")
		top := -1
		for i, r := range rows {
			if strings.HasPrefix(r, "╔ the end") {
				top = i
				break
			}
		}
		if top < 2 || top > 4 || !strings.HasSuffix(rows[top], "╗") || len([]rune(rows[top])) != 80 {
			t.Errorf("%s: the end summary does not take the screen's width:\n%s", l.Name, strings.Join(rows, "\n"))
		}
	}
	if checked < len(scenario.Lessons())/2 {
		t.Fatalf("only %d of %d lessons ended on their summary", checked, len(scenario.Lessons()))
	}
}
