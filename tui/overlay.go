package tui

import (
	"strconv"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
)

// overlayKind names the box drawn over the player, if any.
type overlayKind uint8

// The overlays besides help: the lesson's introduction (shown when the
// player opens) and the summary at the end of the run.
const (
	overlayNone overlayKind = iota
	overlayIntro
	overlaySummary
)

// handAction is a hand action a key asks for: the lab action for a
// target, the targets the snapshot offers for it, and whether the picker
// offers "all" (the empty target).
type handAction struct {
	action  func(target string) lab.Action
	targets func(t *lab.Targets) []string
	all     bool
}

// The hand actions that pick a target.
var (
	handReplay  = handAction{lab.SeekEarliest, func(t *lab.Targets) []string { return t.Groups }, true}
	handRedrive = handAction{lab.Redrive, func(t *lab.Targets) []string { return t.DLQs }, true}
	handCrash   = handAction{lab.Crash, func(t *lab.Targets) []string { return t.Consumers }, false}
)

// picker is the list shown when a hand action fits more than one target.
type picker struct {
	hand  handAction
	items []string // the targets; the last item, "all", sends an empty target
	sel   int
}

// act runs hand action h: at once when at most one target fits, else
// through the picker.
func (p *Player) act(h handAction) {
	items := h.targets(&p.snap.Targets)
	if len(items) <= 1 {
		p.sendCmd(Command{Kind: CmdAction, Action: h.action("")})
		return
	}
	pk := &picker{hand: h, items: append([]string(nil), items...)}
	if h.all {
		pk.items = append(pk.items, "all")
	}
	p.picker = pk
}

// sendCmd sends cmd if the player has somewhere to send it.
func (p *Player) sendCmd(cmd Command) {
	if p.send != nil {
		p.send(cmd)
	}
}

// pickerKey handles a key while the picker is open.
func (p *Player) pickerKey(ev *tcell.EventKey) {
	pk := p.picker
	choose := func(i int) {
		target := pk.items[i]
		if target == "all" && i == len(pk.items)-1 && pk.hand.all {
			target = ""
		}
		p.picker = nil
		p.sendCmd(Command{Kind: CmdAction, Action: pk.hand.action(target)})
	}
	switch {
	case ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyRune && ev.Rune() == 'q':
		p.picker = nil
	case ev.Key() == tcell.KeyUp || ev.Key() == tcell.KeyRune && ev.Rune() == 'k':
		if pk.sel > 0 {
			pk.sel--
		}
	case ev.Key() == tcell.KeyDown || ev.Key() == tcell.KeyRune && ev.Rune() == 'j':
		if pk.sel < len(pk.items)-1 {
			pk.sel++
		}
	case ev.Key() == tcell.KeyEnter:
		choose(pk.sel)
	case ev.Key() == tcell.KeyRune && ev.Rune() >= '1' && ev.Rune() <= '9':
		if i := int(ev.Rune() - '1'); i < len(pk.items) {
			choose(i)
		}
	case ev.Key() == tcell.KeyCtrlC:
		p.quit()
	}
}

// drawPicker draws the picker box.
func (p *Player) drawPicker(screen tcell.Screen, r rect) {
	th := &p.theme
	pk := p.picker
	var lines []line
	for i, it := range pk.items {
		st := th.Normal
		if i == pk.sel {
			st = th.Selected
		}
		label := it
		if it == "all" && i == len(pk.items)-1 {
			label = "all of them"
		}
		lines = append(lines, line{{strconv.Itoa(i+1) + " ", th.Key}, {label, st}})
	}
	lines = append(lines, line{{"1-9 or enter choose, esc cancel", th.Dim}})
	p.drawBox(screen, r, lab.ActionName(pk.hand.action(""))+": which one?", lines, 0)
}

