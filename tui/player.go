package tui

import (
	"strconv"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Layout thresholds: below them the player uses the compact layout, where
// the model panels become tabs.
const (
	wideMinWidth  = 120
	wideMinHeight = 36
	minModelWidth = 36 // narrowest model panel side by side
	minWidth      = 30 // below this the player only says the window is too small
	minHeight     = 8
)

// Player is the player screen: header, model panels, metrics strip, trace,
// narration and hints bar. It is a tview primitive. It only reads the
// Snapshot given to SetSnapshot (on the UI goroutine); its key handler sends
// Commands through the send function given to NewPlayer and otherwise changes
// only view-local state: focus, scrolling, the trace filter and the help
// overlay.
type Player struct {
	*tview.Box
	theme    Theme
	snap     lab.Snapshot
	send     func(Command)
	bindings []Binding
	onQuit   func()
	onBack   func()

	panels map[panelID]*panel
	trace  *tracePanel
	header *headerView
	hints  *hintsView

	focus      panelID // the focused panel
	tab        panelID // the model (or metrics) tab shown in the compact layout
	help       bool
	helpScroll int
	editing    bool // typing a filter
	filter     string
	stepFilter bool      // the filter was set by a narration step, not typed
	lastPage   int       // rows of the focused panel at the last draw
	drawn      []panelID // panels placed by the last draw, for the mouse
	overlay    overlayKind
	// overlayScroll is how far the intro or summary is scrolled, and
	// overlayPage its rows of text at the last draw (for pgup/pgdn).
	overlayScroll, overlayPage int
	overlays                   bool // show the intro and the summary (SetOverlays)
	introDone                  bool // the intro was shown once
	finished                   bool // the summary was shown for this end of the run
	picker                     *picker
	gotoing                    bool // typing a tick to jump to
	gotoText                   string
	bare                       bool // the header and hints rows are left to the caller (SetChrome)
	recording                  bool // drawn for a viewer without a keyboard: no key hints (SetRecording)
}

// NewPlayer returns a player that sends commands through send (which must
// not block for long). It shows an empty snapshot until SetSnapshot.
func NewPlayer(th Theme, send func(Command)) *Player {
	p := &Player{
		Box:      tview.NewBox(),
		theme:    th,
		send:     send,
		bindings: Bindings(),
		panels:   map[panelID]*panel{},
		focus:    panelID{kindTrace, 0},
		tab:      panelID{kindMetrics, 0},
	}
	p.trace = &tracePanel{Box: tview.NewBox(), p: p}
	p.header = &headerView{Box: tview.NewBox(), p: p}
	p.hints = &hintsView{Box: tview.NewBox(), p: p}
	return p
}

// SetSnapshot replaces the snapshot the views read. Call it on the UI
// goroutine only (Run does so inside QueueUpdateDraw).
func (p *Player) SetSnapshot(s lab.Snapshot) {
	first := len(modelPanels(&p.snap)) == 0
	step := s.Narration.Index != p.snap.Narration.Index
	p.snap = s
	ids := modelPanels(&p.snap)
	if first && len(ids) > 0 && p.tab.kind == kindMetrics {
		p.tab = openingTab(&p.snap, ids)
		if p.focus.kind == kindTrace {
			p.focus = p.tab
		}
	}
	if step {
		p.showStep(&s.Narration)
	}
	if !p.overlays {
		return
	}
	if !p.introDone && s.Intro.Description != "" {
		p.introDone = true
		if s.Header.Tick == 0 {
			p.overlay = overlayIntro
		}
	}
	switch {
	case s.Header.State == lab.StateFinished && !p.finished:
		p.finished = true
		if s.Verdict.Final || len(s.Verdict.Judgments) > 0 || s.Intro.Remember != "" {
			p.overlay = overlaySummary
		}
	case s.Header.State != lab.StateFinished:
		p.finished = false
		if p.overlay == overlaySummary {
			p.overlay = overlayNone
		}
	}
	if !p.valid(p.focus) {
		p.focus = panelID{kindTrace, 0}
	}
	if !p.valid(p.tab) {
		p.tab = panelID{kindMetrics, 0}
	}
}

// showStep brings what narration step n talks about on screen when the
// step comes up: its tab to the front (and focused), and its trace filter.
// A step without a tab leaves the tab as it is; a step without a filter
// clears the filter an earlier step set, which would hide what this step
// talks about, but keeps one the student typed.
func (p *Player) showStep(n *lab.Narration) {
	if n.Tab != "" {
		for _, id := range modelPanels(&p.snap) {
			if id.name(&p.snap) == n.Tab {
				p.tab, p.focus = id, id
				break
			}
		}
	}
	switch {
	case n.Filter != "":
		p.filter, p.editing, p.stepFilter = n.Filter, false, true
		p.trace.scroll = 0
	case p.stepFilter:
		p.filter, p.stepFilter = "", false
		p.trace.scroll = 0
	}
	// A step's filter picks the events of the story it tells. When none of
	// them is of the step's tick, the story is behind it: while the tick
	// is on screen the trace shows the story from its start (see
	// tracePanel). Otherwise the newest events, the tick's outcome, stay
	// in view.
	p.trace.anchored = n.Filter != ""
	p.trace.anchorTick = p.snap.Header.Tick
}

// Snapshot returns the snapshot on display.
func (p *Player) Snapshot() lab.Snapshot { return p.snap }

// SetQuitFunc sets what the quit key does after the player is done; Run
// passes a function that stops the driver goroutine and then the
// application.
func (p *Player) SetQuitFunc(f func()) { p.onQuit = f }

// SetBackFunc enables the "back to the menu" key.
func (p *Player) SetBackFunc(f func()) { p.onBack = f }

// Filter returns the trace filter in effect.
func (p *Player) Filter() string { return p.filter }

// Focused returns the title of the focused panel.
func (p *Player) Focused() string { return p.focus.title(&p.snap) }

// HelpVisible reports whether the help overlay is shown.
func (p *Player) HelpVisible() bool { return p.help }

// Capturing reports whether the player has the keys to itself: a filter
// or a tick to go to is being typed, or a hand action's target is being
// picked. Then every key is part of that, and the hints row shows it.
func (p *Player) Capturing() bool { return p.editing || p.gotoing || p.picker != nil }

// SetChrome says whether the player draws its header (top row) and hints
// row (bottom row). It does by default. Without them the player still
// keeps both rows for its caller, which draws its own header and bottom
// row there (the compare view: the side's label and its tally), so nothing
// is drawn twice; while Capturing the caller draws the player's hints row
// with DrawHints, since it shows what is typed. The help and picker boxes
// still cover the player's whole area.
func (p *Player) SetChrome(on bool) { p.bare = !on }

// SetRecording says whether the player is drawn for a recording, whose
// viewer has no keyboard: then the hints row shows the lesson's title
// instead of keys, and the intro and summary boxes leave out their key
// lines. Keys still work; only what is drawn changes.
func (p *Player) SetRecording(on bool) { p.recording = on }

// DrawHints draws the player's hints row (or, while Capturing, the text
// being typed or the picker's keys) on row y from column x, w columns wide.
func (p *Player) DrawHints(screen tcell.Screen, x, y, w int) {
	fill(screen, rect{x, y, w, 1}, p.theme.Normal)
	p.hints.SetRect(x, y, w, 1)
	p.hints.Draw(screen)
}

// valid reports whether id exists in the current snapshot.
func (p *Player) valid(id panelID) bool {
	switch id.kind {
	case kindQueue:
		return id.index < len(p.snap.Queues)
	case kindTopic:
		return id.index < len(p.snap.Topics)
	case kindLog:
		return id.index < len(p.snap.Logs)
	case kindOutbox:
		return id.index < len(p.snap.Outboxes)
	case kindProjection:
		return id.index < len(p.snap.Projections)
	case kindEffects:
		return p.snap.EffectTable != nil
	}
	return true
}

// targets lists the focusable panels in focus order.
func (p *Player) targets() []panelID {
	return append(modelPanels(&p.snap), panelID{kindMetrics, 0}, panelID{kindVerdict, 0}, panelID{kindTrace, 0}, panelID{kindNarration, 0})
}

// panel returns the primitive of a non-trace panel, creating it on first use
// so its scroll position survives frames.
func (p *Player) panel(id panelID) *panel {
	pn := p.panels[id]
	if pn == nil {
		pn = &panel{Box: tview.NewBox(), p: p, id: id}
		p.panels[id] = pn
	}
	return pn
}

// InputHandler dispatches keys through the key table.
func (p *Player) InputHandler() func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
	return p.WrapInputHandler(func(ev *tcell.EventKey, _ func(tview.Primitive)) {
		p.HandleKey(ev)
	})
}

