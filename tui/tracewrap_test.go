package tui

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
)

// checkTraceWhole fails when a wrapped trace entry of snap is drawn with
// its first row but not its second: every entry on screen shows both
// rows or none. The second row starts two columns right of the first,
// under the text after the symbol.
func checkTraceWhole(t *testing.T, name, text string, snap *lab.Snapshot, w int) {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i := range snap.Trace {
		var m lab.Mark
		if i < len(snap.Marks) {
			m = snap.Marks[i]
		}
		rows := traceRows(string(appendTraceText(nil, &snap.Trace[i], m)), w)
		if len(rows) < 2 {
			continue
		}
		for y, l := range lines {
			r := []rune(l)
			for c := 0; c+len([]rune(rows[0])) <= len(r); c++ {
				if string(r[c:c+len([]rune(rows[0]))]) != rows[0] {
					continue
				}
				var next []rune
				if y+1 < len(lines) {
					next = []rune(lines[y+1])
				}
				want := []rune(rows[1])
				if c+2+len(want) > len(next) || string(next[c+2:c+2+len(want)]) != rows[1] {
					t.Errorf("%s: trace entry %q at row %d lost its second row %q:\n%s", name, rows[0], y, rows[1], text)
				}
			}
		}
	}
}

// TestTraceWrappedTopEntry steps the compare pair to its third
// narration step (the keys n n), where the oldest visible trace entry
// on each side wraps, and checks that no side shows half of an entry.
func TestTraceWrappedTopEntry(t *testing.T) {
	for _, sz := range [][2]int{{120, 40}, {80, 24}, {160, 48}} {
		p := cmpPair(t)
		c := NewController(p)
		for i := 0; i < 2; i++ {
			c.Handle(Command{Kind: CmdStepNarration})
		}
		v := NewCompare(NewTheme(true), nil)
		f := p.Frame(c.Snapshot())
		v.SetFrame(f)
		text := cmpDraw(t, v, sz[0], sz[1])
		for i := range f.Sides {
			pl := v.Player(i)
			_, _, tw, _ := pl.trace.GetRect()
			if tw == 0 {
				continue
			}
			checkTraceWhole(t, f.Sides[i].Label, text, &f.Sides[i].Snap, tw-4)
		}
	}
}

// TestTraceWrappedTopEntrySingle checks the single player's trace: for
// every height, an entry that does not fit whole at the top is left
// out, and the panel still ends with the newest event.
func TestTraceWrappedTopEntrySingle(t *testing.T) {
	s := cmpSide(t, "naive", "idempotent-consumer", nil, "naive")
	c := NewController(s.Session)
	for i := 0; i < 2; i++ {
		c.Handle(Command{Kind: CmdStepNarration})
	}
	snap := c.Snapshot()
	for _, sz := range [][2]int{{80, 24}, {80, 25}, {100, 30}, {100, 31}, {120, 40}, {120, 41}} {
		p := NewPlayer(NewTheme(true), nil)
		p.SetSnapshot(snap)
		scr := newScreen(t, sz[0], sz[1])
		draw(scr, p)
		text := screenText(scr)
		_, _, tw, _ := p.trace.GetRect()
		checkTraceWhole(t, "single", text, &snap, tw-4)
		scr.Fini()
	}
}
