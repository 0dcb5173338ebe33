package tui

import (
	"context"
	"errors"
	"os"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"golang.org/x/term"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/printable"
)

// ErrNotTerminal is returned by Run, RunMenu and CheckTerminal when
// standard output is not a terminal. Callers should print a clear message
// that points to the headless alternative (`brokerlab run FILE|LESSON`) and
// exit with code 2.
var ErrNotTerminal = errors.New("tui: stdout is not a terminal")

// NotTerminalMessage is what the binary prints, before exiting with code 2,
// when Run or RunMenu returns ErrNotTerminal: the reason and the headless
// alternative.
func NotTerminalMessage(prog string) string {
	return prog + ": the player needs a terminal, and standard output is not one.\n" +
		"Run lessons and scenarios headless instead:\n" +
		"  " + prog + " run FILE|LESSON   (prints a report; exit 0 when every expectation holds)\n" +
		"  " + prog + " list              (lists the built-in lessons)\n"
}

// CheckTerminal returns nil when f is a terminal the player can draw on,
// and an error wrapping ErrNotTerminal otherwise: f is not a terminal (it
// asks the terminal driver, isatty, so a character device that is not a
// terminal, such as /dev/null, is refused), or $TERM is unset, "dumb", or
// names no terminal type with cursor addressing. TerminalMessage turns the
// error into what the binary prints.
func CheckTerminal(f *os.File) error {
	if f == nil {
		return ErrNotTerminal
	}
	if !term.IsTerminal(int(f.Fd())) {
		return ErrNotTerminal
	}
	return checkTerm(os.Getenv("TERM"))
}

// termError is a terminal the player cannot draw on because of $TERM.
type termError struct{ reason string }

func (e *termError) Error() string { return "tui: " + e.reason }
func (e *termError) Unwrap() error { return ErrNotTerminal }

// checkTerm reports whether the player can draw on a terminal of type
// name: one that tcell knows and that can move the cursor.
func checkTerm(name string) error {
	switch name {
	case "":
		return &termError{"TERM is not set, so the terminal's type is unknown"}
	case "dumb":
		return &termError{"TERM is dumb: the terminal cannot move the cursor"}
	}
	ti, err := tcell.LookupTerminfo(name)
	if err != nil {
		return &termError{"TERM is " + printable.String(name) + ", a terminal type the player does not know"}
	}
	if ti.SetCursor == "" {
		return &termError{"TERM is " + printable.String(name) + ", a terminal that cannot move the cursor"}
	}
	return nil
}

// TerminalMessage is what the binary prints, before exiting with code 2,
// when the player cannot open: the reason err gives (CheckTerminal's, or
// Run's and RunMenu's, wrapping ErrNotTerminal) and the headless
// alternatives. For any other err, nil included, it is NotTerminalMessage.
func TerminalMessage(prog string, err error) string {
	var te *termError
	if !errors.As(err, &te) {
		return NotTerminalMessage(prog)
	}
	return prog + ": the player needs a terminal it can draw on, and " + te.reason + ".\n" +
		"Set TERM to your terminal's type (e.g. TERM=xterm-256color), or run lessons and scenarios headless:\n" +
		"  " + prog + " run FILE|LESSON   (prints a report; exit 0 when every expectation holds)\n" +
		"  " + prog + " list              (lists the built-in lessons)\n"
}

// TerminalReason is the one-line reason err gives for the player not
// opening, for a headless listing: "standard output is not a terminal",
// or what is wrong with $TERM.
func TerminalReason(err error) string {
	var te *termError
	if errors.As(err, &te) {
		return te.reason
	}
	return "standard output is not a terminal"
}

// Options configure Run and RunMenu. The zero value plays on the terminal
// behind os.Stdout with colours unless NO_COLOR is set.
type Options struct {
	// Screen to draw on; nil means the terminal, and then Stdout must be one.
	Screen tcell.Screen
	// Stdout is checked with CheckTerminal when Screen is nil; nil means
	// os.Stdout.
	Stdout *os.File
	// NoColor selects plain styles; the NO_COLOR environment variable does
	// too.
	NoColor bool
	// Mouse enables mouse support in tview (optional; keys do everything).
	Mouse bool
	// Ticker replaces the wall-clock ticker (tests).
	Ticker TickerFunc

	// afterDraw, when set, is called after every frame (tests).
	afterDraw func()
}