// drawBox draws a framed box of lines centred in r, as wide as needed (at
// most 80 columns, or all of r when less than 16 would be left over; then
// as high as r less a row above and below, when less than 8 rows would be
// left over) and scrolled by off rows.
func (p *Player) drawBox(screen tcell.Screen, r rect, title string, lines []line, off int) rect {
	th := &p.theme
	w := width(title) + 6
	for _, l := range lines {
		if k := lineWidth(l) + 4; k > w {
			w = k
		}
	}
	if w > r.w {
		w = r.w
	}
	if w > 80 {
		w = 80
	}
	if r.w-w < 16 {
		// A margin of a few columns a side would show slivers of the
		// panels beneath (their borders doubled at the box's edge, a
		// word of their text beside the box's): take the full width
		// instead.
		w = r.w
	}
	h := len(lines) + 2
	if h > r.h-2 || w == r.w && r.h-h < 8 {
		// A box as wide as r with fewer than four rows to spare above
		// and below takes the height too (less a row above and below):
		// such a margin shows slivers of the panels beneath, a panel's
		// top border doubled right above the box's, or one row of its
		// text. With more rows to spare it stays centred over the
		// panels, which show around it.
		h = r.h - 2
	}
	box := rect{r.x + (r.w-w)/2, r.y + (r.h-h)/2, w, h}
	in := frame(screen, box, title, true, th)
	in.x++
	in.w -= 2
	drawLines(screen, in, lines, off)
	return box
}

// overlayLines returns the text of the intro or the summary for a box w
// columns wide.
func (p *Player) overlayLines(w int) (string, []line) {
	th := &p.theme
	s := &p.snap
	in := &s.Intro
	var out []line
	para := func(text string, st tcell.Style) {
		for _, l := range reflow(text, w) {
			out = append(out, line{{l, st}})
		}
	}
	title := s.Header.Title
	if title == "" {
		title = "brokerlab"
	}
	if p.overlay == overlayIntro {
		// The keys come first, so they show however long the text is; a
		// recording has no keys to press (SetRecording).
		if !p.recording {
			out = append(out, line{{"space", th.Key}, {" start  ", th.Dim}, {"n", th.Key}, {" first step  ", th.Dim},
				{"?", th.Key}, {" keys  ", th.Dim}, {"i", th.Key}, {" this text again", th.Dim}}, line{})
		}
		para(in.Description, th.Normal)
		if len(in.Goals) > 0 {
			out = append(out, line{})
			para("It checks: "+joinWords(in.Goals), th.Dim)
		}
		return title, out
	}
	// The keys come first here too, so a long summary at 80x24 cuts its
	// last line of text, never the way out.
	if !p.recording {
		out = append(out, summaryLine(p.bindings, p, th))
	}
	v := &s.Verdict
	para(v.Line(), verdictStyle(v, th).Bold(true))
	for _, j := range v.Judgments {
		// A judgement wraps under its text rather than losing its end:
		// the measured value is what the student checks it against.
		sym, st := standingLook(j.Standing, th)
		for i, l := range reflow(j.Text+" ("+j.Measured+")", w-2) {
			lead := seg{sym + " ", st}
			if i > 0 {
				lead = seg{"  ", th.Normal}
			}
			out = append(out, line{lead, {l, th.Normal}})
		}
	}
	out = append(out, line{})
	l := &s.Ledger
	para("ledger at t="+strconv.FormatInt(int64(s.Header.Tick), 10)+": "+n(l.Messages)+" messages, "+n(l.Lost)+" lost, "+
		n(l.Duplicates)+" duplicate deliveries, "+lab.DLQWords(l.DeadLettered, l.Redriven)+", "+n(l.Missed)+" missed", th.Normal)
	for _, el := range effectsLines(s, th, w) {
		out = append(out, el)
	}
	if in.Remember != "" {
		out = append(out, line{})
		para("To remember: "+in.Remember, th.Title)
	}
	return "the end: " + title, out
}

// joinWords joins items as "a, b and c".
func joinWords(items []string) string {
	out := ""
	for i, it := range items {
		switch {
		case i == 0:
		case i == len(items)-1:
			out += " and "
		default:
			out += ", "
		}
		out += it
	}
	return out
}