// HandleKey applies one key as the key table says and reports whether the
// key was bound. While a filter is being typed, keys edit the filter.
func (p *Player) HandleKey(ev *tcell.EventKey) bool {
	switch {
	case p.picker != nil:
		p.pickerKey(ev)
		return true
	case p.gotoing:
		p.gotoKey(ev)
		return true
	case p.overlay != overlayNone && !p.help:
		p.overlayKey(ev)
		return true
	}
	if p.editing {
		switch ev.Key() {
		case tcell.KeyRune:
			p.filter += string(ev.Rune())
		case tcell.KeyBackspace, tcell.KeyBackspace2:
			if p.filter != "" {
				rs := []rune(p.filter)
				p.filter = string(rs[:len(rs)-1])
			}
		case tcell.KeyEnter:
			p.editing = false
		case tcell.KeyEscape:
			p.editing, p.filter = false, ""
		case tcell.KeyCtrlC:
			p.quit()
		default:
			return false
		}
		p.trace.scroll = 0
		return true
	}
	b := lookup(p.bindings, p, ev)
	if b == nil {
		return false
	}
	if b.View != nil {
		b.View(p)
	} else if p.send != nil {
		p.send(b.Command)
	}
	return true
}

// MouseHandler makes the mouse optional but useful: a click focuses the
// panel under the pointer, the wheel scrolls it.
func (p *Player) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (consumed bool, capture tview.Primitive) {
	return p.WrapMouseHandler(func(action tview.MouseAction, ev *tcell.EventMouse, setFocus func(tview.Primitive)) (bool, tview.Primitive) {
		x, y := ev.Position()
		if !p.InRect(x, y) {
			return false, nil
		}
		setFocus(p)
		var hit *panelID
		for i := range p.drawn {
			id := p.drawn[i]
			var in bool
			if id.kind == kindTrace {
				in = p.trace.InRect(x, y)
			} else {
				in = p.panel(id).InRect(x, y)
			}
			if in {
				hit = &p.drawn[i]
			}
		}
		if hit == nil {
			return true, nil
		}
		switch action {
		case tview.MouseLeftClick:
			p.focus = *hit
		case tview.MouseScrollUp:
			p.focus = *hit
			p.scrollBy(-1)
		case tview.MouseScrollDown:
			p.focus = *hit
			p.scrollBy(1)
		default:
			return false, nil
		}
		return true, nil
	})
}

