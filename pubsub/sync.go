package pubsub

import (
	"fmt"

	"github.com/brokerlab/brokerlab/sim"
)

// SyncConfig configures a bidirectional sync between two systems.
type SyncConfig struct {
	// Subject is the prefix of the change subjects: system X announces its
	// changes on Subject+"."+X and subscribes to the other system's.
	Subject string
	// Systems names the two systems, e.g. {"commerce", "operations"}.
	Systems [2]string
	// SourceTracking sets the Source header of each local change to the
	// system that made it, keeps it on every change a sync causes, and makes
	// each system ignore a change that started at itself. Without it the
	// two systems echo each change back and forth until the broker's
	// cascade depth limit stops the loop.
	SourceTracking bool
	// Buffer is each system's subscriber buffer; 0 means DefaultBuffer.
	Buffer int
}

// Validate reports a configuration error.
func (c SyncConfig) Validate() error {
	a, b := c.Systems[0], c.Systems[1]
	switch {
	case a == "" || b == "":
		return fmt.Errorf("%w: a sync needs two system names", ErrInvalidConfig)
	case a == b:
		return fmt.Errorf("%w: a sync needs two different systems, got %q twice", ErrInvalidConfig, a)
	case c.Buffer < 0:
		return fmt.Errorf("%w: sync Buffer %d is negative", ErrInvalidConfig, c.Buffer)
	}
	for _, s := range c.Systems {
		if err := ValidSubject(c.Subject + "." + s); err != nil {
			return sim.Also(err, ErrInvalidConfig)
		}
	}
	return nil
}

// Sync models two systems that mirror each other's changes through a
// broker: when one applies a change received from the other, the save
// announces a change of its own. Each system is a subscriber named
// "sync:"+system whose handler applies the change and whose Emits announce
// it; with source tracking it is a SourceCheck subscriber whose source is
// the system. A Sync is driven by its broker's steps.
type Sync struct {
	b    *Broker
	cfg  SyncConfig
	subs [2]*Subscriber
}

// NewSync subscribes both systems of cfg to b.
func NewSync(b *Broker, cfg SyncConfig) (*Sync, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sync{b: b, cfg: cfg}
	for i := range 2 {
		own := s.subject(i)
		sub, err := b.Subscribe(SubscriberConfig{
			Name:        "sync:" + cfg.Systems[i],
			Pattern:     s.subject(1 - i),
			Buffer:      cfg.Buffer,
			Handler:     sim.Effect("applied the change"),
			Emits:       []Emit{{Subject: own, Type: own}}, // saving the change announces a change of this system
			SourceCheck: cfg.SourceTracking,
			Source:      cfg.Systems[i],
		})
		if err != nil {
			return nil, err
		}
		s.subs[i] = sub
	}
	return s, nil
}

func (s *Sync) subject(i int) string { return s.cfg.Subject + "." + s.cfg.Systems[i] }

func (s *Sync) index(system string) (int, error) {
	for i, x := range s.cfg.Systems {
		if x == system {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: %q is not a system of this sync", ErrInvalidConfig, system)
}

// Change records a local change in system and announces it as a root
// event; with source tracking its Source header is system.
func (s *Sync) Change(system, key string, body []byte) (sim.Message, error) {
	i, err := s.index(system)
	if err != nil {
		return sim.Message{}, err
	}
	h := sim.Headers{Type: s.subject(i)}
	if s.cfg.SourceTracking {
		h.Source = system
	}
	m := s.b.env.NewMessage(key, body, h)
	return m, s.b.PublishTo(h.Type, m)
}

// Applied returns how many changes from the other system system applied.
func (s *Sync) Applied(system string) int {
	i, err := s.index(system)
	if err != nil {
		return 0
	}
	return s.subs[i].Metrics().Handled
}

// Ignored returns how many of its own changes came back to system and were
// ignored thanks to source tracking.
func (s *Sync) Ignored(system string) int {
	i, err := s.index(system)
	if err != nil {
		return 0
	}
	return s.subs[i].Metrics().Skipped
}
