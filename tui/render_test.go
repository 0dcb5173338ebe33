package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/brokerlab/brokerlab/lab"
)

var update = flag.Bool("update", false, "rewrite golden files")

// newScreen returns an initialised simulation screen of w x h cells.
func newScreen(t testing.TB, w, h int) tcell.SimulationScreen {
	t.Helper()
	s := tcell.NewSimulationScreen("UTF-8")
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	s.SetSize(w, h)
	return s
}

// screenText reads the screen's cells back as lines without trailing
// spaces.
func screenText(s tcell.Screen) string {
	w, h := s.Size()
	var b strings.Builder
	for y := 0; y < h; y++ {
		var l strings.Builder
		for x := 0; x < w; {
			mainc, comb, _, cw := s.GetContent(x, y)
			if mainc == 0 {
				mainc = ' '
			}
			l.WriteRune(mainc)
			for _, c := range comb {
				l.WriteRune(c)
			}
			if cw < 1 {
				cw = 1
			}
			x += cw
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (rerun with -update and inspect the diff):\n--- got\n%s--- want\n%s", name, got, want)
	}
}

// draw draws prim over the whole screen.
func draw(s tcell.Screen, prim tview.Primitive) {
	w, h := s.Size()
	s.Clear()
	prim.SetRect(0, 0, w, h)
	prim.Draw(s)
}

// drawnText draws prim on a fresh w x h simulation screen and returns the
// screen's text (screenText).
func drawnText(t testing.TB, prim tview.Primitive, w, h int) string {
	t.Helper()
	scr := newScreen(t, w, h)
	defer scr.Fini()
	draw(scr, prim)
	return screenText(scr)
}

// fixturePlayer returns a player showing the fixture, with no command sink.
func fixturePlayer(noColor bool) *Player {
	p := NewPlayer(NewTheme(noColor), nil)
	p.SetSnapshot(fixture())
	return p
}

var sizes = []struct {
	name string
	w, h int
}{{"80x24", 80, 24}, {"160x48", 160, 48}}

// TestRenderGolden draws every view from the fixed snapshot at 80x24 and
// 160x48 and compares the text with the golden files.
func TestRenderGolden(t *testing.T) {
	views := []struct {
		name string
		prim func() tview.Primitive
	}{
		{"player", func() tview.Primitive { return fixturePlayer(false) }},
		{"player-help", func() tview.Primitive {
			p := fixturePlayer(false)
			p.HandleKey(tcell.NewEventKey(tcell.KeyRune, '?', 0))
			return p
		}},
		{"player-filter", func() tview.Primitive {
			p := fixturePlayer(false)
			for _, c := range "/kunde-B" {
				p.HandleKey(tcell.NewEventKey(tcell.KeyRune, c, 0))
			}
			p.HandleKey(tcell.NewEventKey(tcell.KeyEnter, 0, 0))
			return p
		}},
		{"player-tab2", func() tview.Primitive {
			p := fixturePlayer(false)
			p.HandleKey(tcell.NewEventKey(tcell.KeyTab, 0, 0))
			return p
		}},
		{"player-empty", func() tview.Primitive {
			p := NewPlayer(NewTheme(false), nil)
			p.SetSnapshot(lab.Snapshot{Header: lab.Header{Title: "empty", Seed: 1, Speed: 4}})
			return p
		}},
		{"queue", func() tview.Primitive { return fixturePlayer(false).panel(panelID{kindQueue, 0}) }},
		{"topic", func() tview.Primitive { return fixturePlayer(false).panel(panelID{kindTopic, 0}) }},
		{"log", func() tview.Primitive { return fixturePlayer(false).panel(panelID{kindLog, 0}) }},
		{"outbox", func() tview.Primitive { return fixturePlayer(false).panel(panelID{kindOutbox, 0}) }},
		{"metrics", func() tview.Primitive { return fixturePlayer(false).panel(panelID{kindMetrics, 0}) }},
		{"narration", func() tview.Primitive { return fixturePlayer(false).panel(panelID{kindNarration, 0}) }},
		{"trace", func() tview.Primitive { return fixturePlayer(false).trace }},
		{"header", func() tview.Primitive { return fixturePlayer(false).header }},
		{"hints", func() tview.Primitive { return fixturePlayer(false).hints }},
		{"menu", func() tview.Primitive { return NewMenu(NewTheme(false), testLessons()) }},
	}
	for _, v := range views {
		for _, sz := range sizes {
			t.Run(v.name+"-"+sz.name, func(t *testing.T) {
				s := newScreen(t, sz.w, sz.h)
				defer s.Fini()
				draw(s, v.prim())
				golden(t, v.name+"-"+sz.name+".txt", screenText(s))
			})
		}
	}
}

// TestRenderBigSnapshot checks that a snapshot of a system with 100,000
// messages renders within the screen (no overflow, "+N" counts shown).
func TestRenderBigSnapshot(t *testing.T) {
	for _, sz := range sizes {
		s := newScreen(t, sz.w, sz.h)
		p := NewPlayer(NewTheme(false), nil)
		p.SetSnapshot(bigSnapshot(100000))
		draw(s, p)
		text := screenText(s)
		if !strings.Contains(text, "+59") {
			t.Errorf("%s: no +N count for the capped visible chips:\n%s", sz.name, text)
		}
		s.Fini()
	}
}

// TestResize draws one player at several sizes in a row, as a live resize
// does, and checks each frame equals a fresh draw at that size.
func TestResize(t *testing.T) {
	p := fixturePlayer(false)
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}, {100, 30}, {40, 12}, {20, 5}, {80, 24}} {
		s := newScreen(t, sz.w, sz.h)
		draw(s, p)
		got := screenText(s)
		s2 := newScreen(t, sz.w, sz.h)
		draw(s2, fixturePlayer(false))
		if want := screenText(s2); got != want {
			t.Errorf("%dx%d after resize:\n%s\nfresh:\n%s", sz.w, sz.h, got, want)
		}
		s.Fini()
		s2.Fini()
	}
}

