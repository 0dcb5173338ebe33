package stored

import "github.com/brokerlab/brokerlab/sim"

// Slim is a Message without its Origin and Created and with its body in a
// Bodies arena: 40 bytes instead of 72, for a model that keeps those two
// apart because most of its copies can tell them from something it stores
// anyway (a fresh message has no origin and was created when it entered),
// and that holds many messages at once. Its headers are shared as a
// Message's are. A Slim needs the arena it was made with to give its body
// back, and gives it back to that arena with Drop.
type Slim struct {
	ID   sim.ID
	Key  string
	body Body
	h    *sim.Headers
}

// Slim returns m without its Origin and Created, its body kept in b (see
// Bodies.Keep). O(len(Body)) for a small body, O(1) otherwise; it
// allocates only when b opens a chunk.
func (m *Message) Slim(b *Bodies) Slim {
	return Slim{ID: m.ID, Key: m.Key, body: b.Keep(m.Body), h: m.h}
}

// SlimInto sets *dst to m.Slim(b), field by field: a Slim assigned whole
// into memory on the heap is copied with a bulk write barrier over its
// type while a collection marks, where its two pointer fields written one
// by one cost a barrier each. O(len(Body)) for a small body, O(1)
// otherwise; it allocates only when b opens a chunk.
func (m *Message) SlimInto(dst *Slim, b *Bodies) {
	dst.ID, dst.Key, dst.body, dst.h = m.ID, m.Key, b.Keep(m.Body), m.h
}

// Body returns the message's body from b, the arena s was made with; its
// capacity is its length. O(1), no allocation.
func (s *Slim) Body(b *Bodies) []byte { return b.Get(s.body) }

// Drop gives s's body back to b, the arena s was made with, and zeroes s,
// dropping its references to key and headers. A body Body returned stays
// valid. O(1).
func (s *Slim) Drop(b *Bodies) {
	b.Drop(s.body)
	// Field by field, as SlimInto writes them: zeroing the whole struct
	// would clear it with a bulk write barrier while a collection marks.
	s.ID, s.Key, s.body, s.h = 0, "", 0, nil
}

// Move moves s's body to the chunk of b, the arena s was made with, that
// bodies are appended to now (see Bodies.Move). O(len) of the body.
func (s *Slim) Move(b *Bodies) { s.body = b.Move(s.body) }

// Apart keeps s's body apart from the shared chunks of b, the arena s was
// made with (see Bodies.Apart). O(len) of the body.
func (s *Slim) Apart(b *Bodies) { s.body = b.Apart(s.body) }

// Headers returns the message's headers, which the caller must not
// modify. O(1), no allocation.
func (s *Slim) Headers() *sim.Headers {
	if s.h == nil {
		return &none
	}
	return s.h
}

// Message returns the Message s was made from, given b, the arena s was
// made with, and its Origin and Created; the body is the copy in b.
// O(1), no allocation.
func (s *Slim) Message(b *Bodies, origin sim.ID, created sim.Tick) Message {
	return Message{ID: s.ID, Origin: origin, Created: created, Key: s.Key, Body: b.Get(s.body), h: s.h}
}
