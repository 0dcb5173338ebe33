package tui

import (
	"errors"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Layout thresholds of the compare view: side by side from compareSideWidth
// columns per side, stacked below that when there are compareStackHeight
// rows; otherwise side by side anyway (narrow sides use the player's
// compact layout).
const (
	compareSideWidth   = 50
	compareStackHeight = 30
	compareTitleHeight = 30 // from this height on the top row shows the title
)

// Compare is the compare screen: two players, one per side, side by side
// (stacked when the terminal is narrow and tall), each with its label in
// its header and its tally under it, and one hints line. It is a tview
// primitive. Keys go to the focused side's player, whose commands reach the
// pair (so they apply to both sides) and whose view keys (focus, scroll,
// filter, help) change that side only; x moves the focus to the other side.
type Compare struct {
	*tview.Box
	theme   Theme
	players [2]*Player
	frame   lab.CompareFrame
	focus   int
	onQuit  func()
	rects   [2]rect
}

// NewCompare returns a compare view whose players send commands through
// send (which must not block for long).
func NewCompare(th Theme, send func(Command)) *Compare {
	c := &Compare{Box: tview.NewBox(), theme: th}
	for i := range c.players {
		c.players[i] = NewPlayer(th, send)
		c.players[i].SetQuitFunc(c.quit)
		c.players[i].SetChrome(false)
	}
	return c
}

// SetFrame replaces the frame on display. Call it on the UI goroutine only.
func (c *Compare) SetFrame(f lab.CompareFrame) {
	c.frame = f
	for i := range c.players {
		c.players[i].SetSnapshot(f.Sides[i].Snap)
	}
}

// Frame returns the frame on display.
func (c *Compare) Frame() lab.CompareFrame { return c.frame }

// Focused returns the index of the side that receives keys (0 or 1).
func (c *Compare) Focused() int { return c.focus }

// Player returns side i's player (0 or 1).
func (c *Compare) Player(i int) *Player { return c.players[i&1] }

// SetQuitFunc sets what the quit key does.
func (c *Compare) SetQuitFunc(f func()) { c.onQuit = f }

// quit hands over to the quit function.
func (c *Compare) quit() {
	if c.onQuit != nil {
		c.onQuit()
	}
}

// stacked reports whether a w x h area stacks the sides.
func stacked(w, h int) bool { return w < 2*compareSideWidth && h >= compareStackHeight }

// Draw draws the title row, both sides and the hints line. Each side is a
// player drawn without its own header and hints rows (SetChrome(false)) on
// its own part of the screen; the compare view draws the side's header
// there (its label first, a mark on the focused side), and the side's
// tally on the bottom row, or the player's hints row while it is
// Capturing (the text being typed). The player itself shows the
// side's live verdict (Snapshot.Verdict).
func (c *Compare) Draw(screen tcell.Screen) {
	x, y, w, h := c.GetRect()
	th := &c.theme
	fill(screen, rect{x, y, w, h}, th.Normal)
	if w < minWidth || h < minHeight+2 {
		put(screen, x, y, x+w, "window too small", th.Normal)
		return
	}
	body := rect{x, y, w, h - 1}
	if h >= compareTitleHeight {
		c.drawTitle(screen, rect{x, y, w, 1})
		body = rect{x, y + 1, w, h - 2}
	}
	if stacked(w, h) {
		top := body.h / 2
		c.rects[0] = rect{body.x, body.y, body.w, top}
		c.rects[1] = rect{body.x, body.y + top, body.w, body.h - top}
	} else {
		left := body.w / 2
		c.rects[0] = rect{body.x, body.y, left, body.h}
		c.rects[1] = rect{body.x + left, body.y, body.w - left, body.h}
	}
	for i := range c.players {
		r := c.rects[i]
		pl := c.players[i]
		pl.SetRect(r.x, r.y, r.w, r.h)
		pl.Draw(screen)
		if r.h < 2 || r.w < 2 {
			continue
		}
		if pl.HelpVisible() {
			continue
		}
		if pl.Capturing() {
			pl.DrawHints(screen, r.x, r.y+r.h-1, r.w)
		} else {
			c.drawTally(screen, rect{r.x, r.y + r.h - 1, r.w, 1}, i)
		}
		c.drawSideHeader(screen, rect{r.x, r.y, r.w, 1}, i)
	}
	c.drawHints(screen, rect{x, y + h - 1, w, 1})
}

// drawTitle draws the top row: "compare", the title and "LABEL vs LABEL".
func (c *Compare) drawTitle(screen tcell.Screen, r rect) {
	th := &c.theme
	cx := put(screen, r.x+1, r.y, r.x+r.w, "compare ", th.Dim)
	if c.frame.Title != "" {
		cx = put(screen, cx, r.y, r.x+r.w, c.frame.Title, th.Title)
		cx = put(screen, cx, r.y, r.x+r.w, "  ", th.Normal)
	}
	cx = put(screen, cx, r.y, r.x+r.w, c.frame.Sides[0].Label, th.Key)
	cx = put(screen, cx, r.y, r.x+r.w, " vs ", th.Dim)
	put(screen, cx, r.y, r.x+r.w, c.frame.Sides[1].Label, th.Key)
}

// drawSideHeader draws side i's header over the player's: a focus mark,
// the side's label and the notice on the left; the tick, and as
// room allows the state, seed and speed, on the right. The label comes
// before the seed and the speed, so a narrow side still says which it is.
func (c *Compare) drawSideHeader(screen tcell.Screen, r rect, i int) {
	th := &c.theme
	sf := &c.frame.Sides[i]
	hd := &sf.Snap.Header
	fill(screen, r, th.Normal)
	mark, mst := " ", th.Normal
	if i == c.focus {
		mark, mst = "●", th.Focus
	}
	sym, stst := "‖", th.Duplicate
	switch hd.State {
	case lab.StatePlaying:
		sym, stst = "▶", th.Good
	case lab.StateFinished:
		sym, stst = "■", th.Info
	}
	left := line{{mark + " ", mst}, {sf.Label, th.Title}}
	right := line{{"t=" + strconv.FormatInt(int64(hd.Tick), 10), th.Title}, {" " + sym, stst}}
	room := r.w - lineWidth(left) - 1
	for _, opt := range []line{
		{{"t=" + strconv.FormatInt(int64(hd.Tick), 10), th.Title}, {" " + sym + " " + hd.State.String() + " ", stst}},
		{{"t=" + strconv.FormatInt(int64(hd.Tick), 10), th.Title}, {"  seed " + strconv.FormatUint(hd.Seed, 10), th.Dim},
			{"  " + sym + " " + hd.State.String() + " ", stst}},
		{{"t=" + strconv.FormatInt(int64(hd.Tick), 10), th.Title}, {"  seed " + strconv.FormatUint(hd.Seed, 10), th.Dim},
			{"  " + speedText(hd.Speed), th.Dim}, {"  " + sym + " " + hd.State.String() + " ", stst}},
	} {
		if lineWidth(opt) <= room {
			right = opt
		}
	}
	rw := lineWidth(right)
	limit := r.x + r.w - rw - 1
	if limit < r.x {
		limit = r.x
	}
	cx := drawLine(screen, r.x, r.y, limit, left)
	if hd.Notice != "" {
		nst := th.Info
		if strings.HasPrefix(hd.Notice, SymFault) {
			nst = th.Fault
		}
		put(screen, cx, r.y, limit, "  "+hd.Notice, nst)
	}
	if rw <= r.w {
		drawLine(screen, r.x+r.w-rw, r.y, r.x+r.w, right)
	}
}

// drawTally draws side i's tally on one row, coloured as a loss when the
// side lost messages and as a duplicate when it applied duplicates.
func (c *Compare) drawTally(screen tcell.Screen, r rect, i int) {
	th := &c.theme
	sf := &c.frame.Sides[i]
	cx := r.x + 2
	room := r.x + r.w - cx
	t := fitTally(sf.Tally, room)
	if !sf.Tally.Known {
		l := &sf.Snap.Ledger
		t = "messages " + n(l.Messages) + "  dup " + n(l.Duplicates) + "  lost " + n(l.Lost)
		if width(t) > room {
			t = truncate("m"+n(l.Messages)+" d"+n(l.Duplicates)+" l"+n(l.Lost), room)
		}
	}
	st := th.Normal
	if sf.Tally.Lost > 0 || sf.Snap.Ledger.Lost > 0 {
		st = th.Loss
	} else if sf.Tally.DupApplied > 0 {
		st = th.Duplicate
	}
	put(screen, cx, r.y, r.x+r.w, t, st)
}

// drawHints draws the compare hints line: every command applies to both
// sides, so the line says so once; help and quit come before the filter,
// so they are visible at 80 columns.
func (c *Compare) drawHints(screen tcell.Screen, r rect) {
	th := &c.theme
	hints := []struct{ k, v string }{
		{"x", "other side"}, {"space", "play both"}, {"s", "step"}, {"n", "next"}, {"←", "back"},
		{"?", "help"}, {"q", "quit"}, {"/", "filter"},
	}
	cx := r.x + 1
	for i, hn := range hints {
		if i > 0 {
			cx = put(screen, cx, r.y, r.x+r.w, "  ", th.Normal)
		}
		if cx+width(hn.k)+1+width(hn.v) > r.x+r.w {
			break
		}
		cx = put(screen, cx, r.y, r.x+r.w, hn.k, th.Key)
		cx = put(screen, cx, r.y, r.x+r.w, " "+hn.v, th.Dim)
	}
}

// InputHandler dispatches keys (see HandleKey).
func (c *Compare) InputHandler() func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
	return c.WrapInputHandler(func(ev *tcell.EventKey, _ func(tview.Primitive)) {
		c.HandleKey(ev)
	})
}