// TestNoColor checks that the plain theme never sets a colour, while the
// colour theme colours the highlighted trace lines.
func TestNoColor(t *testing.T) {
	for _, sz := range sizes {
		s := newScreen(t, sz.w, sz.h)
		p := fixturePlayer(true)
		p.HandleKey(tcell.NewEventKey(tcell.KeyRune, '?', 0))
		draw(s, p)
		w, h := s.Size()
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				_, _, st, _ := s.GetContent(x, y)
				if fg, bg, _ := st.Decompose(); fg != tcell.ColorDefault || bg != tcell.ColorDefault {
					t.Fatalf("%s: cell %d,%d has colours %v/%v with NO_COLOR", sz.name, x, y, fg, bg)
				}
			}
		}
		s.Fini()
	}
	t.Setenv("NO_COLOR", "1")
	if !NoColorEnv() {
		t.Error("NO_COLOR=1 not honoured")
	}
	t.Setenv("NO_COLOR", "")
	if NoColorEnv() {
		t.Error("empty NO_COLOR must not disable colours")
	}
}

// TestSymbolsPairColours checks that each highlighted trace line carries
// its symbol and a colour of its own.
func TestSymbolsPairColours(t *testing.T) {
	s := newScreen(t, 160, 48)
	defer s.Fini()
	p := fixturePlayer(false)
	draw(s, p.trace)
	found := map[string]bool{}
	for y := 1; y < 47; y++ {
		mainc, _, st, _ := s.GetContent(1, y)
		sym := string(mainc)
		switch sym {
		case SymLoss, SymFault, SymDuplicate, SymDLQ:
			found[sym] = true
			if fg, _, _ := st.Decompose(); fg == tcell.ColorDefault {
				t.Errorf("row %d: symbol %s without colour", y, sym)
			}
		}
	}
	for _, sym := range []string{SymLoss, SymFault, SymDuplicate, SymDLQ} {
		if !found[sym] {
			t.Errorf("symbol %s not shown in the trace", sym)
		}
	}
}

// testLessons is the menu fixture.
func testLessons() []Lesson {
	return []Lesson{
		{Name: "dual-write", Title: "Dual write loses an event", Summary: "A crash between the database commit and the publish loses the event.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "outbox", Title: "The outbox fixes it", Summary: "Business row and event row commit together; a relay publishes, sometimes twice.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "idempotent", Title: "Idempotent consumer", Summary: "Processed IDs kept with the effect absorb the relay's duplicates.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "poison-dlq", Title: "Poison message goes to the DLQ", Summary: "After maxReceiveCount receives the poison message waits in the DLQ until redriven.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "visibility", Title: "Visibility timeout too short", Summary: "A slow handler outlives its lease and the message is processed twice.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "offline-sub", Title: "Offline subscriber misses events", Summary: "Pub/sub forgets what nobody online received; the log group catches up.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "ordering", Title: "Ordering per key", Summary: "crc32 picks the partition; adding partitions moves keys and breaks the order.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "crash-commit", Title: "Crash before commit re-reads", Summary: "At-least-once in a log: a consumer crash before the commit reads records again.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "replay", Title: "Replay rebuilds a projection", Summary: "After a bug fix, seek the group to earliest and rebuild.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "retention", Title: "Retention shorter than lag", Summary: "The slow group falls behind the log start and skips records.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "storm", Title: "Event storm and its supervisor", Summary: "Handlers that publish fan out; a supervisor mutes them during a save.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "sync-loop", Title: "Sync loop and source tracking", Summary: "Two systems echo each other until a source header breaks the loop.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
		{Name: "architecture", Title: "Which architecture fits", Summary: "The same workload on a queue, a topic and a log, side by side.", Description: "The lesson's introduction, several sentences long, shown in the preview pane."},
	}
}
