package tui

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/scenario"
)

// itemStart matches a line that starts a list item.
var itemStart = regexp.MustCompile(`^\s*(\d+[.)]|[-*•]|[A-Z] ) `)

// checkFilled fails when lines, prose wrapped to w columns, break a
// paragraph early: within a paragraph (blank lines separate them) a line
// is followed by a line of the same indent only when the next word did
// not fit. List items and their hanging lines are judged by their own
// indent.
func checkFilled(t *testing.T, name string, lines []string, w int) {
	t.Helper()
	for i := 0; i+1 < len(lines); i++ {
		a, b := strings.TrimRight(lines[i], " "), strings.TrimRight(lines[i+1], " ")
		if a == "" || b == "" || itemStart.MatchString(b) {
			continue
		}
		ind := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
		if ind(a) != ind(b) {
			continue
		}
		next := strings.Fields(b)[0]
		if width(a)+1+width(next) <= w {
			t.Errorf("%s: line %d %q ends early: %q from the next line fits in %d columns:\n%s",
				name, i, a, next, w, strings.Join(lines, "\n"))
		}
	}
}

// region returns the text of rows y0 to y1 (excluded), columns x0 to x1
// (excluded), of screen text.
func region(text string, x0, x1, y0, y1 int) []string {
	rows := strings.Split(text, "\n")
	var out []string
	for y := y0; y < y1 && y < len(rows); y++ {
		r := []rune(rows[y])
		a, b := min(x0, len(r)), min(x1, len(r))
		out = append(out, string(r[a:b]))
	}
	return out
}

// section returns the lines after the first blank line up to the first
// line starting with stop (the description of a preview or intro).
func section(lines []string, stop string) []string {
	start := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if start < 0 {
			if t == "" {
				start = i + 1
			}
			continue
		}
		if strings.HasPrefix(t, stop) || strings.HasPrefix(t, "…") {
			return lines[start:i]
		}
	}
	if start < 0 {
		return nil
	}
	return lines[start:]
}

// builtinLessons returns the built-in lessons as the CLI lists them.
func builtinLessons(t *testing.T) []Lesson {
	t.Helper()
	var ls []Lesson
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		tl := Lesson{Name: l.Name, Title: l.Title, Summary: l.Summary, Description: s.Description}
		for _, e := range s.Expect {
			tl.Goals = append(tl.Goals, e.String())
		}
		ls = append(ls, tl)
	}
	return ls
}

// TestMenuPreviewReflows draws each built-in lesson's preview and checks
// that its description is refilled to the pane, not broken where the
// lesson file breaks its lines.
func TestMenuPreviewReflows(t *testing.T) {
	for _, l := range builtinLessons(t) {
		for _, sz := range [][2]int{{120, 40}, {80, 24}, {160, 48}} {
			m := NewMenu(NewTheme(true), []Lesson{l})
			scr := newScreen(t, sz[0], sz[1])
			draw(scr, m)
			text := screenText(scr)
			scr.Fini()
			// The preview pane: right of the list when wide, under it
			// (three rows for one lesson) otherwise.
			x0, x1, y0 := 1, sz[0]-1, 1+3+1
			if sz[0] >= 100 {
				x0, y0 = sz[0]*45/100+1, 2
			}
			lines := section(region(text, x0, x1, y0, sz[1]-2), "It checks:")
			if len(lines) == 0 {
				t.Fatalf("%s %dx%d: no description in the preview:\n%s", l.Name, sz[0], sz[1], text)
			}
			checkFilled(t, l.Name+" preview", lines, x1-x0)
		}
	}
}

// overlayText returns the rows inside the box drawn with title, from
// two columns right of its left border to one column left of its right
// border (the box's margins).
func overlayText(t *testing.T, text, title string) []string {
	t.Helper()
	rows := strings.Split(text, "\n")
	if r := []rune(title); len(r) > 30 {
		title = string(r[:30]) // a long title is cut in the frame
	}
	for y, row := range rows {
		r := []rune(row)
		i := strings.Index(row, "╔ "+title)
		if i < 0 {
			if i = strings.Index(row, "┌ "+title); i < 0 {
				continue
			}
		}
		left := len([]rune(row[:i]))
		right := left + 1
		for right < len(r) && r[right] != '╗' && r[right] != '┐' {
			right++
		}
		var out []string
		for yy := y + 1; yy < len(rows); yy++ {
			rr := []rune(rows[yy])
			if right >= len(rr) || rr[left] == '╚' || rr[left] == '└' {
				break
			}
			out = append(out, string(rr[left+2:right-1]))
		}
		return out
	}
	t.Fatalf("no box titled %q:\n%s", title, text)
	return nil
}

