package watermill

import (
	"context"
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

// SubscriberConfig configures a Subscriber.
type SubscriberConfig struct {
	// Name names the subscriber in the trace (its workers are Name#n) and,
	// for KindPubSub, in the ledger; "" means "sub-" and a number. Names
	// must be unique per Broker for KindPubSub.
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
//     competing consumer of the topic's queue. Ack deletes the message,
//     Nack makes it visible again after Config.NackDelay, and a message
//     left unacked longer than the visibility timeout is redelivered to
//     another consumer (the late Ack is then refused as stale and traced).
//   - KindPubSub: a Subscriber holds one ephemeral connection per topic,
//     opened by SubscribeInitialize or by its first Subscribe to the topic;
//     it gets a copy of every publish made while it is open and none of
//     earlier ones. One Subscribe channel drains a connection at a time: a
//     later Subscribe to the same topic on the same Subscriber takes the
//     connection over and closes the earlier channel. Nack redelivers the
//     copy on the same connection. Fan-out is across Subscribers.
//   - KindLog: Subscribe reads the topic for the consumer group; Ack
//     commits the next offset, Nack redelivers the same record. A
//     subscription leases every partition of its group that is free and
//     keeps them until it ends (no rebalancing).
//
// Its methods are safe for concurrent use.
type Subscriber struct {
	b       *Broker
	name    string
	group   string
	closing chan struct{}

	mu     sync.Mutex
	closed bool
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
// now on; for KindLog it creates the consumer group, which then expects
// every later record.
func (s *Subscriber) SubscribeInitialize(name string) error {
	if s.isClosed() {
		return ErrClosed
	}
	var err error
	derr := s.b.Do(func(*sim.World) {
		var t *topic
		if t, err = s.b.topic(name); err != nil {
			return
		}
		switch s.b.cfg.Kind {
		case KindPubSub:
			_, err = s.connect(t)
		case KindLog:
			s.groupOf(t)
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
	s.mu.Unlock()
	b := s.b
	id := b.subs.Add(1)
	worker := s.name + "#" + strconv.FormatInt(id, 10)
	var (
		t    *topic
		c    *conn
		g    *group
		kick chan struct{}
		err  error
	)
	derr := b.Do(func(*sim.World) {
		if t, err = b.topic(name); err != nil {
			return
		}
		switch b.cfg.Kind {
		case KindPubSub:
			if c, err = s.connect(t); err != nil {
				return
			}
			close(c.kick) // take over from an earlier Subscribe
			c.kick = make(chan struct{})
			c.owner, kick = id, c.kick
		case KindLog:
			g = s.groupOf(t)
		}
	})
	if derr == nil {
		derr = err
	}
	if derr != nil {
		s.wg.Done()
		return nil, derr
	}
	out := make(chan *message.Message)
	go func() {
		defer s.wg.Done()
		defer close(out)
		switch b.cfg.Kind {
		case KindQueue:
			s.runQueue(ctx, t, worker, out)
		case KindPubSub:
			s.runPubSub(ctx, c, id, kick, out)
		case KindLog:
			s.runLog(ctx, t, g, id, worker, out)
		}
	}()
	return out, nil
}

// Close stops every subscription of s, returns the messages they held to
// the broker, closes their channels and, for KindPubSub, closes the
// connections (copies still buffered are booked as missed). It waits for
// the goroutines to end and is idempotent.
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
		_ = s.b.Do(func(w *sim.World) {
			names := make([]string, 0, len(s.conns))
			for name := range s.conns {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				s.conns[name].close(w)
			}
		})
	}
	return nil
}

type outcome uint8

const (
	acked outcome = iota
	nacked
	stopped
)

// deliver hands wm to out and waits until it is acked or nacked, or the
// subscription has to stop.
func (s *Subscriber) deliver(ctx context.Context, abort <-chan struct{}, out chan<- *message.Message, wm *message.Message) outcome {
	select {
	case out <- wm:
	case <-ctx.Done():
		return stopped
	case <-s.closing:
		return stopped
	case <-abort:
		return stopped
	case <-s.b.d.Stopped():
		return stopped
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
	return stopped
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

// runQueue is one competing consumer of the queue behind t.
func (s *Subscriber) runQueue(ctx context.Context, t *topic, worker string, out chan<- *message.Message) {
	b := s.b
	var buf []queue.Delivery
	for {
		wake := t.wake.wait()
		var (
			wm     *message.Message
			cancel context.CancelFunc
			r      queue.Receipt
			rerr   error
		)
		if b.d.Do(func(*sim.World) {
			buf, rerr = t.q.AppendReceive(buf[:0], worker, 1)
			if rerr == nil && len(buf) > 0 {
				r = buf[0].Receipt
				wm, cancel = b.toWatermill(ctx, buf[0].Message, t.q.ConsumerRef())
			}
		}) != nil {
			return
		}
		if rerr != nil { // broker unavailable: try again next tick
			wake = b.tick.wait()
		}
		if wm == nil {
			if !s.idle(ctx, nil, wake) {
				return
			}
			continue
		}
		o := s.deliver(ctx, nil, out, wm)
		_ = b.d.Do(func(*sim.World) {
			switch o {
			case acked:
				_ = t.q.Ack(r) // a stale receipt (redelivered meanwhile) is traced as rejected
			case nacked:
				_ = t.q.Nack(r, b.cfg.NackDelay)
			default:
				_ = t.q.Nack(r, 0)
			}
			if o != acked {
				t.wake.fire()
			}
		})
		cancel()
		if o == stopped {
			return
		}
	}
}

// conn is a KindPubSub subscriber's connection to one topic: a pub/sub
// subscriber whose handler hands copies over to the Watermill side.
type conn struct {
	name    string
	ref     sim.ConsumerRef
	sub     *pubsub.Subscriber
	pending []sim.Message // handed over by the model, not yet delivered
	redo    []sim.Message // nacked or returned copies, delivered first (LIFO)
	owner   int64         // the Subscribe call draining the connection
	kick    chan struct{} // closed when a later Subscribe takes over
	closed  bool
	wake    wakeup
}

// connect returns s's open connection to t, opening it on first use.
// Owner goroutine only.
func (s *Subscriber) connect(t *topic) (*conn, error) {
	if c := s.conns[t.name]; c != nil {
		return c, nil
	}
	b := s.b
	c := &conn{name: s.name + "@" + t.name, kick: make(chan struct{})}
	c.ref = b.env.Ledger.Consumer(c.name)
	size := b.cfg.Buffer
	if size == 0 {
		size = DefaultBuffer
	}
	sub, err := b.ps.Subscribe(pubsub.SubscriberConfig{
		Name: c.name, Consumer: c.name + " (buffer)", Pattern: t.name, Buffer: size,
		Handler: func(_ *pubsub.Context, m sim.Message) error {
			c.pending = append(c.pending, m)
			b.env.Ledger.Expect(m.ID, c.ref)
			c.wake.fire()
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	c.sub = sub
	s.conns[t.name] = c
	return c, nil
}

// next takes the next copy to deliver. Owner goroutine only.
func (c *conn) next() (sim.Message, bool) {
	if n := len(c.redo); n > 0 {
		m := c.redo[n-1]
		c.redo = c.redo[:n-1]
		return m, true
	}
	if len(c.pending) == 0 {
		return sim.Message{}, false
	}
	m := c.pending[0]
	c.pending[0] = sim.Message{}
	c.pending = c.pending[1:]
	return m, true
}

// close disconnects the connection; undelivered copies are missed.
func (c *conn) close(w *sim.World) {
	if c.closed {
		return
	}
	c.closed = true
	c.sub.Close()
	l, now := w.Env().Ledger, w.Now()
	for {
		m, ok := c.next()
		if !ok {
			break
		}
		l.Missed(m.ID, c.ref, now)
	}
	c.wake.fire()
}

// runPubSub drains connection c for the Subscribe call id.
func (s *Subscriber) runPubSub(ctx context.Context, c *conn, id int64, kick <-chan struct{}, out chan<- *message.Message) {
	b := s.b
	for {
		wake := c.wake.wait()
		var (
			wm     *message.Message
			cancel context.CancelFunc
			m      sim.Message
			mine   = true
		)
		if b.d.Do(func(w *sim.World) {
			if c.owner != id || c.closed {
				mine = false
				return
			}
			var ok bool
			if m, ok = c.next(); ok {
				w.Env().Ledger.Delivered(m.ID, c.ref, w.Now())
				wm, cancel = b.toWatermill(ctx, m, c.ref)
			}
		}) != nil || !mine {
			return
		}
		if wm == nil {
			if !s.idle(ctx, kick, wake) {
				return
			}
			continue
		}
		o := s.deliver(ctx, kick, out, wm)
		if o != acked {
			_ = b.d.Do(func(w *sim.World) {
				if c.closed {
					w.Env().Ledger.Missed(m.ID, c.ref, w.Now())
					return
				}
				c.redo = append(c.redo, m)
				c.wake.fire()
			})
		}
		cancel()
		if o == stopped {
			return
		}
	}
}

// group is a KindLog consumer group on one topic: the next offset to
// deliver per partition (its committed offsets) and the subscription that
// leases each partition (0: free).
type group struct {
	name    string
	ref     sim.ConsumerRef
	next    []int64
	owner   []int64
	until   []sim.Tick // broker.delay: the partition delivers again from this tick
	delayed []int64    // broker.delay: 1 + the offset last consulted, so a record is delayed once
	rr      int
}

// groupOf returns s's group on t, creating it on first use; a new group
// reads from the start of the log. Owner goroutine only.
func (s *Subscriber) groupOf(t *topic) *group {
	if g := t.groups[s.group]; g != nil {
		return g
	}
	g := &group{name: s.group, ref: s.b.env.Ledger.Consumer(s.group)}
	t.groups[s.group] = g
	t.glist = append(t.glist, g)
	return g
}

// runLog reads t for group g as the subscription id.
func (s *Subscriber) runLog(ctx context.Context, t *topic, g *group, id int64, worker string, out chan<- *message.Message) {
	b := s.b
	defer func() {
		_ = b.d.Do(func(*sim.World) {
			for p, o := range g.owner {
				if o == id {
					g.owner[p] = 0
				}
			}
			t.wake.fire()
		})
	}()
	where := "log:" + t.name
	var buf []eventlog.Record
	for {
		wake := t.wake.wait()
		var (
			wm     *message.Message
			cancel context.CancelFunc
			p      = -1
			off    int64
			m      sim.Message
			down   bool // unavailable or delayed: try again on the next tick
		)
		if b.d.Do(func(w *sim.World) {
			lt := t.lt
			n := lt.Partitions()
			for len(g.next) < n {
				g.next = append(g.next, 0)
				g.owner = append(g.owner, 0)
				g.until = append(g.until, 0)
				g.delayed = append(g.delayed, 0)
			}
			for i := range n {
				if g.owner[i] == 0 {
					g.owner[i] = id
				}
			}
			if in := b.inj; in.Has(faults.BrokerUnavailable) {
				if _, ok := in.Check(faults.BrokerUnavailable, faults.Context{Where: where, Group: g.name, Consumer: worker}); ok {
					down = true
					return
				}
			}
			for k := range n {
				i := (g.rr + k) % n
				if g.owner[i] != id {
					continue
				}
				if start := lt.Start(i); g.next[i] < start {
					g.next[i] = start // retention deleted records the group had not read
				}
				if g.next[i] >= lt.End(i) {
					continue
				}
				if w.Now() < g.until[i] {
					down = true // wake up on the next tick
					continue
				}
				recs, err := lt.Fetch(i, g.next[i], 1, buf[:0])
				buf = recs
				if err != nil || len(recs) == 0 {
					continue
				}
				if in := b.inj; in.Has(faults.BrokerDelay) && g.delayed[i] != g.next[i]+1 {
					g.delayed[i] = g.next[i] + 1
					r := recs[0].Message
					if f, ok := in.Check(faults.BrokerDelay, faults.Context{Where: where, Group: g.name, Consumer: worker, Key: r.Key, Type: r.Headers.Type, Msg: r.ID}); ok {
						g.until[i] = w.Now() + sim.Tick(max(f.Param, 1))
						down = true
						continue
					}
				}
				p, off, m = i, g.next[i], recs[0].Message
				g.rr = i + 1
				w.Env().Ledger.Delivered(m.ID, g.ref, w.Now())
				wm, cancel = b.toWatermill(ctx, m, g.ref)
				return
			}
		}) != nil {
			return
		}
		if down {
			wake = b.tick.wait()
		}
		if wm == nil {
			if !s.idle(ctx, nil, wake) {
				return
			}
			continue
		}
		o := s.deliver(ctx, nil, out, wm)
		if o == acked {
			_ = b.d.Do(func(*sim.World) {
				if g.owner[p] != id || g.next[p] != off {
					return
				}
				if in := b.inj; in.Has(faults.BrokerDuplicate) {
					if _, ok := in.Check(faults.BrokerDuplicate, faults.Context{Where: where, Group: g.name, Consumer: worker, Key: m.Key, Type: m.Headers.Type, Msg: m.ID}); ok {
						return // the commit is lost: the record comes again
					}
				}
				g.next[p] = off + 1
			})
		}
		cancel()
		if o == stopped {
			return
		}
	}
}
