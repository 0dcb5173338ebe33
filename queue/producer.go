package queue

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/sim"
)

// ProducerConfig configures a Producer.
type ProducerConfig struct {
	// Name is the producer's name; it becomes the messages' Source header.
	Name string
	// Env creates the messages; nil means the target queue's Env when
	// Target is a *Queue.
	Env *sim.Env
	// Target receives the messages: a queue, a topic, a log, any publisher.
	Target sim.Publisher
	// Count is how many messages to produce; > 0.
	Count int
	// Rate is how many messages to produce per tick; 0 means 1.
	Rate int
	// Start is the first tick to produce at.
	Start sim.Tick
	// KeyPattern makes message keys: each "%d" is replaced by i mod Keys,
	// e.g. "kunde-%d". "" produces messages without keys.
	KeyPattern string
	// Keys is the number of distinct keys; 0 means every message its own
	// (i is used as is).
	Keys int
	// Type is the messages' type header.
	Type string
	// Body makes the body of message i (from 0); nil means "msg-<i>".
	Body func(i int) []byte
}

// Validate reports a configuration error, wrapping ErrInvalidConfig.
func (c ProducerConfig) Validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: a producer needs a name", ErrInvalidConfig)
	case c.Target == nil:
		return fmt.Errorf("%w: producer %q needs a target", ErrInvalidConfig, c.Name)
	case c.Count <= 0:
		return fmt.Errorf("%w: producer %q: count %d must be positive", ErrInvalidConfig, c.Name, c.Count)
	case c.Rate < 0:
		return fmt.Errorf("%w: producer %q: rate %d is negative", ErrInvalidConfig, c.Name, c.Rate)
	case c.Keys < 0:
		return fmt.Errorf("%w: producer %q: keys %d is negative", ErrInvalidConfig, c.Name, c.Keys)
	case c.Start < 0:
		return fmt.Errorf("%w: producer %q: start %d is negative", ErrInvalidConfig, c.Name, c.Start)
	}
	if c.Env == nil {
		if q, ok := c.Target.(*Queue); !ok || q.env == nil {
			return fmt.Errorf("%w: producer %q needs an Env (its target is not a *Queue)", ErrInvalidConfig, c.Name)
		}
	}
	return nil
}

// Producer is a sim.Actor for the producer phase that creates Count
// messages, Rate per tick from tick Start, with keys from KeyPattern, and
// publishes them to Target. A publish the target refuses (broker
// unavailable) is kept and retried first on the next tick, in order, so the
// producer never loses a message; its ledger record stays "created" until a
// publish succeeds. Memory is O(messages refused and not yet retried), plus
// the distinct keys it made when Keys is at most 65536 (they are reused).
type Producer struct {
	cfg      ProducerConfig
	env      *sim.Env
	made     int
	pending  []sim.Message
	failed   int
	keys     []string // keys made so far, by i mod Keys, when Keys is small
	bodies   []byte   // the block default bodies are cut from
	digits   []byte   // the decimal form of digitsOf
	digitsOf int
}

// maxKeyMemo is the largest Keys for which a producer remembers the keys it
// made, so producing a message does not build its key string again.
const maxKeyMemo = 1 << 16

// NewProducer returns a producer.
func NewProducer(cfg ProducerConfig) (*Producer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Rate == 0 {
		cfg.Rate = 1
	}
	env := cfg.Env
	if env == nil {
		env = cfg.Target.(*Queue).env
	}
	return &Producer{cfg: cfg, env: env}, nil
}

// Key returns the key of message i.
func (p *Producer) Key(i int) string {
	if p.cfg.KeyPattern == "" {
		return ""
	}
	n := i
	if p.cfg.Keys > 0 {
		n = i % p.cfg.Keys
	}
	if p.cfg.Keys > 0 && p.cfg.Keys <= maxKeyMemo && i >= 0 {
		if p.keys == nil {
			p.keys = make([]string, p.cfg.Keys)
		}
		if k := p.keys[n]; k != "" {
			return k
		}
		p.keys[n] = strings.ReplaceAll(p.cfg.KeyPattern, "%d", strconv.Itoa(n))
		return p.keys[n]
	}
	return strings.ReplaceAll(p.cfg.KeyPattern, "%d", strconv.Itoa(n))
}

// Step publishes the refused messages again, then up to Rate new ones; it
// stops for this tick at the first refusal.
func (p *Producer) Step(now sim.Tick) {
	if p == nil || p.env == nil || now < p.cfg.Start {
		return
	}
	for len(p.pending) > 0 {
		if p.cfg.Target.Publish(p.pending[0]) != nil {
			p.failed++
			return
		}
		p.pending[0] = sim.Message{}
		p.pending = p.pending[1:]
	}
	for i := 0; i < p.cfg.Rate && p.made < p.cfg.Count; i++ {
		var body []byte
		if p.cfg.Body != nil {
			body = p.cfg.Body(p.made)
		} else {
			body = p.defaultBody(p.made)
		}
		m := p.env.NewMessage(p.Key(p.made), body, sim.Headers{Type: p.cfg.Type, Source: p.cfg.Name})
		p.made++
		if p.cfg.Target.Publish(m) != nil {
			p.failed++
			p.pending = append(p.pending, m)
			return
		}
	}
}

// Done reports whether every message was produced and accepted.
func (p *Producer) Done() bool { return p.made == p.cfg.Count && len(p.pending) == 0 }

// Produced returns how many messages were created so far.
func (p *Producer) Produced() int { return p.made }

// Refused returns how many publishes the target refused.
func (p *Producer) Refused() int { return p.failed }

// bodyArena is the size of the blocks the default bodies are cut from.
const bodyArena = 16 << 10

// defaultBody returns "msg-<i>", cut from a block shared with the bodies
// of the messages made before and after it (capacity-limited, so
// appending to one body never writes into another): one allocation per
// block of about a thousand bodies instead of one per body.
func (p *Producer) defaultBody(i int) []byte {
	const maxLen = len("msg-") + 20 // the longest int64
	if cap(p.bodies)-len(p.bodies) < maxLen {
		p.bodies = make([]byte, 0, bodyArena)
	}
	p.count(i)
	start := len(p.bodies)
	p.bodies = append(append(p.bodies, "msg-"...), p.digits...)
	return p.bodies[start:len(p.bodies):len(p.bodies)]
}

// count sets p.digits to the decimal form of i. Bodies are made for
// i = 0, 1, 2, ..., so it usually adds one to the previous number in
// place, like an odometer, instead of formatting i again.
func (p *Producer) count(i int) {
	if len(p.digits) > 0 && i == p.digitsOf+1 && i > 0 {
		p.digitsOf = i
		for k := len(p.digits) - 1; k >= 0; k-- {
			if p.digits[k] != '9' {
				p.digits[k]++
				return
			}
			p.digits[k] = '0'
		}
		p.digits = append(p.digits, 0)
		copy(p.digits[1:], p.digits)
		p.digits[0] = '1'
		return
	}
	p.digitsOf = i
	p.digits = strconv.AppendInt(p.digits[:0], int64(i), 10)
}