// newApp prepares the application and the theme from the options. Without
// opt.Screen it opens the terminal itself rather than leaving that to tview,
// so that the screen reads sanitised input and draws without padding (see
// newTerminalScreen), and it reports an error initialising the terminal,
// which tview would drop.
func newApp(opt Options) (*tview.Application, Theme, error) {
	app := tview.NewApplication()
	if opt.Screen != nil {
		app.SetScreen(opt.Screen)
	} else {
		out := opt.Stdout
		if out == nil {
			out = os.Stdout
		}
		if err := CheckTerminal(out); err != nil {
			return nil, Theme{}, err
		}
		scr, err := openTerminal()
		if err != nil {
			return nil, Theme{}, err
		}
		app.SetScreen(initialised{scr})
	}
	// After SetScreen: tview applies the mouse setting to a screen it already
	// has, and only records it otherwise.
	app.EnableMouse(opt.Mouse)
	if opt.afterDraw != nil {
		app.SetAfterDrawFunc(func(tcell.Screen) { opt.afterDraw() })
	}
	return app, NewTheme(opt.NoColor || NoColorEnv()), nil
}

// session is one scenario being played: the loop goroutine that owns the
// driver and the player view it posts to.
type session struct {
	app    *tview.Application
	loop   *Loop
	player *Player
}

// newSession starts the driver goroutine and builds the player view.
func newSession(app *tview.Application, d Driver, th Theme, ticker TickerFunc) *session {
	s := &session{app: app}
	c := NewController(d)
	c.SetPauseGrace(PauseGrace, nil)
	s.player = NewPlayer(th, func(cmd Command) { _ = s.loop.Send(cmd) })
	s.player.SetOverlays(true)
	s.player.SetSnapshot(c.Snapshot())
	s.loop = StartLoop(c, s.post, ticker)
	return s
}

// post hands a snapshot to the UI goroutine and waits until it is shown.
func (s *session) post(snap lab.Snapshot) {
	s.app.QueueUpdateDraw(func() { s.player.SetSnapshot(snap) })
}

// quitApp is the quit action on the UI goroutine: it halts the driver
// goroutines and, once they have ended, stops the application. The waiting
// happens on another goroutine because a driver goroutine may itself be
// waiting for the UI goroutine to take its last snapshot.
func quitApp(app *tview.Application, loops ...*Loop) {
	for _, l := range loops {
		l.Halt()
	}
	go func() {
		for _, l := range loops {
			<-l.Done()
		}
		app.Stop()
	}()
}

// Run plays one scenario: it opens the player on the terminal (or
// opt.Screen) and returns when the user quits. Quitting stops the goroutine
// that owns d, and waits for it, before the application stops. Without a
// terminal it returns ErrNotTerminal at once.
func Run(d Driver, opt Options) error { return run(context.Background(), d, opt) }

// run is Run that also quits when ctx is done, and then returns ctx's
// error.
func run(ctx context.Context, d Driver, opt Options) error {
	app, th, err := newApp(opt)
	if err != nil {
		return err
	}
	s := newSession(app, d, th, opt.Ticker)
	quit := func() { quitApp(app, s.loop) }
	s.player.SetQuitFunc(quit)
	app.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyCtrlC {
			quit()
			return nil
		}
		return ev
	})
	app.SetRoot(s.player, true)
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			app.QueueUpdate(quit)
		case <-stopped:
		}
	}()
	err = app.Run()
	close(stopped)
	// Normally the loop has ended already. If the application stopped on
	// its own (a terminal error), the loop may be blocked on a snapshot the
	// UI will never take: halt it without waiting.
	s.loop.Halt()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// RunMenu opens the lesson menu; enter plays the selected lesson with the
// Driver that open returns, "m" in the player goes back to the menu, and q
// quits from either. An error from open is shown in the menu.
func RunMenu(lessons []Lesson, open func(Lesson) (Driver, error), opt Options) error {
	app, th, err := newApp(opt)
	if err != nil {
		return err
	}
	menu := NewMenu(th, lessons)
	var (
		cur   *session
		loops []*Loop // every session's loop, so quitting waits for all
		quit  = func() { quitApp(app, loops...) }
	)
	menu.SetQuitFunc(quit)
	menu.SetSelectFunc(func(l Lesson) {
		d, err := open(l)
		if err != nil {
			menu.SetNotice(SymFault + " " + l.Name + ": " + err.Error())
			return
		}
		menu.SetNotice("")
		cur = newSession(app, d, th, opt.Ticker)
		loops = append(loops, cur.loop)
		cur.player.SetQuitFunc(quit)
		cur.player.SetBackFunc(func() {
			cur.loop.Halt() // it ends on its own; its last post only updates a hidden player
			cur = nil
			app.SetRoot(menu, true)
		})
		app.SetRoot(cur.player, true)
	})
	app.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyCtrlC {
			quit()
			return nil
		}
		return ev
	})
	app.SetRoot(menu, true)
	err = app.Run()
	for _, l := range loops {
		l.Halt()
	}
	return err
}
