package tui

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
	"github.com/gdamore/tcell/v2"
)

// Record sizes: the smallest and largest screen a cast may have, and the
// default.
const (
	RecordMinWidth      = minWidth
	RecordMinHeight     = minHeight
	RecordMaxWidth      = 400
	RecordMaxHeight     = 200
	RecordDefaultWidth  = 100
	RecordDefaultHeight = 32
)

// Record timing defaults (see RecordConfig).
const (
	DefaultRecordTick      = 500 * time.Millisecond
	DefaultRecordNarration = 2 * time.Second
	DefaultRecordReading   = 3.5 // words per second
	DefaultRecordEnd       = 6 * time.Second
	// MaxRecordIntro caps how long the introduction stays on screen.
	MaxRecordIntro = 30 * time.Second
	// MaxRecordFrames caps the frames of one cast; a run longer than that
	// is cut there (the cast says so in its last frame's header notice).
	MaxRecordFrames = 20000
)

// ErrRecordSize is wrapped by the error Record returns for a screen size
// outside the allowed range.
var ErrRecordSize = errors.New("tui: record size out of range")

// RecordConfig configures Record. Zero fields take the defaults.
type RecordConfig struct {
	// Width and Height are the screen size in cells (default 100x32).
	Width, Height int
	// Title is the cast's title in its header ("" leaves it out).
	Title string
	// Timestamp, when not zero, is written as the header's timestamp (Unix
	// seconds). It is left out by default so that a cast is a function of
	// the scenario, the seed and the size only.
	Timestamp int64
	// NoColor records with the plain theme (attributes only).
	NoColor bool
	// Tick is how long a frame stays on screen after a tick (default 0.5s).
	Tick time.Duration
	// Narration is the least time a new narration step stays on screen
	// (default 2s); Reading words per second of its text are added (default
	// 3.5), so longer steps stay longer.
	Narration time.Duration
	Reading   float64
	// End is how long the last frame stays on screen (default 6s).
	End time.Duration
	// Bare records the run only, without the lesson's introduction at the
	// start and its summary (verdict, numbers, what to remember) at the
	// end.
	Bare bool
}

// withDefaults returns cfg with the zero fields set to the defaults.
func (cfg RecordConfig) withDefaults() RecordConfig {
	if cfg.Width == 0 && cfg.Height == 0 {
		cfg.Width, cfg.Height = RecordDefaultWidth, RecordDefaultHeight
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultRecordTick
	}
	if cfg.Narration <= 0 {
		cfg.Narration = DefaultRecordNarration
	}
	if cfg.Reading <= 0 {
		cfg.Reading = DefaultRecordReading
	}
	if cfg.End <= 0 {
		cfg.End = DefaultRecordEnd
	}
	return cfg
}

// Validate reports a size outside [RecordMinWidth, RecordMaxWidth] x
// [RecordMinHeight, RecordMaxHeight] (zero width and height mean the
// default size).
func (cfg RecordConfig) Validate() error {
	c := cfg.withDefaults()
	if c.Width < RecordMinWidth || c.Width > RecordMaxWidth || c.Height < RecordMinHeight || c.Height > RecordMaxHeight {
		return fmt.Errorf("%w: %dx%d; allowed widths %d to %d, heights %d to %d", ErrRecordSize,
			c.Width, c.Height, RecordMinWidth, RecordMaxWidth, RecordMinHeight, RecordMaxHeight)
	}
	return nil
}

// castHeader is the first line of an asciinema v2 cast.
type castHeader struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp,omitempty"`
	Title     string            `json:"title,omitempty"`
	Env       map[string]string `json:"env"`
}

