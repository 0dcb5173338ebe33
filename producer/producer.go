// Package producer is brokerlab's generic producer actor: it creates
// messages at a fixed rate from a start tick and publishes them to any
// sim.Publisher (a queue, a pub/sub topic, a log topic, an outbox relay's
// target).
//
// A Producer makes Count messages, Rate per tick from tick Start. Message i
// (from 0) gets a key (see Config.KeyPattern, Config.Keys and
// Config.KeyOrder), the type header Type, the source header Source
// (default the producer's name) and the body "<name>#<i+1>" unless
// Config.Body says otherwise. A publish the target refuses is either kept
// and retried first on the next tick, in order (OnRefusedRetry, the
// default: the producer never loses a message), or given up
// (OnRefusedDrop): the producer then traces a lost event with no consumer
// and cause sim.CauseBrokerUnavailable, so the ledger books the loss where
// it happens.
//
// The producer reports nothing else itself: the target traces the
// messages it accepts (sent, produced, published), naming the producer as
// the actor through the source header. A refused message the producer
// keeps is unknown to the ledger until a publish succeeds.
//
// Keys drawn in random order come from the producer's own seeded stream
// ("producer/"+Name), so a run is reproducible and adding another
// component never changes them.
package producer

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/sim"
)

// ErrInvalidConfig reports a Config that cannot work, or a world that
// refused to register the producer. It wraps sim.ErrInvalidConfig.
var ErrInvalidConfig = sim.Sentinel("producer: invalid config", sim.ErrInvalidConfig)

// KeyOrder says in which order a producer uses its keys.
type KeyOrder string

// The key orders.
const (
	// RoundRobin gives message i key number i mod the number of keys. It
	// is the default ("" means it too).
	RoundRobin KeyOrder = "round_robin"
	// Random draws each message's key number from the producer's seeded
	// stream.
	Random KeyOrder = "random"
)

// OnRefused says what a producer does with a message its target refuses.
type OnRefused string

// The refusal policies.
const (
	// OnRefusedRetry keeps a refused message and publishes it again, before
	// any new one, on the next tick; the producer stops for the tick at the
	// first refusal. It is the default.
	OnRefusedRetry OnRefused = "retry"
	// OnRefusedDrop gives a refused message up: it is traced as lost with
	// no consumer and cause sim.CauseBrokerUnavailable, and the producer
	// goes on with the next message in the same tick.
	OnRefusedDrop OnRefused = "drop"
)

// MarshalText returns the order as scenario files write it: "round_robin"
// (also for "") or "random"; any other order is an error wrapping
// ErrInvalidConfig.
func (o KeyOrder) MarshalText() ([]byte, error) {
	switch o {
	case "", RoundRobin:
		return []byte(RoundRobin), nil
	case Random:
		return []byte(o), nil
	}
	return nil, fmt.Errorf("%w: unknown key order %q", ErrInvalidConfig, string(o))
}

// UnmarshalText sets o from "round_robin" or "random"; any other text is
// an error wrapping ErrInvalidConfig.
func (o *KeyOrder) UnmarshalText(text []byte) error {
	switch k := KeyOrder(text); k {
	case RoundRobin, Random:
		*o = k
		return nil
	}
	return fmt.Errorf("%w: unknown key order %q", ErrInvalidConfig, text)
}

// MarshalText returns the policy as scenario files write it: "retry"
// (also for "") or "drop"; any other policy is an error wrapping
// ErrInvalidConfig.
func (p OnRefused) MarshalText() ([]byte, error) {
	switch p {
	case "", OnRefusedRetry:
		return []byte(OnRefusedRetry), nil
	case OnRefusedDrop:
		return []byte(p), nil
	}
	return nil, fmt.Errorf("%w: unknown on-refused policy %q", ErrInvalidConfig, string(p))
}

// UnmarshalText sets p from "retry" or "drop"; any other text is an error
// wrapping ErrInvalidConfig.
func (p *OnRefused) UnmarshalText(text []byte) error {
	switch r := OnRefused(text); r {
	case OnRefusedRetry, OnRefusedDrop:
		*p = r
		return nil
	}
	return fmt.Errorf("%w: unknown on-refused policy %q", ErrInvalidConfig, text)
}

