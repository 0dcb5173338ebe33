package pubsub

import (
	"container/heap"
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// MaxForwardRetries bounds ForwardRetry.Immediate and ForwardRetry.Backoff
// each, so that a misconfigured policy cannot keep a copy in the broker
// for ever.
const MaxForwardRetries = 1 << 20

// maxForwardDelay bounds the doubled wait of a policy without MaxDelay.
const maxForwardDelay sim.Tick = 1 << 40

// ForwardRetry is how a durable fan-out retries a forward its target
// refused (for a queue target: an error from queue.Queue.Publish, such as
// broker.unavailable at "queue:"+name). It has the shape of the delivery
// policy SNS applies to SQS endpoints: first Immediate retries without
// delay, in the same tick as the refusal; then Backoff retries, the first
// Delay ticks after the last refusal and each later one twice as long
// after the one before, at most MaxDelay. The copy keeps its ID on every
// attempt and is lost (sim.CauseForwardFailed) only when the last retry is
// refused too. There is no jitter: the same seed makes the same attempts.
// The zero value (NoForwardRetry) gives a refused forward up at once.
type ForwardRetry struct {
	// Immediate is how many retries follow a refusal at once, in the same
	// tick; in [0, MaxForwardRetries].
	Immediate int
	// Backoff is how many retries follow the immediate ones, each after a
	// wait; in [0, MaxForwardRetries]. A copy waiting for one is counted
	// in Metrics.Retrying and keeps the broker from being Idle.
	Backoff int
	// Delay is the wait before the first backoff retry, in ticks; at least
	// 1 when Backoff is positive.
	Delay sim.Tick
	// MaxDelay caps the doubling wait; 0 means no cap. When positive it
	// must not be below Delay.
	MaxDelay sim.Tick
}

// DefaultForwardRetry is the policy of a fan-out that states none: three
// immediate retries, as SNS makes for an SQS endpoint, then five with
// backoff after 1, 2, 4, 8 and 8 ticks, so a copy is given up 23 ticks
// after its first refusal at the latest, after nine attempts. (SNS goes on
// for 100,015 attempts over 23 days; a simulated run is short, so the
// default stays small enough to drain.)
var DefaultForwardRetry = ForwardRetry{Immediate: 3, Backoff: 5, Delay: 1, MaxDelay: 8}

// NoForwardRetry gives a refused forward up at once: one attempt.
var NoForwardRetry = ForwardRetry{}

// Validate reports a policy that cannot work, wrapping ErrInvalidConfig.
func (p ForwardRetry) Validate() error {
	switch {
	case p.Immediate < 0 || p.Immediate > MaxForwardRetries:
		return fmt.Errorf("%w: Immediate %d is outside [0, %d]", ErrInvalidConfig, p.Immediate, MaxForwardRetries)
	case p.Backoff < 0 || p.Backoff > MaxForwardRetries:
		return fmt.Errorf("%w: Backoff %d is outside [0, %d]", ErrInvalidConfig, p.Backoff, MaxForwardRetries)
	case p.Delay < 0 || p.MaxDelay < 0:
		return fmt.Errorf("%w: Delay %d and MaxDelay %d must not be negative", ErrInvalidConfig, p.Delay, p.MaxDelay)
	case p.Backoff > 0 && p.Delay < 1:
		return fmt.Errorf("%w: Delay must be at least 1 tick when Backoff is %d", ErrInvalidConfig, p.Backoff)
	case p.MaxDelay > 0 && p.MaxDelay < p.Delay:
		return fmt.Errorf("%w: MaxDelay %d is below Delay %d", ErrInvalidConfig, p.MaxDelay, p.Delay)
	}
	return nil
}

// Attempts returns how many times a forward is tried at most:
// 1 + Immediate + Backoff.
func (p ForwardRetry) Attempts() int { return 1 + p.Immediate + p.Backoff }

// next returns the wait after wait: twice as long, at most MaxDelay.
func (p ForwardRetry) next(wait sim.Tick) sim.Tick {
	if wait < maxForwardDelay {
		wait *= 2
	}
	if p.MaxDelay > 0 && wait > p.MaxDelay {
		wait = p.MaxDelay
	}
	return wait
}

// FanOutConfig configures a durable fan-out (Broker.FanOutWith).
type FanOutConfig struct {
	// Name identifies the fan-out in the trace (Actor); unique among the
	// broker's subscribers and fan-outs. Required.
	Name string
	// Pattern selects the subjects, as a subscription's does.
	Pattern string
	// Target receives the copies, typically a queue.Queue. Required.
	Target sim.Publisher
	// Retry is how a refused forward is retried; nil means
	// DefaultForwardRetry, &NoForwardRetry gives it up at once.
	Retry *ForwardRetry
}

// Validate reports a configuration error.
func (c FanOutConfig) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("%w: a fan-out needs a name", ErrInvalidConfig)
	}
	if c.Target == nil {
		return fmt.Errorf("%w: fan-out %q has no target", ErrInvalidConfig, c.Name)
	}
	if _, err := ParsePattern(c.Pattern); err != nil {
		return sim.Also(fmt.Errorf("fan-out %q: %w", c.Name, err), ErrInvalidConfig)
	}
	if c.Retry != nil {
		if err := c.Retry.Validate(); err != nil {
			return fmt.Errorf("fan-out %q: %w", c.Name, err)
		}
	}
	return nil
}