// focusNext moves the focus to the next panel.
func (p *Player) focusNext() { p.moveFocus(1) }

// focusPrev moves the focus to the previous panel.
func (p *Player) focusPrev() { p.moveFocus(-1) }

// moveFocus moves the focus by d panels, cycling.
func (p *Player) moveFocus(d int) {
	ts := p.targets()
	i := 0
	for j, t := range ts {
		if t == p.focus {
			i = j
		}
	}
	i = (i + d + len(ts)) % len(ts)
	p.focus = ts[i]
	if p.focus.isModel() || p.focus.kind == kindMetrics || p.focus.kind == kindVerdict {
		p.tab = p.focus
	}
}

// scrollBy scrolls the focused panel (or the help overlay) by d rows.
func (p *Player) scrollBy(d int) {
	switch {
	case p.help:
		p.helpScroll += d
		if p.helpScroll < 0 {
			p.helpScroll = 0
		}
	case p.focus.kind == kindTrace:
		if p.trace.anchored {
			// Scrolling starts where the step's story is shown.
			p.trace.scroll, p.trace.anchored = p.trace.autoSkip, false
		}
		p.trace.scroll -= d // the trace counts from the newest event
		if p.trace.scroll < 0 {
			p.trace.scroll = 0
		}
	default:
		pn := p.panel(p.focus)
		pn.scroll += d
		if pn.scroll < 0 {
			pn.scroll = 0
		}
	}
}

// page returns the rows of the focused panel at the last draw.
func (p *Player) page() int {
	if p.lastPage < 1 {
		return 5
	}
	return p.lastPage
}

// scrollEnd scrolls to the end; the trace follows new events again.
func (p *Player) scrollEnd() {
	if p.focus.kind == kindTrace {
		p.trace.scroll, p.trace.anchored = 0, false
		return
	}
	p.panel(p.focus).scroll = 1 << 30 // clamped at draw time
}

// startFilter starts typing a trace filter.
func (p *Player) startFilter() {
	p.editing, p.stepFilter = true, false
	p.filter = ""
	p.trace.scroll, p.trace.anchored = 0, false
}