// Config configures a Producer.
type Config struct {
	// Name names the producer; required. The World knows it as
	// "producer:"+Name, and it is the default Source header.
	Name string
	// Target receives the messages; required.
	Target sim.Publisher
	// Count is how many messages to produce; at least 1.
	Count int
	// Rate is how many messages to produce per tick; 0 means 1.
	Rate int
	// Start is the first tick to produce at.
	Start sim.Tick
	// Keys, when set, are the keys, used in KeyOrder; KeyPattern and
	// KeyCount must then be unset.
	Keys []string
	// KeyPattern makes the keys when Keys is unset: key number k (from 0)
	// is the pattern with its first "%d" replaced by k+1, e.g. "kunde-%d"
	// makes kunde-1, kunde-2, ... "" makes messages without keys.
	KeyPattern string
	// KeyCount is the number of distinct keys of KeyPattern; 0 gives every
	// message its own key (key number i for message i).
	KeyCount int
	// KeyOrder is RoundRobin ("" too) or Random.
	KeyOrder KeyOrder
	// Type is the messages' type header.
	Type string
	// Source is the messages' source header; "" means Name.
	Source string
	// SchemaVersion is the messages' schema version header; 0 is
	// unversioned.
	SchemaVersion int
	// ClockSkew is how far the producer's clock is off the simulation's,
	// in ticks (negative: it runs behind). When it is not 0 every message
	// carries its clock reading in the HeaderClock header.
	ClockSkew sim.Tick
	// Body makes the body of message i (from 0); nil means "<Name>#<i+1>".
	Body func(i int) []byte
	// OnRefused is OnRefusedRetry ("" too) or OnRefusedDrop.
	OnRefused OnRefused
}

// HeaderClock is the extra header in which a producer with a ClockSkew
// writes its clock reading (a tick, in decimal) when it made the message.
const HeaderClock = "clock"

// Validate reports a configuration error, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: producer %q: %s", ErrInvalidConfig, c.Name, fmt.Sprintf(format, a...))
	}
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: a producer needs a name", ErrInvalidConfig)
	case c.Target == nil:
		return bad("needs a target")
	case c.Count <= 0:
		return bad("count %d must be positive", c.Count)
	case c.Rate < 0:
		return bad("rate %d is negative", c.Rate)
	case c.Start < 0:
		return bad("start %d is negative", c.Start)
	case c.KeyCount < 0:
		return bad("key count %d is negative", c.KeyCount)
	case c.Keys != nil && (c.KeyPattern != "" || c.KeyCount != 0):
		return bad("keys and a key pattern exclude each other")
	case c.Keys != nil && len(c.Keys) == 0:
		return bad("an empty key list")
	case c.KeyOrder != "" && c.KeyOrder != RoundRobin && c.KeyOrder != Random:
		return bad("unknown key order %q (want %q or %q)", c.KeyOrder, RoundRobin, Random)
	case c.KeyOrder == Random && c.Keys == nil && (c.KeyPattern == "" || c.KeyCount == 0):
		return bad("random key order needs keys or a key pattern with a key count")
	case c.OnRefused != "" && c.OnRefused != OnRefusedRetry && c.OnRefused != OnRefusedDrop:
		return bad("unknown on-refused policy %q (want %q or %q)", c.OnRefused, OnRefusedRetry, OnRefusedDrop)
	}
	return nil
}

// Producer is a sim.Component of the producer phase that publishes
// Config.Count messages to Config.Target, Config.Rate per tick from
// Config.Start (see the package documentation). Memory is O(messages
// refused and not yet retried), plus the distinct keys it made when there
// are at most 65536 of them (they are reused), plus one shared block for
// the default bodies.
type Producer struct {
	cfg     Config
	env     *sim.Env
	where   string
	stream  *sim.Stream
	nkeys   int // distinct keys; 0 for one key per message, -1 for no keys
	made    int
	pending []sim.Message
	refused int
	dropped int
	keys    []string // keys made so far, by key number, when nkeys is small
	prefix  string   // "<name>#", the default body's prefix
	bodies  []byte   // the block default bodies are cut from
	num     counter  // the number of the last default body
}

// counter holds the decimal digits of a number that counts up by one, as
// the default bodies' numbers do: the digits of the next number are the
// last one's plus one, carried from the right, not formatted anew.
type counter struct {
	n     int      // the number the digits spell
	start int      // where its digits begin in buf; 0 before the first number
	buf   [20]byte // the digits, right-aligned: an int64 has at most 19
}

// digits returns the decimal digits of v, with a minus sign when v is
// negative, valid until the next call. When v is one more than the last
// number asked for and that one was positive, it costs the carry (one
// byte, and one more per trailing nine); otherwise it formats v.
func (c *counter) digits(v int) []byte {
	if c.start == 0 || c.n < 1 || v != c.n+1 {
		var tmp [20]byte
		d := strconv.AppendInt(tmp[:0], int64(v), 10)
		c.start = len(c.buf) - copy(c.buf[len(c.buf)-len(d):], d)
		c.n = v
		return c.buf[c.start:]
	}
	i := len(c.buf) - 1
	for ; i >= c.start && c.buf[i] == '9'; i-- {
		c.buf[i] = '0'
	}
	if i < c.start { // all nines: one digit more
		i = c.start - 1
		c.start = i
		c.buf[i] = '0'
	}
	c.buf[i]++
	c.n = v
	return c.buf[c.start:]
}

