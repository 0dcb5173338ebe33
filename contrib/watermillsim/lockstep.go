package watermillsim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/brokerlab/brokerlab/live"
	"github.com/brokerlab/brokerlab/sim"
)

// Errors of the lockstep harness. They wrap with %w like the other
// sentinels of the package.
var (
	// ErrTickCap reports that the ticks allowed (RunUntil's cap or
	// HarnessConfig.MaxTicks) ran out before the condition held. The
	// error names the cap and what was still waiting.
	ErrTickCap = errors.New("watermillsim: tick cap reached")
	// ErrSecondWait reports that a goroutine other than the lockstep
	// driver called synctest.Wait while the driver ran; only one
	// goroutine of a bubble may wait at a time.
	ErrSecondWait = errors.New("watermillsim: synctest.Wait called while the lockstep driver waits")
	// ErrBusy reports a harness call that cannot run now: RunUntil while
	// another RunUntil runs, or Close while a RunUntil runs.
	ErrBusy = errors.New("watermillsim: busy")
	// ErrHandlerStuck reports, from Harness.Close, a handler still running
	// after its message's context ended: Router.Close would wait for it
	// forever. The error names the handler, its worker and the message.
	ErrHandlerStuck = errors.New("watermillsim: handler did not return after its context ended")
)

// driver is what a Broker needs from the goroutine that owns its world:
// live.Driver in real time, lockstep in a testing/synctest bubble. do runs f
// on the owner goroutine; key names the caller (a subscription's worker, a
// handler) so that lockstep can serve concurrent callers in a stable order.
type driver interface {
	do(key string, f func(w *sim.World)) error
	// doUnless is do for a caller that gives the call up, if it has not
	// started, when stop or halt closes (a subscription that must end):
	// it then returns errGivenUp. In real time it is do.
	doUnless(key string, stop, halt <-chan struct{}, f func(w *sim.World)) error
	Advance(n int) error
	Now() sim.Tick
	Stop() error
	Stopped() <-chan struct{}
}

// realTime is live.Driver as a driver: it serves calls in arrival order
// and ignores keys.
type realTime struct{ *live.Driver }

func (r realTime) do(_ string, f func(w *sim.World)) error { return r.Do(f) }

func (r realTime) doUnless(_ string, _, _ <-chan struct{}, f func(w *sim.World)) error {
	return r.Do(f)
}

// errGivenUp is doUnless's error for a call its caller gave up.
var errGivenUp = errors.New("watermillsim: call given up")

// call is one request waiting for the lockstep driver.
type call struct {
	key   string
	seq   uint64
	f     func(w *sim.World)
	done  chan struct{}
	state atomic.Int32 // callWaiting, then callServed (by the driver) or callGivenUp (by the caller)
}

const (
	callWaiting int32 = iota
	callServed
	callGivenUp
)

// until is a RunUntil waiting for its condition.
type until struct {
	cond     func(w *sim.World) bool
	from, to sim.Tick // the ticks it may run: (from, to]
	cap      int
	done     chan error
}

// lockstep owns a world inside a testing/synctest bubble and makes the
// order in which it serves calls a function of the seed alone. Before it
// serves anything it waits until every other goroutine of the bubble is
// durably blocked (synctest.Wait), so the set of waiting calls is the
// same on every run; it then runs a tick that is due at that instant, or
// else the waiting call with the smallest key, one at a time, and waits
// again. Time is the bubble's fake clock: a tick is due every `every`.
//
// Switched off (setOn(false)), it serves calls in arrival order without
// waiting, as live.Driver does: Router.Close holds a mutex while it waits
// for its handlers, and synctest does not count a goroutine blocked on a
// mutex as durably blocked, so a waiting driver would never serve them.
//
// The cost per call is one synctest.Wait (all runnable goroutines of the
// bubble run until they block) plus the call; a tick costs the same.
type lockstep struct {
	w        *sim.World
	every    time.Duration
	onTick   func(w *sim.World)
	maxTicks int                       // ticks allowed in all; past it the driver stops ticking
	waiting  func(w *sim.World) string // describes what is still waiting, for cap errors
	report   func(err error)           // hands background errors (cap, second Wait) to the harness
	onTie    func(key string)          // called when two calls wait with the same key
	owner    atomic.Uint64             // the driver goroutine's id
	inside   atomic.Int32              // callbacks running on the driver goroutine
	on       atomic.Bool               // lockstep on
	kick     chan struct{}             // a call or RunUntil arrived
	quit     chan struct{}             // Stop called
	exited   chan struct{}             // the driver goroutine ended
	stopOnce sync.Once

	ticks  int  // ticks run; driver goroutine only
	capped bool // MaxTicks ran out; driver goroutine only

	mu      sync.Mutex
	pending []*call
	seq     uint64
	until   *until
	now     sim.Tick
}