// drawOverlay draws the intro or the summary over the player.
func (p *Player) drawOverlay(screen tcell.Screen, r rect) {
	w := r.w - 4
	if w > 76 {
		w = 76
	}
	title, lines := p.overlayLines(w)
	// The first line (the keys) stays; the rest scrolls when it does not
	// fit, and the title says which way more is.
	rows := r.h - 4 // the box's frame and its margin
	if len(lines) <= rows || rows < 3 || p.recording {
		p.overlayScroll = 0
		p.drawBox(screen, r, title, lines, 0)
		return
	}
	body := rows - 1
	maxOff := len(lines) - 1 - body
	p.overlayScroll = min(max(p.overlayScroll, 0), maxOff)
	p.overlayPage = body
	shown := append([]line{lines[0]}, lines[1+p.overlayScroll:1+p.overlayScroll+body]...)
	more := ""
	switch {
	case p.overlayScroll == 0:
		more = " ↓ more"
	case p.overlayScroll == maxOff:
		more = " ↑ more"
	default:
		more = " ↑↓ more"
	}
	p.drawBox(screen, r, title+more, shown, 0)
}

// scrollOverlay scrolls the intro or the summary by d rows; drawOverlay
// keeps it within the text.
func (p *Player) scrollOverlay(d int) {
	p.overlayScroll += d
	if p.overlayScroll < 0 {
		p.overlayScroll = 0
	}
}

// overlayKey handles a key while the intro or summary is shown: ↑ ↓ k j
// pgup pgdn home end scroll it, q quits, ? opens the help, m goes to the
// menu when there is one, n and ← act as usual, anything else closes the box (space from the
// intro also starts playing). n from the intro at t=0 only closes it, so
// the first narration step, which is under the intro, is the one shown.
func (p *Player) overlayKey(ev *tcell.EventKey) {
	kind := p.overlay
	page := max(p.overlayPage, 1)
	switch {
	case ev.Key() == tcell.KeyUp || ev.Key() == tcell.KeyRune && ev.Rune() == 'k':
		p.scrollOverlay(-1)
		return
	case ev.Key() == tcell.KeyDown || ev.Key() == tcell.KeyRune && ev.Rune() == 'j':
		p.scrollOverlay(1)
		return
	case ev.Key() == tcell.KeyPgUp:
		p.scrollOverlay(-page)
		return
	case ev.Key() == tcell.KeyPgDn:
		p.scrollOverlay(page)
		return
	case ev.Key() == tcell.KeyHome:
		p.overlayScroll = 0
		return
	case ev.Key() == tcell.KeyEnd || ev.Key() == tcell.KeyRune && ev.Rune() == 'G':
		p.scrollOverlay(1 << 20)
		return
	}
	p.overlay = overlayNone
	p.overlayScroll = 0
	if ev.Key() == tcell.KeyRune {
		switch ev.Rune() {
		case 'n':
			// The first narration step is at t=0, under the intro: "n
			// first step" shows it rather than skipping to the second.
			if kind == overlayIntro && p.snap.Narration.Index >= 1 && p.snap.Header.Tick == 0 {
				return
			}
			p.HandleKey(ev)
			return
		case 'q', '?', 'm', 'N', 's', 'g':
			p.HandleKey(ev)
			return
		case ' ':
			if kind == overlayIntro {
				p.HandleKey(ev)
			}
			return
		}
	}
	switch ev.Key() {
	case tcell.KeyLeft, tcell.KeyCtrlC:
		p.HandleKey(ev)
	}
}

// startGoto starts typing the tick to jump to.
func (p *Player) startGoto() {
	p.gotoing = true
	p.gotoText = ""
}

// gotoKey handles a key while a tick is being typed.
func (p *Player) gotoKey(ev *tcell.EventKey) {
	switch ev.Key() {
	case tcell.KeyRune:
		if r := ev.Rune(); r >= '0' && r <= '9' && len(p.gotoText) < 9 {
			p.gotoText += string(r)
		}
	case tcell.KeyBackspace, tcell.KeyBackspace2:
		if p.gotoText != "" {
			p.gotoText = p.gotoText[:len(p.gotoText)-1]
		}
	case tcell.KeyEnter:
		p.gotoing = false
		if t, err := strconv.ParseInt(p.gotoText, 10, 64); err == nil {
			p.sendCmd(Command{Kind: CmdSeek, Tick: sim.Tick(t)})
		}
	case tcell.KeyEscape:
		p.gotoing = false
	case tcell.KeyCtrlC:
		p.quit()
	}
}

// showOverlay shows the intro again, or the summary once the run is over.
func (p *Player) showOverlay() {
	if p.snap.Header.State == lab.StateFinished {
		p.overlay = overlaySummary
		return
	}
	p.overlay = overlayIntro
}
