// Package live runs a deterministic sim.World in real time behind a
// goroutine-safe API, for adapters (such as the Watermill one) and players.
//
// One goroutine, the owner, holds the World. It advances one tick every
// Config.TickEvery of wall-clock time and runs the functions handed to Do
// between ticks, one at a time, in the order they arrive. Nothing else ever
// touches the World, so the core stays a single-threaded state machine: with
// the same seed and the same sequence of Do calls between the same ticks,
// the simulation makes the same decisions. Wall-clock time lives only here.
//
// Models are built on the World before Start or inside a Do callback:
// their constructors take the World and register their components with it,
// so every model shares its clock, trace and ledger, and the World steps
// them in the phase their type fixes. The driver advances the World one
// tick at a time (World.Tick); code that needs a condition to hold waits
// for it with WaitFor or by polling through Do, never with World.Run or
// World.RunUntil, which would hold the owner goroutine for the whole run.
// When the World's sim.Budget is spent, the World steps nothing more and
// Err reports why.
//
// Callbacks (the functions given to Do, and Config.OnTick) run on the owner
// goroutine and are handed the World; they use it directly. A Driver method
// that would wait for the owner (Do, Advance, Stop, or WaitFor for a tick not
// yet reached) cannot be served while the owner is running the callback that
// calls it: called from a callback, it returns an error wrapping
// ErrReentrant at once instead of waiting forever.
package live

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package live.
var (
	ErrStopped       = errors.New("live: driver stopped")
	ErrInvalidConfig = sim.Sentinel("live: invalid config", sim.ErrInvalidConfig)
	// ErrReentrant is wrapped by the errors of Driver methods called from a
	// callback on the owner goroutine that would otherwise wait for that
	// goroutine, and so forever.
	ErrReentrant = errors.New("live: called from a driver callback")
)

// Config configures a Driver.
type Config struct {
	// World is the simulation the driver owns from Start on; the caller must
	// not touch it directly afterwards.
	World *sim.World
	// TickEvery is the wall-clock duration of one tick. Zero means manual
	// mode: the world advances only through Advance.
	TickEvery time.Duration
	// OnTick, if set, runs on the owner goroutine after every tick; adapters
	// use it to hand deliveries to their goroutines.
	OnTick func(w *sim.World)
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	switch {
	case c.World == nil:
		return fmt.Errorf("%w: World is nil", ErrInvalidConfig)
	case c.TickEvery < 0:
		return fmt.Errorf("%w: TickEvery %v is negative", ErrInvalidConfig, c.TickEvery)
	}
	return nil
}

type request struct {
	f    func(w *sim.World)
	done chan struct{}
}

// Driver owns a World on one goroutine. Its methods are safe for
// concurrent use.
type Driver struct {
	cfg      Config
	reqs     chan request
	quit     chan struct{}
	exited   chan struct{}
	stopOnce sync.Once

	// owner is the owner goroutine's id (0 until it has started) and
	// callbacks the depth of the callbacks it is running; together they tell
	// a call from inside a callback from a call that arrives on another
	// goroutine meanwhile (see reentrant).
	owner     atomic.Uint64
	callbacks atomic.Int32

	mu  sync.Mutex
	now sim.Tick
	err error // the World's Err after the last step or request
	// waiters are the WaitFor calls still waiting, a min-heap by tick: a
	// step wakes the due ones in O(k log n) and a call whose context ends
	// takes itself out, so cancelled calls cost nothing afterwards.
	waiters waitHeap
}

// waiter is one WaitFor call waiting for tick at; idx is its place in the
// heap, -1 once it was woken or took itself out.
type waiter struct {
	at  sim.Tick
	ch  chan struct{}
	idx int
}

// waitHeap is a container/heap of waiters ordered by tick.
type waitHeap []*waiter

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *waitHeap) Push(x any) {
	w := x.(*waiter)
	w.idx = len(*h)
	*h = append(*h, w)
}
func (h *waitHeap) Pop() any {
	old := *h
	n := len(old)
	w := old[n-1]
	old[n-1] = nil
	w.idx = -1
	*h = old[:n-1]
	return w
}

// Start validates cfg and starts the owner goroutine.
func Start(cfg Config) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, reqs: make(chan request), quit: make(chan struct{}), exited: make(chan struct{}), now: cfg.World.Now()}
	go d.loop()
	return d, nil
}