// escape closes the help overlay, or clears the filter.
func (p *Player) escape() {
	if p.help {
		p.help = false
		return
	}
	p.filter, p.stepFilter = "", false
	p.trace.scroll, p.trace.anchored = 0, false
}

// toggleHelp shows or hides the help overlay.
func (p *Player) toggleHelp() {
	p.help = !p.help
	p.helpScroll = 0
}

// quit hands over to the quit function.
func (p *Player) quit() {
	if p.onQuit != nil {
		p.onQuit()
	}
}

// back hands over to the back function.
func (p *Player) back() {
	if p.onBack != nil {
		p.onBack()
	}
}

// wide reports whether a w x h area gets the wide layout.
func wide(w, h int) bool { return w >= wideMinWidth && h >= wideMinHeight }

// Draw lays out and draws every view. The layout is recomputed on every
// frame, so resizes apply at once.
func (p *Player) Draw(screen tcell.Screen) {
	x, y, w, h := p.GetRect()
	th := &p.theme
	fill(screen, rect{x, y, w, h}, th.Normal)
	if w < minWidth || h < minHeight {
		put(screen, x, y, x+w, "window too small", th.Normal)
		return
	}
	if !p.bare {
		p.header.SetRect(x, y, w, 1)
		p.header.Draw(screen)
		p.hints.SetRect(x, y+h-1, w, 1)
		p.hints.Draw(screen)
	}
	p.drawn = p.drawn[:0]
	body := rect{x, y + 1, w, h - 2}
	if wide(w, h) {
		p.drawWide(screen, body)
	} else {
		p.drawCompact(screen, body)
	}
	switch {
	case p.help:
		p.drawHelp(screen, rect{x, y, w, h})
	case p.picker != nil:
		p.drawPicker(screen, rect{x, y, w, h})
	case p.overlay != overlayNone:
		p.drawOverlay(screen, rect{x, y + 1, w, h - 1})
	}
}

// SetOverlays turns on (or off) the lesson's boxes: the introduction when
// the player opens at t=0 and the summary when the run ends. They are off
// by default, so a Player drawn into part of a screen (side by side with
// another) shows only the run; Run and RunMenu turn them on.
func (p *Player) SetOverlays(on bool) {
	p.overlays = on
	if !on {
		p.overlay = overlayNone
	}
}

// OverlayVisible reports whether the intro or the end summary is shown.
func (p *Player) OverlayVisible() bool { return p.overlay != overlayNone }

// openingTab returns the model tab the player opens on: the one the
// scenario's view names (Snapshot.Header.Tab), else the model the most
// trace events concern, else the first.
func openingTab(s *lab.Snapshot, ids []panelID) panelID {
	if s.Header.Tab != "" {
		for _, id := range ids {
			if id.name(s) == s.Header.Tab {
				return id
			}
		}
	}
	best, most := ids[0], 0
	for _, id := range ids {
		where := id.where(s)
		c := 0
		for i := range s.Trace {
			if w := s.Trace[i].Where; w == where {
				c++
			}
		}
		if c > most {
			best, most = id, c
		}
	}
	return best
}

// drawPanel places and draws a panel primitive.
func (p *Player) drawPanel(screen tcell.Screen, prim tview.Primitive, r rect) {
	if r.w <= 0 || r.h <= 0 {
		return
	}
	switch pr := prim.(type) {
	case *panel:
		p.drawn = append(p.drawn, pr.id)
	case *tracePanel:
		p.drawn = append(p.drawn, panelID{kindTrace, 0})
	}
	prim.SetRect(r.x, r.y, r.w, r.h)
	prim.Draw(screen)
}

// naturalHeight returns the rows a panel would like at width w (its content
// plus the frame), given at most max rows.
func (p *Player) naturalHeight(id panelID, w, max int) int {
	h := len(contentLines(&p.snap, &p.theme, id, w-2, max-2)) + 2
	if h > max {
		h = max
	}
	return h
}

