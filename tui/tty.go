package tui

import (
	"os"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/gdamore/tcell/v2/terminfo"
)

// utf8Tty wraps the terminal tcell reads keys from and makes its input
// valid UTF-8 before tcell parses it.
//
// tcell v2.13.10 validates input with golang.org/x/text's UTF-8 validator
// and, when the validator stops at an invalid byte without consuming it,
// retries the same bytes forever: one 0xFF from an 8-bit Meta key or pasted
// Latin-1 text spins a CPU and no later key (not even q or Ctrl-C) is ever
// seen. The wrapper rewrites such bytes the way tcell's own key decoder
// reads a byte that is not UTF-8, as a Latin-1 character (0xFF is ÿ, so
// pasted Latin-1 text arrives intact), except that the C1 control codes
// 0x80-0x9F are dropped: tcell would post them as typed characters, and a
// control code echoed into a text field reaches the terminal. U+FFFD is no
// option: tcell's decoder takes it for an invalid byte and posts three
// characters.
//
// A sequence split across two reads is not an error: its incomplete tail is
// held back and completed by the next read. Only tcell's input goroutine
// calls Read, and tcell makes no Read call between Stop and Start, so the
// wrapper needs no lock.
type utf8Tty struct {
	tcell.Tty
	raw  []byte // the last read from the terminal
	tail []byte // an incomplete sequence at the end of the last read
	out  []byte // valid bytes not yet returned
}

// newUTF8Tty wraps tty.
func newUTF8Tty(tty tcell.Tty) *utf8Tty { return &utf8Tty{Tty: tty} }

// Start starts the terminal with nothing held back from an earlier session
// (a suspend drops any half-read sequence).
func (t *utf8Tty) Start() error {
	t.tail, t.out = t.tail[:0], t.out[:0]
	return t.Tty.Start()
}

// Read returns valid UTF-8 read from the terminal. When a read brings
// nothing to return yet (only the start of a sequence, or only dropped
// bytes) it returns 0 and a nil error, as the terminal does after Drain;
// tcell then reads again. The rewriting can make the text longer than p,
// so what does not fit is kept and returned by the next Read without
// waiting for the terminal.
func (t *utf8Tty) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var err error
	if len(t.out) == 0 {
		if cap(t.raw) < len(p) {
			t.raw = make([]byte, len(p))
		}
		var n int
		n, err = t.Tty.Read(t.raw[:len(p)])
		src := append(t.tail, t.raw[:n]...)
		var rest int
		t.out, rest = appendValidUTF8(t.out[:0], src, err != nil)
		t.tail = append(t.tail[:0], src[len(src)-rest:]...)
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, err
}

// appendValidUTF8 appends src to dst as valid UTF-8 and returns the
// result: a byte that does not start a valid UTF-8 sequence is appended as
// the Latin-1 character it encodes, or dropped if it is a C1 control code
// (0x80-0x9F). Unless atEOF, an incomplete but so far valid sequence at the
// end of src is left out; rest is its length, so the caller can complete it
// with more input.
func appendValidUTF8(dst, src []byte, atEOF bool) (out []byte, rest int) {
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			if !atEOF && !utf8.FullRune(src[i:]) {
				return dst, len(src) - i
			}
			if c >= 0xA0 {
				dst = utf8.AppendRune(dst, rune(c))
			}
			i++
			continue
		}
		dst = append(dst, src[i:i+size]...)
		i += size
	}
	return dst, 0
}

// withoutPadding returns a copy of ti that never pads. tcell honours
// terminfo padding ($<5> after every cursor move for vt100) by sleeping
// inside each draw, which takes a second or more per frame and starves
// input behind the drawing. Terminal emulators need no padding; the copy
// keeps every capability and only drops the pad character, which is what
// makes tcell skip the sleeps. The original entry is not changed.
func withoutPadding(ti *terminfo.Terminfo) *terminfo.Terminfo {
	c := *ti
	c.PadChar = ""
	return &c
}

// newTerminalScreen returns a screen on tty (nil means the controlling
// terminal, /dev/tty) that reads valid UTF-8 and draws without padding,
// for the terminal named by term ($TERM). An empty term lets tcell pick its
// default entry. The screen is not initialised.
func newTerminalScreen(tty tcell.Tty, term string) (tcell.Screen, error) {
	var ti *terminfo.Terminfo
	if term != "" {
		found, err := tcell.LookupTerminfo(term)
		if err != nil {
			return nil, err
		}
		ti = withoutPadding(found)
	}
	if tty == nil {
		var err error
		if tty, err = tcell.NewDevTty(); err != nil {
			return nil, err
		}
	}
	s, err := tcell.NewTerminfoScreenFromTtyTerminfo(newUTF8Tty(tty), ti)
	if err != nil {
		_ = tty.Close()
		return nil, err
	}
	return s, nil
}

// openTerminal returns an initialised screen on the controlling terminal,
// built by newTerminalScreen for $TERM.
func openTerminal() (tcell.Screen, error) {
	s, err := newTerminalScreen(nil, os.Getenv("TERM"))
	if err != nil {
		return nil, err
	}
	if err := s.Init(); err != nil {
		if tty, ok := s.Tty(); ok {
			_ = tty.Close()
		}
		return nil, err
	}
	return s, nil
}

// initialised is a screen that openTerminal has initialised already.
// tview's SetScreen initialises the screen it is given and drops the error;
// handing it this wrapper keeps the error with openTerminal, which reports
// it, and keeps tcell from being initialised twice.
type initialised struct{ tcell.Screen }

// Init does nothing: the screen is initialised.
func (initialised) Init() error { return nil }