// newLockstep returns a driver for w, in lockstep, not yet started; set
// its hooks, then start it.
func newLockstep(w *sim.World, every time.Duration, maxTicks int, onTick func(*sim.World)) *lockstep {
	l := &lockstep{w: w, every: every, onTick: onTick, maxTicks: maxTicks,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), exited: make(chan struct{}), now: w.Now()}
	l.on.Store(true)
	return l
}

// start starts the driver goroutine; it must be called inside a synctest
// bubble.
func (l *lockstep) start() { go l.loop() }

func (l *lockstep) setOn(on bool) {
	l.on.Store(on)
	l.poke()
}

func (l *lockstep) poke() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// quiesce waits until every other goroutine of the bubble is durably
// blocked. A concurrent synctest.Wait elsewhere makes it panic; the driver
// then reports ErrSecondWait, switches lockstep off so that nothing
// waits for it forever, and reports false.
func (l *lockstep) quiesce() (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if s, _ := r.(string); s != "wait already in progress" {
				panic(r)
			}
			l.on.Store(false)
			l.fail(fmt.Errorf("%w: only one goroutine of a bubble may call synctest.Wait, and the lockstep driver calls it before every step; "+
				"wait with Harness.RunUntil instead (lockstep is off from t=%d on, so the run is no longer reproducible)", ErrSecondWait, l.Now()))
			ok = false
		}
	}()
	synctest.Wait()
	return true
}

func (l *lockstep) fail(err error) {
	if l.report != nil {
		l.report(err)
	}
}

