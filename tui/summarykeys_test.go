package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
)

// The end summary offers only keys that act: "m menu" when the player
// was opened from the menu, and not in a player that has no menu (an
// exercise replay, a lesson played by name), where m does nothing.
func TestSummaryOffersMenuOnlyWithAMenu(t *testing.T) {
	for _, menu := range []bool{false, true} {
		d := lab.NewPlayback(lab.Recording{Title: "Repair the outbox", Lesson: "exercise outbox", Seed: 1, End: 3,
			Description: "transactional outbox", Steps: []lab.RecordedStep{{At: 0, Text: "Seed 1."}}})
		c := NewController(d)
		p := NewPlayer(NewTheme(true), nil)
		if menu {
			p.SetBackFunc(func() {})
		}
		p.SetOverlays(true)
		p.SetSnapshot(c.Snapshot())
		for i := 0; i < 10 && !d.Done(); i++ {
			c.Handle(Command{Kind: CmdStep})
		}
		c.Handle(Command{Kind: CmdStep})
		p.SetSnapshot(c.Snapshot())
		if p.overlay != overlaySummary {
			t.Fatal("the replay did not end on its summary")
		}
		box := flatText(boxText(drawnText(t, p, 80, 24), "the end"))
		if got := strings.Contains(box, "m menu"); got != menu {
			t.Errorf("with a menu %v, the summary offers m menu: %v\n%s", menu, got, box)
		}
		for _, want := range []string{"← back", "r restart", "q quit", "esc close"} {
			if !strings.Contains(box, want) {
				t.Errorf("the summary does not offer %q:\n%s", want, box)
			}
		}
	}
}
