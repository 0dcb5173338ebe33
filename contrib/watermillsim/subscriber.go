package watermillsim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// errNacked is the failure a Nack reports to the log's group member.
var errNacked = errors.New("watermillsim: nacked")

// SubscriberConfig configures a Subscriber.
type SubscriberConfig struct {
	// Name names the subscriber in the trace (its subscriptions are Name#n,
	// the group members of KindLog among them) and, for KindPubSub, in the
	// ledger; "" means "sub-" and a number. Names must be unique per Broker
	// for KindPubSub.
	Name string
	// Group (KindLog) is the consumer group: subscribers with the same
	// group share its committed offsets. "" means a private group named
	// after the subscriber, which reads every topic from the start. Other
	// kinds ignore it.
	Group string
}

// Subscriber is a Watermill message.Subscriber on a Broker. Each Subscribe
// call starts one goroutine that hands messages to its channel one at a
// time: the next message comes only after the previous one was acked or
// nacked. The goroutine stops, and the channel closes, when the context
// ends or the Subscriber is closed; a message delivered but not yet acked
// then goes back to the broker. Semantics per kind:
//
//   - KindQueue: every Subscribe on a topic, in any Subscriber, is a
//     competing consumer of the topic's queue: it receives with
//     queue.Queue.Receive, Ack acks the receipt, Nack nacks it (visible
//     again after Config.NackDelay), and a message left unacked longer
//     than the visibility timeout is redelivered to another consumer (the
//     late Ack is then refused as stale and traced).
//   - KindPubSub: a Subscriber holds one ephemeral connection per topic, a
//     pubsub.Subscriber opened by SubscribeInitialize or by its first
//     Subscribe to the topic; it gets a copy of every publish made while it
//     is open and none of earlier ones. One Subscribe channel drains a
//     connection at a time: a later Subscribe to the same topic on the same
//     Subscriber takes the connection over and closes the earlier channel.
//     Nack redelivers the copy on the same connection. Fan-out is across
//     Subscribers.
//   - KindLog: each Subscribe is a pull member (eventlog.Member) of the
//     subscriber's consumer group, which joins the group when it starts
//     (the group rebalances, sticky assignment) and leaves it when it ends.
//     It polls one record at a time; Ack marks the record processed and
//     commits (Config.Commit), Nack marks it failed, so the member reads it
//     again. The offsets are the group's: the adapter keeps none.
//
// Its methods are safe for concurrent use.
type Subscriber struct {
	b       *Broker
	name    string
	group   string
	closing chan struct{}

	mu     sync.Mutex
	closed bool
	subs   int64 // Subscribe calls so far, numbering the workers per Subscriber
	wg     sync.WaitGroup

	conns map[string]*conn // KindPubSub; owner goroutine only
}

var (
	_ message.Subscriber           = (*Subscriber)(nil)
	_ message.SubscribeInitializer = (*Subscriber)(nil)
)

// Subscriber returns a new Subscriber on b.
func (b *Broker) Subscriber(cfg SubscriberConfig) (*Subscriber, error) {
	if b.closed.Load() {
		return nil, ErrClosed
	}
	if cfg.Name == "" {
		cfg.Name = "sub-" + strconv.FormatInt(b.subs.Add(1), 10)
	}
	if cfg.Group == "" {
		cfg.Group = cfg.Name
	}
	return &Subscriber{b: b, name: cfg.Name, group: cfg.Group, closing: make(chan struct{}), conns: map[string]*conn{}}, nil
}

// Name returns the subscriber's name.
func (s *Subscriber) Name() string { return s.name }

// Consumer returns the logical consumer in the ledger that this
// subscriber's deliveries on topic are booked under, the name to give
// checkers such as sim.ExactlyOnce: the topic for KindQueue (all competing
// consumers form one logical consumer), Name+"@"+topic for KindPubSub, and
// the group for KindLog.
func (s *Subscriber) Consumer(topic string) string {
	switch s.b.cfg.Kind {
	case KindPubSub:
		return s.name + "@" + topic
	case KindLog:
		return s.group
	}
	return topic
}

