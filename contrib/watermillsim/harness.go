package watermillsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/brokerlab/brokerlab/sim"
	"github.com/brokerlab/brokerlab/sweep"
)

// DefaultMaxTicks is the number of ticks a Harness runs in all when
// HarnessConfig.MaxTicks is 0.
const DefaultMaxTicks = 100_000

// DefaultDrainTicks is how many ticks Harness.Close lets the handlers
// settle the messages they hold before it closes the subscribers.
const DefaultDrainTicks = 1000

// HarnessConfig configures a Harness.
type HarnessConfig struct {
	// Config is the broker's: Kind, Seed, Faults and the rest. TickEvery
	// is counted on the bubble's fake clock (0 means DefaultTickEvery);
	// Config.Trace, if set, receives every event too.
	Config
	// Topics are created in this order before anything runs; Subscribe
	// and Publish refuse a topic not listed. The Router subscribes its
	// handlers in map order, so topics created on first use would come
	// into being in a different order on every run.
	Topics []string
	// MaxTicks caps the ticks of the whole run; 0 means DefaultMaxTicks.
	// Past it the driver ticks no more and the harness reports
	// ErrTickCap: a run whose handlers wait forever would otherwise tick
	// on forever, since the ticker hides the deadlock from synctest.
	MaxTicks int
	// AllowRandom reports middleware that draws randomness (RandomFail,
	// RandomPanic, Retry with a RandomizationFactor) with t.Log instead
	// of failing the test.
	AllowRandom bool
}

// Validate reports a configuration error, wrapping ErrInvalidConfig.
func (c HarnessConfig) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	if len(c.Topics) == 0 {
		return fmt.Errorf("%w: HarnessConfig.Topics is empty; declare every topic the test publishes or subscribes to", ErrInvalidConfig)
	}
	seen := map[string]bool{}
	for i, t := range c.Topics {
		if t == "" || seen[t] {
			return fmt.Errorf("%w: HarnessConfig.Topics[%d] %q is empty or repeated", ErrInvalidConfig, i, t)
		}
		seen[t] = true
	}
	if c.MaxTicks < 0 {
		return fmt.Errorf("%w: MaxTicks %d is negative", ErrInvalidConfig, c.MaxTicks)
	}
	return nil
}

// Harness runs a Broker in lockstep inside a testing/synctest bubble, so
// that a real message.Router, with its goroutines and middleware, makes
// the same trace for the same seed on every run, at any GOMAXPROCS and
// under the race detector. See Test for how to get one and the package
// README for an example.
//
// How: time is the bubble's fake clock, and before every step (a tick or
// one call into the broker) the driver waits until every goroutine of the
// bubble is durably blocked, then serves the waiting calls one at a time
// in the order of stable keys (the subscription's worker name, or the
// Router handler's), a tick due at that instant first. A subscription's
// workers are numbered per Subscriber and topic, topics are created up
// front in a fixed order, and message UUIDs come from NewUUID.
//
// What it does not fix: the order in which goroutines woken at the same
// instant touch state outside the broker (a handler's own shared map, say)
// is still free, middleware that draws randomness draws it, and calls
// without a key of their own (Broker.Do from several goroutines at once)
// are served in arrival order, which Close logs as a warning. Every
// method but RunUntil and Close may be called from any goroutine of the
// bubble; RunUntil and Close from one goroutine at a time, never from a
// handler.
type Harness struct {
	t   testing.TB
	cfg HarnessConfig
	b   *Broker
	ls  *lockstep
	pub *Publisher

	mu      sync.Mutex
	subs    []*Subscriber
	names   map[string]bool
	routers []*routerRun
	errs    []error
	ties    map[string]int
	closed  bool
	uuid    *rand.Rand
	trace   []string // owner goroutine only
}

type routerRun struct {
	r    *message.Router
	done chan error
}

