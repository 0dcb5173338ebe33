package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/brokerlab/brokerlab/lab"
)

// KeySpec is one key: a special key, or KeyRune with a rune.
type KeySpec struct {
	Key  tcell.Key
	Rune rune
}

// matches reports whether ev is this key.
func (k KeySpec) matches(ev *tcell.EventKey) bool {
	if k.Key == tcell.KeyRune {
		return ev.Key() == tcell.KeyRune && ev.Rune() == k.Rune
	}
	return ev.Key() == k.Key
}

// Binding is one row of the key table. A binding either sends a Command to
// the goroutine that owns the simulation, or changes view-local state
// (focus, scrolling, filter, help) through View. The hints bar shows the
// bindings with a Hint rank, in table order; the help overlay shows them
// all.
type Binding struct {
	Keys  []KeySpec
	Label string // how the keys are written, e.g. "space" or "+ -"
	Name  string // a short name for the hints bar
	Help  string // one sentence for the help overlay
	// Hint ranks the binding for the hints bar: 0 hidden, 1 always shown,
	// 2 shown when there is room.
	Hint    int
	Command Command
	View    func(p *Player)
	// When, if set, reports whether the binding applies to p (e.g. "back to
	// the menu" only when the player was opened from the menu).
	When func(p *Player) bool
	// Unless, if set, keeps the binding in the help when When is false,
	// with this sentence after its Help, e.g. "(Only when ...)".
	Unless string
}

// r is shorthand for a rune key.
func r(c rune) KeySpec { return KeySpec{Key: tcell.KeyRune, Rune: c} }

// k is shorthand for a special key.
func k(key tcell.Key) KeySpec { return KeySpec{Key: key} }

