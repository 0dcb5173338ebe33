package pubsub

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/sim"
)

// StormConfig configures an event storm: every save of an entity announces
// Subject, each of Subscribers handlers reacts by loading the entity,
// changing a field and saving it, and every one of those saves announces
// Subject again.
type StormConfig struct {
	// Subject is the save event, e.g. "product.saved".
	Subject string
	// Subscribers is how many handlers react to each save; e.g. 8.
	Subscribers int
	// Supervisor makes each handler save with the supervisor switch on,
	// so its save reaches no subscriber and the storm stops after one
	// generation.
	Supervisor bool
	// Buffer is each subscriber's buffer; 0 means DefaultBuffer.
	Buffer int
}

// Validate reports a configuration error.
func (c StormConfig) Validate() error {
	if c.Subscribers <= 0 {
		return fmt.Errorf("%w: a storm needs subscribers, got %d", ErrInvalidConfig, c.Subscribers)
	}
	if c.Buffer < 0 {
		return fmt.Errorf("%w: storm Buffer %d is negative", ErrInvalidConfig, c.Buffer)
	}
	return sim.Also(ValidSubject(c.Subject), ErrInvalidConfig)
}

// Storm is the event-storm topology of StormConfig on one broker. Without
// the supervisor one save becomes Subscribers messages, then
// Subscribers^2, and so on until the broker's cascade depth limit refuses
// the next generation; with it, one save becomes Subscribers saves that
// announce nothing. The subscribers are named Subject+"/1" and up.
type Storm struct {
	b   *Broker
	cfg StormConfig
}

// NewStorm subscribes the storm's handlers to b. Each is a subscriber
// whose Emits publish one save per copy it handles, under the supervisor
// switch when StormConfig.Supervisor is set.
func NewStorm(b *Broker, cfg StormConfig) (*Storm, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Storm{b: b, cfg: cfg}
	for i := 1; i <= cfg.Subscribers; i++ {
		if _, err := b.Subscribe(SubscriberConfig{
			Name: cfg.Subject + "/" + strconv.Itoa(i), Pattern: cfg.Subject, Buffer: cfg.Buffer,
			Handler: sim.Effect("saved"), Emits: []Emit{{Subject: cfg.Subject}}, Supervisor: cfg.Supervisor,
		}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Save announces one save of the entity key as a root event.
func (s *Storm) Save(key string, body []byte) (sim.Message, error) {
	m := s.b.env.NewMessage(key, body, sim.Headers{Type: s.cfg.Subject})
	return m, s.b.PublishTo(s.cfg.Subject, m)
}