// drawCompact draws the small-terminal layout: a tab strip with one model
// panel (or the metrics, or the verdict) at a time, the trace, the
// narration and the verdict strip. The narration gets every row its text
// needs, so a step is never cut; the tab panel gets the rows its content
// needs (at most 8) as long as the trace keeps minTrace rows (four lines;
// a narrow compare side would otherwise be left one), and the trace the
// rest.
func (p *Player) drawCompact(screen tcell.Screen, r rect) {
	const minTrace = 6
	stripH := 0
	if r.h >= 14 {
		stripH = 1
		drawLine(screen, r.x+1, r.y+r.h-1, r.x+r.w, verdictStrip(&p.snap, &p.theme, r.w-1))
		r.h--
	}
	narrH := 0
	if r.h >= 10 {
		narrH = p.naturalHeight(panelID{kindNarration, 0}, r.w, r.h-1-4-minTrace)
		if narrH < 3 {
			narrH = 3
		}
	}
	tabH := r.h - narrH - minTrace
	if r.h < 10 {
		tabH = r.h
	} else if nh := p.naturalHeight(p.tab, r.w, 8) + 1; nh < tabH {
		tabH = nh
	}
	if tabH < 5 && r.h >= 10 {
		tabH = 5
	}
	traceH := r.h - narrH - tabH
	if traceH < 0 {
		traceH = 0
	}
	p.drawTabs(screen, rect{r.x, r.y, r.w, 1}, append(modelPanels(&p.snap), panelID{kindMetrics, 0}, panelID{kindVerdict, 0}))
	p.drawPanel(screen, p.panel(p.tab), rect{r.x, r.y + 1, r.w, tabH - 1})
	p.drawPanel(screen, p.trace, rect{r.x, r.y + tabH, r.w, traceH})
	p.drawPanel(screen, p.panel(panelID{kindNarration, 0}), rect{r.x, r.y + tabH + traceH, r.w, narrH})
	_ = stripH
}

// drawTabs draws a tab strip: in the compact layout over the model panels
// and the metrics, in the wide layout over the model panels when not all of
// them fit. The current tab is in brackets and reversed, so it is visible
// without colour.
func (p *Player) drawTabs(screen tcell.Screen, r rect, tabs []panelID) {
	th := &p.theme
	cur := 0
	for i, t := range tabs {
		if t == p.tab {
			cur = i
		}
	}
	// Start late enough that the current tab is visible, counting the
	// "‹ " mark before a cut strip and the room kept for "+N›" after it.
	start := 0
	for {
		wsum := 0
		for i := start; i <= cur; i++ {
			wsum += width(tabs[i].title(&p.snap)) + 3
		}
		if start > 0 {
			wsum += 2
		}
		if cur < len(tabs)-1 {
			wsum += 4
		}
		if wsum <= r.w || start == cur {
			break
		}
		start++
	}
	x := r.x
	if start > 0 {
		x = put(screen, x, r.y, r.x+r.w, "‹ ", th.Dim)
	}
	for i := start; i < len(tabs); i++ {
		t := tabs[i].title(&p.snap)
		text, st := " "+t+" ", th.Dim
		if i == cur {
			text, st = "["+t+"]", th.Selected
		}
		// Keep room for the overflow mark unless this is the last tab.
		room := r.x + r.w
		if i < len(tabs)-1 {
			room -= 4
		}
		if x+width(text) > room {
			put(screen, x, r.y, r.x+r.w, " +"+n(len(tabs)-i)+"›", th.Focus)
			return
		}
		x = put(screen, x, r.y, r.x+r.w, text, st)
		x = put(screen, x, r.y, r.x+r.w, " ", th.Normal)
	}
}