// maxKeyMemo is the largest number of keys a producer remembers, so
// producing a message does not build its key string again.
const maxKeyMemo = 1 << 16

// New returns a producer bound to the world w and registers it with w
// under "producer:"+Name, in the producer phase (Phase).
func New(w *sim.World, cfg Config) (*Producer, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: producer %q needs a world", ErrInvalidConfig, cfg.Name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Rate == 0 {
		cfg.Rate = 1
	}
	if cfg.Source == "" {
		cfg.Source = cfg.Name
	}
	// The name and the default body's prefix are cut from one string:
	// "producer:<name>#" holds both.
	both := "producer:" + cfg.Name + "#"
	p := &Producer{cfg: cfg, env: w.Env(), where: both[:len(both)-1], prefix: both[len("producer:"):]}
	switch {
	case cfg.Keys != nil:
		p.nkeys = len(cfg.Keys)
	case cfg.KeyPattern == "":
		p.nkeys = -1
	default:
		p.nkeys = cfg.KeyCount
	}
	if cfg.KeyOrder == Random {
		p.stream = p.env.Stream("producer/" + cfg.Name)
	}
	if err := w.Add(p.where, p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return p, nil
}

// Phase returns sim.PhaseProducer.
func (p *Producer) Phase() sim.Phase { return sim.PhaseProducer }

// Name returns the producer's name.
func (p *Producer) Name() string { return p.cfg.Name }

// Step publishes the refused messages kept for retry, in order, then up to
// Rate new ones; with OnRefusedRetry it stops for this tick at the first
// refusal.
func (p *Producer) Step(now sim.Tick) {
	if p == nil || p.env == nil || now < p.cfg.Start {
		return
	}
	for len(p.pending) > 0 {
		if p.cfg.Target.Publish(p.pending[0]) != nil {
			p.refused++
			return
		}
		p.pending[0] = sim.Message{}
		p.pending = p.pending[1:]
	}
	for n := 0; n < p.cfg.Rate && p.made < p.cfg.Count; n++ {
		i := p.made
		p.made++
		var body []byte
		if p.cfg.Body != nil {
			body = p.cfg.Body(i)
		} else {
			body = p.defaultBody(i)
		}
		// Filled in place, as sim.Env.NewMessage would make it: literals
		// of the headers and the message would each be built in a
		// temporary and copied.
		var m sim.Message
		m.Key, m.Body = p.key(i), body
		m.Headers.Type, m.Headers.Source, m.Headers.SchemaVersion = p.cfg.Type, p.cfg.Source, p.cfg.SchemaVersion
		if p.cfg.ClockSkew != 0 {
			m.Headers = m.Headers.With(HeaderClock, strconv.FormatInt(int64(p.env.Now()+p.cfg.ClockSkew), 10))
		}
		m.ID, m.Created = p.env.IDs.Next(), p.env.Clock.Now()
		err := p.cfg.Target.Publish(m)
		if err == nil {
			continue
		}
		p.refused++
		if p.cfg.OnRefused == OnRefusedDrop {
			p.drop(&m, err)
			continue
		}
		p.pending = append(p.pending, m)
		return
	}
}

// drop gives m up: a loss before any consumer, with its cause.
func (p *Producer) drop(m *sim.Message, err error) {
	p.dropped++
	ev := sim.Lost(p.where, p.cfg.Name, "", m, sim.CauseBrokerUnavailable)
	ev.Tick, ev.Type = p.env.Now(), m.Headers.Type
	if p.env.Trace.Detailed() {
		ev.Detail = "given up: " + err.Error()
	}
	p.env.Trace.EmitRef(&ev)
}

// Done reports whether every message was produced and either accepted or
// given up.
func (p *Producer) Done() bool { return p.made == p.cfg.Count && len(p.pending) == 0 }

// Produced returns how many messages were created so far.
func (p *Producer) Produced() int { return p.made }

// Refused returns how many publishes the target refused.
func (p *Producer) Refused() int { return p.refused }

// Dropped returns how many messages were given up (OnRefusedDrop).
func (p *Producer) Dropped() int { return p.dropped }

// Pending returns how many refused messages wait to be published again.
func (p *Producer) Pending() int { return len(p.pending) }

