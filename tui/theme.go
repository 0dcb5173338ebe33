package tui

import (
	"os"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
)

// Symbols paired with colours, so that meaning survives NO_COLOR and
// colour-blind readers.
const (
	SymLoss      = "✖"          // lost, dropped, expired
	SymFault     = lab.SymFault // fault fired, crash, rejection
	SymDuplicate = "↻"          // duplicate delivery or redelivery
	SymDLQ       = "☠"          // dead-lettered
	SymMissed    = "○"          // missed by design (offline subscriber)
	SymNarration = "¶"          // narration step
	SymAction    = "▸"          // timeline or manual action
	SymCheck     = "✓"          // expectation checked
	SymRedrive   = "⤴"          // redriven from a DLQ
)

// Theme holds the styles of every view. The zero Theme is not useful; use
// NewTheme.
type Theme struct {
	NoColor   bool
	Normal    tcell.Style
	Dim       tcell.Style
	Title     tcell.Style
	Frame     tcell.Style
	Focus     tcell.Style
	Key       tcell.Style // key labels in hints and help
	Loss      tcell.Style
	Fault     tcell.Style
	Duplicate tcell.Style
	DLQ       tcell.Style
	Missed    tcell.Style
	Good      tcell.Style
	Info      tcell.Style
	Selected  tcell.Style
	Cursor    tcell.Style // consumer group cursors in log rows
}

// NewTheme returns the colour theme, or the plain one when noColor is set.
// The plain theme uses only attributes (bold, reverse, dim, underline) and
// never sets a foreground or background colour.
func NewTheme(noColor bool) Theme {
	n := tcell.StyleDefault
	if noColor {
		return Theme{
			NoColor: true, Normal: n, Dim: n.Dim(true), Title: n.Bold(true),
			Frame: n, Focus: n.Bold(true), Key: n.Bold(true),
			Loss: n.Bold(true), Fault: n.Bold(true), Duplicate: n.Underline(true),
			DLQ: n.Bold(true), Missed: n.Dim(true), Good: n, Info: n,
			Selected: n.Reverse(true), Cursor: n.Reverse(true),
		}
	}
	return Theme{
		Normal:    n,
		Dim:       n.Foreground(tcell.ColorGray),
		Title:     n.Foreground(tcell.ColorWhite).Bold(true),
		Frame:     n.Foreground(tcell.ColorGray),
		Focus:     n.Foreground(tcell.ColorAqua).Bold(true),
		Key:       n.Foreground(tcell.ColorYellow).Bold(true),
		Loss:      n.Foreground(tcell.ColorRed).Bold(true),
		Fault:     n.Foreground(tcell.ColorOrange).Bold(true),
		Duplicate: n.Foreground(tcell.ColorYellow),
		DLQ:       n.Foreground(tcell.ColorFuchsia).Bold(true),
		Missed:    n.Foreground(tcell.ColorOlive),
		Good:      n.Foreground(tcell.ColorGreen),
		Info:      n.Foreground(tcell.ColorTeal),
		Selected:  n.Reverse(true),
		Cursor:    n.Foreground(tcell.ColorBlack).Background(tcell.ColorAqua),
	}
}

// NoColorEnv reports whether the NO_COLOR environment variable is set to a
// non-empty value (see no-color.org).
func NoColorEnv() bool { return os.Getenv("NO_COLOR") != "" }

// eventLook returns the symbol and style of a trace event with its mark.
// A repeat (by ID or by lineage) and an absorbed duplicate get the
// duplicate symbol; an expiry of a record everybody had read is not a
// loss. Events that do not stand out get a blank symbol and the normal
// style.
func (th *Theme) eventLook(e *sim.Event, m lab.Mark) (string, tcell.Style) {
	switch m.Kind {
	case lab.MarkRepeat, lab.MarkEffect:
		return SymDuplicate, th.Duplicate
	case lab.MarkAbsorbed:
		return SymDuplicate, th.Good
	case lab.MarkRead:
		return " ", th.Dim
	}
	switch e.Kind {
	case sim.KindLost, sim.KindDropped, sim.KindExpired:
		return SymLoss, th.Loss
	case sim.KindFault, sim.KindCrashed, sim.KindRejected, sim.KindFailed:
		return SymFault, th.Fault
	case sim.KindPhantom:
		return SymFault, th.Loss // an event for a change that never committed
	case sim.KindRedelivered:
		return SymDuplicate, th.Duplicate
	case sim.KindReceived, sim.KindDelivered, sim.KindPolled, sim.KindRelayed, sim.KindProcessed:
		if e.Attempt > 1 {
			return SymDuplicate, th.Duplicate
		}
	case sim.KindDeadLettered:
		return SymDLQ, th.DLQ
	case sim.KindRedriven:
		return SymRedrive, th.DLQ
	case sim.KindMissed:
		return SymMissed, th.Missed
	case sim.KindNarration:
		return SymNarration, th.Info
	case sim.KindAction, sim.KindSeeked:
		return SymAction, th.Info
	case sim.KindChecked:
		return SymCheck, th.Good
	}
	return " ", th.Normal
}