// Test runs f in a new testing/synctest bubble with a Harness for cfg,
// and closes the harness when f returns (Close; its errors fail t). A
// synctest.Wait that f calls while the driver waits fails t with
// ErrSecondWait instead of the runtime's bare panic.
func Test(t *testing.T, cfg HarnessConfig, f func(t *testing.T, h *Harness)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		h := NewHarness(t, cfg)
		defer func() {
			if r := recover(); r != nil {
				if s, _ := r.(string); s == "wait already in progress" {
					t.Fatalf("%v: the test called it while the lockstep driver waited; use Harness.RunUntil", ErrSecondWait)
				}
				panic(r)
			}
		}()
		f(t, h)
	})
}

// Sweep runs f in a fresh Harness for each of the seeds 1..n (cfg.Seed is
// replaced by the seed), each in its own synctest bubble (Test) as a
// subtest named seed=N, so that `go test -run 'TestX/^seed=N$'` reruns one
// seed alone. The seeds run on GOMAXPROCS goroutines through sweep.Run and
// the sweep stops at the first failure; it returns the lowest failing
// seed, which is the same whatever the scheduling, or 0 when every seed
// passed. Fault schedules are not shrunk: the broker does not replay
// them. Cost: one harness run per seed up to the first failure, and a
// subtest each.
func Sweep(t *testing.T, cfg HarnessConfig, n int, f func(t *testing.T, h *Harness)) uint64 {
	t.Helper()
	if f == nil || n <= 0 {
		t.Fatalf("%v: Sweep needs a test function and a positive number of seeds, got %d", ErrInvalidConfig, n)
		return 0
	}
	rep, err := sweep.Run(sweep.Config{Seeds: sweep.Seeds{From: 1, Count: uint64(n)}, StopAtFirst: true},
		func() (sweep.Probe[struct{}], error) {
			return func(seed uint64) (struct{}, bool, error) {
				c := cfg
				c.Seed = seed
				ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { Test(t, c, f) })
				return struct{}{}, !ok, nil
			}, nil
		})
	if err != nil {
		t.Fatalf("watermillsim: Sweep: %v", err)
		return 0
	}
	if len(rep.Failures) == 0 {
		t.Logf("watermillsim: %d seeds passed in %v", rep.Ran, rep.Wall.Round(time.Millisecond))
		return 0
	}
	seed := rep.Failures[0].Seed
	t.Logf("watermillsim: seed %d is the lowest failing seed (%d of the %d seeds that ran failed; the sweep stops at the first failure); rerun it alone with go test -run '^%s$/^seed=%d$'",
		seed, rep.Failed, rep.Ran, regexp.QuoteMeta(t.Name()), seed)
	return seed
}

