package tui

import (
	"errors"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Side is one run of a comparison: a short label naming it (the file or
// lesson, the seed or the variant) and the driver that plays it.
type Side struct {
	Label  string
	Driver Driver
}

// Tally is the ground truth of one side in numbers, folded from its run's
// ledger: the events sent (lineage roots), the effects applied, the
// repeated deliveries and the repeated effects among them, the losses that
// stand and the copies still held by a broker or an outbox. Known is false
// when the side's driver exposes no ledger (then only Snapshot.Ledger is
// known).
type Tally struct {
	Known      bool
	Sent       int
	Applied    int
	Duplicates int
	DupApplied int
	Lost       int
	Pending    int
}

// tallyOf folds ledger statistics into a Tally.
func tallyOf(s sim.Stats) Tally {
	return Tally{Known: true, Sent: s.Origins, Applied: s.Applied, Duplicates: s.Duplicates,
		DupApplied: s.DuplicateEffects, Lost: s.Lost, Pending: s.Pending}
}

// Text returns the tally as one line, "sent 20 applied 26 dup 6 (6
// applied) lost 0 pending 0", or "" when it is not Known.
func (t Tally) Text() string {
	if !t.Known {
		return ""
	}
	return "sent " + strconv.Itoa(t.Sent) + " applied " + strconv.Itoa(t.Applied) +
		" dup " + strconv.Itoa(t.Duplicates) + " (" + strconv.Itoa(t.DupApplied) + " applied)" +
		" lost " + strconv.Itoa(t.Lost) + " pending " + strconv.Itoa(t.Pending)
}

// Short returns the tally in at most about 40 columns, "sent 20 appl 26
// dup 6/6 lost 0 pend 0" (duplicates delivered/applied).
func (t Tally) Short() string {
	if !t.Known {
		return ""
	}
	return t.compact([5]string{"sent ", " appl ", " dup ", " lost ", " pend "})
}

// Terse returns the tally in the fewest columns, "s20 a26 d6/6 l0 p0":
// sent, applied, duplicates delivered/applied, lost, pending.
func (t Tally) Terse() string {
	if !t.Known {
		return ""
	}
	return t.compact([5]string{"s", " a", " d", " l", " p"})
}

// compact writes the tally's numbers after the five labels, duplicates as
// delivered/applied: the shape Short and Terse share.
func (t Tally) compact(label [5]string) string {
	return label[0] + strconv.Itoa(t.Sent) + label[1] + strconv.Itoa(t.Applied) +
		label[2] + strconv.Itoa(t.Duplicates) + "/" + strconv.Itoa(t.DupApplied) +
		label[3] + strconv.Itoa(t.Lost) + label[4] + strconv.Itoa(t.Pending)
}

// Fit returns the longest of Text, Short and Terse that fits in w
// columns, and Terse cut with "…" when none does, so a number is never cut
// without a sign of it.
func (t Tally) Fit(w int) string {
	for _, s := range []string{t.Text(), t.Short()} {
		if width(s) <= w {
			return s
		}
	}
	return truncate(t.Terse(), w)
}

// SideFrame is what the compare view shows of one side: its label, its
// snapshot (with the pair's play state and speed in the header) and its
// tally.
type SideFrame struct {
	Label string
	Snap  Snapshot
	Tally Tally
}

// CompareFrame is one frame of the compare view, both sides at the same
// tick. Like a Snapshot it is immutable once posted.
type CompareFrame struct {
	Title string // what is compared, shown on the top row
	Sides [2]SideFrame
}

// runner is implemented by drivers that expose their scenario run
// (ScenarioDriver); the pair reads the ledger through it.
type runner interface {
	Run() *lab.Run
}

// Pair is a Driver (and NarrationStepper and Rewinder) that plays two
// sides in lockstep: every step, seek, restart and action applies to both,
// so the two runs are always at the same tick (a side whose run has ended
// stays at its last tick while the other goes on). It owns both drivers
// and, like every Driver, is used from one goroutine only (the Loop's).
//
// The Snapshot it returns to the Controller carries only what the
// Controller reads: the header of side A (tick, seed, notice) with the
// later tick of the two, and a narration index that changes whenever
// either side's narration changes, with Pause set when the step that came
// up on either side asks for it. The views read both sides from Frame.
//
// A step costs the two drivers' steps plus, per side, one ledger fold
// (sim.Ledger.Stats, O(messages x consumers)); above exactStatsLimit
// messages the fold is redone every statsEvery ticks only.
type Pair struct {
	sides   [2]Side
	snaps   [2]Snapshot
	tallies [2]Tally
	statsAt [2]sim.Tick
	notices [2]string
	title   string
}

// ErrPairSide is NewPair's error for a side without a label or a driver.
var ErrPairSide = errors.New("tui: a compare side needs a label and a driver")

// NewPair returns the pair of a and b, both at their current state.
func NewPair(a, b Side) (*Pair, error) {
	for _, s := range []Side{a, b} {
		if s.Driver == nil || s.Label == "" {
			return nil, ErrPairSide
		}
	}
	p := &Pair{sides: [2]Side{a, b}}
	for i := range p.sides {
		p.snaps[i] = p.sides[i].Driver.Snapshot()
		p.statsAt[i] = -1
	}
	p.refresh(true)
	return p, nil
}

// SetTitle sets the title the compare view shows on its top row, e.g. the
// lesson's title. Call it before the pair is handed to a Loop.
func (p *Pair) SetTitle(t string) { p.title = t }

// refresh recomputes the tallies of the sides whose tick changed since the
// last fold: always up to exactStatsLimit messages, beyond that every
// statsEvery ticks, at the end, after a seek back, or when forced.
func (p *Pair) refresh(force bool) {
	for i := range p.sides {
		rd, ok := p.sides[i].Driver.(runner)
		if !ok || rd.Run() == nil {
			p.tallies[i] = Tally{}
			continue
		}
		r := rd.Run()
		now := r.Now()
		if p.statsAt[i] == now && !force {
			continue
		}
		// A seek back (now before the last fold) rebuilt the run: fold again.
		if force || p.statsAt[i] < 0 || now < p.statsAt[i] || r.Env().IDs.Last() <= exactStatsLimit ||
			now-p.statsAt[i] >= statsEvery || r.Done() {
			p.tallies[i] = tallyOf(r.Env().Ledger.Stats())
			p.statsAt[i] = now
		}
	}
}

// combined builds the Controller's view of the pair from prev, the
// snapshots before the call, and the current ones.
func (p *Pair) combined(prev [2]Snapshot) Snapshot {
	s := p.snaps[0]
	if t := p.snaps[1].Header.Tick; t > s.Header.Tick {
		s.Header.Tick = t
	}
	s.Narration.Index = p.snaps[0].Narration.Index + p.snaps[1].Narration.Index
	s.Narration.Total = p.snaps[0].Narration.Total + p.snaps[1].Narration.Total
	s.Narration.Pause = false
	for i := range p.snaps {
		if p.snaps[i].Narration.Index != prev[i].Narration.Index && p.snaps[i].Narration.Pause {
			s.Narration.Pause = true
		}
	}
	s.Header.Notice = ""
	return s
}

// each applies f to every side whose run has not ended (every side when
// all is set) and returns the combined snapshot.
func (p *Pair) each(all bool, f func(i int, d Driver) Snapshot) Snapshot {
	prev := p.snaps
	p.notices = [2]string{}
	for i := range p.sides {
		d := p.sides[i].Driver
		if !all && d.Done() {
			continue
		}
		p.snaps[i] = f(i, d)
	}
	p.refresh(false)
	return p.combined(prev)
}

// Snapshot returns the combined snapshot without advancing.
func (p *Pair) Snapshot() Snapshot {
	return p.each(true, func(_ int, d Driver) Snapshot { return d.Snapshot() })
}

// Step advances both sides by one tick (a side that is done stays).
func (p *Pair) Step() Snapshot {
	return p.each(false, func(_ int, d Driver) Snapshot { return d.Step() })
}

// NextNarration steps both sides tick by tick until the narration of
// either changes, or both runs end.
func (p *Pair) NextNarration() Snapshot {
	start := [2]int{p.snaps[0].Narration.Index, p.snaps[1].Narration.Index}
	before := p.snaps
	for i := 0; i < maxNarrationSteps && !p.Done(); i++ {
		p.Step()
		if p.snaps[0].Narration.Index != start[0] || p.snaps[1].Narration.Index != start[1] {
			break
		}
	}
	return p.combined(before)
}

// Restart rebuilds both runs. Given side A's current seed (the Controller's
// restart) each side restarts with its own seed; given another seed (a new
// seed) side A takes it, and side B takes it too when the two sides shared
// a seed, or NextSeed of its own otherwise, so two seeds stay two seeds.
func (p *Pair) Restart(seed uint64) Snapshot {
	same := p.snaps[0].Header.Seed == p.snaps[1].Header.Seed
	seeds := [2]uint64{p.snaps[0].Header.Seed, p.snaps[1].Header.Seed}
	if seed != seeds[0] {
		seeds[0] = seed
		if same {
			seeds[1] = seed
		} else {
			seeds[1] = NextSeed(seeds[1])
		}
	}
	s := p.each(true, func(i int, d Driver) Snapshot {
		sn := d.Restart(seeds[i])
		if sn.Header.Notice == "" {
			p.notices[i] = "restarted with seed " + strconv.FormatUint(sn.Header.Seed, 10)
		}
		return sn
	})
	for i := range p.statsAt {
		p.statsAt[i] = -1
	}
	p.refresh(true)
	return s
}

// Do runs the action on both sides. Each side's outcome is shown in its
// own header; the error is nil when it applied to at least one side, and
// otherwise names both sides' reasons.
func (p *Pair) Do(a Action) (Snapshot, error) {
	var errs [2]error
	s := p.each(true, func(i int, d Driver) Snapshot {
		sn, err := d.Do(a)
		errs[i] = err
		if err != nil {
			p.notices[i] = SymFault + " " + a.Kind.String() + ": " + err.Error()
		}
		return sn
	})
	if errs[0] != nil && errs[1] != nil {
		return s, errors.New(p.sides[0].Label + ": " + errs[0].Error() + "; " + p.sides[1].Label + ": " + errs[1].Error())
	}
	return s, nil
}

// Seek shows both runs as they were at tick t (each clamped to its run's
// ticks), by the sides' own time travel (Rewinder). A side that cannot go
// back stays and says so in its header.
func (p *Pair) Seek(t sim.Tick) Snapshot {
	return p.each(true, func(i int, d Driver) Snapshot {
		rw, ok := d.(Rewinder)
		if !ok {
			p.notices[i] = SymFault + " this side cannot go back in time"
			return d.Snapshot()
		}
		return rw.Seek(t)
	})
}

// PrevNarration takes both runs back to the start of the previous
// narration step: each side goes back to its own, then both to the later
// of the two ticks, so they stay in lockstep.
func (p *Pair) PrevNarration() Snapshot {
	prev := p.snaps
	var to sim.Tick
	for i := range p.sides {
		rw, ok := p.sides[i].Driver.(Rewinder)
		if !ok {
			return p.Seek(p.snaps[i].Header.Tick)
		}
		if t := rw.PrevNarration().Header.Tick; t > to {
			to = t
		}
	}
	p.Seek(to)
	return p.combined(prev)
}

// Done reports whether both runs have ended.
func (p *Pair) Done() bool { return p.sides[0].Driver.Done() && p.sides[1].Driver.Done() }

// Frame returns both sides as the views show them, given the Controller's
// last snapshot c (for the play state, the speed and the notice). Call it
// on the goroutine that owns the pair, after the Controller's call.
func (p *Pair) Frame(c Snapshot) CompareFrame {
	f := CompareFrame{Title: p.title}
	for i := range p.sides {
		s := p.snaps[i]
		s.Header.Speed = c.Header.Speed
		s.Header.State = c.Header.State
		if p.sides[i].Driver.Done() {
			s.Header.State = StateFinished
		}
		switch {
		case p.notices[i] != "":
			s.Header.Notice = p.notices[i]
		case c.Header.Notice != "" && s.Header.Notice == "":
			s.Header.Notice = c.Header.Notice
		}
		s.Header.Title = p.sides[i].Label
		s.Header.Lesson = ""
		f.Sides[i] = SideFrame{Label: p.sides[i].Label, Snap: s, Tally: p.tallies[i]}
	}
	return f
}

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
	frame   CompareFrame
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
func (c *Compare) SetFrame(f CompareFrame) {
	c.frame = f
	for i := range c.players {
		c.players[i].SetSnapshot(f.Sides[i].Snap)
	}
}

// Frame returns the frame on display.
func (c *Compare) Frame() CompareFrame { return c.frame }

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
	case StatePlaying:
		sym, stst = "▶", th.Good
	case StateFinished:
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
	t := sf.Tally.Fit(room)
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
func RunCompare(p *Pair, opt Options) error {
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
	post := func(s Snapshot) {
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
