package live

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/sim"
)

// within runs f and fails the test if f has not returned after 2 s, so a
// deadlock shows up as a failure instead of a hung test binary.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatalf("%s: still blocked after 2 s", what)
	}
}

// stopAtEnd stops d when the test ends, failing it rather than hanging if
// the driver is deadlocked.
func stopAtEnd(t *testing.T, d *Driver) {
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = d.Stop()
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Error("Stop at the end of the test: still blocked after 2 s")
		}
	})
}

// stopped fails the test unless the driver's goroutine exits within 2 s.
func stopped(t *testing.T, d *Driver) {
	t.Helper()
	select {
	case <-d.Stopped():
	case <-time.After(2 * time.Second):
		t.Fatal("the driver did not stop")
	}
}

func TestCallsFromADoCallbackReturnErrReentrant(t *testing.T) {
	d, _ := Start(Config{World: newWorld(t)})
	stopAtEnd(t, d)
	_ = d.Advance(2)
	var inner, advance, waitFuture, waitPast error
	ranInner := false
	var now sim.Tick
	within(t, "Do with reentrant calls", func() {
		err := d.Do(func(*sim.World) {
			inner = d.Do(func(*sim.World) { ranInner = true })
			advance = d.Advance(1)
			waitFuture = d.WaitFor(context.Background(), 10)
			waitPast = d.WaitFor(context.Background(), 2)
			now = d.Now()
		})
		if err != nil {
			t.Errorf("outer Do: %v", err)
		}
	})
	if !errors.Is(inner, ErrReentrant) || ranInner {
		t.Errorf("Do in Do: %v (ran %v), want ErrReentrant and f not run", inner, ranInner)
	}
	if !errors.Is(advance, ErrReentrant) {
		t.Errorf("Advance in Do: %v, want ErrReentrant", advance)
	}
	if !errors.Is(waitFuture, ErrReentrant) {
		t.Errorf("WaitFor a later tick in Do: %v, want ErrReentrant", waitFuture)
	}
	if waitPast != nil || now != 2 {
		t.Errorf("WaitFor a reached tick in Do: %v, Now %v; want nil at t=2", waitPast, now)
	}
	// Nothing was left half done: the driver still serves calls.
	within(t, "Advance after", func() {
		if err := d.Advance(1); err != nil || d.Now() != 3 {
			t.Errorf("Advance after: %v, now %v", err, d.Now())
		}
	})
}

func TestStopFromOnTickStopsWithoutWaiting(t *testing.T) {
	var (
		ticks  int // owner goroutine only, read after it stopped
		stopAt = sim.Tick(3)
		dc     = make(chan *Driver, 1) // hands the driver to its own OnTick
		errc   = make(chan error, 1)
	)
	onTick := func(w *sim.World) {
		ticks++
		if w.Now() == stopAt {
			errc <- (<-dc).Stop()
		}
	}
	d, err := Start(Config{World: newWorld(t), TickEvery: time.Millisecond, OnTick: onTick})
	if err != nil {
		t.Fatal(err)
	}
	dc <- d
	select {
	case err := <-errc:
		if !errors.Is(err, ErrReentrant) {
			t.Fatalf("Stop from OnTick: %v, want ErrReentrant", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Stop from OnTick did not return")
	}
	stopped(t, d)
	if ticks != int(stopAt) {
		t.Fatalf("%d ticks, want the driver to stop right after tick %d", ticks, stopAt)
	}
	within(t, "Stop after", func() {
		if err := d.Stop(); err != nil {
			t.Errorf("Stop after the driver stopped: %v", err)
		}
	})
	if err := d.Do(func(*sim.World) {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Do after: %v, want ErrStopped", err)
	}
}

func TestStopFromOnTickEndsAdvance(t *testing.T) {
	var d *Driver
	var stopErr error
	d, _ = Start(Config{World: newWorld(t), OnTick: func(w *sim.World) {
		if w.Now() == 4 {
			stopErr = d.Stop()
		}
	}})
	within(t, "Advance", func() {
		if err := d.Advance(10); !errors.Is(err, ErrStopped) {
			t.Errorf("Advance(10) stopped at tick 4: %v, want ErrStopped", err)
		}
	})
	stopped(t, d)
	if !errors.Is(stopErr, ErrReentrant) {
		t.Fatalf("Stop from OnTick: %v, want ErrReentrant", stopErr)
	}
	if d.Now() != 4 {
		t.Fatalf("now %v, want 4: no tick after the stop", d.Now())
	}
}

func TestStopFromADoCallback(t *testing.T) {
	d, _ := Start(Config{World: newWorld(t)})
	var stopErr error
	within(t, "Do", func() {
		if err := d.Do(func(*sim.World) { stopErr = d.Stop() }); err != nil {
			t.Errorf("Do: %v", err)
		}
	})
	if !errors.Is(stopErr, ErrReentrant) {
		t.Fatalf("Stop from Do: %v, want ErrReentrant", stopErr)
	}
	stopped(t, d)
}

// TestCallsFromOtherGoroutinesDuringACallbackWait checks that reentrancy
// is told by goroutine, not by the callback running: a Do from another
// goroutine while OnTick runs waits for its turn and succeeds.
func TestCallsFromOtherGoroutinesDuringACallbackWait(t *testing.T) {
	inTick := make(chan struct{})
	release := make(chan struct{})
	first := true
	d, _ := Start(Config{World: newWorld(t), OnTick: func(*sim.World) {
		if first {
			first = false
			close(inTick)
			<-release
		}
	}})
	stopAtEnd(t, d)
	advanced := make(chan error, 1)
	go func() { advanced <- d.Advance(1) }()
	<-inTick // the owner is inside OnTick and stays there

	res := make(chan error, 1)
	go func() { res <- d.Do(func(*sim.World) {}) }()
	select {
	case err := <-res:
		t.Fatalf("Do from another goroutine returned during the callback: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	for _, c := range []chan error{advanced, res} {
		select {
		case err := <-c:
			if err != nil {
				t.Fatalf("after the callback: %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("call still blocked after the callback returned")
		}
	}
}

// TestCallbackMayCallAnotherDriver checks that a callback of one driver
// may use another: only calls back into its own driver are reentrant.
func TestCallbackMayCallAnotherDriver(t *testing.T) {
	a, _ := Start(Config{World: newWorld(t)})
	stopAtEnd(t, a)
	b, _ := Start(Config{World: newWorld(t)})
	stopAtEnd(t, b)
	within(t, "a.Do calling b", func() {
		var inner error
		if err := a.Do(func(*sim.World) { inner = b.Advance(2) }); err != nil || inner != nil {
			t.Errorf("a.Do: %v, b.Advance inside: %v", err, inner)
		}
	})
	if b.Now() != 2 || a.Now() != 0 {
		t.Fatalf("a at %v, b at %v; want 0 and 2", a.Now(), b.Now())
	}
}