type fanout struct {
	name    string
	pattern Pattern
	target  sim.Publisher
	retry   ForwardRetry
}

// retrying is a fan-out copy waiting for its next backoff retry.
type retrying struct {
	at       sim.Tick
	seq      uint64
	f        *fanout
	env      *envelope
	copy     sim.Message
	tries    int32    // attempts made so far
	backoffs int32    // backoff retries made so far
	wait     sim.Tick // the wait before this retry
}

type retryHeap []retrying

func (h retryHeap) Len() int { return len(h) }
func (h retryHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h retryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *retryHeap) Push(x any)   { *h = append(*h, x.(retrying)) }
func (h *retryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = retrying{}
	*h = old[:len(old)-1]
	return x
}

// FanOut subscribes a durable target (a queue, in SNS-to-SQS style) to
// every subject matching pattern, retrying refused forwards by
// DefaultForwardRetry. It is FanOutWith(FanOutConfig{Name: name,
// Pattern: pattern, Target: target}).
func (b *Broker) FanOut(name, pattern string, target sim.Publisher) error {
	return b.FanOutWith(FanOutConfig{Name: name, Pattern: pattern, Target: target})
}

// FanOutWith subscribes cfg.Target to every subject matching cfg.Pattern.
// Each matching publish makes a new copy for the target: a new ID from the
// world's IDs, the same key, body and headers, and Origin set to the
// published message's ID, so the ledger judges the target's copy as part
// of the publish's lineage while every target holds a state of its own.
// The copy is handed to Target.Publish whether or not any ephemeral
// subscriber is online, and the supervisor switch does not mute it.
//
// A forward the target accepts is traced as "forwarded". Each refusal is
// traced as "rejected" (Attempt: the attempt's number) and retried by
// cfg.Retry; when the last attempt is refused too, the copy is traced as
// "lost" with cause sim.CauseForwardFailed, for the target's logical
// consumer when the target names one (a queue does: Consumer() string),
// so a check on that consumer counts the copy it never got. A copy waiting for a backoff retry is the same copy (same
// ID) on every attempt, and may reach the target after copies of later
// publishes, as SNS standard topics keep no order.
func (b *Broker) FanOutWith(cfg FanOutConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if b.names[cfg.Name] {
		return fmt.Errorf("%w: %q", ErrDuplicateName, cfg.Name)
	}
	p, _ := ParsePattern(cfg.Pattern)
	retry := DefaultForwardRetry
	if cfg.Retry != nil {
		retry = *cfg.Retry
	}
	b.names[cfg.Name] = true
	b.fanouts = append(b.fanouts, &fanout{name: cfg.Name, pattern: p, target: cfg.Target, retry: retry})
	b.invalidate()
	return nil
}