// drawWide draws the large-terminal layout: model panels side by side (as
// many as fit at minModelWidth, the window following the focus), the metrics
// strip, then the trace and the narration side by side. The model row gets
// the rows its tallest panel needs, at most half of what the metrics leave.
func (p *Player) drawWide(screen tcell.Screen, r rect) {
	inner := 1 + len(p.snap.Series)
	if len(p.snap.Series) > 6 {
		inner = 1 + (len(p.snap.Series)+1)/2
	}
	metricsH := inner + 2
	if metricsH > 10 {
		metricsH = 10
	}
	ids := modelPanels(&p.snap)
	vis := r.w / minModelWidth
	if vis > len(ids) {
		vis = len(ids)
	}
	first := 0
	for i, id := range ids {
		if id == p.tab && i >= vis {
			first = i - vis + 1
		}
	}
	modelsH := 0
	if vis > 0 && vis < len(ids) {
		// Not every model fits: a tab strip tells what Tab brings into view.
		p.drawTabs(screen, rect{r.x, r.y, r.w, 1}, ids)
		r.y++
		r.h--
	}
	if vis > 0 {
		max := (r.h - metricsH) / 2
		for i := 0; i < vis; i++ {
			if h := p.naturalHeight(ids[first+i], r.w/vis, max); h > modelsH {
				modelsH = h
			}
		}
		if modelsH < 8 {
			modelsH = 8
		}
		x := r.x
		for i := 0; i < vis; i++ {
			pw := r.w / vis
			if i == vis-1 {
				pw = r.x + r.w - x
			}
			p.drawPanel(screen, p.panel(ids[first+i]), rect{x, r.y, pw, modelsH})
			x += pw
		}
	}
	bottomH := r.h - metricsH - modelsH
	p.drawPanel(screen, p.panel(panelID{kindMetrics, 0}), rect{r.x, r.y + modelsH, r.w, metricsH})
	traceW := r.w * 62 / 100
	by := r.y + modelsH + metricsH
	p.drawPanel(screen, p.trace, rect{r.x, by, traceW, bottomH})
	// The right column: the narration with the rows it needs, the verdict
	// below it with the rest.
	rw := r.w - traceW
	narrH := p.naturalHeight(panelID{kindNarration, 0}, rw, bottomH-4)
	if narrH < 3 {
		narrH = 3
	}
	p.drawPanel(screen, p.panel(panelID{kindNarration, 0}), rect{r.x + traceW, by, rw, narrH})
	p.drawPanel(screen, p.panel(panelID{kindVerdict, 0}), rect{r.x + traceW, by + narrH, rw, bottomH - narrH})
}

// drawHelp draws the help overlay, generated from the key table.
func (p *Player) drawHelp(screen tcell.Screen, r rect) {
	th := &p.theme
	w := r.w - 4
	if w > 84 {
		w = 84
	}
	lines := helpLines(p.bindings, p, th, w-2)
	h := len(lines) + 2
	if h > r.h-2 {
		h = r.h - 2
	}
	box := rect{r.x + (r.w-w)/2, r.y + (r.h-h)/2, w, h}
	in := frame(screen, box, "help · ? or esc to close", true, th)
	if max := len(lines) - in.h; p.helpScroll > max {
		p.helpScroll = max
	}
	if p.helpScroll < 0 {
		p.helpScroll = 0
	}
	drawLines(screen, in, lines, p.helpScroll)
	if p.helpScroll > 0 {
		put(screen, box.x+box.w-2, box.y, box.x+box.w-1, "▲", th.Focus)
	}
	if p.helpScroll+in.h < len(lines) {
		put(screen, box.x+box.w-2, box.y+box.h-1, box.x+box.w-1, "▼", th.Focus)
	}
}

// panel is a framed, scrollable view of one part of the snapshot (a model,
// the metrics or the narration).
type panel struct {
	*tview.Box
	p      *Player
	id     panelID
	scroll int
}

// Draw draws the panel from the player's current snapshot.
func (pn *panel) Draw(screen tcell.Screen) {
	x, y, w, h := pn.GetRect()
	p := pn.p
	th := &p.theme
	focused := p.focus == pn.id
	title := pn.id.title(&p.snap)
	in := frame(screen, rect{x, y, w, h}, title, focused, th)
	if in.w <= 0 || in.h <= 0 {
		return
	}
	lines := contentLines(&p.snap, th, pn.id, in.w, in.h)
	if max := len(lines) - in.h; pn.scroll > max {
		pn.scroll = max
	}
	if pn.scroll < 0 {
		pn.scroll = 0
	}
	if focused {
		p.lastPage = in.h
	}
	drawLines(screen, in, lines, pn.scroll)
	if pn.scroll > 0 {
		put(screen, x+w-2, y, x+w-1, "▲", th.Dim)
	}
	if pn.scroll+in.h < len(lines) {
		put(screen, x+w-2, y+h-1, x+w-1, "▼", th.Dim)
	}
}

// tracePanel shows the newest trace events that match the filter, one per
// line with a symbol, scrolled back by scroll events. While the tick of a
// narration step with a filter is on screen, nobody has scrolled, and no
// event of that tick matches (the story the step tells is behind it), it
// is anchored: it shows the story from its first matching event, and
// counts the newer events that do not fit below, as if scrolled back by
// that many.
type tracePanel struct {
	*tview.Box
	p          *Player
	scroll     int
	anchored   bool     // showing the story of the step at anchorTick
	anchorTick sim.Tick // the tick of the step that anchored the panel
	autoSkip   int      // the newer events an anchored panel left out at its last draw
	buf        []byte
}