// TestOverlaysReflow checks the intro and the end summary of every
// built-in lesson: the description and the line to remember are
// refilled to the box.
func TestOverlaysReflow(t *testing.T) {
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		snap := d.Snapshot()
		for _, sz := range [][2]int{{120, 40}, {80, 24}} {
			p := NewPlayer(NewTheme(true), nil)
			p.SetOverlays(true)
			p.SetSnapshot(snap)
			scr := newScreen(t, sz[0], sz[1])
			draw(scr, p)
			text := screenText(scr)
			scr.Fini()
			lines := section(overlayText(t, text, snap.Header.Title), "It checks:")
			if len(lines) == 0 {
				t.Fatalf("%s %dx%d: no intro:\n%s", l.Name, sz[0], sz[1], text)
			}
			checkFilled(t, l.Name+" intro", lines, min(sz[0]-4, 76))
		}
		c := NewController(d)
		for i := 0; i < 1000 && !d.Done(); i++ {
			c.Handle(Command{Kind: CmdStep})
		}
		c.Handle(Command{Kind: CmdStep})
		end := c.Snapshot()
		if end.Intro.Remember == "" {
			continue
		}
		p := NewPlayer(NewTheme(true), nil)
		p.SetOverlays(true)
		p.SetSnapshot(snap)
		p.SetSnapshot(end)
		if p.overlay != overlaySummary {
			t.Fatalf("%s: no summary at the end (state %v)", l.Name, end.Header.State)
		}
		scr := newScreen(t, 120, 40)
		draw(scr, p)
		text := screenText(scr)
		scr.Fini()
		lines := overlayText(t, text, "the end: "+end.Header.Title)
		for i, ln := range lines {
			if strings.HasPrefix(strings.TrimSpace(ln), "To remember:") {
				checkFilled(t, l.Name+" summary", lines[i:], 76)
				break
			}
		}
	}
}

func TestReflow(t *testing.T) {
	for _, c := range []struct {
		text string
		w    int
		want []string
	}{
		{"one two\nthree four\n", 40, []string{"one two three four"}},
		{"one two\n\n\nthree\n", 40, []string{"one two", "", "three"}},
		{"The list:\n  1. first item\n     goes on\n  2. second\nAfter it.", 40,
			[]string{"The list:", "  1. first item goes on", "  2. second", "After it."}},
		{"  A  one shared work queue;\n  B  a log,\n     keyed", 20,
			[]string{"  A  one shared work", "     queue;", "  B  a log, keyed"}},
		{"- alpha beta gamma delta", 12, []string{"- alpha beta", "  gamma", "  delta"}},
		{"A service that does two\nwrites.", 40, []string{"A service that does two writes."}},
		{"e.g. this is prose", 40, []string{"e.g. this is prose"}},
		{"no newline at all, just words", 12, wrap("no newline at all, just words", 12)},
		{"", 10, []string{}},
		{"x", 0, nil},
	} {
		got := reflow(c.text, c.w)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("reflow(%q, %d) = %q, want %q", c.text, c.w, got, c.want)
		}
	}
}

// TestOverlayCoversItsColumns renders every built-in lesson's intro at
// 80x24, 120x40 and 160x48 and checks that the box either spans the width
// or leaves a margin of at least two columns on each side, equal within a
// column: no sliver of the panels beneath shows at its edge (at 80x24 a
// one-column gap once showed their borders doubled: "╗╗", "║╝").
func TestOverlayCoversItsColumns(t *testing.T) {
	for _, l := range scenario.Lessons() {
		s, err := scenario.LoadLesson(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lab.Open(s, lab.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		snap := d.Snapshot()
		for _, sz := range [][2]int{{80, 24}, {120, 40}, {160, 48}} {
			p := NewPlayer(NewTheme(true), nil)
			p.SetOverlays(true)
			p.SetSnapshot(snap)
			scr := newScreen(t, sz[0], sz[1])
			draw(scr, p)
			text := screenText(scr)
			scr.Fini()
			title := []rune(snap.Header.Title)
			if len(title) > 30 {
				title = title[:30]
			}
			found := false
			for y, row := range strings.Split(text, "\n") {
				r := []rune(row)
				left := strings.Index(row, "╔ "+string(title))
				if left < 0 {
					continue
				}
				found = true
				lx := len([]rune(row[:left]))
				rx := -1
				for x := lx + 1; x < len(r); x++ { // the box's own corner
					if r[x] == '╗' {
						rx = x
						break
					}
				}
				lm, rm := lx, sz[0]-1-rx
				if rx < 0 || (lm != 0 && lm < 2) || (rm != 0 && rm < 2) || lm-rm > 1 || rm-lm > 1 {
					t.Errorf("%s %dx%d: intro box at columns %d-%d (margins %d, %d), row %d:\n%s", l.Name, sz[0], sz[1], lx, rx, lm, rm, y, text)
				}
				break
			}
			if !found {
				t.Errorf("%s %dx%d: no intro box:\n%s", l.Name, sz[0], sz[1], text)
			}
		}
	}
}
