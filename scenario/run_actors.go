package scenario

import (
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// runProducer sends Count messages, Rate per tick from tick Start, to a
// queue, topic or log, or places them as commands with a service's writer.
// A refused publish is kept and retried first on the next tick, in order,
// so a producer never loses a message. Memory is O(refused messages).
type runProducer struct {
	r      *Run
	cfg    *Producer
	stream *sim.Stream
	target sim.Publisher
	svc    *runService
	next   int           // messages (or commands) created so far
	retry  []sim.Message // refused publishes, in order
	again  []int         // refused commands (message numbers), in order
}

// Done reports whether every message was produced and accepted.
func (p *runProducer) Done() bool {
	return p.next >= p.cfg.Count && len(p.retry) == 0 && len(p.again) == 0
}

// key returns the key of message i.
func (p *runProducer) key(i int) string {
	n := p.cfg.NumKeys()
	if n == 0 {
		return ""
	}
	k := i % n
	if p.cfg.KeyOrder == "random" {
		k = p.stream.IntN(n)
	}
	return p.cfg.Key(k)
}

// Step publishes the refused messages again, then up to Rate new ones; it
// stops for this tick at the first refusal.
func (p *runProducer) Step(now sim.Tick) {
	if now < p.cfg.Start {
		return
	}
	if p.svc != nil {
		p.stepService()
		return
	}
	for len(p.retry) > 0 {
		if p.target.Publish(p.retry[0]) != nil {
			return
		}
		p.retry = p.retry[1:]
	}
	env := p.r.env
	for n := 0; n < p.cfg.Rate && p.next < p.cfg.Count; n++ {
		i := p.next
		p.next++
		src := p.cfg.Source
		if src == "" {
			src = p.cfg.Name
		}
		m := env.NewMessage(p.key(i), []byte(p.cfg.Name+"#"+strconv.Itoa(i+1)), sim.Headers{Type: p.cfg.Type, Source: src})
		if err := p.target.Publish(m); err != nil {
			if p.cfg.OnRefused == OnRefusedDrop {
				env.Ledger.Lost(m.ID, sim.NoConsumer, sim.CauseBrokerUnavailable, now)
				env.Emit(sim.Event{Kind: sim.KindLost, Where: "producer:" + p.cfg.Name, Actor: p.cfg.Name, Msg: m.ID, Key: m.Key,
					Detail: string(sim.CauseBrokerUnavailable) + ": " + err.Error()})
				continue
			}
			p.retry = append(p.retry, m)
			return
		}
	}
}

// stepService places commands with the service's writer: each becomes an
// order (customer = the message key, or the producer's name without keys).
// A command the broker refused without a crash is placed again later; one
// that crashed the writer is gone, as the writer's mode dictates.
func (p *runProducer) stepService() {
	for len(p.again) > 0 {
		if !p.place(p.again[0]) {
			return
		}
		p.again = p.again[1:]
	}
	for n := 0; n < p.cfg.Rate && p.next < p.cfg.Count; n++ {
		i := p.next
		p.next++
		if !p.place(i) {
			if p.cfg.OnRefused == OnRefusedDrop {
				continue // the command is given up; nothing was stored or sent
			}
			p.again = append(p.again, i)
			return
		}
	}
}

// place places command i and reports whether it is settled (placed, or
// lost to a writer crash as the writer's mode dictates).
func (p *runProducer) place(i int) bool {
	cust := p.key(i)
	if cust == "" {
		cust = p.cfg.Name
	}
	_, err := p.svc.writer.PlaceOrder(cust, int64(i%100+1))
	return err == nil || errors.Is(err, outbox.ErrCrashed)
}

// handler is the behaviour of a consumer's or member's handler, shared by
// its instances; fix_handler turns it into succeed.
type handler struct {
	r        *Run
	cfg      *Handler
	fixed    bool
	attempts map[sim.ID]int // failed attempts per message (members)
}

func newHandler(r *Run, h *Handler) *handler {
	return &handler{r: r, cfg: h, attempts: map[sim.ID]int{}}
}

// applies reports whether the configured behaviour applies to key.
func (h *handler) applies(key string) bool {
	if h.fixed {
		return false
	}
	if h.cfg.Keys == "" {
		return true
	}
	ok, _ := path.Match(h.cfg.Keys, key)
	return ok
}

// text returns the error text of a failure.
func (h *handler) text(def string) string {
	if h.cfg.Error != "" {
		return h.cfg.Error
	}
	return def
}

// queueOutcome is the queue consumer handler.
func (h *handler) queueOutcome(d queue.Delivery) queue.Outcome {
	if !h.applies(d.Message.Key) {
		return queue.Outcome{}
	}
	out := queue.Outcome{Ticks: h.cfg.Ticks}
	switch h.cfg.Kind {
	case HandlerTransient:
		if d.ReceiveCount <= h.cfg.Failures {
			out.Err = fmt.Errorf("%w: %s", queue.ErrTransient, h.text("attempt "+strconv.Itoa(d.ReceiveCount)+" failed"))
		}
	case HandlerPermanent:
		out.Err = fmt.Errorf("%w: %s", queue.ErrPermanent, h.text("rejected"))
	case HandlerPoison:
		out.Err = fmt.Errorf("%w: %s", queue.ErrPoison, h.text("cannot process"))
	}
	return out
}

// errMemberFailure marks a member handler failure; the record is retried at
// the next poll.
var errMemberFailure = errors.New("handler failed")

// runConsumer is a queue consumer with its competing instances.
type runConsumer struct {
	cfg     *Consumer
	q       *runQueue
	h       *handler
	inst    []*queue.Consumer
	offline bool
	seen    map[string]bool // idempotency: processed keys
}

// dedup reports whether m's effect was applied before and records it.
func (c *runConsumer) dedup(m sim.Message, byKey bool) bool {
	k := dedupKey(m, byKey)
	if c.seen[k] {
		return true
	}
	c.seen[k] = true
	return false
}

// dedupKey is the key an idempotent consumer remembers: the message ID, or
// the business key (type, key and body, the same for a re-sent or
// redriven copy with a new ID).
func dedupKey(m sim.Message, byKey bool) string {
	if !byKey {
		return m.ID.String()
	}
	return m.Headers.Type + "\x00" + m.Key + "\x00" + string(m.Body)
}

// instance is one competing instance of a consumer, a sim.Actor.
type instance struct {
	rc *runConsumer
	c  *queue.Consumer
}

// Step runs the instance unless the consumer has not started yet or is
// disconnected.
func (in *instance) Step(now sim.Tick) {
	if now < in.rc.cfg.Start || in.rc.offline {
		return
	}
	in.c.Step(now)
}

// runMember is a consumer-group member; it joins its group at its start
// tick.
type runMember struct {
	r         *Run
	cfg       *Member
	group     *runGroup
	h         *handler
	mcfg      eventlog.MemberConfig
	m         *eventlog.Member
	offline   bool
	busyUntil sim.Tick
	seen      map[string]bool
}

// Step joins the group when the member's start tick has come, then polls
// unless it is offline or busy with a slow record.
func (m *runMember) Step(now sim.Tick) {
	if now < m.cfg.Start || m.offline || now < m.busyUntil {
		return
	}
	if m.m == nil {
		mm, err := m.group.g.Join(m.mcfg)
		if err != nil {
			m.r.fail(m.cfg.Pos, "member "+strconv.Quote(m.cfg.Name)+" cannot join group "+strconv.Quote(m.cfg.Group), err)
			m.offline = true
			return
		}
		m.m = mm
	}
	m.m.Step(now)
}

// connect brings the member online (rejoining its group) or takes it
// offline (leaving its group).
func (m *runMember) connect(on bool) error {
	m.offline = !on
	if m.m == nil {
		return nil
	}
	if on {
		if m.m.Active() {
			return nil
		}
		return m.m.Rejoin()
	}
	m.m.Leave()
	return nil
}

// fault consults a handler fault point for record rec.
func (m *runMember) fault(p faults.Point, rec *eventlog.Record) (faults.Firing, bool) {
	in := m.r.inj
	if !in.Has(p) {
		return faults.Firing{}, false
	}
	return in.Check(p, faults.Context{Where: "log:" + m.group.cfg.Log, Consumer: m.cfg.Name, Group: m.group.cfg.Name,
		Key: rec.Message.Key, Type: rec.Message.Headers.Type, Msg: rec.Message.ID})
}

// handle is the member's record handler: the handler fault points, the
// configured behaviour, then idempotency.
func (m *runMember) handle(rec eventlog.Record) error {
	h := m.h
	id := rec.Message.ID
	ticks := sim.Tick(0)
	if f, ok := m.fault(faults.HandlerSlow, &rec); ok {
		ticks = max(sim.Tick(f.Param), 1)
	}
	var err error
	if f, ok := m.fault(faults.HandlerPoison, &rec); ok {
		err = fmt.Errorf("%w: poison (rule %s)", errMemberFailure, f.Rule)
	} else if f, ok := m.fault(faults.HandlerPermanent, &rec); ok {
		err = fmt.Errorf("%w: permanent (rule %s)", errMemberFailure, f.Rule)
	} else if left := h.attempts[id]; left < 0 {
		h.attempts[id]++
		if h.attempts[id] == 0 {
			delete(h.attempts, id)
		}
		err = fmt.Errorf("%w: transient", errMemberFailure)
	} else if f, ok := m.fault(faults.HandlerTransient, &rec); ok {
		if n := min(max(f.Param, 1), 1<<20); n > 1 {
			h.attempts[id] = -int(n - 1)
		}
		err = fmt.Errorf("%w: transient (rule %s)", errMemberFailure, f.Rule)
	}
	if err == nil && h.applies(rec.Message.Key) {
		ticks += h.cfg.Ticks
		switch h.cfg.Kind {
		case HandlerTransient:
			n := h.attempts[id] + 1
			if n <= h.cfg.Failures {
				h.attempts[id] = n
				err = fmt.Errorf("%w: %s", errMemberFailure, h.text("attempt "+strconv.Itoa(n)+" failed"))
			}
		case HandlerPermanent:
			err = fmt.Errorf("%w: %s", errMemberFailure, h.text("rejected"))
		case HandlerPoison:
			err = fmt.Errorf("%w: %s", errMemberFailure, h.text("cannot process"))
		}
	}
	if ticks > 0 {
		m.busyUntil = m.r.env.Now() + ticks + 1
	}
	if err != nil {
		return err
	}
	if m.seen != nil {
		k := dedupKey(rec.Message, m.cfg.Idempotency == "business_key")
		if m.seen[k] {
			return eventlog.ErrAlreadyApplied
		}
		m.seen[k] = true
	}
	return nil
}

// runRelay is an outbox relay (polling or CDC) that timeline actions can
// kill and start.
type runRelay struct {
	cfg    *Relay
	svc    *runService
	poll   *outbox.Relay
	cdc    *outbox.CDCRelay
	killed bool
}

// Name returns the relay's name.
func (rr *runRelay) Name() string { return rr.cfg.Name }

// Killed reports whether a kill_relay stopped the relay.
func (rr *runRelay) Killed() bool { return rr.killed }

// Step runs the relay unless it has not started or was killed.
func (rr *runRelay) Step(now sim.Tick) {
	if now < rr.cfg.Start || rr.killed {
		return
	}
	if rr.poll != nil {
		rr.poll.Step(now)
		return
	}
	if iv := rr.cfg.Interval; iv > 1 && (now-rr.cfg.Start)%iv != 0 {
		return
	}
	rr.cdc.Step(now)
}
