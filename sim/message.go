package sim

import (
	"strconv"
	"strings"
)

// ID identifies a message. IDs are assigned densely from 1 by an IDs
// allocator in creation order, which makes them deterministic and lets the
// ledger index its records by ID. The zero ID means "no message".
type ID uint64

// String formats the ID as "m" followed by the number, e.g. "m17".
func (id ID) String() string {
	if id == 0 {
		return "-"
	}
	return "m" + strconv.FormatUint(uint64(id), 10)
}

// AppendTo appends the String form of id to b without allocating.
func (id ID) AppendTo(b []byte) []byte {
	if id == 0 {
		return append(b, '-')
	}
	return strconv.AppendUint(append(b, 'm'), uint64(id), 10)
}

// ParseID parses the String form of an ID ("m17" or "17").
func ParseID(s string) (ID, bool) {
	s = strings.TrimPrefix(s, "m")
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return ID(n), true
}

// IDs allocates message IDs. The zero value starts at 1.
type IDs struct {
	last ID
}

// Next returns a new ID, one greater than the previous one.
func (g *IDs) Next() ID {
	g.last++
	return g.last
}

// Last returns the most recently allocated ID, or 0.
func (g *IDs) Last() ID { return g.last }

// Headers are the well-known message headers. Extra headers are kept as a
// slice in insertion order, never as a map, so their order is stable.
type Headers struct {
	// Type is the event or command type, e.g. "order.placed".
	Type string
	// CorrelationID ties together every message caused by one root event.
	CorrelationID string
	// CausationID is the ID of the message whose handling produced this one.
	CausationID ID
	// Source names the system that produced the message; sync loops are
	// broken by checking it.
	Source string
	// SchemaVersion is the version of the body's schema (0 = unversioned).
	SchemaVersion int
	// Extra holds further headers in a stable order.
	Extra []Header
}

// Header is one extra header.
type Header struct {
	Name, Value string
}

// Get returns the value of the extra header name and whether it is present.
func (h Headers) Get(name string) (string, bool) {
	for _, x := range h.Extra {
		if x.Name == name {
			return x.Value, true
		}
	}
	return "", false
}

// With returns a copy of h with the extra header name set to value. The
// receiver's Extra slice is never modified, so headers can be shared.
func (h Headers) With(name, value string) Headers {
	extra := make([]Header, 0, len(h.Extra)+1)
	for _, x := range h.Extra {
		if x.Name != name {
			extra = append(extra, x)
		}
	}
	h.Extra = append(extra, Header{Name: name, Value: value})
	return h
}

// Message is the unit every broker model carries. A Message is a value:
// models copy it and never modify a Message they were given, and the Body
// must not be modified after the message is handed to a model.
type Message struct {
	// ID is the deterministic identity of the message. A duplicate
	// delivery or a re-publish of the same event carries the same ID.
	ID ID
	// Key orders and partitions messages (customer, order, aggregate).
	Key string
	// Body is the payload.
	Body []byte
	// Headers carry type, correlation, causation, source and schema version.
	Headers Headers
	// Created is the tick the message was created.
	Created Tick
	// Origin is the copy this message was made from: the dead letter a
	// redrive carries on, the published message a fan-out copies into a
	// queue. It is 0 for an original. The ledger follows it to judge every
	// copy of one origin together.
	Origin ID
}

// Publisher accepts messages. Queues, pub/sub topics and log topics
// implement it, so producers, outbox relays and topic fan-outs can target any
// of them. Publish returns an error wrapping the model's sentinel when the
// broker refuses the message (for example while it is unavailable); the
// message was not accepted then.
type Publisher interface {
	Publish(m Message) error
}
