package tui

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/brokerlab/brokerlab/lab"
)

// fakeTicker hands out one channel per started ticker and records the
// periods, so a test drives the Loop's clock by hand.
type fakeTicker struct {
	mu      sync.Mutex
	periods []time.Duration
	ch      chan time.Time
	stops   int
}

func (f *fakeTicker) start(d time.Duration) (<-chan time.Time, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.periods = append(f.periods, d)
	f.ch = make(chan time.Time)
	return f.ch, func() { f.mu.Lock(); f.stops++; f.mu.Unlock() }
}

func (f *fakeTicker) channel() chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ch
}

func TestLoop(t *testing.T) {
	d := newFakeDriver(3)
	ft := &fakeTicker{}
	posts := make(chan lab.Snapshot, 16)
	l := StartLoop(NewController(d), func(s lab.Snapshot) { posts <- s }, ft.start)

	if err := l.Send(Command{Kind: CmdStep}); err != nil {
		t.Fatal(err)
	}
	if s := <-posts; s.Header.Tick != 1 || s.Header.State != lab.StatePaused {
		t.Fatalf("step: %+v", s.Header)
	}
	_ = l.Send(Command{Kind: CmdTogglePlay})
	if s := <-posts; s.Header.State != lab.StatePlaying {
		t.Fatalf("play: %+v", s.Header)
	}
	// The loop starts a ticker at 4 t/s once it sees it is playing; the
	// unbuffered fake channel makes the send wait until the loop listens.
	for ft.channel() == nil {
		_ = l.Send(Command{Kind: CmdFaster})
		<-posts
		_ = l.Send(Command{Kind: CmdSlower})
		<-posts
	}
	ft.channel() <- time.Time{}
	if s := <-posts; s.Header.Tick != 2 || s.Header.State != lab.StatePlaying {
		t.Fatalf("tick: %+v", s.Header)
	}
	_ = l.Send(Command{Kind: CmdFaster})
	if s := <-posts; s.Header.Speed != 8 {
		t.Fatalf("faster: %+v", s.Header)
	}
	ft.channel() <- time.Time{} // the loop restarted the ticker at the new period
	if s := <-posts; s.Header.Tick != 3 {
		t.Fatalf("tick after faster: %+v", s.Header)
	}
	ft.mu.Lock()
	last := ft.periods[len(ft.periods)-1]
	ft.mu.Unlock()
	if last != time.Second/8 {
		t.Fatalf("ticker period %v, want %v", last, time.Second/8)
	}
	l.Stop()
	l.Stop() // idempotent
	select {
	case <-l.Done():
	default:
		t.Fatal("loop still running after Stop")
	}
	if err := l.Send(Command{Kind: CmdStep}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Send after Stop = %v, want ErrStopped", err)
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.stops != len(ft.periods) {
		t.Fatalf("%d tickers started, %d stopped", len(ft.periods), ft.stops)
	}
}

// TestRunQuit plays on a simulation screen through Run: keys reach the
// player, snapshots come back through QueueUpdateDraw, and q stops the
// driver goroutine and then the application, so Run returns.
func TestRunQuit(t *testing.T) {
	d := newFakeDriver(5)
	scr := tcell.NewSimulationScreen("UTF-8")
	drawn := make(chan struct{}, 100)
	ticked := make(chan struct{})
	ft := &fakeTicker{}
	seen := false
	opt := Options{Screen: scr, Ticker: ft.start, NoColor: true,
		afterDraw: func() { // on the UI goroutine
			if !seen && contains(screenText(scr), "t=2 ") {
				seen = true
				close(ticked)
			}
			select {
			case drawn <- struct{}{}:
			default:
			}
		}}
	done := make(chan error, 1)
	go func() { done <- Run(d, opt) }()
	<-drawn
	scr.SetSize(80, 24)
	scr.InjectKey(tcell.KeyRune, 's', 0)
	scr.InjectKey(tcell.KeyRune, 's', 0)
	<-ticked // the second step's snapshot is on screen
	scr.InjectKey(tcell.KeyRune, 'q', 0)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d.steps != 2 {
		t.Fatalf("driver stepped %d times, want 2", d.steps)
	}
}

func TestRunMenuOpensLesson(t *testing.T) {
	scr := tcell.NewSimulationScreen("UTF-8")
	drawn := make(chan struct{}, 100)
	var d *fakeDriver
	opened := make(chan string, 4)
	open := func(l Lesson) (Driver, error) {
		if l.Name == "outbox" {
			return nil, errors.New("not built in")
		}
		d = newFakeDriver(1)
		opened <- l.Name
		return d, nil
	}
	stepped := make(chan struct{})
	seen := false
	opt := Options{Screen: scr, NoColor: true, afterDraw: func() {
		if !seen && contains(screenText(scr), "t=1 ") {
			seen = true
			close(stepped)
		}
		select {
		case drawn <- struct{}{}:
		default:
		}
	}}
	done := make(chan error, 1)
	go func() { done <- RunMenu(testLessons(), open, opt) }()
	<-drawn
	scr.InjectKey(tcell.KeyDown, 0, 0)
	scr.InjectKey(tcell.KeyEnter, 0, 0) // fails: shown in the menu
	scr.InjectKey(tcell.KeyDown, 0, 0)
	scr.InjectKey(tcell.KeyEnter, 0, 0) // opens "idempotent"
	if name := <-opened; name != "idempotent" {
		t.Fatalf("opened %q", name)
	}
	scr.InjectKey(tcell.KeyRune, 's', 0)
	<-stepped
	scr.InjectKey(tcell.KeyRune, 'm', 0) // back to the menu
	scr.InjectKey(tcell.KeyRune, 'q', 0)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d.steps != 1 {
		t.Fatalf("driver stepped %d times, want 1", d.steps)
	}
}

func TestNotTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Run(newFakeDriver(1), Options{Stdout: f}); !errors.Is(err, ErrNotTerminal) {
		t.Fatalf("Run to a file = %v, want ErrNotTerminal", err)
	}
	if err := RunMenu(nil, nil, Options{Stdout: f}); !errors.Is(err, ErrNotTerminal) {
		t.Fatalf("RunMenu to a file = %v, want ErrNotTerminal", err)
	}
	if err := CheckTerminal(nil); !errors.Is(err, ErrNotTerminal) {
		t.Fatal("nil file must not be a terminal")
	}
}

func TestNotTerminalMessage(t *testing.T) {
	msg := NotTerminalMessage("brokerlab")
	for _, want := range []string{"needs a terminal", "brokerlab run FILE|LESSON"} {
		if !contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}
