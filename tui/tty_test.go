package tui

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
)

func TestAppendValidUTF8(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    string
		atEOF bool
		want  string
		rest  int
	}{
		{name: "ascii", in: "q s\x1b[A\x03", want: "q s\x1b[A\x03"},
		{name: "0xFF alone", in: "\xff", want: "ÿ"},
		{name: "0xFF before q", in: "\xffq", want: "ÿq"},
		{name: "8-bit meta q", in: "a\xf1q", want: "añq"},
		{name: "every byte of a run", in: "\xff\xfe\xfd", want: "ÿþý"},
		{name: "latin-1 text", in: "caf\xe9 cr\xe8me br\xfbl\xe9e", want: "café crème brûlée"},
		{name: "C1 controls dropped", in: "a\x9b1m\x85b", want: "a1mb"},
		{name: "valid multibyte", in: "é€🐇", want: "é€🐇"},
		{name: "U+FFFD itself", in: "\uFFFD", want: "\uFFFD"},
		{name: "bad continuation", in: "\xe2\x28\xa1", want: "â(¡"},
		{name: "overlong slash", in: "\xc0\xaf", want: "À¯"},
		{name: "surrogate", in: "\xed\xa0\x80", want: "í\u00a0"},
		{name: "split euro held back", in: "a\xe2\x82", want: "a", rest: 2},
		{name: "split rabbit held back", in: "\xf0\x9f\x90", want: "", rest: 3},
		{name: "lone lead byte held back", in: "\xe9", want: "", rest: 1},
		{name: "split at EOF", in: "a\xe2\x82", atEOF: true, want: "aâ"},
		{name: "empty", in: "", want: ""},
	} {
		got, rest := appendValidUTF8(nil, []byte(c.in), c.atEOF)
		if string(got) != c.want || rest != c.rest {
			t.Errorf("%s: appendValidUTF8(%q) = %q, rest %d; want %q, rest %d", c.name, c.in, got, rest, c.want, c.rest)
		}
		if !utf8.Valid(got) {
			t.Errorf("%s: %q is not valid UTF-8", c.name, got)
		}
	}
}

// scriptTty is a tcell.Tty whose Read returns the chunks of a script one by
// one, then io.EOF. Writes are collected.
type scriptTty struct {
	chunks [][]byte
	reads  int
	out    bytes.Buffer
}

func (s *scriptTty) Start() error        { return nil }
func (s *scriptTty) Stop() error         { return nil }
func (s *scriptTty) Drain() error        { return nil }
func (s *scriptTty) NotifyResize(func()) {}
func (s *scriptTty) WindowSize() (tcell.WindowSize, error) {
	return tcell.WindowSize{Width: 80, Height: 24}, nil
}
func (s *scriptTty) Write(p []byte) (int, error) { return s.out.Write(p) }
func (s *scriptTty) Close() error                { return nil }

func (s *scriptTty) Read(p []byte) (int, error) {
	s.reads++
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	if n < len(s.chunks[0]) {
		panic("scriptTty: chunk larger than the read buffer")
	}
	s.chunks = s.chunks[1:]
	return n, nil
}

// readAll reads tty with a buffer of size n until an error, and returns
// what each Read returned.
func readAll(t *testing.T, tty tcell.Tty, n int) ([]string, error) {
	t.Helper()
	var got []string
	p := make([]byte, n)
	for i := 0; i < 100; i++ {
		k, err := tty.Read(p)
		got = append(got, string(p[:k]))
		if err != nil {
			return got, err
		}
	}
	t.Fatal("no error after 100 reads")
	return nil, nil
}

