package scenario

import (
	"strings"

	"github.com/brokerlab/brokerlab/sim"
)

// Metric names a value an expectation compares. Its text form is
// "<kind>.<name>.<field>" for a component, or "ledger.<field>".
type Metric struct {
	// Kind is "queue", "topic", "log", "group", "outbox" or "ledger".
	Kind string
	// Name is the component ("" for the ledger); for "outbox" it is the
	// service.
	Name string
	// Field is the measured value, from MetricFields.
	Field string
}

// String returns the text form of m.
func (m Metric) String() string {
	if m.Kind == "ledger" {
		return "ledger." + m.Field
	}
	return m.Kind + "." + m.Name + "." + m.Field
}

// MetricKinds lists the metric kinds in the order the format reference
// documents them.
var MetricKinds = []string{"queue", "topic", "log", "group", "outbox", "ledger"}

// MetricFields lists, per kind, the fields a metric may name.
var MetricFields = map[string][]string{
	"queue":  {"visible", "in_flight", "delayed", "depth", "dlq", "oldest_age", "receives", "acks", "redeliveries"},
	"topic":  {"published", "delivered", "missed", "dropped"},
	"log":    {"start", "end", "records", "partitions"},
	"group":  {"lag", "committed", "rebalances", "generation"},
	"outbox": {"pending", "published", "failed", "dead", "relay_lag"},
	"ledger": {"messages", "pending", "done", "dead_lettered", "expired", "purged", "redriven", "phantoms",
		"delivered", "duplicates", "applied", "duplicate_effects", "missed", "lost"},
}

// parseMetric splits text into a Metric, checking the grammar (not whether
// the named component exists). It returns a message saying what is allowed
// when text is malformed.
func parseMetric(text string) (Metric, string) {
	kind, rest, _ := strings.Cut(text, ".")
	fields, ok := MetricFields[kind]
	if !ok {
		return Metric{}, "metric " + quote(text) + " must start with one of " + strings.Join(MetricKinds, ", ") +
			" (queue.<name>.<field>, ..., ledger.<field>)"
	}
	m := Metric{Kind: kind}
	if kind == "ledger" {
		m.Field = rest
	} else {
		name, f, ok := strings.Cut(rest, ".")
		if !ok || name == "" {
			return Metric{}, "metric " + quote(text) + " must be " + kind + ".<name>.<field>"
		}
		m.Name, m.Field = name, f
	}
	for _, f := range fields {
		if f == m.Field {
			return m, ""
		}
	}
	msg := "metric " + quote(text) + ": unknown " + kind + " field " + quote(m.Field)
	if s := suggestName(m.Field, fields); s != "" {
		msg += " (did you mean " + quote(s) + "?)"
	}
	return Metric{}, msg + "; allowed: " + strings.Join(fields, ", ")
}

// Ledger returns the value of a "ledger.<field>" metric from the ledger's
// summary, and false for other kinds.
func (m Metric) Ledger(s sim.Stats) (float64, bool) {
	if m.Kind != "ledger" {
		return 0, false
	}
	var v int
	switch m.Field {
	case "messages":
		v = s.Messages
	case "pending":
		v = s.Pending
	case "done":
		v = s.Done
	case "dead_lettered":
		v = s.DeadLettered
	case "expired":
		v = s.Expired
	case "purged":
		v = s.Purged
	case "redriven":
		v = s.Redriven
	case "phantoms":
		v = s.Phantoms
	case "delivered":
		v = s.Delivered
	case "duplicates":
		v = s.Duplicates
	case "applied":
		v = s.Applied
	case "duplicate_effects":
		v = s.DuplicateEffects
	case "missed":
		v = s.Missed
	case "lost":
		v = s.Lost
	default:
		return 0, false
	}
	return float64(v), true
}
