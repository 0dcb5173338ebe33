// Package stored is how the broker models keep a message they hold: its
// identity, key, body and times inline, its headers behind a shared
// pointer. A sim.Message is 152 bytes, 88 of them headers that most
// messages leave empty or share with the message sent before; a Message
// here is 72 bytes, and equal headers sent one after another are kept
// once. A model that holds many messages keeps them as Slims, 40 bytes,
// their bodies packed in a Bodies arena.
package stored

import "github.com/brokerlab/brokerlab/sim"

// Message is what a model keeps of a sim.Message. Its headers are nil when
// zero, else shared with every copy made from it and with consecutive
// messages whose headers are equal; they are never modified once stored.
// The body is the sender's slice, shared as sim.Message shares it; a Slim
// made from it keeps a copy in a Bodies arena instead.
type Message struct {
	ID      sim.ID
	Origin  sim.ID
	Created sim.Tick
	Key     string
	Body    []byte
	h       *sim.Headers
}

// none is what Headers returns for a message without headers; read only.
var none sim.Headers

// Headers returns the message's headers, which the caller must not
// modify. O(1), no allocation.
func (m *Message) Headers() *sim.Headers {
	if m.h == nil {
		return &none
	}
	return m.h
}

// Message returns the message as it was stored, equal to it field by
// field (a nil Extra stays nil, an empty one empty).
func (m *Message) Message() sim.Message {
	return sim.Message{ID: m.ID, Key: m.Key, Body: m.Body, Headers: *m.Headers(), Created: m.Created, Origin: m.Origin}
}

// Cache hands out one shared copy of equal headers stored one after
// another. It remembers only the last headers it stored, so it costs one
// comparison per message and never grows. The zero Cache is ready to use.
type Cache struct{ last *sim.Headers }

// Store returns what a model keeps of m. It allocates only when m has
// headers that differ from the previous message's.
func (c *Cache) Store(m *sim.Message) Message {
	var s Message
	s.Set(m, c.Share(m))
	return s
}

// Share returns the headers a Message stored from m shares: nil for zero
// headers, else the last headers it stored if they equal m's, else a new
// copy of m's, which becomes the last. It allocates only in that last
// case.
func (c *Cache) Share(m *sim.Message) *sim.Headers {
	h := &m.Headers
	if h.Type == "" && h.CorrelationID == "" && h.CausationID == 0 && h.Source == "" && h.SchemaVersion == 0 && h.Extra == nil {
		return nil
	}
	if c.last == nil || !same(c.last, h) {
		x := *h
		c.last = &x
	}
	return c.last
}

// Set sets *s, field by field, to what Store(m) returns, given h, which
// Share returned for m: c.Store(m) is s.Set(m, c.Share(m)). A Message
// returned by value is built in a temporary and copied, and the loads of
// the copy stall on the stores just made; Set is inlined, so it fills a
// caller's local in place, with none of the collector's write barriers.
// O(1), no allocation.
func (s *Message) Set(m *sim.Message, h *sim.Headers) {
	s.ID, s.Origin, s.Created, s.Key, s.Body, s.h = m.ID, m.Origin, m.Created, m.Key, m.Body, h
}

// same reports whether a and b are equal, telling a nil Extra from an
// empty one.
func same(a, b *sim.Headers) bool {
	if a.Type != b.Type || a.CorrelationID != b.CorrelationID || a.CausationID != b.CausationID ||
		a.Source != b.Source || a.SchemaVersion != b.SchemaVersion ||
		len(a.Extra) != len(b.Extra) || (a.Extra == nil) != (b.Extra == nil) {
		return false
	}
	for i := range a.Extra {
		if a.Extra[i] != b.Extra[i] {
			return false
		}
	}
	return true
}