// forward hands a new copy of e's message to a durable fan-out target,
// retrying at once as the fan-out's policy says, and schedules the first
// backoff retry when those are refused too.
func (b *Broker) forward(f *fanout, e *envelope) {
	c := e.msg
	c.ID = b.env.IDs.Next()
	c.Origin = e.msg.ID
	c.Created = b.env.Now()
	if _, ok := c.Headers.Get(sim.HeaderEventID); !ok {
		c.Headers = c.Headers.With(sim.HeaderEventID, e.msg.ID.String())
	}
	tries := int32(0)
	for {
		tries++
		err := f.target.Publish(c)
		if err == nil {
			b.forwarded(f, e, &c)
			return
		}
		switch {
		case int(tries) <= f.retry.Immediate:
			b.m.ForwardRetries++
			b.refused(f, e, &c, tries, err, "retrying at once")
			continue
		case f.retry.Backoff == 0:
			b.forwardLost(f, e, &c, tries, err)
			return
		}
		wait := f.retry.Delay
		b.refused(f, e, &c, tries, err, "retrying in "+strconv.FormatInt(int64(wait), 10)+" tick(s)")
		b.delaySeq++
		heap.Push(&b.retries, retrying{at: b.env.Now() + wait, seq: b.delaySeq, f: f, env: e, copy: c, tries: tries, wait: wait})
		e.refs++
		b.m.Retrying++
		return
	}
}

// stepRetries makes the backoff retries that are due, in due-tick order.
func (b *Broker) stepRetries(now sim.Tick) {
	for len(b.retries) > 0 && b.retries[0].at <= now {
		r := heap.Pop(&b.retries).(retrying)
		b.m.Retrying--
		b.m.ForwardRetries++
		r.tries++
		r.backoffs++
		err := r.f.target.Publish(r.copy)
		switch {
		case err == nil:
			b.forwarded(r.f, r.env, &r.copy)
		case int(r.backoffs) >= r.f.retry.Backoff:
			b.forwardLost(r.f, r.env, &r.copy, r.tries, err)
		default:
			r.wait = r.f.retry.next(r.wait)
			r.at = now + r.wait
			b.refused(r.f, r.env, &r.copy, r.tries, err, "retrying in "+strconv.FormatInt(int64(r.wait), 10)+" tick(s)")
			b.delaySeq++
			r.seq = b.delaySeq
			heap.Push(&b.retries, r)
			b.m.Retrying++
			continue
		}
		b.unref(r.env)
	}
}

// forwarded traces that f's target accepted the copy c of e.
func (b *Broker) forwarded(f *fanout, e *envelope, c *sim.Message) {
	b.m.Forwarded++
	e.addCopy()
	ev := sim.Event{Kind: KindForwarded, Where: e.where, Actor: f.name, Msg: c.ID, Origin: c.Origin, Key: c.Key, Corr: e.corr}
	if b.detailed() {
		ev.Detail = "copy for fan-out " + f.name
	}
	b.env.Emit(ev)
}

// refused traces one refused attempt (try) to forward c, which will be
// retried as next says.
func (b *Broker) refused(f *fanout, e *envelope, c *sim.Message, try int32, err error, next string) {
	ev := sim.Event{Kind: sim.KindRejected, Where: e.where, Actor: f.name, Msg: c.ID, Origin: c.Origin, Key: c.Key, Corr: e.corr, Attempt: int(try)}
	if b.detailed() {
		ev.Detail = "fan-out " + f.name + " refused the copy: " + err.Error()
		if next != "" {
			ev.Detail += "; " + next
		}
	}
	b.env.Emit(ev)
}

// forwardLost traces the last refused attempt to forward c and the loss of
// the copy, with cause sim.CauseForwardFailed.
func (b *Broker) forwardLost(f *fanout, e *envelope, c *sim.Message, tries int32, err error) {
	b.m.ForwardFailed++
	next := ""
	if tries > 1 {
		next = "given up after " + strconv.Itoa(int(tries)) + " attempts"
	}
	b.refused(f, e, c, tries, err, next)
	ev := sim.Lost(e.where, f.name, "", c, sim.CauseForwardFailed)
	ev.Origin, ev.Type, ev.Corr = c.Origin, c.Headers.Type, e.corr
	if t, ok := f.target.(interface{ Consumer() string }); ok {
		ev.Consumer = t.Consumer() // the copy was routed to it and never arrived
	}
	b.env.Emit(ev)
}