// HandleKey applies one key: x (when no filter is being typed) switches
// the focused side, everything else goes to the focused side's player. It
// reports whether the key was used.
func (c *Compare) HandleKey(ev *tcell.EventKey) bool {
	pl := c.players[c.focus]
	if ev.Key() == tcell.KeyRune && ev.Rune() == 'x' && !c.typing() {
		c.focus = 1 - c.focus
		return true
	}
	return pl.HandleKey(ev)
}

// typing reports whether the focused player is taking text or a choice (a
// filter, a tick to go to, a hand action's target): then x is part of it.
func (c *Compare) typing() bool { return c.players[c.focus].Capturing() }

// MouseHandler focuses the side under a click and passes the event on to
// its player.
func (c *Compare) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (consumed bool, capture tview.Primitive) {
	return c.WrapMouseHandler(func(action tview.MouseAction, ev *tcell.EventMouse, setFocus func(tview.Primitive)) (bool, tview.Primitive) {
		x, y := ev.Position()
		if !c.InRect(x, y) {
			return false, nil
		}
		setFocus(c)
		for i := range c.players {
			if c.players[i].InRect(x, y) {
				if action == tview.MouseLeftClick {
					c.focus = i
				}
				return c.players[i].MouseHandler()(action, ev, func(tview.Primitive) {})
			}
		}
		return true, nil
	})
}