// Record plays d from its current state to the end, as the player would at
// the given size, and writes the session to w as an asciinema v2 cast: a
// header line, then one ["time", "o", "data"] event per frame, where data
// is the terminal output (ANSI cursor moves, SGR colours and text) that
// turns the previous frame into this one. The lesson's introduction comes
// first (unless cfg.Bare), then a frame per tick, where a new narration
// step stays on screen longer (cfg.Narration plus reading time) and a step
// that asks for a pause is shown paused, then resumed; the last frame, with
// the lesson's summary, stays cfg.End.
//
// The cast is deterministic: the same driver state and configuration give
// the same bytes (event times are computed, not measured, and the header
// has no timestamp unless cfg.Timestamp is set). Each frame costs one
// player draw on a simulated screen plus O(width x height) to diff it; at
// most MaxRecordFrames frames are written.
func Record(w io.Writer, d Driver, cfg RecordConfig) (RecordResult, error) {
	var res RecordResult
	if d == nil {
		return res, errors.New("tui: record needs a driver")
	}
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	cfg = cfg.withDefaults()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		return res, err
	}
	defer scr.Fini()
	scr.SetSize(cfg.Width, cfg.Height)

	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(castHeader{Version: 2, Width: cfg.Width, Height: cfg.Height, Timestamp: cfg.Timestamp,
		Title: cfg.Title, Env: map[string]string{"TERM": "xterm-256color"}}); err != nil {
		return res, err
	}

	pl := NewPlayer(NewTheme(cfg.NoColor), nil)
	pl.SetOverlays(!cfg.Bare)
	pl.SetRecording(true) // a viewer has no keys to press
	ctl := NewController(d)
	rd := &renderer{w: cfg.Width, h: cfg.Height}
	var at time.Duration
	cut := false
	emit := func(s lab.Snapshot) error {
		if !cut {
			// The controller's notices ("paused for the narration; space
			// plays on") speak to someone at the keyboard, not to a viewer.
			s.Header.Notice = ""
		}
		pl.SetSnapshot(s)
		scr.Clear()
		pl.SetRect(0, 0, cfg.Width, cfg.Height)
		pl.Draw(scr)
		data := rd.frame(scr)
		if len(data) == 0 {
			return nil
		}
		res.Events++
		return writeEvent(bw, at, data)
	}
	reading := func(text string) time.Duration {
		words := len(strings.Fields(text))
		return cfg.Narration + time.Duration(float64(words)/cfg.Reading*float64(time.Second))
	}
	hold := func(s lab.Snapshot, prevNarr int) time.Duration {
		if s.Narration.Index != prevNarr && s.Narration.Text != "" {
			return reading(s.Narration.Text)
		}
		return cfg.Tick
	}

	s := ctl.Handle(Command{Kind: CmdTogglePlay})
	if err := emit(s); err != nil {
		return res, err
	}
	if pl.OverlayVisible() {
		// The introduction: on screen for its reading time, then closed
		// as a student would, and the run starts.
		at += min(reading(s.Intro.Description), MaxRecordIntro)
		pl.HandleKey(tcell.NewEventKey(tcell.KeyEscape, 0, tcell.ModNone))
		if err := emit(s); err != nil {
			return res, err
		}
	}
	at += hold(s, 0)
	narr := s.Narration.Index
	for frames := 1; ; frames++ {
		if frames >= MaxRecordFrames {
			s = ctl.Snapshot()
			s.Header.Notice = "recording cut at " + strconv.Itoa(MaxRecordFrames) + " frames"
			cut = true
			if err := emit(s); err != nil {
				return res, err
			}
			break
		}
		next, ok := ctl.Tick()
		if !ok {
			if d.Done() {
				break
			}
			// Paused by a narration step: resume, as a teacher would after
			// the step has been read.
			next = ctl.Handle(Command{Kind: CmdTogglePlay})
		}
		if err := emit(next); err != nil {
			return res, err
		}
		at += hold(next, narr)
		narr = next.Narration.Index
		if d.Done() {
			break
		}
	}
	// Keep the last frame on screen for cfg.End: a final event that resets
	// the colours and shows the cursor again, so players do not stop at the
	// last change and a cast replayed in a terminal leaves it usable.
	at += cfg.End - cfg.Tick
	if err := writeEvent(bw, at, []byte("\x1b[0m\x1b[?25h")); err != nil {
		return res, err
	}
	res.Events++
	res.Duration = at
	res.Ticks = ctl.Snapshot().Header.Tick
	return res, bw.Flush()
}

// RecordResult says what Record wrote: the number of event lines, the
// cast's length and the last tick recorded.
type RecordResult struct {
	Events   int
	Duration time.Duration
	Ticks    sim.Tick
}

// writeEvent writes one output event line: [time, "o", data], the time in
// seconds with microsecond precision.
func writeEvent(w *bufio.Writer, at time.Duration, data []byte) error {
	if _, err := w.WriteString("[" + strconv.FormatFloat(at.Seconds(), 'f', 6, 64) + ", \"o\", "); err != nil {
		return err
	}
	q, err := json.Marshal(string(data))
	if err != nil {
		return err
	}
	// json.Marshal escapes <, > and & for HTML; the cast is not HTML, but
	// the escapes are valid JSON and keep the encoding unique, so they stay.
	if _, err := w.Write(q); err != nil {
		return err
	}
	_, err = w.WriteString("]\n")
	return err
}

// cell is one screen cell as the renderer knows it: the grapheme drawn
// there ("" for the second column of a wide character) and its style.
type cell struct {
	str   string
	style tcell.Style
	wide  bool
}

// renderer turns successive screens into terminal output: the first frame
// clears the screen and draws every row, later frames redraw, per row, the
// span from the first to the last cell that changed.
type renderer struct {
	w, h  int
	prev  []cell
	cur   []cell
	out   []byte
	style tcell.Style
	first bool
}