// NewHarness starts a Harness for cfg in the current synctest bubble,
// bound to t: an invalid cfg, or a call outside a bubble, fails t at
// once, and t's cleanup closes the harness. It creates cfg.Topics in
// order.
func NewHarness(t testing.TB, cfg HarnessConfig) *Harness {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if !inBubble() {
		t.Fatal("watermillsim: NewHarness must run inside a testing/synctest bubble (synctest.Test); watermillsim.Test makes one")
	}
	if cfg.TickEvery == 0 {
		cfg.TickEvery = DefaultTickEvery
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.MaxTicks == 0 {
		cfg.MaxTicks = DefaultMaxTicks
	}
	b, err := newBroker(cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	h := &Harness{t: t, cfg: cfg, b: b, names: map[string]bool{}, ties: map[string]int{},
		uuid: rand.New(rand.NewPCG(cfg.Seed, 0x77617465726d696c))} // "watermil"
	b.w.Trace().Attach(sim.SinkFunc(func(e *sim.Event) { h.trace = append(h.trace, string(sim.AppendText(nil, e))) }))
	b.declared = map[string]bool{}
	for _, name := range cfg.Topics {
		b.declared[name] = true
	}
	b.status = &statusBoard{m: map[string]subStatus{}}
	h.ls = newLockstep(b.w, cfg.TickEvery, cfg.MaxTicks, b.onTick)
	h.ls.waiting = b.waiting
	h.ls.report = h.fail
	h.ls.onTie = func(key string) {
		h.mu.Lock()
		h.ties[key]++
		h.mu.Unlock()
	}
	h.ls.start()
	b.d, b.ls = h.ls, h.ls
	var terr error
	if err := b.Do(func(*sim.World) {
		for _, name := range cfg.Topics {
			if _, terr = b.topic(name); terr != nil {
				return
			}
		}
	}); err != nil || terr != nil {
		_ = b.Close()
		t.Fatal(errors.Join(err, terr))
	}
	h.pub = b.Publisher()
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// inBubble reports whether the caller runs in a synctest bubble:
// synctest.Wait panics outside one. Called before the driver starts, the
// Wait cannot meet another.
func inBubble() (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if s, _ := r.(string); s != "goroutine is not in a bubble" {
				panic(fmt.Errorf("%v: %v (one Harness per bubble; NewHarness waits once to see that it runs in one)", ErrSecondWait, r))
			}
			ok = false
		}
	}()
	synctest.Wait()
	return true
}

func (h *Harness) fail(err error) {
	h.mu.Lock()
	h.errs = append(h.errs, err)
	h.mu.Unlock()
	h.t.Error(err)
}

// Broker returns the harness's broker (Check, Do, Skip, Applied, Handle,
// metrics).
func (h *Harness) Broker() *Broker { return h.b }

// Publisher returns the harness's publisher.
func (h *Harness) Publisher() *Publisher { return h.pub }

// Subscriber returns a new Subscriber named name (its consumer group too,
// for KindLog, unless group is given). Names must be unique: they order
// the subscriptions' calls. A repeated or empty name fails t.
func (h *Harness) Subscriber(name string, group ...string) *Subscriber {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if name == "" || h.names[name] {
		h.t.Fatalf("%v: subscriber name %q is empty or taken; every Subscriber of a harness needs its own name", ErrInvalidConfig, name)
	}
	cfg := SubscriberConfig{Name: name}
	if len(group) > 0 {
		cfg.Group = group[0]
	}
	s, err := h.b.Subscriber(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.names[name] = true
	h.subs = append(h.subs, s)
	return s
}

// NewUUID returns the next UUID (version 4 form) of a sequence drawn from
// the seed. The sequence is the same on every run when its calls come in
// the same order: from the test goroutine, or from one handler.
func (h *Harness) NewUUID() string {
	h.mu.Lock()
	hi, lo := h.uuid.Uint64(), h.uuid.Uint64()
	h.mu.Unlock()
	hi = hi&^(0xf<<12) | 0x4<<12 // version 4
	lo = lo&^(0x3<<62) | 0x2<<62 // variant 10
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}

// NewMessage returns a message with the next seeded UUID.
func (h *Harness) NewMessage(payload []byte) *message.Message {
	return message.NewMessage(h.NewUUID(), payload)
}

// Middleware checks middleware for randomness and returns it for
// Router.AddMiddleware or Handler.AddMiddleware. Each m is a
// message.HandlerMiddleware (a func(message.HandlerFunc)
// message.HandlerFunc) or a value with such a Middleware method, like
// middleware.Retry. RandomFail and RandomPanic draw from math/rand, and
// a Retry with a RandomizationFactor jitters its backoff from it: both
// fail t (or are logged, with HarnessConfig.AllowRandom), since the run
// would differ for the same seed; a fault rule (handler.transient with a
// probability) draws from the seed instead. Anything else fails t.
func (h *Harness) Middleware(ms ...any) []message.HandlerMiddleware {
	h.t.Helper()
	out := make([]message.HandlerMiddleware, 0, len(ms))
	for i, m := range ms {
		var f message.HandlerMiddleware
		var problem string
		switch m := m.(type) {
		case message.HandlerMiddleware:
			f = m
		case func(message.HandlerFunc) message.HandlerFunc:
			f = m
		case interface {
			Middleware(message.HandlerFunc) message.HandlerFunc
		}:
			f = m.Middleware
			v := reflect.Indirect(reflect.ValueOf(m))
			if v.Kind() == reflect.Struct {
				if r := v.FieldByName("RandomizationFactor"); r.IsValid() && r.CanFloat() && r.Float() != 0 {
					problem = fmt.Sprintf("%T has RandomizationFactor %v, which jitters every backoff from math/rand; set it to 0", m, r.Float())
				}
			}
		default:
			h.t.Fatalf("%v: Middleware argument %d is a %T; want a message.HandlerMiddleware or a value with a Middleware(message.HandlerFunc) message.HandlerFunc method", ErrInvalidConfig, i, m)
		}
		if problem == "" {
			// The closure is named after its maker, after the caller's name
			// when the maker was inlined: ...RandomFail.func1, or
			// ...TestX.func1.RandomFail.1.
			name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
			if m := randomMiddleware.FindStringSubmatch(name); m != nil {
				problem = "middleware." + m[1] + " draws from math/rand; use a fault rule (faults.HandlerTransient with a Probability) instead, which draws from the seed"
			}
		}
		if problem != "" {
			msg := "watermillsim: middleware argument " + fmt.Sprint(i) + ": " + problem + ", or runs differ for the same seed"
			if h.cfg.AllowRandom {
				h.t.Log("warning: " + msg)
			} else {
				h.t.Error(msg + " (HarnessConfig.AllowRandom makes this a warning)")
			}
		}
		out = append(out, f)
	}
	return out
}

// randomMiddleware matches the names of the closures that
// middleware.RandomFail and RandomPanic return.
var randomMiddleware = regexp.MustCompile(`\.(RandomFail|RandomPanic)\.(?:func)?[0-9]+$`)

// Run starts r.Run in the bubble and returns once the router runs and
// its subscriptions are set up (log members joined, pub/sub connections
// open), so that what the test publishes next reaches them. Close closes
// it. The Router's own subscribe order (map order) does not matter
// in lockstep: each subscription's setup is a keyed call.
func (h *Harness) Run(r *message.Router) {
	h.t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	select {
	case <-r.Running():
	case err := <-done:
		h.t.Fatalf("watermillsim: the router stopped before it ran: %v", err)
	}
	h.mu.Lock()
	h.routers = append(h.routers, &routerRun{r: r, done: done})
	h.mu.Unlock()
	// Let the subscriptions set up (join their groups, open their pub/sub
	// connections) before the test publishes: until the bubble is quiet.
	if err := h.ls.runUntil(func(*sim.World) bool { return true }, DefaultDrainTicks); err != nil {
		h.t.Fatalf("watermillsim: Run: %v", err)
	}
}

// RunUntil lets the bubble run until cond holds, checked on the owner
// goroutine whenever every other goroutine is blocked, or until maxTicks
// ticks have run: then it returns an error wrapping ErrTickCap that names
// the cap and what was still waiting (each subscription, each topic). It
// fails with ErrBusy while another RunUntil runs. cond must not keep the
// world; Settled is a ready-made one.
func (h *Harness) RunUntil(cond func(w *sim.World) bool, maxTicks int) error {
	if maxTicks <= 0 {
		return fmt.Errorf("%w: RunUntil cap %d; give a positive number of ticks", ErrInvalidConfig, maxTicks)
	}
	if cond == nil {
		return fmt.Errorf("%w: RunUntil with a nil condition", ErrInvalidConfig)
	}
	return h.ls.runUntil(cond, maxTicks)
}

// Settled reports whether nothing is left to do: no subscription holds a
// message, and no declared topic has a message waiting (visible, in
// flight or delayed in a queue; a record a group of the harness's
// subscribers has not processed in a log; a copy anywhere in pub/sub).
// Dead-letter queues count only when declared in HarnessConfig.Topics.
// It is a condition for RunUntil and runs on the owner goroutine.
func (h *Harness) Settled(w *sim.World) bool {
	b := h.b
	if b.status.busy() > 0 {
		return false
	}
	switch b.cfg.Kind {
	case KindPubSub:
		if !b.ps.Idle() {
			return false
		}
		h.mu.Lock()
		subs := slices.Clone(h.subs)
		h.mu.Unlock()
		for _, s := range subs {
			for _, c := range s.conns {
				if len(c.pending)+len(c.redo) > 0 {
					return false
				}
			}
		}
		return true
	}
	for _, t := range b.order {
		if !b.declared[t.name] {
			continue // a dead-letter queue keeps what it holds unless declared and consumed
		}
		switch {
		case t.q != nil:
			if m := t.q.Metrics(); m.Visible+m.InFlight+m.Delayed > 0 {
				return false
			}
		case t.lt != nil:
			h.mu.Lock()
			subs := slices.Clone(h.subs)
			h.mu.Unlock()
			for _, s := range subs {
				if g := t.lt.Group(s.group); g != nil {
					if m := g.Metrics(); m.Lag > 0 || m.Outstanding > 0 {
						return false
					}
				}
			}
		}
	}
	return true
}

// Check runs the checkers on the ledger; see Broker.Check.
func (h *Harness) Check(checks ...sim.Checker) error { return h.b.Check(checks...) }

// Trace returns the trace so far, one event per line in the text form;
// after Close, the whole trace.
func (h *Harness) Trace() []string {
	var out []string
	err := h.b.Do(func(*sim.World) { out = slices.Clone(h.trace) })
	if errors.Is(err, ErrClosed) {
		<-h.ls.Stopped() // nothing writes any more
		return slices.Clone(h.trace)
	}
	return out // nil when called from a callback on the owner goroutine
}

// Close ends the run in an order that cannot hang: it stops the
// subscriptions from taking new messages and lets the handlers settle the
// ones they hold (up to DefaultDrainTicks, in lockstep), ends the
// contexts of the messages still held and lets their handlers return (up
// to DefaultDrainTicks more), closes the subscribers in name order (in
// lockstep), switches lockstep off, closes the routers started with Run
// and waits for them, and stops the broker. A handler still running then
// is reported with ErrHandlerStuck, and Close only stops the broker: the
// Router would wait for the handler forever, holding a mutex its other
// goroutines wait for, which synctest does not count as blocked; left
// open, the goroutines stay durably blocked and synctest reports them.
// It returns the errors met on the way and those reported meanwhile (a
// tick cap, a second synctest.Wait). Called while RunUntil runs, it fails
// with ErrBusy and does nothing. Close is idempotent.
func (h *Harness) Close() error {
	if h.ls.running() {
		return fmt.Errorf("%w: Close called while RunUntil runs; close the harness after RunUntil returned, from the goroutine that called it", ErrBusy)
	}
	if h.ls.reentrant() {
		return fmt.Errorf("%w: Close called from a callback on the owner goroutine", ErrBusy)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	subs := slices.Clone(h.subs)
	routers := slices.Clone(h.routers)
	h.mu.Unlock()
	var errs []error
	h.b.draining.Store(true)
	if h.ls.on.Load() {
		if err := h.ls.runUntil(func(*sim.World) bool { return h.b.status.busy() == 0 }, DefaultDrainTicks); err != nil {
			errs = append(errs, fmt.Errorf("watermillsim: Close: the handlers did not settle their messages: %w", err))
		}
	}
	if stuck, ended := h.endHandlers(); len(stuck) > 0 {
		for _, ho := range stuck {
			errs = append(errs, stuckError{ho: ho, ended: ended})
		}
		_ = h.b.Close()
		return h.finish(errs)
	}
	slices.SortFunc(subs, func(a, b *Subscriber) int { return strings.Compare(a.name, b.name) })
	for _, s := range subs {
		_ = s.Close()
	}
	h.ls.setOn(false)
	for _, r := range routers {
		if err := r.r.Close(); err != nil {
			errs = append(errs, fmt.Errorf("watermillsim: Close: router: %w", err))
		}
		if err := <-r.done; err != nil {
			errs = append(errs, fmt.Errorf("watermillsim: Close: router: %w", err))
		}
	}
	_ = h.b.Close()
	return h.finish(errs)
}

// finish logs the tie warnings and returns errs and the errors reported
// during the run, joined.
func (h *Harness) finish(errs []error) error {
	h.mu.Lock()
	keys := make([]string, 0, len(h.ties))
	for k := range h.ties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		h.t.Logf("warning: watermillsim: %d times two calls keyed %q waited at once and were served in arrival order, which may differ between runs", h.ties[k], k)
	}
	errs = append(errs, h.errs...)
	h.mu.Unlock()
	return errors.Join(errs...)
}

// endHandlers ends the contexts of the messages still handed to handlers
// after the drain, as the end of their subscriptions would, and lets the
// handlers return, up to DefaultDrainTicks. It returns the hand-overs
// whose handlers did not, marked stuck so that their subscriptions stay
// open (see statusBoard.release), and the tick the contexts ended at.
func (h *Harness) endHandlers() (stuck []*handOver, ended sim.Tick) {
	open := h.b.status.unsettled(false)
	if len(open) == 0 {
		return nil, 0
	}
	ended = h.ls.Now()
	for _, ho := range open {
		ho.cancel()
	}
	_ = h.ls.runUntil(func(*sim.World) bool {
		// In lockstep the driver calls this at a quiescent point: the
		// Router set the handler's name in the message's context before
		// it blocked, so reading it is no race.
		return len(h.b.status.unsettled(h.ls.on.Load())) == 0
	}, DefaultDrainTicks)
	return h.b.status.giveUp(), ended
}

// stuckError reports a handler that did not return after its message's
// context ended; it wraps ErrHandlerStuck.
type stuckError struct {
	ho    *handOver
	ended sim.Tick
}

func (e stuckError) Error() string {
	who := "the handler of worker " + e.ho.key
	if e.ho.handler != "" {
		who = "handler " + e.ho.handler + " (worker " + e.ho.key + ")"
	}
	return fmt.Sprintf("watermillsim: %s did not return after its context ended (message %v, handed at t=%d, context ended at t=%d, waited %d ticks); "+
		"a handler must return when msg.Context() is done; Router.Close would wait for it forever, "+
		"so Close leaves the Router open and synctest reports the goroutines left blocked",
		who, e.ho.msg, e.ho.at, e.ended, DefaultDrainTicks)
}

func (e stuckError) Unwrap() error { return ErrHandlerStuck }

// statusBoard says what each subscription is doing, by its lockstep key,
// for the harness's tick-cap errors and Settled. Its methods are safe for
// concurrent use and do nothing on a nil board (real time).
type statusBoard struct {
	mu     sync.Mutex
	m      map[string]subStatus
	handed map[string]*handOver // by key: what a running subscription handed over, not yet acked or nacked
}

// handOver is a message a subscription handed to its handler (a Router's,
// or any receiver of the Subscribe channel) and has had no Ack or Nack
// for yet.
type handOver struct {
	key     string // the subscription's lockstep key, billing#1@orders
	msg     sim.ID
	at      int64 // the tick of the hand-over
	wm      *message.Message
	cancel  context.CancelFunc // ends wm's context
	handler string             // the Router handler's name, once read at a quiescent point
	stuck   bool               // Harness.Close gave up on it: the subscription must not end
}

// hand records that the subscription key handed wm, for d, to its handler
// at tick at.
func (s *statusBoard) hand(key string, d *sim.Delivery, wm *message.Message, cancel context.CancelFunc, at int64) {
	if s == nil {
		return
	}
	s.set(key, true, "handed %v (delivery %d) to the handler at t=%d; no Ack or Nack yet", d.Msg.ID, d.Attempt, at)
	s.mu.Lock()
	if s.handed == nil {
		s.handed = map[string]*handOver{}
	}
	s.handed[key] = &handOver{key: key, msg: d.Msg.ID, at: at, wm: wm, cancel: cancel}
	s.mu.Unlock()
}

// release ends the hand-over of wm by the subscription key, which got the
// outcome o. A hand-over Harness.Close gave up on (stuck) that the
// subscription has to stop on is waited for until the handler acks or
// nacks, which may be never: were the subscription to end, its channel
// would close, the Router would close itself, and Router.Close holds a
// mutex while it waits for its handlers, which the Router's other
// goroutines then wait for; synctest does not count a goroutine waiting on
// a mutex as blocked, so the bubble would hang instead of reporting its
// blocked goroutines.
func (s *statusBoard) release(key string, o outcome, wm *message.Message) {
	if s == nil {
		return
	}
	s.mu.Lock()
	h := s.handed[key]
	if h == nil || h.wm != wm {
		s.mu.Unlock()
		return
	}
	delete(s.handed, key)
	stuck := h.stuck
	s.mu.Unlock()
	if stuck && o == stopped {
		select {
		case <-wm.Acked():
		case <-wm.Nacked():
		}
	}
}

// unsettled returns the hand-overs still waiting for an Ack or Nack, by
// key. Called at a quiescent point in lockstep (readNames), it first reads
// their Router handlers' names, which the Router set in the messages'
// contexts before it blocked.
func (s *statusBoard) unsettled(readNames bool) []*handOver {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*handOver, 0, len(s.handed))
	for _, h := range s.handed {
		if readNames && h.handler == "" {
			h.handler = message.HandlerNameFromCtx(h.wm.Context())
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b *handOver) int { return strings.Compare(a.key, b.key) })
	return out
}

// giveUp marks the hand-overs still unsettled stuck (see release) and
// returns them, by key.
func (s *statusBoard) giveUp() []*handOver {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*handOver, 0, len(s.handed))
	for _, h := range s.handed {
		h.stuck = true
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b *handOver) int { return strings.Compare(a.key, b.key) })
	return out
}