// SubscribeInitialize creates topic and, for KindPubSub, opens this
// subscriber's connection to it, so that it gets the publishes made from
// now on; for KindLog it creates the consumer group, which from then on
// expects every record of the topic.
func (s *Subscriber) SubscribeInitialize(name string) error {
	if s.isClosed() {
		return ErrClosed
	}
	var err error
	derr := s.b.doKey("init/"+s.name+"@"+name, func(w *sim.World) {
		var t *topic
		if t, err = s.b.topic(name); err != nil {
			return
		}
		switch s.b.cfg.Kind {
		case KindPubSub:
			_, err = s.connect(t)
		case KindLog:
			_, err = s.groupOf(w, t)
		}
	})
	if derr != nil {
		return derr
	}
	return err
}

func (s *Subscriber) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Subscribe starts delivering the messages of topic on the returned
// channel; see Subscriber for the semantics of each kind. The channel
// closes when ctx ends or the subscriber is closed.
func (s *Subscriber) Subscribe(ctx context.Context, name string) (<-chan *message.Message, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.wg.Add(1)
	s.subs++
	id := s.subs
	s.mu.Unlock()
	b := s.b
	worker := s.name + "#" + strconv.FormatInt(id, 10)
	key := worker + "@" + name
	var (
		t    *topic
		c    *conn
		m    *eventlog.Member
		kick chan struct{}
	)
	setup := func(w *sim.World) (err error) {
		if t, err = b.topic(name); err != nil {
			return err
		}
		switch b.cfg.Kind {
		case KindPubSub:
			if c, err = s.connect(t); err != nil {
				return err
			}
			close(c.kick) // take over from an earlier Subscribe
			c.kick = make(chan struct{})
			c.owner, kick = id, c.kick
		case KindLog:
			var g *eventlog.Group
			if g, err = s.groupOf(w, t); err != nil {
				return err
			}
			m, err = eventlog.NewMember(w, g, eventlog.MemberConfig{Name: worker, Pull: true, Commit: b.cfg.Commit})
			if err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
			}
			t.wake.fire() // the join rebalanced the group
		}
		return nil
	}
	run := func(out chan<- *message.Message) {
		switch b.cfg.Kind {
		case KindQueue:
			s.runQueue(ctx, t, worker, key, out)
		case KindPubSub:
			s.runPubSub(ctx, c, id, worker, key, kick, out)
		case KindLog:
			s.runLog(ctx, t, m, worker, key, out)
		}
	}
	out := make(chan *message.Message)
	if b.declared != nil {
		// Lockstep: the Router subscribes its handlers in map order, so
		// the setup (a group join, a pub/sub connection) runs as the
		// subscription's first keyed call, in the order of the workers'
		// names; the topic was declared up front.
		if !b.knows(name) {
			s.wg.Done()
			return nil, fmt.Errorf("%w: %q was not declared in HarnessConfig.Topics (declared: %s)", ErrInvalidTopic, name, b.declaredList())
		}
		// Router.Close cancels the subscriptions' contexts while it holds
		// a mutex its handlers need; lockstep must be off by then (see
		// lockstep).
		stop := context.AfterFunc(ctx, func() { b.ls.setOn(false) })
		go func() {
			defer stop()
			defer b.status.del(key)
			defer s.wg.Done()
			defer close(out)
			var err error
			if b.d.doUnless(key, ctx.Done(), s.closing, func(w *sim.World) { err = setup(w) }) != nil || err != nil {
				return
			}
			run(out)
		}()
		return out, nil
	}
	var err error
	derr := b.Do(func(w *sim.World) { err = setup(w) })
	if derr == nil {
		derr = err
	}
	if derr != nil {
		s.wg.Done()
		return nil, derr
	}
	go func() {
		defer s.wg.Done()
		defer close(out)
		run(out)
	}()
	return out, nil
}

// Close stops every subscription of s, returns the messages they held to
// the broker, closes their channels and, for KindPubSub, closes the
// connections (copies still buffered are lost with cause
// sim.CauseDisconnect). It waits for the goroutines to end and is
// idempotent.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.wg.Wait()
	if s.b.cfg.Kind == KindPubSub {
		_ = s.b.doKey("close/"+s.name, func(*sim.World) {
			names := make([]string, 0, len(s.conns))
			for name := range s.conns {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				s.conns[name].close(s.b)
			}
		})
	}
	return nil
}

