package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Lesson is one entry of the lesson menu.
type Lesson struct {
	Name    string // what `brokerlab play NAME` accepts
	Title   string
	Summary string // one line
}

// Menu is the lesson menu: a title and one-line summary per lesson, a
// selection moved with the arrow keys (or j/k), enter to open, q to quit.
// It is a tview primitive; it keeps the selected lesson visible at any
// height.
type Menu struct {
	*tview.Box
	theme    Theme
	lessons  []Lesson
	sel      int
	top      int
	onSelect func(Lesson)
	onQuit   func()
	notice   string
}

// SetNotice shows a one-line message under the list (e.g. why a lesson did
// not open); an empty string removes it.
func (m *Menu) SetNotice(s string) { m.notice = s }

// NewMenu returns a menu over lessons (shown in the given order).
func NewMenu(th Theme, lessons []Lesson) *Menu {
	return &Menu{Box: tview.NewBox(), theme: th, lessons: append([]Lesson(nil), lessons...)}
}

// SetSelectFunc sets what enter does with the selected lesson.
func (m *Menu) SetSelectFunc(f func(Lesson)) { m.onSelect = f }

// SetQuitFunc sets what q does.
func (m *Menu) SetQuitFunc(f func()) { m.onQuit = f }

// Selected returns the index of the selected lesson.
func (m *Menu) Selected() int { return m.sel }

// InputHandler moves the selection, opens or quits.
func (m *Menu) InputHandler() func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
	return m.WrapInputHandler(func(ev *tcell.EventKey, _ func(tview.Primitive)) {
		m.HandleKey(ev)
	})
}

// HandleKey applies one key and reports whether it was bound.
func (m *Menu) HandleKey(ev *tcell.EventKey) bool {
	switch {
	case ev.Key() == tcell.KeyUp || ev.Key() == tcell.KeyRune && ev.Rune() == 'k':
		m.move(-1)
	case ev.Key() == tcell.KeyDown || ev.Key() == tcell.KeyRune && ev.Rune() == 'j':
		m.move(1)
	case ev.Key() == tcell.KeyHome:
		m.sel = 0
	case ev.Key() == tcell.KeyEnd:
		m.sel = len(m.lessons) - 1
	case ev.Key() == tcell.KeyEnter:
		if m.onSelect != nil && len(m.lessons) > 0 {
			m.onSelect(m.lessons[m.sel])
		}
	case ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyCtrlC || ev.Key() == tcell.KeyRune && ev.Rune() == 'q':
		if m.onQuit != nil {
			m.onQuit()
		}
	default:
		return false
	}
	if m.sel < 0 {
		m.sel = 0
	}
	return true
}

// move moves the selection by d, clamped.
func (m *Menu) move(d int) {
	m.sel += d
	if m.sel >= len(m.lessons) {
		m.sel = len(m.lessons) - 1
	}
	if m.sel < 0 {
		m.sel = 0
	}
}

// Draw draws the menu: header line, framed list (two rows per lesson:
// name and title, then the summary), hints line.
func (m *Menu) Draw(screen tcell.Screen) {
	x, y, w, h := m.GetRect()
	th := &m.theme
	fill(screen, rect{x, y, w, h}, th.Normal)
	if w < minWidth || h < 5 {
		put(screen, x, y, x+w, "window too small", th.Normal)
		return
	}
	put(screen, x, y, x+w, " brokerlab · lessons", th.Title)
	put(screen, x, y+h-1, x+w, " ", th.Normal)
	drawLine(screen, x+1, y+h-1, x+w, line{
		{"↑↓", th.Key}, {" choose  ", th.Dim}, {"enter", th.Key}, {" play  ", th.Dim},
		{"q", th.Key}, {" quit", th.Dim},
	})
	if m.notice != "" {
		put(screen, x+1, y+h-1, x+w, truncate(m.notice, w-1)+spaces(w), th.Fault)
	}
	in := frame(screen, rect{x, y + 1, w, h - 2}, "built-in lessons", true, th)
	if in.h <= 0 {
		return
	}
	if len(m.lessons) == 0 {
		put(screen, in.x, in.y, in.x+in.w, "no lessons", th.Dim)
		return
	}
	per := 2
	if in.h < 2*len(m.lessons) && in.h < 6 {
		per = 1
	}
	rows := in.h / per
	if m.sel < m.top {
		m.top = m.sel
	}
	if m.sel >= m.top+rows {
		m.top = m.sel - rows + 1
	}
	nameW := 0
	for _, l := range m.lessons {
		if k := width(l.Name); k > nameW {
			nameW = k
		}
	}
	if nameW > in.w/3 {
		nameW = in.w / 3
	}
	for i := 0; i < rows && m.top+i < len(m.lessons); i++ {
		l := m.lessons[m.top+i]
		ry := in.y + i*per
		st, mark := th.Normal, "  "
		if m.top+i == m.sel {
			st, mark = th.Selected, "▶ "
			fill(screen, rect{in.x, ry, in.w, 1}, st)
		}
		cx := put(screen, in.x, ry, in.x+in.w, mark, st)
		cx = put(screen, cx, ry, in.x+in.w, padRight(l.Name, nameW)+"  ", st)
		put(screen, cx, ry, in.x+in.w, l.Title, st.Bold(true))
		if per == 2 {
			put(screen, in.x+4, ry+1, in.x+in.w, truncate(l.Summary, in.w-4), th.Dim)
		}
	}
	if m.top > 0 {
		put(screen, x+w-2, y+1, x+w-1, "▲", th.Dim)
	}
	if m.top+rows < len(m.lessons) {
		put(screen, x+w-2, y+h-2, x+w-1, "▼", th.Dim)
	}
}