// RunCompare plays the pair in the compare view on the terminal (or
// opt.Screen) and returns when the user quits. One goroutine (a Loop) owns
// both runs; quitting stops it, and waits for it, before the application
// stops. Without a terminal it returns ErrNotTerminal at once.
func RunCompare(p *lab.Pair, opt Options) error {
	if p == nil {
		return errors.New("tui: nil pair")
	}
	app, th, err := newApp(opt)
	if err != nil {
		return err
	}
	var loop *Loop
	view := NewCompare(th, func(cmd Command) { _ = loop.Send(cmd) })
	ctl := NewController(p)
	ctl.SetPauseGrace(PauseGrace, nil)
	view.SetFrame(p.Frame(ctl.Snapshot()))
	post := func(s lab.Snapshot) {
		f := p.Frame(s)
		app.QueueUpdateDraw(func() { view.SetFrame(f) })
	}
	loop = StartLoop(ctl, post, opt.Ticker)
	quit := func() { quitApp(app, loop) }
	view.SetQuitFunc(quit)
	app.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyCtrlC {
			quit()
			return nil
		}
		return ev
	})
	app.SetRoot(view, true)
	err = app.Run()
	loop.Halt()
	return err
}

// fitTally returns the longest of t.Text, t.Short and t.Terse that fits in
// w columns, and Terse cut with "…" when none does, so a number is never
// cut without a sign of it.
func fitTally(t lab.Tally, w int) string {
	for _, s := range []string{t.Text(), t.Short()} {
		if width(s) <= w {
			return s
		}
	}
	return truncate(t.Terse(), w)
}