func (l *lockstep) loop() {
	defer close(l.exited)
	l.owner.Store(live.GoroutineID())
	start := time.Now()
	next := l.every // time since start at which the next tick is due
	timer := time.NewTimer(l.every)
	defer timer.Stop()
	for {
		if l.on.Load() {
			l.quiesce()
		}
		select {
		case <-l.quit:
			return
		default:
		}
		if due := time.Since(start) >= next; due && !l.capped {
			if l.tickAllowed() {
				l.step()
				next += l.every
			}
			continue // or, just capped: let checkUntil end a RunUntil
		}
		if c := l.take(); c != nil {
			l.callback(func() { c.f(l.w) })
			close(c.done)
			continue
		}
		if l.checkUntil() { // quiescent: no call waits, no tick is due
			continue
		}
		var tick <-chan time.Time
		if !l.capped {
			wait := next - time.Since(start)
			if wait < 0 {
				wait = 0
			}
			timer.Reset(wait)
			tick = timer.C
		}
		select {
		case <-l.kick:
		case <-tick:
		case <-l.quit:
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// tickAllowed reports whether another tick may run under MaxTicks; the
// first refusal reports ErrTickCap with what was waiting.
func (l *lockstep) tickAllowed() bool {
	if l.maxTicks <= 0 || l.ticks < l.maxTicks {
		return true
	}
	if !l.capped {
		l.capped = true
		l.fail(fmt.Errorf("%w: HarnessConfig.MaxTicks %d ticks ran out at t=%d; the driver ticks no more; still waiting: %s",
			ErrTickCap, l.maxTicks, l.w.Now(), l.describe()))
	}
	return false
}

func (l *lockstep) describe() string {
	if l.waiting == nil {
		return "(unknown)"
	}
	var s string
	l.callback(func() { s = l.waiting(l.w) })
	return s
}

// checkUntil ends a RunUntil whose condition holds or whose cap ran out;
// it reports whether it ended one.
func (l *lockstep) checkUntil() bool {
	l.mu.Lock()
	u := l.until
	l.mu.Unlock()
	if u == nil {
		return false
	}
	var ok bool
	l.callback(func() { ok = u.cond(l.w) })
	var err error
	switch {
	case ok:
	case l.w.Now() >= u.to || l.capped:
		err = fmt.Errorf("%w: RunUntil: the condition did not hold within its cap of %d ticks (t=%d to t=%d); still waiting: %s",
			ErrTickCap, u.cap, u.from, l.w.Now(), l.describe())
	default:
		return false
	}
	l.mu.Lock()
	l.until = nil
	l.mu.Unlock()
	u.done <- err
	return true
}

// step runs one tick and OnTick.
func (l *lockstep) step() {
	l.callback(func() {
		l.w.Tick()
		if l.onTick != nil {
			l.onTick(l.w)
		}
	})
	l.ticks++
	l.mu.Lock()
	l.now = l.w.Now()
	l.mu.Unlock()
}

// take removes the call to serve next: in lockstep the one with the
// smallest key (arrival breaks a tie, which onTie reports), otherwise the
// first to arrive.
func (l *lockstep) take() *call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.takeLocked()
}

func (l *lockstep) takeLocked() *call {
	if len(l.pending) == 0 {
		return nil
	}
	best := 0
	if l.on.Load() {
		for i, c := range l.pending {
			if i == 0 {
				continue
			}
			b := l.pending[best]
			if c.key < b.key || (c.key == b.key && c.seq < b.seq) {
				best = i
			}
		}
		for i, c := range l.pending {
			if i != best && c.key == l.pending[best].key && l.onTie != nil {
				l.onTie(c.key)
				break
			}
		}
	}
	c := l.pending[best]
	l.pending = slices.Delete(l.pending, best, best+1)
	if !c.state.CompareAndSwap(callWaiting, callServed) {
		return l.takeLocked()
	}
	return c
}

func (l *lockstep) callback(f func()) {
	l.inside.Add(1)
	defer l.inside.Add(-1)
	f()
}

func (l *lockstep) reentrant() bool {
	owner := l.owner.Load()
	return l.inside.Load() > 0 && owner != 0 && live.GoroutineID() == owner
}

// do queues f under key and waits until the driver ran it.
func (l *lockstep) do(key string, f func(w *sim.World)) error { return l.doUnless(key, nil, nil, f) }

// doUnless is do that gives the call up when stop or halt closes before
// the driver took it. A subscription's calls are given up so: Router.Close
// holds a mutex that its ended handlers wait for, and a goroutine blocked
// on a mutex keeps the driver's synctest.Wait from returning, so the
// driver cannot serve the subscriptions the Router waits for.
func (l *lockstep) doUnless(key string, stop, halt <-chan struct{}, f func(w *sim.World)) error {
	if l.reentrant() {
		return fmt.Errorf("%w: Do would wait for the callback it is called from; use the callback's World", live.ErrReentrant)
	}
	c := &call{key: key, f: f, done: make(chan struct{})}
	l.mu.Lock()
	l.seq++
	c.seq = l.seq
	l.pending = append(l.pending, c)
	l.mu.Unlock()
	l.poke()
	select {
	case <-c.done:
		return nil
	case <-l.exited:
		return live.ErrStopped
	case <-stop:
	case <-halt:
	}
	if c.state.CompareAndSwap(callWaiting, callGivenUp) {
		return errGivenUp
	}
	<-c.done // the driver is running it
	return nil
}

// runUntil waits until cond holds at a quiescent point, or maxTicks ticks
// have run, or the driver stops.
func (l *lockstep) runUntil(cond func(w *sim.World) bool, maxTicks int) error {
	if l.reentrant() {
		return fmt.Errorf("%w: RunUntil would wait for the callback it is called from", live.ErrReentrant)
	}
	u := &until{cond: cond, cap: maxTicks, done: make(chan error, 1)}
	l.mu.Lock()
	if l.until != nil {
		l.mu.Unlock()
		return fmt.Errorf("%w: RunUntil called while another RunUntil runs; only one goroutine may wait for the harness at a time", ErrBusy)
	}
	u.from = l.now
	u.to = l.now + sim.Tick(maxTicks)
	l.until = u
	l.mu.Unlock()
	l.poke()
	select {
	case err := <-u.done:
		return err
	case <-l.exited:
		return live.ErrStopped
	}
}

// running reports whether a RunUntil is waiting.
func (l *lockstep) running() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until != nil
}

// Advance runs n ticks at once, as one call.
func (l *lockstep) Advance(n int) error {
	return l.do("", func(*sim.World) {
		for range n {
			if !l.tickAllowed() {
				return
			}
			l.step()
		}
	})
}

// Now returns the tick reached.
func (l *lockstep) Now() sim.Tick {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.now
}

// Stop ends the driver goroutine and waits for it; calls still waiting
// fail with live.ErrStopped.
func (l *lockstep) Stop() error {
	l.stopOnce.Do(func() { close(l.quit) })
	if l.reentrant() {
		return fmt.Errorf("%w: Stop cannot wait for the callback it is called from; the driver stops when it returns", live.ErrReentrant)
	}
	<-l.exited
	return nil
}

// Stopped is closed when the driver goroutine has ended.
func (l *lockstep) Stopped() <-chan struct{} { return l.exited }

// joinSorted joins the lines sorted, or returns none.
func joinSorted(lines []string, none string) string {
	if len(lines) == 0 {
		return none
	}
	slices.Sort(lines)
	return strings.Join(lines, "; ")
}