// key returns the key of message i; in random order it draws from the
// producer's stream, so it is called once per message, in order.
func (p *Producer) key(i int) string {
	if p.nkeys < 0 {
		return ""
	}
	k := i
	if p.nkeys > 0 {
		if p.cfg.KeyOrder == Random {
			k = p.stream.IntN(p.nkeys)
		} else {
			k = i % p.nkeys
		}
	}
	if p.cfg.Keys != nil {
		return p.cfg.Keys[k]
	}
	if p.nkeys > 0 && p.nkeys <= maxKeyMemo {
		if p.keys == nil {
			p.keys = make([]string, p.nkeys)
		}
		if p.keys[k] == "" {
			p.makeKeys(k)
		}
		return p.keys[k]
	}
	return p.pattern(k)
}

// keyBlock is how many keys makeKeys makes at once.
const keyBlock = 32

// makeKeys remembers the keys of the block of keyBlock key numbers that
// holds k (fewer in the last block), each as pattern makes it. They are
// cut from one string, so a block costs one allocation instead of one per
// key, and a key keeps at most its block's other keys reachable. A key
// never comes out empty (KeyPattern is not empty), so p.keys marks the
// keys made so far.
func (p *Producer) makeKeys(k int) {
	lo := k - k%keyBlock
	hi := min(lo+keyBlock, p.nkeys)
	before, after, ok := strings.Cut(p.cfg.KeyPattern, "%d")
	if !ok {
		for j := lo; j < hi; j++ {
			p.keys[j] = p.cfg.KeyPattern
		}
		return
	}
	var ends [keyBlock]int
	var b strings.Builder
	b.Grow((hi - lo) * (len(before) + len(after) + len(strconv.Itoa(hi))))
	var digits [20]byte // the longest int
	for j := lo; j < hi; j++ {
		b.WriteString(before)
		b.Write(strconv.AppendInt(digits[:0], int64(j)+1, 10))
		b.WriteString(after)
		ends[j-lo] = b.Len()
	}
	all, start := b.String(), 0
	for j := lo; j < hi; j++ {
		p.keys[j] = all[start:ends[j-lo]]
		start = ends[j-lo]
	}
}

// pattern returns KeyPattern with its first "%d" replaced by k+1.
func (p *Producer) pattern(k int) string {
	before, after, ok := strings.Cut(p.cfg.KeyPattern, "%d")
	if !ok {
		return p.cfg.KeyPattern
	}
	return before + strconv.Itoa(k+1) + after
}

// firstBodyBlock and bodyArena bound the blocks the default bodies are cut
// from: a producer that knows its Count takes blocks of what its remaining
// bodies need at most, up to bodyArena; otherwise the first block holds
// firstBodyBlock bytes, each next one twice the last, up to bodyArena. A
// producer of a hundred messages allocates one block of 692 bytes for
// their bodies; a long run allocates one bodyArena block per about 1,500
// bodies.
const (
	firstBodyBlock = 256
	bodyArena      = 16 << 10
)

// defaultBody returns "<name>#<i+1>", cut from a block shared with the
// bodies of the messages made before and after it (capacity-limited, so
// appending to one body never writes into another): one allocation per
// block of many bodies instead of one per body. A body takes exactly its
// length of the block, so a block of bodyArena bytes holds about 1,500
// bodies of a million-message run. A full block is left to the bodies cut
// from it, never copied.
func (p *Producer) defaultBody(i int) []byte {
	num := p.num.digits(i + 1)
	n := len(p.prefix) + len(num)
	if cap(p.bodies)-len(p.bodies) < n {
		size := min(bodyArena, max(firstBodyBlock, 2*cap(p.bodies)))
		switch rest := p.cfg.Count - i; {
		case rest >= bodyArena: // every body takes at least a byte
			size = bodyArena
		case rest > 0:
			// Exactly what the bodies still to make need: a short run
			// takes one block just large enough.
			size = min(bodyArena, rest*len(p.prefix)+digitsIn(i+1, p.cfg.Count))
		}
		p.bodies = make([]byte, 0, max(size, n))
	}
	start := len(p.bodies)
	p.bodies = append(append(p.bodies, p.prefix...), num...)
	return p.bodies[start:len(p.bodies):len(p.bodies)]
}

// digitsIn returns how many decimal digits the numbers from a to b
// (1 <= a) take together, 0 when a > b. O(digits of b).
func digitsIn(a, b int) int {
	n := 0
	for lo, d := 1, 1; lo <= b; lo, d = lo*10, d+1 {
		hi := b // the last number of d digits
		if lo <= math.MaxInt/10 {
			hi = min(b, lo*10-1)
		}
		if x := max(a, lo); x <= hi {
			n += (hi - x + 1) * d
		}
		if hi == b {
			break
		}
	}
	return n
}