type outcome uint8

const (
	acked   outcome = iota
	nacked          // the handler nacked it
	stopped         // handed over, then the subscription had to stop before an Ack or Nack
	unsent          // the subscription had to stop before it could hand the message over
)

// deliver hands wm to out and waits until it is acked or nacked, or the
// subscription has to stop. An Ack or Nack made before the stop wins, so a
// handler that acks and then closes its Subscriber has its Ack counted.
func (s *Subscriber) deliver(ctx context.Context, abort <-chan struct{}, out chan<- *message.Message, wm *message.Message) outcome {
	select {
	case out <- wm:
	case <-ctx.Done():
		return unsent
	case <-s.closing:
		return unsent
	case <-abort:
		return unsent
	case <-s.b.d.Stopped():
		return unsent
	}
	select {
	case <-wm.Acked():
		return acked
	case <-wm.Nacked():
		return nacked
	case <-ctx.Done():
	case <-s.closing:
	case <-abort:
	case <-s.b.d.Stopped():
	}
	select {
	case <-wm.Acked():
		return acked
	case <-wm.Nacked():
		return nacked
	default:
		return stopped
	}
}

// idle waits for wake; it reports false when the subscription has to stop.
func (s *Subscriber) idle(ctx context.Context, abort, wake <-chan struct{}) bool {
	select {
	case <-wake:
		return true
	case <-ctx.Done():
	case <-s.closing:
	case <-abort:
	case <-s.b.d.Stopped():
	}
	return false
}

// waitUntil waits until the world reached tick at; it reports false when
// the subscription has to stop first.
func (s *Subscriber) waitUntil(ctx context.Context, abort <-chan struct{}, at sim.Tick) bool {
	for {
		wake := s.b.tick.wait()
		if sim.Tick(s.b.now.Load()) >= at {
			return true
		}
		if !s.idle(ctx, abort, wake) {
			return false
		}
	}
}

// runQueue is one competing consumer of the queue behind t: it receives
// one message at a time through the queue's own Receive, Ack and Nack.
func (s *Subscriber) runQueue(ctx context.Context, t *topic, worker, key string, out chan<- *message.Message) {
	b := s.b
	var buf []queue.Delivery
	for {
		wake := t.wake.wait()
		var (
			d      *sim.Delivery
			r      queue.Receipt
			at     sim.Tick
			wm     *message.Message
			cancel context.CancelFunc
			rerr   error
		)
		if b.d.doUnless(key, ctx.Done(), s.closing, func(w *sim.World) {
			if b.draining.Load() {
				return
			}
			buf, rerr = t.q.AppendReceive(buf[:0], worker, 1)
			if rerr != nil || len(buf) == 0 {
				return
			}
			x := &buf[0]
			r = x.Receipt
			d = sim.NewDelivery(b.env, x.Message, t.q.Where(), t.q.Consumer(), worker, x.ReceiveCount)
			if hold := b.slow(d); hold > 0 {
				at = w.Now() + hold
				return
			}
			wm, cancel = s.handOverQueue(ctx, key, t, d, r)
		}) != nil {
			return
		}
		if rerr != nil { // broker unavailable: try again next tick
			wake = b.tick.wait()
		}
		if d == nil {
			b.status.set(key, false, "waiting for a message")
			if !s.idle(ctx, nil, wake) {
				return
			}
			continue
		}
		if at > 0 { // handler.slow: the message stays in flight meanwhile
			b.status.set(key, true, "holding %v until t=%d (handler.slow)", d.Msg.ID, at)
			ok := s.waitUntil(ctx, nil, at)
			if b.d.doUnless(key, ctx.Done(), s.closing, func(*sim.World) {
				if !ok {
					_ = t.q.Nack(r, 0)
					t.wake.fire()
					return
				}
				wm, cancel = s.handOverQueue(ctx, key, t, d, r)
			}) != nil || !ok {
				return
			}
		}
		if wm == nil {
			continue // a handler fault failed it
		}
		b.status.hand(key, d, wm, cancel, b.now.Load())
		o := s.deliver(ctx, nil, out, wm)
		_ = b.d.doUnless(key, ctx.Done(), s.closing, func(*sim.World) {
			switch o {
			case acked:
				settleAck(d)
				_ = t.q.Ack(r) // a stale receipt (redelivered meanwhile) is traced as rejected
			case nacked:
				b.failed(d, "nacked")
				_ = t.q.Nack(r, b.cfg.NackDelay)
			default:
				_ = t.q.Nack(r, 0)
			}
			if o != acked {
				t.wake.fire()
			}
		})
		cancel()
		b.status.release(key, o, wm)
		if o == stopped || o == unsent {
			return
		}
	}
}