// grab reads the screen's back buffer into r.cur.
func (r *renderer) grab(scr tcell.Screen) {
	if len(r.cur) != r.w*r.h {
		r.cur = make([]cell, r.w*r.h)
	}
	for y := 0; y < r.h; y++ {
		for x := 0; x < r.w; {
			mainc, comb, st, cw := scr.GetContent(x, y)
			if mainc == 0 || mainc < ' ' || mainc == 0x7f {
				mainc, comb = ' ', nil
			}
			if cw < 1 {
				cw = 1
			}
			if x+cw > r.w {
				mainc, comb, cw = ' ', nil, 1
			}
			str := string(mainc)
			if len(comb) > 0 {
				str += string(comb)
			}
			r.cur[y*r.w+x] = cell{str: str, style: st, wide: cw == 2}
			if cw == 2 {
				r.cur[y*r.w+x+1] = cell{style: st}
			}
			x += cw
		}
	}
}

// frame returns the output that turns the previous frame into the screen's
// current contents (nil when nothing changed).
func (r *renderer) frame(scr tcell.Screen) []byte {
	r.grab(scr)
	r.out = r.out[:0]
	if r.prev == nil {
		r.out = append(r.out, "\x1b[?25l\x1b[0m\x1b[H\x1b[2J"...)
		r.style = tcell.StyleDefault
		for y := 0; y < r.h; y++ {
			r.span(y, 0, r.w-1)
		}
		r.prev = make([]cell, len(r.cur))
	} else {
		for y := 0; y < r.h; y++ {
			lo, hi := -1, -1
			for x := 0; x < r.w; x++ {
				if r.cur[y*r.w+x] != r.prev[y*r.w+x] {
					if lo < 0 {
						lo = x
					}
					hi = x
				}
			}
			if lo >= 0 {
				r.span(y, lo, hi)
			}
		}
	}
	if len(r.out) == 0 {
		return nil
	}
	copy(r.prev, r.cur)
	return r.out
}

// span redraws row y from column lo to column hi (inclusive). The cells
// hold the second column of a wide character as a cell of its own, so a
// change of width shows as a change of both columns, and the span always
// starts and ends on whole characters of both frames.
func (r *renderer) span(y, lo, hi int) {
	row := r.cur[y*r.w : (y+1)*r.w]
	r.out = append(r.out, "\x1b["...)
	r.out = strconv.AppendInt(r.out, int64(y+1), 10)
	r.out = append(r.out, ';')
	r.out = strconv.AppendInt(r.out, int64(lo+1), 10)
	r.out = append(r.out, 'H')
	for x := lo; x <= hi; x++ {
		c := row[x]
		if c.str == "" {
			continue // the second column of a wide character
		}
		if c.style != r.style {
			r.out = appendSGR(r.out, c.style)
			r.style = c.style
		}
		r.out = append(r.out, c.str...)
	}
}

// appendSGR appends the escape sequence that selects style st from a reset
// state: attributes, then the foreground and background colours (16
// colours as 30-37/90-97, the 256-colour palette as 38;5;N, RGB as
// 38;2;R;G;B).
func appendSGR(b []byte, st tcell.Style) []byte {
	fg, bg, attr := st.Decompose()
	b = append(b, "\x1b[0"...)
	for _, a := range []struct {
		m    tcell.AttrMask
		code string
	}{{tcell.AttrBold, ";1"}, {tcell.AttrDim, ";2"}, {tcell.AttrItalic, ";3"}, {tcell.AttrUnderline, ";4"},
		{tcell.AttrBlink, ";5"}, {tcell.AttrReverse, ";7"}, {tcell.AttrStrikeThrough, ";9"}} {
		if attr&a.m != 0 {
			b = append(b, a.code...)
		}
	}
	b = appendColor(b, fg, 30)
	b = appendColor(b, bg, 40)
	return append(b, 'm')
}

// appendColor appends the SGR parameters of colour c; base is 30 for the
// foreground and 40 for the background. The default colour adds nothing.
func appendColor(b []byte, c tcell.Color, base int) []byte {
	switch {
	case c == tcell.ColorDefault || !c.Valid():
		return b
	case c.IsRGB():
		rr, g, bl := c.RGB()
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(base+8), 10)
		b = append(b, ";2;"...)
		b = strconv.AppendInt(b, int64(rr), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(g), 10)
		b = append(b, ';')
		return strconv.AppendInt(b, int64(bl), 10)
	}
	n := int(c - tcell.ColorValid)
	b = append(b, ';')
	switch {
	case n < 8:
		return strconv.AppendInt(b, int64(base+n), 10)
	case n < 16:
		return strconv.AppendInt(b, int64(base+60+n-8), 10)
	}
	b = strconv.AppendInt(b, int64(base+8), 10)
	b = append(b, ";5;"...)
	return strconv.AppendInt(b, int64(n), 10)
}