func TestUTF8TtyRead(t *testing.T) {
	for _, c := range []struct {
		name   string
		chunks []string
		size   int      // read buffer size
		want   []string // what each Read returns, the last one with io.EOF
	}{
		{name: "0xFF then q", chunks: []string{"\xffq"}, size: 128, want: []string{"ÿq", ""}},
		{name: "0xFF and q apart", chunks: []string{"\xff", "q"}, size: 128, want: []string{"ÿ", "q", ""}},
		{name: "valid multibyte", chunks: []string{"é€🐇"}, size: 128, want: []string{"é€🐇", ""}},
		{name: "euro split after its lead byte", chunks: []string{"a\xe2", "\x82\xacb"}, size: 128, want: []string{"a", "€b", ""}},
		{name: "rabbit split in three", chunks: []string{"\xf0", "\x9f\x90", "\x87"}, size: 128, want: []string{"", "", "🐇", ""}},
		{name: "lead byte then a key", chunks: []string{"\xe9", "q"}, size: 128, want: []string{"", "éq", ""}},
		{name: "only a dropped byte", chunks: []string{"\x9b", "q"}, size: 128, want: []string{"", "q", ""}},
		{name: "held tail at EOF", chunks: []string{"a\xe2\x82"}, size: 128, want: []string{"a", "â"}},
		// Four two-byte characters from four bytes do not fit in a buffer
		// of 5: the rest comes with the next Read, before the terminal is
		// read again.
		{name: "longer than the buffer", chunks: []string{"\xff\xfe\xfd\xfc", "q"}, size: 5, want: []string{"ÿþ\xc3", "\xbdü", "q", ""}},
	} {
		src := &scriptTty{}
		for _, ch := range c.chunks {
			src.chunks = append(src.chunks, []byte(ch))
		}
		got, err := readAll(t, newUTF8Tty(src), c.size)
		if !errors.Is(err, io.EOF) {
			t.Errorf("%s: error %v, want io.EOF", c.name, err)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: reads %q, want %q", c.name, got, c.want)
		}
	}
}

func TestUTF8TtyStartDropsHeldBytes(t *testing.T) {
	src := &scriptTty{chunks: [][]byte{[]byte("\xe2\x82"), []byte("\xacq")}}
	tty := newUTF8Tty(src)
	p := make([]byte, 16)
	if n, err := tty.Read(p); n != 0 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	// A suspend and resume: the half-read euro belongs to the old session.
	if err := tty.Start(); err != nil {
		t.Fatal(err)
	}
	n, _ := tty.Read(p)
	if got := string(p[:n]); got != "¬q" {
		t.Fatalf("after Start: %q, want the stray continuation byte read as Latin-1", got)
	}
}

// pipeTty is a tcell.Tty fed by a test through Send. Drain and Close wake a
// blocked Read, which then reports io.EOF, as a terminal's reader would
// wake on Drain.
type pipeTty struct {
	in     chan []byte
	closed chan struct{}
	once   sync.Once

	mu  sync.Mutex
	out int // bytes written
}

func newPipeTty() *pipeTty {
	return &pipeTty{in: make(chan []byte, 16), closed: make(chan struct{})}
}

func (p *pipeTty) Send(b []byte)       { p.in <- b }
func (p *pipeTty) Start() error        { return nil }
func (p *pipeTty) Stop() error         { return nil }
func (p *pipeTty) Drain() error        { p.once.Do(func() { close(p.closed) }); return nil }
func (p *pipeTty) Close() error        { return p.Drain() }
func (p *pipeTty) NotifyResize(func()) {}
func (p *pipeTty) WindowSize() (tcell.WindowSize, error) {
	return tcell.WindowSize{Width: 80, Height: 24}, nil
}

func (p *pipeTty) Write(b []byte) (int, error) {
	p.mu.Lock()
	p.out += len(b)
	p.mu.Unlock()
	return len(b), nil
}

func (p *pipeTty) Read(b []byte) (int, error) {
	select {
	case chunk := <-p.in:
		return copy(b, chunk), nil
	case <-p.closed:
		return 0, io.EOF
	}
}

// startTerminal initialises a real tcell terminal screen on tty through
// newTerminalScreen, in a UTF-8 locale, and returns it with its events.
func startTerminal(t *testing.T, tty tcell.Tty, term string) (tcell.Screen, <-chan tcell.Event) {
	t.Helper()
	t.Setenv("LC_ALL", "en_US.UTF-8") // tcell's UTF-8 path, the one that hangs
	s, err := newTerminalScreen(tty, term)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Fini)
	evs := make(chan tcell.Event, 64)
	quit := make(chan struct{})
	t.Cleanup(func() { close(quit) })
	go s.ChannelEvents(evs, quit)
	return s, evs
}