// Draw draws the trace. Its cost is the trace length (at most MaxTrace)
// plus the visible rows.
func (tp *tracePanel) Draw(screen tcell.Screen) {
	x, y, w, h := tp.GetRect()
	p := tp.p
	th := &p.theme
	focused := p.focus == panelID{kindTrace, 0}
	title := "trace"
	if p.filter != "" || p.editing {
		title += " /" + p.filter
	}
	if !p.isWide() {
		l := &p.snap.Ledger
		title += "  " + SymLoss + n(l.Lost) + " " + SymDuplicate + n(l.Duplicates) + " " + dlqSymbols(l) + " " + SymMissed + n(l.Missed)
	}
	in := frame(screen, rect{x, y, w, h}, title, focused, th)
	if in.w <= 0 || in.h <= 0 {
		return
	}
	if focused {
		p.lastPage = in.h
	}
	evs := p.snap.Trace
	id, _ := sim.ParseID(p.filter)
	matches := 0
	for i := range evs {
		if matchEvent(&evs[i], p.filter, id) {
			matches++
		}
	}
	if max := matches - in.h; tp.scroll > max {
		tp.scroll = max
	}
	if tp.scroll < 0 {
		tp.scroll = 0
	}
	if tp.anchored && p.snap.Header.Tick != tp.anchorTick {
		tp.anchored = false // a new tick: follow the newest event again
	}
	skip := tp.scroll
	tp.autoSkip = 0
	if tp.anchored && tp.scroll == 0 {
		skip = tp.anchorSkip(evs, id, in)
		tp.autoSkip = skip
	}
	// Walk back from the newest event, skipping scroll matches, and fill
	// the rows from the bottom. A line longer than the panel wraps once,
	// indented; the rest is cut with "…". An entry is shown whole or not
	// at all: one that does not fit in the rows left at the top is left
	// out, and its rows stay blank, so the oldest visible entry never
	// loses its second row (only a one-row panel cuts the newest entry).
	row := in.h - 1
	newer := skip
	type shown struct {
		sym  string
		st   tcell.Style
		rows []string
	}
	var out []shown
	used, full := 0, false
	for i := len(evs) - 1; i >= 0 && used < in.h; i-- {
		e := &evs[i]
		if !matchEvent(e, p.filter, id) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		var m lab.Mark
		if i < len(p.snap.Marks) {
			m = p.snap.Marks[i]
		}
		sym, st := th.eventLook(e, m)
		tp.buf = appendTraceText(tp.buf[:0], e, m)
		rows := traceRows(string(tp.buf), in.w-2)
		if used+len(rows) > in.h {
			if len(out) > 0 {
				full = true
				break
			}
			rows = rows[:in.h] // a one-row panel shows the newest entry's first row
		}
		used += len(rows)
		out = append(out, shown{sym, st, rows})
	}
	if used < in.h && !full {
		row = used - 1
	}
	for _, sh := range out {
		for k := len(sh.rows) - 1; k >= 0 && row >= 0; k-- {
			cx := in.x
			if k == 0 {
				cx = put(screen, cx, in.y+row, in.x+in.w, sh.sym, sh.st)
				cx = put(screen, cx, in.y+row, in.x+in.w, " ", th.Normal)
			} else {
				cx = put(screen, cx, in.y+row, in.x+in.w, "    ", th.Normal)
			}
			put(screen, cx, in.y+row, in.x+in.w, sh.rows[k], sh.st)
			row--
		}
	}
	if matches == 0 && p.filter != "" {
		put(screen, in.x, in.y, in.x+in.w, "no event matches "+strconv.Quote(p.filter), th.Dim)
	}
	if newer > 0 {
		put(screen, in.x, in.y+in.h, in.x+in.w, " ↓ "+n(newer)+" newer, end to follow ", th.Dim)
	}
}

