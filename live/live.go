// Package live runs a deterministic sim.World in real time behind a
// goroutine-safe API, for adapters (such as the Watermill one) and players.
//
// One goroutine, the owner, holds the World. It advances one tick every
// Config.TickEvery of wall-clock time and runs the functions handed to Do
// between ticks, one at a time, in the order they arrive. Nothing else ever
// touches the World, so the core stays a single-threaded state machine: with
// the same seed and the same sequence of Do calls between the same ticks,
// the simulation makes the same decisions. Wall-clock time lives only here.
package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package live.
var (
	ErrStopped       = errors.New("live: driver stopped")
	ErrInvalidConfig = errors.New("live: invalid config")
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

	mu      sync.Mutex
	now     sim.Tick
	waiters []waiter
}

type waiter struct {
	at sim.Tick
	ch chan struct{}
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
	var tick <-chan time.Time
	if d.cfg.TickEvery > 0 {
		t := time.NewTicker(d.cfg.TickEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-d.quit:
			return
		case r := <-d.reqs:
			r.f(d.cfg.World)
			close(r.done)
		case <-tick:
			d.step()
		}
	}
}

// step advances one tick on the owner goroutine.
func (d *Driver) step() {
	w := d.cfg.World
	w.Tick()
	if d.cfg.OnTick != nil {
		d.cfg.OnTick(w)
	}
	d.mu.Lock()
	d.now = w.Now()
	kept := d.waiters[:0]
	for _, x := range d.waiters {
		if x.at <= d.now {
			close(x.ch)
		} else {
			kept = append(kept, x)
		}
	}
	d.waiters = kept
	d.mu.Unlock()
}

// Do runs f on the owner goroutine between two ticks and waits for it. It
// returns ErrStopped if the driver stopped before f could run.
func (d *Driver) Do(f func(w *sim.World)) error {
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
// fast-forward).
func (d *Driver) Advance(n int) error {
	return d.Do(func(*sim.World) {
		for i := 0; i < n; i++ {
			d.step()
		}
	})
}

// Now returns the tick reached by the last completed step.
func (d *Driver) Now() sim.Tick {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.now
}

// WaitFor blocks until the world reached tick t, the context ends, or the
// driver stops.
func (d *Driver) WaitFor(ctx context.Context, t sim.Tick) error {
	d.mu.Lock()
	if d.now >= t {
		d.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	d.waiters = append(d.waiters, waiter{at: t, ch: ch})
	d.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-d.exited:
		return ErrStopped
	}
}

// Stop stops the owner goroutine and waits for it to exit. It is
// idempotent; Do calls after Stop return ErrStopped.
func (d *Driver) Stop() {
	d.stopOnce.Do(func() { close(d.quit) })
	<-d.exited
}

// Stopped is closed when the owner goroutine has exited.
func (d *Driver) Stopped() <-chan struct{} { return d.exited }