// waitKey waits up to 2 s for a key event that want accepts and returns
// the runes of the rune keys seen before it.
func waitKey(t *testing.T, evs <-chan tcell.Event, want func(*tcell.EventKey) bool) []rune {
	t.Helper()
	var seen []rune
	deadline := time.After(2 * time.Second)
	for {
		select {
		case ev := <-evs:
			k, ok := ev.(*tcell.EventKey)
			if !ok {
				continue
			}
			if want(k) {
				return seen
			}
			if k.Key() == tcell.KeyRune {
				seen = append(seen, k.Rune())
			}
		case <-deadline:
			t.Fatalf("key never arrived; runes seen: %q", seen)
			return nil
		}
	}
}

// TestTerminalSurvives0xFF feeds a real tcell terminal screen the bytes
// that hang tcell v2.13.10 on its own: the keys after them still arrive.
func TestTerminalSurvives0xFF(t *testing.T) {
	tty := newPipeTty()
	_, evs := startTerminal(t, tty, "xterm-256color")
	isRune := func(r rune) func(*tcell.EventKey) bool {
		return func(k *tcell.EventKey) bool { return k.Key() == tcell.KeyRune && k.Rune() == r }
	}

	tty.Send([]byte{0xff})
	tty.Send([]byte("q"))
	if seen := waitKey(t, evs, isRune('q')); string(seen) != "ÿ" {
		t.Errorf("before q: %q, want ÿ", seen)
	}
	// A Latin-1 letter tcell would hold as the start of a sequence, and
	// then choke on with the next key.
	tty.Send([]byte("caf\xe9"))
	tty.Send([]byte("x"))
	if seen := waitKey(t, evs, isRune('x')); string(seen) != "café" {
		t.Errorf("before x: %q", seen)
	}
	// A valid character split across two reads arrives whole.
	tty.Send([]byte("\xe2\x82"))
	tty.Send([]byte("\xac"))
	if seen := waitKey(t, evs, isRune('€')); len(seen) != 0 {
		t.Errorf("before €: %q", seen)
	}
	tty.Send([]byte{0xff, 0x03}) // and then Ctrl-C
	waitKey(t, evs, func(k *tcell.EventKey) bool { return k.Key() == tcell.KeyCtrlC })
}

// TestTerminalDrawsWithoutPadding draws frames that alternate bold and
// plain on every cell on a vt100 screen. vt100's terminfo pads each
// attribute change by 2 ms, so tcell honouring it would sleep about 15 s
// per frame; the player's screen must not sleep at all.
func TestTerminalDrawsWithoutPadding(t *testing.T) {
	tty := newPipeTty()
	s, _ := startTerminal(t, tty, "vt100")
	w, h := s.Size()
	if w != 80 || h != 24 {
		t.Fatalf("size %dx%d", w, h)
	}
	start := time.Now()
	for frame := 0; frame < 3; frame++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				st := tcell.StyleDefault
				if (x+y+frame)%2 == 0 {
					st = st.Bold(true)
				}
				s.SetContent(x, y, rune('a'+(x+frame)%26), nil, st)
			}
		}
		s.Show()
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("three frames took %v: the screen pads", d)
	}
	tty.mu.Lock()
	defer tty.mu.Unlock()
	if tty.out < 3*w*h {
		t.Fatalf("only %d bytes written for three full frames", tty.out)
	}
}

func TestWithoutPaddingKeepsTheOriginal(t *testing.T) {
	ti, err := tcell.LookupTerminfo("vt100")
	if err != nil {
		t.Fatal(err)
	}
	c := withoutPadding(ti)
	if c.PadChar != "" || ti.PadChar == "" {
		t.Fatalf("PadChar: copy %q, original %q", c.PadChar, ti.PadChar)
	}
	if c.SetCursor != ti.SetCursor || c.Bold != ti.Bold || c.Name != ti.Name {
		t.Fatal("the copy lost capabilities")
	}
	var b strings.Builder
	start := time.Now()
	c.TPuts(&b, strings.Repeat("x$<100>", 10))
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("TPuts slept %v", d)
	}
	if b.String() != strings.Repeat("x", 10) {
		t.Fatalf("TPuts wrote %q", b.String())
	}
}

func TestNewTerminalScreenUnknownTerm(t *testing.T) {
	if _, err := newTerminalScreen(newPipeTty(), "no-such-terminal-brokerlab"); err == nil {
		t.Fatal("no error for an unknown terminal")
	}
}
