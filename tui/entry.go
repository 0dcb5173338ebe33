package tui

import (
	"context"
	"io"

	"github.com/brokerlab/brokerlab/lab"
)

// PlayOptions configure PlayFile, PlayLesson and PlaySession. The zero
// value opens the player on the terminal behind os.Stdout with the
// scenario's own seed and scripted handlers.
type PlayOptions struct {
	// Session configures the run: the seed, the variant, and Go handlers
	// bound to the scenario's consumers, members and subscribers by name
	// (a constructor, called for every run the session builds).
	Session lab.SessionOptions
	// Player configures the terminal: a Screen (tests), NoColor, Mouse.
	Player Options
	// Cast, when not nil, receives an asciinema v2 cast of the run
	// instead: no terminal is opened and none is needed (see Record).
	Cast io.Writer
	// CastConfig configures the cast: size, timing, title.
	CastConfig RecordConfig
}

// PlayFile opens the player on the scenario file at path, or records it
// (opt.Cast), and returns when the user quits, the run is recorded, or ctx
// is done. Errors loading the file or binding the handlers are positioned
// (file:line:col); without a terminal it returns an error wrapping
// ErrNotTerminal (TerminalMessage says what to print).
func PlayFile(ctx context.Context, path string, opt PlayOptions) error {
	s, err := lab.OpenFile(path, opt.Session)
	if err != nil {
		return err
	}
	return PlaySession(ctx, s, opt)
}

// PlayLesson opens the player on the built-in lesson called name, or
// records it; see PlayFile.
func PlayLesson(ctx context.Context, name string, opt PlayOptions) error {
	s, err := lab.OpenLesson(name, opt.Session)
	if err != nil {
		return err
	}
	return PlaySession(ctx, s, opt)
}

// PlaySession opens the player on d (a lab.Session, or any Driver), or
// records it when opt.Cast is set, and
// returns when the user quits, the run is recorded, or ctx is done (then
// with ctx's error). opt.Session is not used: d is built already.
func PlaySession(ctx context.Context, d Driver, opt PlayOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if opt.Cast != nil {
		_, err := Record(opt.Cast, d, opt.CastConfig)
		return err
	}
	return run(ctx, d, opt.Player)
}

// Play opens the player on the playback of rec and returns when the user
// quits; see Run.
func Play(rec lab.Recording, opt Options) error { return Run(lab.NewPlayback(rec), opt) }
