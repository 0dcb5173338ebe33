package scenario

import (
	"strings"

	"github.com/brokerlab/brokerlab/sim"
)

// Metric names a value an expectation compares. Its text form is
// "<kind>.<name>.<field>" for a component or a ledger consumer, or
// "ledger.<field>".
type Metric struct {
	// Kind is "queue", "topic", "log", "group", "outbox", "saga", "consumer" or
	// "ledger".
	Kind string
	// Name is the component ("" for the ledger); for "outbox" it is the
	// service, for "consumer" a ledger consumer as written (a queue, a
	// queue consumer standing for its queue, a group or a subscriber).
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
var MetricKinds = []string{"queue", "topic", "log", "group", "outbox", "saga", "consumer", "ledger"}

// LossCauses lists every modelled cause of loss (sim.Cause) in the order
// the format reference documents them; each has a ledger metric field
// LossField(cause).
var LossCauses = []sim.Cause{
	sim.CauseDualWrite, sim.CauseAckBeforeProcess, sim.CauseCommitBeforeProcess, sim.CauseRetention,
	sim.CauseOverflow, sim.CausePurge, sim.CauseBrokerUnavailable, sim.CauseOffsetReset,
	sim.CauseSeek, sim.CauseCompaction, sim.CauseHandlerFailed, sim.CauseDisconnect, sim.CauseForwardFailed, sim.CauseDeadRow,
	sim.CauseClockSkew, sim.CauseOffsetOrder,
}

// LossField returns the ledger metric field that counts the losses with
// cause c: "lost_" and the cause with spaces as underscores, e.g.
// "lost_dual_write".
func LossField(c sim.Cause) string {
	return "lost_" + strings.ReplaceAll(string(c), " ", "_")
}

// MetricFields lists, per kind, the fields a metric may name.
var MetricFields = map[string][]string{
	"queue":    {"visible", "in_flight", "delayed", "depth", "dlq", "oldest_age", "receives", "acks", "redeliveries"},
	"topic":    {"published", "delivered", "missed", "dropped"},
	"log":      {"start", "end", "records", "partitions"},
	"group":    {"lag", "committed", "rebalances", "generation", "reads", "stale_reads"},
	"outbox":   {"pending", "published", "failed", "dead", "relay_lag"},
	"saga":     sagaFields,
	"consumer": {"delivered", "duplicates", "applied", "duplicate_effects", "absorbed", "missed", "lost", "pending"},
	"ledger": append([]string{"messages", "origins", "pending", "done", "dead_lettered", "expired", "purged", "redriven", "phantoms",
		"delivered", "duplicates", "applied", "duplicate_effects", "absorbed", "missed", "lost"}, lossFields()...),
}

// sagaFields are a saga orchestrator's metrics: sagas started and ended
// by state, compensations applied and delivered again (duplicates), and
// held, the applied steps with a compensation in sagas that ended failed
// (nobody will release them). All but held are counters.
var sagaFields = []string{"started", "completed", "compensated", "failed", "parked", "compensations", "duplicates", "held"}

func lossFields() []string {
	out := make([]string, len(LossCauses))
	for i, c := range LossCauses {
		out[i] = LossField(c)
	}
	return out
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
// summary, and false for other kinds. A "lost_<cause>" field is the count
// of s.LostBy for that cause (0 when none was lost so).
func (m Metric) Ledger(s sim.Stats) (float64, bool) {
	if m.Kind != "ledger" {
		return 0, false
	}
	var v int
	switch m.Field {
	case "messages":
		v = s.Messages
	case "origins":
		v = s.Origins
	case "absorbed":
		v = s.Absorbed
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
		cause, ok := lossCause(m.Field)
		if !ok {
			return 0, false
		}
		for _, c := range s.LostBy {
			if c.Cause == cause {
				v = c.Count
			}
		}
	}
	return float64(v), true
}

// lossCause returns the cause a "lost_<cause>" ledger field counts.
func lossCause(field string) (sim.Cause, bool) {
	for _, c := range LossCauses {
		if LossField(c) == field {
			return c, true
		}
	}
	return "", false
}
