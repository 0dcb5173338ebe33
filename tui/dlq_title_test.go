package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/sim"
)

// screenLine returns the first line of the screen's text that contains
// mark, or "".
func screenLine(text, mark string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, mark) {
			return l
		}
	}
	return ""
}

// After the redrive of the poison-dlq lesson the DLQ is empty but four
// copies were dead-lettered and redriven. The narrow trace title (80x24)
// and the wide ledger line say both counts, as lab.DLQWords does, so
// neither reads as if nothing was ever dead-lettered; before the redrive
// they show the DLQ count alone.
func TestDLQCountsAfterRedrive(t *testing.T) {
	ctl := NewController(lessonDriver(t, "poison-dlq"))
	for _, c := range []struct {
		tick        sim.Tick
		title, wide string
		notRedriven bool
	}{
		{tick: 30, title: "✖0 ↻3 ☠4 ○0", wide: "✖ lost 0  ↻ dup 3  ☠ dlq 4  ○ missed 0", notRedriven: true},
		{tick: 45, title: "✖0 ↻7 ☠0 ⤴4 ○0", wide: "✖ lost 0  ↻ dup 7  ☠ dlq 0  ⤴ redriven 4  ○ missed 0"},
	} {
		text := screenAt(t, ctl, c.tick, "", 80, 24)
		if s := ctl.Snapshot(); s.Header.Tick != c.tick || s.Ledger.Redriven == 0 != c.notRedriven {
			t.Fatalf("at t=%d (asked for %d): ledger redriven %d", s.Header.Tick, c.tick, s.Ledger.Redriven)
		}
		if got := screenLine(text, "┌ trace"); !strings.Contains(got, "┌ trace  "+c.title+" ─") {
			t.Errorf("t=%d, 80x24: trace title %q, want %q:\n%s", c.tick, got, c.title, text)
		}
		text = screenAt(t, ctl, c.tick, "", 160, 48)
		if got := screenLine(text, "✖ lost"); !strings.Contains(got, c.wide+"  msgs") {
			t.Errorf("t=%d, 160x48: ledger line %q, want %q:\n%s", c.tick, got, c.wide, text)
		}
	}
}