type subStatus struct {
	busy bool // holds a message
	text string
}

func (s *statusBoard) set(key string, busy bool, format string, a ...any) {
	if s == nil {
		return
	}
	st := subStatus{busy: busy, text: fmt.Sprintf(format, a...)}
	s.mu.Lock()
	s.m[key] = st
	s.mu.Unlock()
}

func (s *statusBoard) del(key string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
}

func (s *statusBoard) busy() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.m {
		if st.busy {
			n++
		}
	}
	return n
}

func (s *statusBoard) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.m))
	for k, st := range s.m {
		out = append(out, k+": "+st.text)
	}
	return out
}

// waiting describes what is still waiting: every subscription and every
// topic with messages left. Owner goroutine only.
func (b *Broker) waiting(w *sim.World) string {
	var lines []string
	if b.status != nil {
		lines = b.status.lines()
	}
	for _, t := range b.order {
		if t.q != nil {
			if m := t.q.Metrics(); m.Visible+m.InFlight+m.Delayed > 0 {
				lines = append(lines, fmt.Sprintf("queue %s: %d visible, %d in flight, %d delayed", t.name, m.Visible, m.InFlight, m.Delayed))
			}
		}
	}
	return fmt.Sprintf("at t=%d: %s", w.Now(), joinSorted(lines, "nothing (no subscription, no message)"))
}

// declaredList lists the declared topics, for errors.
func (b *Broker) declaredList() string {
	names := make([]string, 0, len(b.declared))
	for n := range b.declared {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
