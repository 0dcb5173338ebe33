package tui

import (
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Lesson is one entry of the lesson menu.
type Lesson struct {
	Name    string // what `brokerlab play NAME` accepts
	Title   string
	Summary string // one line
	// Description is the lesson's introduction, shown in the preview pane.
	Description string
	// Goals are what the lesson checks, e.g. "exactly_once(safe)".
	Goals []string
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
	// digits is the number typed so far and typedAt when its last digit
	// came: a second digit within digitWindow extends it ("1" then "3"
	// picks lesson 13). now is the clock, time.Now unless a test sets it.
	digits  int
	typedAt time.Time
	now     func() time.Time
}

// digitWindow is how soon a second digit must follow the first to make a
// two-digit lesson number.
const digitWindow = time.Second

// SetNotice shows a one-line message under the list (e.g. why a lesson did
// not open); an empty string removes it.
func (m *Menu) SetNotice(s string) { m.notice = s }

// NewMenu returns a menu over lessons (shown in the given order).
func NewMenu(th Theme, lessons []Lesson) *Menu {
	return &Menu{Box: tview.NewBox(), theme: th, lessons: append([]Lesson(nil), lessons...), now: time.Now}
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

// HandleKey applies one key and reports whether it was bound. A digit
// selects the lesson of that number; a digit typed within digitWindow of
// the one before extends the number when the longer number names a lesson
// ("1", "3" selects lesson 13 of 13), else starts a new one.
func (m *Menu) HandleKey(ev *tcell.EventKey) bool {
	if ev.Key() != tcell.KeyRune || ev.Rune() < '0' || ev.Rune() > '9' {
		m.digits = 0
	}
	switch {
	case ev.Key() == tcell.KeyUp || ev.Key() == tcell.KeyRune && ev.Rune() == 'k':
		m.move(-1)
	case ev.Key() == tcell.KeyDown || ev.Key() == tcell.KeyRune && ev.Rune() == 'j':
		m.move(1)
	case ev.Key() == tcell.KeyHome:
		m.sel = 0
	case ev.Key() == tcell.KeyEnd:
		m.sel = len(m.lessons) - 1
	case ev.Key() == tcell.KeyRune && ev.Rune() >= '0' && ev.Rune() <= '9':
		return m.digit(int(ev.Rune() - '0'))
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

// digit applies one typed digit d and reports whether it was bound.
func (m *Menu) digit(d int) bool {
	now := m.now()
	if m.digits > 0 && now.Sub(m.typedAt) < digitWindow && m.digits*10+d <= len(m.lessons) {
		m.digits = m.digits*10 + d
	} else {
		m.digits = d
	}
	m.typedAt = now
	if m.digits < 1 || m.digits > len(m.lessons) {
		m.digits = 0
		return false
	}
	m.sel = m.digits - 1
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

// Draw draws the menu: header line, the numbered list (one row per
// lesson: number, name and title, cut with "…"), a preview pane with the
// selected lesson's summary, description and goals (beside the list when
// the terminal is wide, under it otherwise), and the hints line.
func (m *Menu) Draw(screen tcell.Screen) {
	x, y, w, h := m.GetRect()
	th := &m.theme
	fill(screen, rect{x, y, w, h}, th.Normal)
	if w < minWidth || h < 5 {
		put(screen, x, y, x+w, "window too small", th.Normal)
		return
	}
	put(screen, x, y, x+w, " brokerlab · lessons", th.Title)
	drawLine(screen, x+1, y+h-1, x+w, line{
		{"↑↓", th.Key}, {" choose  ", th.Dim}, {m.pickKeys(), th.Key}, {" pick  ", th.Dim}, {"enter", th.Key}, {" play  ", th.Dim},
		{"q", th.Key}, {" quit", th.Dim},
	})
	if m.notice != "" {
		put(screen, x+1, y+h-1, x+w, truncate(m.notice, w-1)+spaces(w), th.Fault)
	}
	body := rect{x, y + 1, w, h - 2}
	listR, prevR := body, rect{}
	switch {
	case w >= 100:
		lw := w * 45 / 100
		listR = rect{x, body.y, lw, body.h}
		prevR = rect{x + lw, body.y, w - lw, body.h}
	case body.h >= len(m.lessons)+2+6:
		listR = rect{x, body.y, w, len(m.lessons) + 2}
		prevR = rect{x, body.y + listR.h, w, body.h - listR.h}
	}
	in := frame(screen, listR, "built-in lessons", true, th)
	if in.h <= 0 {
		return
	}
	if len(m.lessons) == 0 {
		put(screen, in.x, in.y, in.x+in.w, "no lessons", th.Dim)
		return
	}
	rows := in.h
	if m.sel < m.top {
		m.top = m.sel
	}
	if m.sel >= m.top+rows {
		m.top = m.sel - rows + 1
	}
	numW := len(n(len(m.lessons)))
	for i := 0; i < rows && m.top+i < len(m.lessons); i++ {
		idx := m.top + i
		l := m.lessons[idx]
		ry := in.y + i
		st, mark := th.Normal, "  "
		if idx == m.sel {
			st, mark = th.Selected, "▶ "
			fill(screen, rect{in.x, ry, in.w, 1}, st)
		}
		cx := put(screen, in.x, ry, in.x+in.w, mark+padLeft(n(idx+1), numW)+" ", st)
		put(screen, cx, ry, in.x+in.w, truncate(l.Title, in.x+in.w-cx), st.Bold(true))
	}
	if m.top > 0 {
		put(screen, listR.x+listR.w-2, listR.y, listR.x+listR.w-1, "▲", th.Dim)
	}
	if m.top+rows < len(m.lessons) {
		put(screen, listR.x+listR.w-2, listR.y+listR.h-1, listR.x+listR.w-1, "▼", th.Dim)
	}
	if prevR.h >= 3 {
		m.drawPreview(screen, prevR, m.lessons[m.sel])
	}
}

// pickKeys is the hint for the number keys: "1-9", or "1-13" for 13
// lessons (typed as two digits).
func (m *Menu) pickKeys() string {
	return "1-" + n(max(min(len(m.lessons), 99), 1))
}

// drawPreview draws the selected lesson's summary, description and goals.
func (m *Menu) drawPreview(screen tcell.Screen, r rect, l Lesson) {
	th := &m.theme
	in := frame(screen, r, l.Name, false, th)
	var lines []line
	for _, t := range wrap(l.Summary, in.w) {
		lines = append(lines, line{{t, th.Title}})
	}
	if l.Description != "" {
		lines = append(lines, line{})
		for _, t := range reflow(l.Description, in.w) {
			lines = append(lines, line{{t, th.Normal}})
		}
	}
	if len(l.Goals) > 0 {
		lines = append(lines, line{})
		for _, t := range wrap("It checks: "+joinWords(l.Goals), in.w) {
			lines = append(lines, line{{t, th.Dim}})
		}
	}
	if len(lines) > in.h && in.h > 0 {
		lines = lines[:in.h]
		last := &lines[in.h-1]
		*last = line{{"… enter plays it and shows the rest", th.Dim}}
	}
	drawLines(screen, in, lines, 0)
}