// anchorSkip returns how many of the newest matching events to leave out
// so that the panel's in.h rows start with the first matching event of
// the trace: 0 when everything from there on fits, or when an event of
// anchorTick matches (the step's story is in its tick, whose outcome the
// panel shows as usual). O(trace length).
func (tp *tracePanel) anchorSkip(evs []sim.Event, id sim.ID, in rect) int {
	p := tp.p
	first := -1
	for i := range evs {
		if !matchEvent(&evs[i], p.filter, id) {
			continue
		}
		if evs[i].Tick == tp.anchorTick {
			return 0
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return 0
	}
	used, skip := 0, 0
	for i := first; i < len(evs); i++ {
		e := &evs[i]
		if !matchEvent(e, p.filter, id) {
			continue
		}
		if skip > 0 {
			skip++
			continue
		}
		var m lab.Mark
		if i < len(p.snap.Marks) {
			m = p.snap.Marks[i]
		}
		tp.buf = appendTraceText(tp.buf[:0], e, m)
		if used += len(traceRows(string(tp.buf), in.w-2)); used > in.h && i > first {
			skip = 1
		}
	}
	return skip
}

// traceRows splits a trace line for a panel w columns wide: one row when
// it fits, else two, the second indented by two more columns and cut with
// "…" when still too long.
func traceRows(text string, w int) []string {
	if w < 8 || width(text) <= w {
		return []string{text}
	}
	head := wrap(text, w)[0]
	if len(head) > len(text) || text[:len(head)] != head {
		head, _ = cut(text, w)
	}
	rest := text[len(head):]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return []string{head, truncate(rest, w-2)}
}

// isWide reports whether the player currently uses the wide layout.
func (p *Player) isWide() bool {
	_, _, w, h := p.GetRect()
	return wide(w, h)
}

// headerView is the top line: title and notice on the left; tick, seed,
// speed and state on the right.
type headerView struct {
	*tview.Box
	p *Player
}

// Draw draws the header.
func (hv *headerView) Draw(screen tcell.Screen) {
	x, y, w, _ := hv.GetRect()
	p := hv.p
	th := &p.theme
	hd := &p.snap.Header
	sym, stst := "‖", th.Duplicate
	switch hd.State {
	case lab.StatePlaying:
		sym, stst = "▶", th.Good
	case lab.StateFinished:
		sym, stst = "■", th.Info
	}
	right := line{
		{"t=" + strconv.FormatInt(int64(hd.Tick), 10), th.Title},
		{"  seed " + strconv.FormatUint(hd.Seed, 10), th.Dim},
		{"  " + speedText(hd.Speed), th.Dim},
		{"  " + sym + " " + hd.State.String() + " ", stst},
	}
	// A notice that does not fit beside the whole right part gets the
	// room of the seed and the speed (the tick and the state stay).
	if hd.Notice != "" && width(hd.Notice)+2 > w-lineWidth(right)-1 {
		right = line{right[0], right[3]}
	}
	rw := lineWidth(right)
	title := hd.Title
	if title == "" {
		title = "brokerlab"
	}
	if hd.Lesson != "" {
		title += " (" + hd.Lesson + ")"
	}
	limit := x + w - rw - 1
	if limit < x {
		limit = x
	}
	if hd.Notice != "" {
		// A notice replaces the title, so it is visible at 80 columns.
		nst := th.Info
		if len(hd.Notice) >= len(SymFault) && hd.Notice[:len(SymFault)] == SymFault {
			nst = th.Fault
		}
		put(screen, x, y, limit, " "+truncate(hd.Notice, limit-x-1), nst)
	} else {
		put(screen, x, y, limit, " "+truncate(title, limit-x-1), th.Title)
	}
	if rw <= w {
		drawLine(screen, x+w-rw, y, x+w, right)
	}
}

// hintsView is the bottom line: the hints generated from the key table, or
// the filter being typed.
type hintsView struct {
	*tview.Box
	p *Player
}

// Draw draws the hints bar.
func (hv *hintsView) Draw(screen tcell.Screen) {
	x, y, w, _ := hv.GetRect()
	p := hv.p
	th := &p.theme
	if p.gotoing {
		cx := put(screen, x, y, x+w, " go to tick: ", th.Key)
		cx = put(screen, cx, y, x+w, p.gotoText, th.Normal)
		cx = put(screen, cx, y, x+w, "█", th.Normal)
		put(screen, cx, y, x+w, "  enter go  esc cancel", th.Dim)
		return
	}
	if p.editing {
		cx := put(screen, x, y, x+w, " filter: ", th.Key)
		cx = put(screen, cx, y, x+w, p.filter, th.Normal)
		cx = put(screen, cx, y, x+w, "█", th.Normal)
		put(screen, cx, y, x+w, "  enter keep  esc clear", th.Dim)
		return
	}
	if p.recording {
		title := p.snap.Header.Title
		if title == "" {
			title = "brokerlab"
		}
		put(screen, x+1, y, x+w, truncate(title, w-1), th.Dim)
		return
	}
	drawLine(screen, x+1, y, x+w, hintsLine(p.bindings, p, th, w-1))
}