func (d *Driver) loop() {
	defer close(d.exited)
	d.owner.Store(GoroutineID())
	var tick <-chan time.Time
	if d.cfg.TickEvery > 0 {
		t := time.NewTicker(d.cfg.TickEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		// A stop wins over requests and ticks that are ready too, so a Stop
		// from a callback takes effect as soon as the callback returns.
		if d.stopping() {
			return
		}
		select {
		case <-d.quit:
			return
		case r := <-d.reqs:
			d.callback(func() { r.f(d.cfg.World) })
			d.note()
			close(r.done)
		case <-tick:
			d.step()
		}
	}
}

// callback runs f, user code, on the owner goroutine, counted in
// d.callbacks so that reentrant calls from f can be told apart.
func (d *Driver) callback(f func()) {
	d.callbacks.Add(1)
	defer d.callbacks.Add(-1)
	f()
}

// reentrant reports whether the caller is a callback on d's owner
// goroutine. The depth alone cannot tell: while the owner runs a callback,
// other goroutines keep calling Do, and they must wait their turn rather
// than fail. So when a callback is running, the caller's goroutine is
// compared with the owner's (GoroutineID). An unreadable id makes it
// report false: the call then waits as it did before reentrant calls were
// detected. Every other call costs one atomic load.
func (d *Driver) reentrant() bool {
	if d.callbacks.Load() == 0 {
		return false
	}
	owner := d.owner.Load()
	return owner != 0 && GoroutineID() == owner
}

// stopping reports whether Stop has been called.
func (d *Driver) stopping() bool {
	select {
	case <-d.quit:
		return true
	default:
		return false
	}
}

// step advances one tick on the owner goroutine.
func (d *Driver) step() {
	w := d.cfg.World
	w.Tick()
	if d.cfg.OnTick != nil {
		d.callback(func() { d.cfg.OnTick(w) })
	}
	d.mu.Lock()
	d.now, d.err = w.Now(), w.Err()
	for len(d.waiters) > 0 && d.waiters[0].at <= d.now {
		close(heap.Pop(&d.waiters).(*waiter).ch)
	}
	d.mu.Unlock()
}

// Do runs f on the owner goroutine between two ticks and waits for it. It
// returns ErrStopped if the driver stopped before f could run. Called from a
// callback, it does not run f and returns an error wrapping ErrReentrant:
// the callback has the World already and can do the work itself.
func (d *Driver) Do(f func(w *sim.World)) error {
	if d.reentrant() {
		return fmt.Errorf("%w: Do would wait for the callback it is called from; use the callback's World", ErrReentrant)
	}
	r := request{f: f, done: make(chan struct{})}
	select {
	case d.reqs <- r:
	case <-d.exited:
		return ErrStopped
	}
	<-r.done
	return nil
}

// Advance runs n ticks at once on the owner goroutine (manual mode, or to
// fast-forward). It returns ErrStopped if the driver stopped before all n
// ran, for example because OnTick called Stop. Called from a callback, it
// runs no tick and returns an error wrapping ErrReentrant.
func (d *Driver) Advance(n int) error {
	if d.reentrant() {
		return fmt.Errorf("%w: Advance would wait for the callback it is called from", ErrReentrant)
	}
	ran := 0
	if err := d.Do(func(*sim.World) {
		for ; ran < n && !d.stopping(); ran++ {
			d.step()
		}
	}); err != nil {
		return err
	}
	if ran < n {
		return ErrStopped
	}
	return nil
}

// note records the World's budget error after a request, which may have
// created messages past the budget.
func (d *Driver) note() {
	err := d.cfg.World.Env().Exceeded()
	d.mu.Lock()
	d.err = err
	d.mu.Unlock()
}

// Err returns the error the World stopped with, as of the last tick or Do
// request: a spent sim.Budget (wrapping sim.ErrBudget), or nil. Once it is
// set the World steps no component any more, though the clock still
// advances. It is safe to call from any goroutine, callbacks included.
func (d *Driver) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Now returns the tick reached by the last completed step.
func (d *Driver) Now() sim.Tick {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.now
}

// WaitFor blocks until the world reached tick t, the context ends, or the
// driver stops. A call whose context ends leaves nothing behind: memory and
// the cost of a tick follow the calls still waiting, never the calls made.
// Called from a callback for a tick not reached yet, it
// returns an error wrapping ErrReentrant: the world cannot advance while
// the callback runs.
func (d *Driver) WaitFor(ctx context.Context, t sim.Tick) error {
	d.mu.Lock()
	if d.now >= t {
		d.mu.Unlock()
		return nil
	}
	if d.reentrant() {
		now := d.now
		d.mu.Unlock()
		return fmt.Errorf("%w: WaitFor(%v) at %v would wait for the callback it is called from", ErrReentrant, t, now)
	}
	w := &waiter{at: t, ch: make(chan struct{})}
	heap.Push(&d.waiters, w)
	d.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
	case <-d.exited:
	}
	d.mu.Lock()
	reached := w.idx < 0
	if !reached {
		heap.Remove(&d.waiters, w.idx)
	}
	d.mu.Unlock()
	switch {
	case reached:
		return nil // the tick came as the context ended
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return ErrStopped
}

// Stop stops the owner goroutine and waits for it to exit. It is
// idempotent; Do calls after Stop return ErrStopped. Called from a callback
// (OnTick deciding the run is over, say), it cannot wait for the goroutine
// it runs on: the driver stops as soon as the callback returns, running no
// further tick or request, and Stop returns an error wrapping ErrReentrant
// to say it did not wait.
func (d *Driver) Stop() error {
	d.stopOnce.Do(func() { close(d.quit) })
	if d.reentrant() {
		return fmt.Errorf("%w: Stop cannot wait for the callback it is called from; the driver stops when it returns", ErrReentrant)
	}
	<-d.exited
	return nil
}

// Stopped is closed when the owner goroutine has exited.
func (d *Driver) Stopped() <-chan struct{} { return d.exited }