// handOverQueue consults the handler fault points for d and builds its
// Watermill message; a firing fails the delivery instead, settled by the
// queue consumer's policy (queue.OnFailure, with no attempt limit and
// classes apart): a permanent or poison failure moves the message to the
// dead-letter queue when the topic has one, any other failure nacks it
// with Config.NackDelay. Owner goroutine only.
func (s *Subscriber) handOverQueue(ctx context.Context, key string, t *topic, d *sim.Delivery, r queue.Receipt) (*message.Message, context.CancelFunc) {
	b := s.b
	err := b.fail(d)
	if err == nil {
		return b.toWatermill(ctx, key, d)
	}
	b.failed(d, err.Error())
	if c := sim.Classify(err); queue.OnFailure(c, d.Attempt, 0, false) == queue.SettleDeadLetter {
		if t.q.DeadLetter(r, c.String()+" failure: "+err.Error()) == nil {
			return nil, nil
		}
	}
	_ = t.q.Nack(r, b.cfg.NackDelay)
	t.wake.fire()
	return nil, nil
}

// held is a copy a pub/sub connection took from the model and has not had
// acked yet.
type held struct {
	m       sim.Message
	attempt int  // the delivery number of its latest hand-over
	sent    bool // handed to a Subscribe channel at least once
}

// conn is a KindPubSub subscriber's connection to one topic: a pub/sub
// subscriber of the model whose handler hands each copy over to the
// Watermill side, where it waits until a subscription delivers it.
type conn struct {
	name    string // the model subscriber's name and logical consumer
	where   string
	sub     *pubsub.Subscriber
	pending []held        // handed over by the model, not yet delivered
	redo    []held        // nacked or returned copies, delivered first (LIFO)
	owner   int64         // the Subscribe call draining the connection
	kick    chan struct{} // closed when a later Subscribe takes over
	closed  bool
	wake    wakeup
}

