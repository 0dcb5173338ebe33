package scenario

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/printable"
)

// ErrInvalid is wrapped by every error Load returns for a bad scenario file,
// so a command line can map it to exit code 2 with errors.Is.
var ErrInvalid = errors.New("scenario: invalid scenario")

// MaxErrors is the most errors one Load reports; the rest are summarised in
// a final line so a runaway file cannot flood the terminal.
const MaxErrors = 50

// Pos is a position in a scenario file: 1-based line and column. The zero
// Pos means "no position" (for values that were defaulted).
type Pos struct {
	Line, Col int
}

// IsValid reports whether p names a real position.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String formats p as "line:col".
func (p Pos) String() string { return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col) }

// Error is one problem in a scenario file, at a position.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

// Error formats e as "file:line:col: message". Control characters in the
// file name or the message are written as escapes (\x1b), so printing an
// error cannot drive a terminal.
func (e Error) Error() string {
	return escapeControls(e.File) + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ": " + escapeControls(e.Msg)
}

// escapeControls escapes what may not reach a terminal raw (the C0 and
// C1 controls, DEL, bidirectional overrides, invalid UTF-8) as Go escapes
// (\n, \x1b, \u009b), with the one sanitiser every printed string goes
// through (printable.String), and keeps everything else.
func escapeControls(s string) string { return printable.String(s) }

// Warning is something in a valid scenario file that is likely a mistake,
// at a position; see Scenario.Warnings.
type Warning struct {
	File      string
	Line, Col int
	Msg       string
}

// String formats w as "file:line:col: warning: message", with control
// characters escaped as in Error.Error.
func (w Warning) String() string {
	return escapeControls(w.File) + ":" + strconv.Itoa(w.Line) + ":" + strconv.Itoa(w.Col) + ": warning: " + escapeControls(w.Msg)
}

// Errors is every problem Load found in one file, sorted by position. It
// wraps ErrInvalid.
type Errors struct {
	List []Error
	// Omitted counts problems beyond MaxErrors that are not in List.
	Omitted int
}

// Error prints one "file:line:col: message" per line, in position order.
func (e *Errors) Error() string {
	var b strings.Builder
	for i, x := range e.List {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(x.Error())
	}
	if e.Omitted > 0 {
		b.WriteString("\n(")
		b.WriteString(strconv.Itoa(e.Omitted))
		b.WriteString(" more errors not shown)")
	}
	return b.String()
}

// Unwrap returns ErrInvalid, so errors.Is(err, ErrInvalid) holds.
func (e *Errors) Unwrap() error { return ErrInvalid }

// collector gathers errors for one file.
type collector struct {
	file string
	list []Error
}

func (c *collector) add(p Pos, msg string) {
	if !p.IsValid() {
		p = Pos{1, 1} // never print 0:0, even for a defaulted node
	}
	// A message may quote what the file says (a YAML syntax error, a
	// tag); it never carries a control character on.
	c.list = append(c.list, Error{File: c.file, Line: p.Line, Col: p.Col, Msg: escapeControls(msg)})
}

// result sorts the collected errors by position (stable for equal
// positions, so messages keep the order they were found) and caps them.
func (c *collector) result() error {
	if len(c.list) == 0 {
		return nil
	}
	sort.SliceStable(c.list, func(i, j int) bool {
		a, b := c.list[i], c.list[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	// Drop exact duplicates (one bad value can be reached twice).
	out := c.list[:1]
	for _, x := range c.list[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	e := &Errors{List: out}
	if len(out) > MaxErrors {
		e.Omitted = len(out) - MaxErrors
		e.List = out[:MaxErrors:MaxErrors]
	}
	return e
}