// Bindings returns the player's key table. It is the single source of the
// keys: Player dispatches from it, and the hints bar and the help overlay are
// generated from it.
func Bindings() []Binding {
	return []Binding{
		{Keys: []KeySpec{r(' '), r('p')}, Label: "space", Name: "play/pause", Hint: 1,
			Help: "Play or pause the simulation.", Command: Command{Kind: CmdTogglePlay}},
		{Keys: []KeySpec{r('s'), r('.'), k(tcell.KeyRight)}, Label: "s →", Name: "step", Hint: 1,
			Help: "Pause and advance exactly one tick.", Command: Command{Kind: CmdStep}},
		{Keys: []KeySpec{k(tcell.KeyLeft), r(',')}, Label: "←", Name: "back", Hint: 1,
			Help:    "Pause and go back exactly one tick (the run is re-executed from its seed, hand actions included).",
			Command: Command{Kind: CmdBack}},
		{Keys: []KeySpec{r('n')}, Label: "n", Name: "next", Hint: 1,
			Help: "Pause and advance to the next narration step.", Command: Command{Kind: CmdStepNarration}},
		{Keys: []KeySpec{r('N')}, Label: "N", Name: "prev step", Hint: 2,
			Help: "Pause and go back to the previous narration step.", Command: Command{Kind: CmdPrevNarration}},
		{Keys: []KeySpec{r('g')}, Label: "g", Name: "go to", Hint: 2,
			Help: "Go to a tick: type its number, then enter (esc cancels).", View: (*Player).startGoto},
		{Keys: []KeySpec{r('i')}, Label: "i", Name: "intro",
			Help: "Show the lesson's introduction again (at the end: the summary).", View: (*Player).showOverlay},
		{Keys: []KeySpec{r('+'), r('=')}, Label: "+", Name: "faster", Hint: 2,
			Help: "Play faster (more ticks per second).", Command: Command{Kind: CmdFaster}},
		{Keys: []KeySpec{r('-'), r('_')}, Label: "-", Name: "slower", Hint: 2,
			Help: "Play slower (fewer ticks per second).", Command: Command{Kind: CmdSlower}},
		{Keys: []KeySpec{r('r')}, Label: "r", Name: "restart", Hint: 2,
			Help: "Restart the scenario with the same seed (the run repeats exactly).", Command: Command{Kind: CmdRestart}},
		{Keys: []KeySpec{r('R')}, Label: "R", Name: "new seed",
			Help: "Restart the scenario with a new seed.", Command: Command{Kind: CmdReseed}},
		{Keys: []KeySpec{r('e')}, Label: "e", Name: lab.ActionName(lab.SeekEarliest("")),
			Help: "Replay: seek a consumer group to the earliest offset (a picker asks which when there are several).",
			View: func(p *Player) { p.act(handReplay) }},
		{Keys: []KeySpec{r('d')}, Label: "d", Name: lab.ActionName(lab.Redrive("")),
			Help: "Redrive a dead-letter queue back to its source (a picker asks which when there are several).",
			View: func(p *Player) { p.act(handRedrive) }},
		{Keys: []KeySpec{r('c')}, Label: "c", Name: lab.ActionName(lab.Crash("")),
			Help: "Fault by hand: crash a consumer (a picker asks which when there are several).",
			View: func(p *Player) { p.act(handCrash) }},
		{Keys: []KeySpec{r('b')}, Label: "b", Name: lab.ActionName(lab.BrokerDown()),
			Help:    "Fault by hand: take the broker down for a while.",
			Command: Command{Kind: CmdAction, Action: lab.BrokerDown()}},
		{Keys: []KeySpec{k(tcell.KeyTab)}, Label: "tab", Name: "focus", Hint: 2,
			Help: "Focus the next panel (in small terminals: show the next model tab).", View: (*Player).focusNext},
		{Keys: []KeySpec{k(tcell.KeyBacktab)}, Label: "S-tab", Name: "back",
			Help: "Focus the previous panel.", View: (*Player).focusPrev},
		{Keys: []KeySpec{k(tcell.KeyUp), r('k')}, Label: "↑ k", Name: "up",
			Help: "Scroll the focused panel up (the trace: to older events).", View: func(p *Player) { p.scrollBy(-1) }},
		{Keys: []KeySpec{k(tcell.KeyDown), r('j')}, Label: "↓ j", Name: "down",
			Help: "Scroll the focused panel down (the trace: to newer events).", View: func(p *Player) { p.scrollBy(1) }},
		{Keys: []KeySpec{k(tcell.KeyPgUp)}, Label: "pgup", Name: "page up",
			Help: "Scroll the focused panel up by a page.", View: func(p *Player) { p.scrollBy(-p.page()) }},
		{Keys: []KeySpec{k(tcell.KeyPgDn)}, Label: "pgdn", Name: "page down",
			Help: "Scroll the focused panel down by a page.", View: func(p *Player) { p.scrollBy(p.page()) }},
		{Keys: []KeySpec{k(tcell.KeyEnd), r('G')}, Label: "end", Name: "follow",
			Help: "Scroll to the end; the trace follows new events again.", View: (*Player).scrollEnd},
		{Keys: []KeySpec{r('/')}, Label: "/", Name: "filter", Hint: 1,
			Help: "Filter the trace by message ID (m12), key, correlation ID or component (queue:orders, or part of it); enter keeps it, esc clears it.",
			View: (*Player).startFilter},
		{Keys: []KeySpec{k(tcell.KeyEscape)}, Label: "esc", Name: "clear",
			Help: "Clear the trace filter, or close this help.", View: (*Player).escape},
		{Keys: []KeySpec{r('?'), k(tcell.KeyF1)}, Label: "?", Name: "help", Hint: 1,
			Help: "Show or hide this help.", View: (*Player).toggleHelp},
		{Keys: []KeySpec{r('m'), k(tcell.KeyBackspace2)}, Label: "m", Name: "menu",
			Help: "Back to the lesson menu.", View: (*Player).back,
			Unless: "(Only when the lesson was opened from the menu: brokerlab without arguments.)",
			When:   func(p *Player) bool { return p.onBack != nil }},
		{Keys: []KeySpec{r('q'), k(tcell.KeyCtrlC)}, Label: "q", Name: "quit", Hint: 1,
			Help: "Quit: stop the simulation, then the program.", View: (*Player).quit},
	}
}

// helpLabel writes every key of b, e.g. "s . →" or "← ,", so the help
// names each key the player answers to, not only the one the hints show.
func helpLabel(b *Binding) string {
	var names []string
	for _, k := range b.Keys {
		names = append(names, keyName(k))
	}
	return strings.Join(names, " ")
}

// keyName writes one key as the help shows it.
func keyName(k KeySpec) string {
	if k.Key == tcell.KeyRune {
		if k.Rune == ' ' {
			return "space"
		}
		return string(k.Rune)
	}
	switch k.Key {
	case tcell.KeyRight:
		return "→"
	case tcell.KeyLeft:
		return "←"
	case tcell.KeyUp:
		return "↑"
	case tcell.KeyDown:
		return "↓"
	case tcell.KeyPgUp:
		return "pgup"
	case tcell.KeyPgDn:
		return "pgdn"
	case tcell.KeyEnd:
		return "end"
	case tcell.KeyTab:
		return "tab"
	case tcell.KeyBacktab:
		return "S-tab"
	case tcell.KeyEscape:
		return "esc"
	case tcell.KeyF1:
		return "F1"
	case tcell.KeyBackspace2, tcell.KeyBackspace:
		return "bksp"
	case tcell.KeyCtrlC:
		return "^C"
	}
	return tcell.KeyNames[k.Key]
}

