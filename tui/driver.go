package tui

import (
	"errors"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// Driver is what the player needs from a scenario runner. All methods are
// called from one goroutine only (the Loop's), so an implementation needs no
// locking. Every returned Snapshot must be immutable.
type Driver interface {
	// Snapshot describes the current state without advancing.
	Snapshot() lab.Snapshot
	// Step advances the simulation by one tick.
	Step() lab.Snapshot
	// Restart rebuilds the scenario from scratch with the given seed.
	Restart(seed uint64) lab.Snapshot
	// Do runs a replay action or a manual fault at the current tick. It
	// returns an error (shown as a notice) when the action does not apply,
	// for example a redrive in a scenario without a DLQ.
	Do(a lab.Action) (lab.Snapshot, error)
	// Done reports whether the run has ended (run length reached or drained).
	Done() bool
}

// NarrationStepper is an optional Driver extension: NextNarration advances
// to the next narration point (or to the end). Drivers without it are
// stepped tick by tick until Snapshot.Narration.Index changes.
type NarrationStepper interface {
	NextNarration() lab.Snapshot
}

// Rewinder is an optional Driver extension for time travel. Seek shows the
// run as it was at tick t, exactly as a fresh run stepped to t with the
// same hand actions (deterministic re-execution from the seed), clamped to
// the run's ticks; PrevNarration goes back to the start of the narration
// step before the current one. Drivers without it cannot go back: the
// Controller then answers the time-travel commands with a notice.
type Rewinder interface {
	Seek(t sim.Tick) lab.Snapshot
	PrevNarration() lab.Snapshot
}

// CommandKind names what a Command asks the Loop to do.
type CommandKind uint8

// The commands key handlers send.
const (
	CmdTogglePlay    CommandKind = iota + 1 // play or pause
	CmdStep                                 // pause and advance one tick
	CmdStepNarration                        // pause and advance to the next narration point
	CmdFaster                               // next higher speed
	CmdSlower                               // next lower speed
	CmdRestart                              // restart with the same seed
	CmdReseed                               // restart with a new seed
	CmdAction                               // run Command.Action
	CmdBack                                 // pause and go back one tick (Rewinder)
	CmdSeek                                 // pause and go to tick Command.Tick (Rewinder)
	CmdPrevNarration                        // pause and go back to the previous narration step (Rewinder)
)

// Command is a request from the UI to the goroutine that owns the Driver.
type Command struct {
	Kind   CommandKind
	Action lab.Action // for CmdAction
	Tick   sim.Tick   // for CmdSeek
}

// Speeds are the selectable play speeds in ticks per second.
var Speeds = []float64{0.5, 1, 2, 4, 8, 16, 32, 64}

// defaultSpeed is the index into Speeds a Controller starts at (4 t/s).
const defaultSpeed = 3

// maxNarrationSteps bounds how far CmdStepNarration runs a driver without
// NarrationStepper before giving up.
const maxNarrationSteps = 100000

// Controller is the synchronous state machine behind the player: it holds
// the Driver, the play state and the speed, and turns Commands into new
// Snapshots. It is not safe for concurrent use; Loop gives it a goroutine.
// Every snapshot it returns carries its own Speed and State in the header.
type Controller struct {
	d       Driver
	playing bool
	speed   int
	snap    lab.Snapshot
	// autoPaused is when a narration step that asks for a pause paused
	// playing; a play key within pauseGrace of it was meant as "pause"
	// and keeps the player paused.
	autoPaused time.Time
	now        func() time.Time
	grace      time.Duration
}

// PauseGrace is how long after a narration pause the play key still means
// "pause" in the interactive player: a student who presses space to stop
// at a step the player has just stopped at must not start it again.
const PauseGrace = 1500 * time.Millisecond

// SetPauseGrace sets how long after a narration pause a play key keeps the
// player paused (0, the default, resumes at once; Run uses PauseGrace).
// now is the wall clock to measure it with (nil: time.Now).
func (c *Controller) SetPauseGrace(d time.Duration, now func() time.Time) {
	c.grace = d
	if now != nil {
		c.now = now
	}
}

// NewController returns a paused controller at the default speed (4 t/s).
func NewController(d Driver) *Controller {
	c := &Controller{d: d, speed: defaultSpeed, now: time.Now}
	c.set(d.Snapshot(), "")
	return c
}

// Snapshot returns the latest snapshot.
func (c *Controller) Snapshot() lab.Snapshot { return c.snap }

// Playing reports whether the controller advances on ticks.
func (c *Controller) Playing() bool { return c.playing }

// Interval returns the wall-clock time between ticks at the current speed.
func (c *Controller) Interval() time.Duration {
	return time.Duration(float64(time.Second) / Speeds[c.speed])
}

// set stores s with the controller's header fields filled in.
func (c *Controller) set(s lab.Snapshot, notice string) lab.Snapshot {
	if c.d.Done() {
		c.playing = false
	}
	s.Header.Speed = Speeds[c.speed]
	switch {
	case c.d.Done():
		s.Header.State = lab.StateFinished
	case c.playing:
		s.Header.State = lab.StatePlaying
	default:
		s.Header.State = lab.StatePaused
	}
	if notice != "" {
		s.Header.Notice = notice
	}
	c.snap = s
	return s
}

// Tick advances one tick if playing; it reports whether anything changed.
// At the end of the run, and when a narration step that asks for a pause
// comes up, it pauses.
func (c *Controller) Tick() (lab.Snapshot, bool) {
	if !c.playing {
		return c.snap, false
	}
	if c.d.Done() {
		c.playing = false
		return c.set(c.snap, ""), true
	}
	prev := c.snap.Narration.Index
	s := c.d.Step()
	if s.Narration.Pause && s.Narration.Index != prev {
		c.playing = false
		c.autoPaused = c.now()
		return c.set(s, "paused for the narration; space plays on"), true
	}
	return c.set(s, ""), true
}

// same returns the current snapshot without the previous notice, for
// commands that change only the play state or the speed.
func (c *Controller) same() lab.Snapshot {
	s := c.snap
	s.Header.Notice = ""
	return s
}

// Handle applies one command and returns the resulting snapshot. A notice
// (the outcome of a restart or an action) lasts until the next command.
func (c *Controller) Handle(cmd Command) lab.Snapshot {
	switch cmd.Kind {
	case CmdTogglePlay:
		if !c.playing && !c.autoPaused.IsZero() && c.now().Sub(c.autoPaused) < c.grace {
			c.autoPaused = time.Time{}
			return c.set(c.same(), "paused for the narration; space again plays on")
		}
		c.autoPaused = time.Time{}
		c.playing = !c.playing && !c.d.Done()
		return c.set(c.same(), "")
	case CmdStep:
		c.playing = false
		if c.d.Done() {
			return c.set(c.same(), "")
		}
		return c.set(c.d.Step(), "")
	case CmdStepNarration:
		c.playing = false
		return c.set(c.nextNarration(), "")
	case CmdFaster:
		if c.speed < len(Speeds)-1 {
			c.speed++
		}
		return c.set(c.same(), "")
	case CmdSlower:
		if c.speed > 0 {
			c.speed--
		}
		return c.set(c.same(), "")
	case CmdRestart:
		c.playing = false
		return c.set(c.d.Restart(c.snap.Header.Seed), "restarted with seed "+itoa(int64(c.snap.Header.Seed)))
	case CmdReseed:
		c.playing = false
		seed := lab.NextSeed(c.snap.Header.Seed)
		return c.set(c.d.Restart(seed), "new seed "+itoa(int64(seed)))
	case CmdBack, CmdSeek, CmdPrevNarration:
		c.playing = false
		rw, ok := c.d.(Rewinder)
		if !ok {
			return c.set(c.same(), SymFault+" this player cannot go back in time")
		}
		switch cmd.Kind {
		case CmdBack:
			if c.snap.Header.Tick == 0 {
				return c.set(c.same(), "already at t=0")
			}
			return c.set(rw.Seek(c.snap.Header.Tick-1), "")
		case CmdSeek:
			return c.set(rw.Seek(cmd.Tick), "")
		}
		return c.set(rw.PrevNarration(), "")
	case CmdAction:
		s, err := c.d.Do(cmd.Action)
		if err != nil {
			return c.set(c.same(), lab.FailedNotice(cmd.Action, err))
		}
		if s.Header.Notice == "" {
			s.Header.Notice = lab.ActionName(cmd.Action)
		}
		return c.set(s, "")
	}
	return c.snap
}

// nextNarration advances to the next narration point.
func (c *Controller) nextNarration() lab.Snapshot {
	if c.d.Done() {
		return c.snap
	}
	if ns, ok := c.d.(NarrationStepper); ok {
		return ns.NextNarration()
	}
	start := c.snap.Narration.Index
	s := c.snap
	for i := 0; i < maxNarrationSteps && !c.d.Done(); i++ {
		s = c.d.Step()
		if s.Narration.Index != start {
			break
		}
	}
	return s
}

// itoa formats n in decimal.
func itoa(n int64) string {
	var b [24]byte
	i := len(b)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// ErrStopped is returned by Loop.Send after the loop has stopped.
var ErrStopped = errors.New("tui: player loop stopped")

// ErrBusy is returned by Loop.Send when the loop is so far behind that its
// command buffer is full; the command is dropped.
var ErrBusy = errors.New("tui: player loop busy")

// TickerFunc starts a wall-clock ticker with period d and returns its channel
// and a stop function. Tests pass a fake to drive the Loop without sleeping.
type TickerFunc func(d time.Duration) (<-chan time.Time, func())

// realTicker is the TickerFunc backed by time.NewTicker.
func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Loop is the one goroutine that owns a Controller (and through it the
// Driver). It receives Commands, ticks while playing, and hands each new
// Snapshot to post on the loop goroutine. post may block until the UI has
// taken the snapshot (Run posts with QueueUpdateDraw, which waits for the
// UI goroutine); that is the loop's back-pressure: ticks that fall due while
// it waits are skipped rather than queued, and the commands that arrive
// meanwhile are applied together and posted as one snapshot, so at most one
// frame is ever pending. Because of that, the UI goroutine must never wait
// for the loop: Send never blocks, and the UI stops the loop with Halt and
// lets another goroutine wait for Done.
type Loop struct {
	cmds chan Command
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// StartLoop starts the goroutine. ticker may be nil for a real wall-clock
// ticker. The controller must not be used by anybody else afterwards.
func StartLoop(c *Controller, post func(lab.Snapshot), ticker TickerFunc) *Loop {
	if ticker == nil {
		ticker = realTicker
	}
	l := &Loop{
		cmds: make(chan Command, 64),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go l.run(c, post, ticker)
	return l
}

// run is the loop body.
func (l *Loop) run(c *Controller, post func(lab.Snapshot), ticker TickerFunc) {
	defer close(l.done)
	var (
		tickC    <-chan time.Time
		stopTick = func() {}
		period   time.Duration
	)
	defer func() { stopTick() }()
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		switch {
		case c.Playing() && (tickC == nil || period != c.Interval()):
			stopTick()
			period = c.Interval()
			tickC, stopTick = ticker(period)
		case !c.Playing() && tickC != nil:
			stopTick()
			tickC, stopTick, period = nil, func() {}, 0
		}
		select {
		case <-l.stop:
			return
		case cmd := <-l.cmds:
			post(l.handle(c, cmd))
		case <-tickC:
			if s, ok := c.Tick(); ok {
				post(s)
			}
		}
	}
}

// handle applies cmd and then the commands that queued up behind it while
// the loop was waiting for its last post, and returns the snapshot after
// the last of them. A burst of keys thus costs one frame rather than one
// frame per key, and the frames for keys the user has already typed past
// never keep a later key (q) waiting. It takes at most a buffer's worth,
// so a steady stream of commands still gets frames.
func (l *Loop) handle(c *Controller, cmd Command) lab.Snapshot {
	s := c.Handle(cmd)
	for range cap(l.cmds) {
		select {
		case <-l.stop:
			return s
		case cmd := <-l.cmds:
			s = c.Handle(cmd)
		default:
			return s
		}
	}
	return s
}

// Send hands a command to the loop without blocking. It returns ErrStopped
// once the loop is stopping and ErrBusy when the command buffer is full.
func (l *Loop) Send(cmd Command) error {
	select {
	case <-l.stop:
		return ErrStopped
	default:
	}
	select {
	case l.cmds <- cmd:
		return nil
	default:
		return ErrBusy
	}
}

// Halt asks the loop to stop and returns at once; the loop ends after the
// command or tick it is working on (and its post). It may be called more
// than once, from any goroutine.
func (l *Loop) Halt() { l.once.Do(func() { close(l.stop) }) }

// Stop halts the loop and waits for it to end. It must not be called on a
// goroutine that the loop's post function waits for (the UI goroutine in
// Run); use Halt and Done there.
func (l *Loop) Stop() {
	l.Halt()
	<-l.done
}

// Done is closed when the loop goroutine has ended.
func (l *Loop) Done() <-chan struct{} { return l.done }