// connect returns s's open connection to t, opening it on first use: a
// subscriber of the model whose logical consumer is the connection, so the
// model traces every copy it places in the connection's buffer as
// "delivered" to it. Owner goroutine only.
func (s *Subscriber) connect(t *topic) (*conn, error) {
	if c := s.conns[t.name]; c != nil {
		return c, nil
	}
	b := s.b
	c := &conn{name: s.name + "@" + t.name, where: "topic:" + t.name, kick: make(chan struct{})}
	size := b.cfg.Buffer
	if size == 0 {
		size = DefaultBuffer
	}
	sub, err := b.ps.Subscribe(pubsub.SubscriberConfig{
		Name: c.name, Pattern: t.name, Buffer: size,
		Handler: sim.HandlerFunc(func(d *sim.Delivery) error {
			c.pending = append(c.pending, held{m: d.Msg, attempt: d.Attempt})
			c.wake.fire()
			return nil // handed over; the effect is recorded when it is acked
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	c.sub = sub
	s.conns[t.name] = c
	return c, nil
}

// next takes the next copy to deliver. Owner goroutine only.
func (c *conn) next() (held, bool) {
	if n := len(c.redo); n > 0 {
		h := c.redo[n-1]
		c.redo = c.redo[:n-1]
		return h, true
	}
	if len(c.pending) == 0 {
		return held{}, false
	}
	h := c.pending[0]
	c.pending[0] = held{}
	c.pending = c.pending[1:]
	return h, true
}

// close disconnects the connection: the model loses the copies still in
// its buffer, and the copies the connection holds undelivered are lost
// the same way, with cause sim.CauseDisconnect. Owner goroutine only.
func (c *conn) close(b *Broker) {
	if c.closed {
		return
	}
	c.closed = true
	c.sub.Close()
	for {
		h, ok := c.next()
		if !ok {
			break
		}
		c.lose(b, h)
	}
	c.wake.fire()
}

// lose traces that the closed connection lost its copy h.
func (c *conn) lose(b *Broker, h held) {
	ev := sim.Lost(c.where, c.name, c.name, &h.m, sim.CauseDisconnect)
	ev.Tick = b.env.Now()
	if b.env.Trace.Detailed() {
		ev.Detail = "discarded from the connection at close"
	}
	b.env.Trace.EmitRef(&ev)
}

// runPubSub drains connection c for the Subscribe call id.
func (s *Subscriber) runPubSub(ctx context.Context, c *conn, id int64, worker, key string, kick <-chan struct{}, out chan<- *message.Message) {
	b := s.b
	for {
		wake := c.wake.wait()
		var (
			wm     *message.Message
			cancel context.CancelFunc
			h      held
			d      *sim.Delivery
			mine   = true
		)
		if b.d.doUnless(key, ctx.Done(), s.closing, func(*sim.World) {
			if c.owner != id || c.closed {
				mine = false
				return
			}
			var ok bool
			if b.draining.Load() {
				return
			}
			if h, ok = c.next(); !ok {
				return
			}
			if h.sent { // a Watermill redelivery on the same connection
				h.attempt++
				ev := sim.Event{Tick: b.env.Now(), Kind: sim.KindRedelivered, Where: c.where, Actor: worker, Consumer: c.name, Msg: h.m.ID,
					Key: h.m.Key, Corr: h.m.Headers.CorrelationID, Attempt: h.attempt}
				b.env.Trace.EmitRef(&ev)
			}
			h.sent = true
			d = sim.NewDelivery(b.env, h.m, c.where, c.name, worker, h.attempt)
			wm, cancel = b.toWatermill(ctx, key, d)
		}) != nil || !mine {
			return
		}
		if wm == nil {
			b.status.set(key, false, "waiting for a message")
			if !s.idle(ctx, kick, wake) {
				return
			}
			continue
		}
		b.status.hand(key, d, wm, cancel, b.now.Load())
		o := s.deliver(ctx, kick, out, wm)
		_ = b.d.doUnless(key, ctx.Done(), s.closing, func(*sim.World) {
			switch o {
			case acked:
				settleAck(d)
				return
			case nacked:
				b.failed(d, "nacked")
			}
			if c.closed {
				c.lose(b, h)
				return
			}
			c.redo = append(c.redo, h)
			c.wake.fire()
		})
		cancel()
		b.status.release(key, o, wm)
		if o == stopped || o == unsent {
			return
		}
	}
}

// groupOf returns s's consumer group on the log topic t, creating it on
// first use: a group that reads the log from its start, with sticky
// assignment (a member keeps its partitions when another joins, as far as
// balance allows). Owner goroutine only.
func (s *Subscriber) groupOf(w *sim.World, t *topic) (*eventlog.Group, error) {
	if g := t.lt.Group(s.group); g != nil {
		return g, nil
	}
	g, err := eventlog.NewGroup(w, t.lt, eventlog.GroupConfig{Name: s.group, Strategy: eventlog.Sticky, SessionTimeout: s.b.cfg.SessionTimeout})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return g, nil
}

// runLog reads the log topic t as the pull member m of its group, one
// record at a time: Poll, a Watermill delivery of the record, then
// MarkProcessed and a commit on Ack, or MarkFailed on Nack. The member
// leaves the group when the subscription ends; the records it held
// unacked are then read again by the partition's next owner.
func (s *Subscriber) runLog(ctx context.Context, t *topic, m *eventlog.Member, worker, key string, out chan<- *message.Message) {
	b := s.b
	defer func() {
		_ = b.d.doUnless(key, ctx.Done(), s.closing, func(*sim.World) {
			m.Leave()
			t.wake.fire() // the group rebalanced: its other members may own more now
		})
	}()
	g := m.Group()
	where := "log:" + t.name
	inactive := false // the last poll found the member out of the group
	for {
		wake := t.wake.wait()
		var (
			d      *sim.Delivery
			at     sim.Tick
			wm     *message.Message
			cancel context.CancelFunc
			again  bool // poll again on the next tick
		)
		if b.d.doUnless(key, ctx.Done(), s.closing, func(w *sim.World) {
			if inactive && !m.Active() {
				_ = m.Rejoin() // it left (member.leave); a crashed member rejoins by itself
			}
			if b.draining.Load() {
				return
			}
			recs := m.Poll(1)
			inactive = !m.Active()
			if len(recs) == 0 {
				again = inactive || b.inj.Has(faults.BrokerUnavailable) || b.cfg.SessionTimeout != DefaultSessionTimeout
				return
			}
			d = m.Delivery(recs[0])
			hold := b.slow(d)
			if d.Attempt == 1 && b.inj.Has(faults.BrokerDelay) {
				r := &d.Msg
				if f, ok := b.inj.Check(faults.BrokerDelay, faults.Context{Where: where, Group: g.Name(), Consumer: worker, Key: r.Key, Type: r.Headers.Type, Msg: r.ID}); ok {
					hold += sim.Tick(max(f.Param, 1))
				}
			}
			if hold > 0 {
				at = w.Now() + hold
				return
			}
			wm, cancel = s.handOverLog(ctx, key, m, d)
		}) != nil {
			return
		}
		if again {
			wake = b.tick.wait()
		}
		if d == nil {
			b.status.set(key, false, "waiting for a message")
			if !s.idle(ctx, nil, wake) {
				return
			}
			continue
		}
		if at > 0 { // broker.delay or handler.slow: the record stays outstanding meanwhile
			b.status.set(key, true, "holding %v until t=%d (broker.delay or handler.slow)", d.Msg.ID, at)
			if !s.waitUntil(ctx, nil, at) {
				return
			}
			if b.d.doUnless(key, ctx.Done(), s.closing, func(*sim.World) { wm, cancel = s.handOverLog(ctx, key, m, d) }) != nil {
				return
			}
		}
		if wm == nil {
			continue // a handler fault failed it
		}
		b.status.hand(key, d, wm, cancel, b.now.Load())
		o := s.deliver(ctx, nil, out, wm)
		_ = b.d.doUnless(key, ctx.Done(), s.closing, func(*sim.World) {
			switch o {
			case acked:
				settleAck(d)
				if m.MarkProcessed(d) != nil {
					return // revoked meanwhile: the partition's new owner reads it again
				}
				if b.inj.Has(faults.BrokerDuplicate) {
					r := &d.Msg
					if _, ok := b.inj.Check(faults.BrokerDuplicate, faults.Context{Where: where, Group: g.Name(), Consumer: worker, Key: r.Key, Type: r.Headers.Type, Msg: r.ID}); ok {
						// The commit is lost: the group resumes at the record,
						// which the member reads again.
						_ = g.SeekOffset(d.Partition, d.Offset)
						return
					}
				}
				switch b.cfg.Commit {
				case eventlog.CommitAfter, eventlog.CommitOffByOne:
					_ = m.Commit()
				}
			case nacked:
				_ = m.MarkFailed(d, errNacked)
			}
		})
		cancel()
		b.status.release(key, o, wm)
		if o == stopped || o == unsent {
			return
		}
	}
}

// handOverLog consults the handler fault points for d and builds its
// Watermill message; a firing fails the record instead (MarkFailed), as a
// member's failed handler does. Owner goroutine only.
func (s *Subscriber) handOverLog(ctx context.Context, key string, m *eventlog.Member, d *sim.Delivery) (*message.Message, context.CancelFunc) {
	if err := s.b.fail(d); err != nil {
		_ = m.MarkFailed(d, err)
		return nil, nil
	}
	return s.b.toWatermill(ctx, key, d)
}