// lookup returns the binding for ev, or nil.
func lookup(bs []Binding, p *Player, ev *tcell.EventKey) *Binding {
	for i := range bs {
		b := &bs[i]
		if b.When != nil && !b.When(p) {
			continue
		}
		for _, ks := range b.Keys {
			if ks.matches(ev) {
				return b
			}
		}
	}
	return nil
}

// hintsLine builds the hints bar from the table: "label name" pairs in
// table order. Bindings ranked 1 always appear (as far as w allows); those
// ranked 2 fill the room that is left.
func hintsLine(bs []Binding, p *Player, th *Theme, w int) line {
	shown := func(b *Binding) bool { return b.When == nil || b.When(p) }
	cost := func(b *Binding) int { return width(b.Label) + 1 + width(b.Name) + 2 }
	room := w
	for i := range bs {
		if bs[i].Hint == 1 && shown(&bs[i]) {
			room -= cost(&bs[i])
		}
	}
	var out line
	x := 0
	for i := range bs {
		b := &bs[i]
		if b.Hint == 0 || !shown(b) {
			continue
		}
		if b.Hint == 2 {
			if cost(b) > room {
				continue
			}
			room -= cost(b)
		}
		cw := cost(b) - 2
		if x > 0 {
			cw += 2
		}
		if x+cw > w {
			break
		}
		if x > 0 {
			out = append(out, seg{"  ", th.Normal})
		}
		out = append(out, seg{b.Label, th.Key}, seg{" " + b.Name, th.Dim})
		x += cw
	}
	return out
}

// summaryKeys is the key line of the end summary, in order. An entry with
// a key is a key of the table, offered under the table's label and name
// and only while its binding applies to the player (Binding.When): "m
// menu" only when there is a menu. An entry without one is a key the
// summary box handles itself, with its own label and name.
var summaryKeys = []struct {
	key         KeySpec
	label, name string
}{
	{key: k(tcell.KeyLeft)}, {label: "↑↓", name: "scroll"}, {key: r('r')}, {key: r('m')}, {key: r('q')},
	{label: "esc", name: "close"},
}

// summaryLine builds the end summary's key line from summaryKeys and the
// table.
func summaryLine(bs []Binding, p *Player, th *Theme) line {
	var out line
	for _, e := range summaryKeys {
		label, name := e.label, e.name
		if label == "" {
			// The binding the key would trigger now, if any.
			b := lookup(bs, p, tcell.NewEventKey(e.key.Key, e.key.Rune, tcell.ModNone))
			if b == nil {
				continue
			}
			label, name = b.Label, b.Name
		}
		if len(out) > 0 {
			out[len(out)-1].text += "  "
		}
		out = append(out, seg{label, th.Key}, seg{" " + name, th.Dim})
	}
	return out
}

// helpLines builds the help overlay from the table.
func helpLines(bs []Binding, p *Player, th *Theme, w int) []line {
	labelW := 0
	for i := range bs {
		if k := width(helpLabel(&bs[i])); k > labelW {
			labelW = k
		}
	}
	var out []line
	for i := range bs {
		b := &bs[i]
		help := b.Help
		if b.When != nil && !b.When(p) {
			// Listed all the same, so the help names every key; it says
			// when the key does something.
			if b.Unless == "" {
				continue
			}
			help += " " + b.Unless
		}
		text := wrap(help, w-labelW-2)
		for j, t := range text {
			lbl := ""
			if j == 0 {
				lbl = helpLabel(b)
			}
			out = append(out, line{{padRight(lbl, labelW), th.Key}, {"  " + t, th.Normal}})
		}
	}
	out = append(out, line{})
	for _, l := range wrap("Symbols: "+strings.Join(Legend, "  "), w) {
		out = append(out, line{{l, th.Dim}})
	}
	return out
}

// Legend is every symbol the player draws, with its meaning.
var Legend = []string{
	SymLoss + " lost", SymFault + " fault or phantom", SymDuplicate + " duplicate or redelivery", SymDLQ + " dead letter (☠2: 2 in a DLQ now)",
	SymMissed + " missed (offline)", SymNarration + " narration", SymAction + " action", SymRedrive + " redriven (⤴4: 4 moved out of a DLQ)",
	SymCheck + " holds", "… not yet", "A B cursors", "* cursors together", "+N› more tabs",
}
