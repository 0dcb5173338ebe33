package outbox

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

// CommanderConfig configures a Commander.
type CommanderConfig struct {
	// Name names the commander; its random stream is "producer/"+Name.
	// Required.
	Name string
	// Writer places the commands. Required; it must belong to the
	// commander's world.
	Writer *Writer
	// Count is how many commands to place (at least 1).
	Count int
	// Rate is commands per tick; default 1.
	Rate int
	// Start is the first tick that places commands.
	Start sim.Tick
	// Keys are the customers (the orders' aggregate ids and so the
	// messages' keys), used round robin by command number; none means
	// every command's customer is Name.
	Keys []string
	// RandomKeys draws each command's customer from the commander's stream
	// instead (a retried command draws again).
	RandomKeys bool
	// Amount returns the amount of command i (from 0); default i%100+1.
	Amount func(i int) int64
	// OnRefused is what the commander does with a command its writer
	// refused without crashing (the broker was unavailable in a dual-write
	// mode), the policy producers use: producer.OnRefusedRetry ("" too)
	// places it again first on the next tick, in order, so the commander
	// never gives a command up; producer.OnRefusedDrop gives it up.
	// Nothing the writer did is undone then: in CommitThenPublish the
	// order is stored and its event lost (the writer's "lost" event,
	// sim.CauseBrokerUnavailable); in PublishThenCommit nothing was stored
	// or sent.
	OnRefused producer.OnRefused
}

// Validate reports a configuration error.
func (c CommanderConfig) Validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: a commander needs a name", ErrInvalidConfig)
	case c.Writer == nil:
		return fmt.Errorf("%w: commander %q needs a writer", ErrInvalidConfig, c.Name)
	case c.Count < 1:
		return fmt.Errorf("%w: commander %q: count %d is below 1", ErrInvalidConfig, c.Name, c.Count)
	case c.Rate < 0 || c.Start < 0:
		return fmt.Errorf("%w: commander %q: rate and start must not be negative", ErrInvalidConfig, c.Name)
	case c.OnRefused != "" && c.OnRefused != producer.OnRefusedRetry && c.OnRefused != producer.OnRefusedDrop:
		return fmt.Errorf("%w: commander %q: unknown refusal policy %q", ErrInvalidConfig, c.Name, string(c.OnRefused))
	}
	for _, k := range c.Keys {
		if k == "" {
			return fmt.Errorf("%w: commander %q: empty key", ErrInvalidConfig, c.Name)
		}
	}
	return nil
}

// CommanderStats are the counters of a commander.
type CommanderStats struct {
	Placed  int // commands the writer settled: stored (or published), or lost to a crash as its mode dictates
	Crashed int // of those, commands during which the writer crashed
	Refused int // refusals (a retried command counts each time)
	Dropped int // commands given up after a refusal, or refused as invalid orders
}

// Commander places a workload of commands with a service's writer: Count
// orders, Rate per tick from tick Start, command i for customer Keys[i mod
// len(Keys)] and amount Amount(i). It is a component of the producer
// phase. A command the writer settled (placed, or crashed the writer, which
// loses or stores it as the writer's mode dictates) is done; one the
// broker refused is placed again first on the next tick (Retry) or given
// up (Drop). Memory is O(refused commands).
type Commander struct {
	cfg    CommanderConfig
	w      *Writer
	stream *sim.Stream
	next   int   // commands started so far
	again  []int // refused commands, in order
	stats  CommanderStats
}

// NewCommander returns a commander and adds it to the world w as
// "outbox:"+service+"/commander:"+Name.
func NewCommander(w *sim.World, cfg CommanderConfig) (*Commander, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Writer.s.sameWorld(w, "a commander"); err != nil {
		return nil, err
	}
	if cfg.Rate == 0 {
		cfg.Rate = 1
	}
	c := &Commander{cfg: cfg, w: cfg.Writer, stream: w.Env().Stream("producer/" + cfg.Name)}
	if err := w.Add(cfg.Writer.s.where+"/commander:"+cfg.Name, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Phase places commanders with the producers.
func (c *Commander) Phase() sim.Phase { return sim.PhaseProducer }

// Name returns the commander's name.
func (c *Commander) Name() string { return c.cfg.Name }

// Stats returns the commander's counters.
func (c *Commander) Stats() CommanderStats { return c.stats }

// Done reports whether every command was settled or given up.
func (c *Commander) Done() bool { return c.next >= c.cfg.Count && len(c.again) == 0 }

// Step places the refused commands again, then up to Rate new ones; it
// stops for this tick at the first refusal.
func (c *Commander) Step(now sim.Tick) {
	if now < c.cfg.Start {
		return
	}
	for len(c.again) > 0 {
		if !c.place(c.again[0]) {
			return
		}
		c.again = c.again[1:]
	}
	for n := 0; n < c.cfg.Rate && c.next < c.cfg.Count; n++ {
		i := c.next
		c.next++
		if !c.place(i) {
			if c.cfg.OnRefused == producer.OnRefusedDrop {
				c.stats.Dropped++
				continue
			}
			c.again = append(c.again, i)
			return
		}
	}
}

// customer returns the customer of command i.
func (c *Commander) customer(i int) string {
	n := len(c.cfg.Keys)
	if n == 0 {
		return c.cfg.Name
	}
	k := i % n
	if c.cfg.RandomKeys {
		k = c.stream.IntN(n)
	}
	return c.cfg.Keys[k]
}

// place places command i and reports whether it is settled.
func (c *Commander) place(i int) bool {
	amount := int64(i%100 + 1)
	if c.cfg.Amount != nil {
		amount = c.cfg.Amount(i)
	}
	_, err := c.w.PlaceOrder(c.customer(i), amount)
	switch {
	case err == nil:
	case errors.Is(err, ErrCrashed):
		c.stats.Crashed++
	case errors.Is(err, ErrInvalidOrder):
		c.stats.Dropped++ // a bad amount: retrying cannot help
		return true
	default:
		c.stats.Refused++
		return false
	}
	c.stats.Placed++
	return true
}
