package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// Violation is one breach of a delivery guarantee, with the evidence.
type Violation struct {
	Check    string // the checker that found it, e.g. "no-loss"
	Msg      ID     // the message
	Key      string // its key
	Consumer string // the logical consumer, if any
	Tick     Tick   // when the evidence was recorded
	Detail   string // what was wrong
}

// String formats the violation on one line.
func (v Violation) String() string {
	var b strings.Builder
	b.WriteString(v.Check)
	b.WriteString(": ")
	b.WriteString(v.Msg.String())
	if v.Key != "" {
		b.WriteString(" key=")
		b.WriteString(v.Key)
	}
	if v.Consumer != "" {
		b.WriteString(" consumer=")
		b.WriteString(v.Consumer)
	}
	b.WriteString(" t=")
	b.WriteString(strconv.FormatInt(int64(v.Tick), 10))
	b.WriteString(": ")
	b.WriteString(v.Detail)
	return b.String()
}

// CheckError reports every violation a set of checkers found, in the order
// the checkers were given and, within one checker, in message order.
type CheckError struct {
	Violations []Violation
}

// Error lists every violation, one per line.
func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d delivery violation(s):", len(e.Violations))
	for _, v := range e.Violations {
		b.WriteString("\n\t")
		b.WriteString(v.String())
	}
	return b.String()
}

// Checker inspects a ledger and returns every violation it finds.
type Checker interface {
	// Name is the checker's short name, e.g. "no-loss".
	Name() string
	// Violations returns what the checker found, nil when the guarantee holds.
	Violations(l *Ledger) []Violation
}

// Check runs every checker and returns nil when all hold, or a *CheckError
// carrying every violation of every checker at once.
func Check(l *Ledger, checks ...Checker) error {
	var all []Violation
	for _, c := range checks {
		all = append(all, c.Violations(l)...)
	}
	if len(all) == 0 {
		return nil
	}
	return &CheckError{Violations: all}
}

type checkFunc struct {
	name string
	f    func(l *Ledger) []Violation
}

func (c checkFunc) Name() string                     { return c.name }
func (c checkFunc) Violations(l *Ledger) []Violation { return c.f(l) }

// NoLoss holds when no message was lost: the ledger recorded no loss; no
// consumer that reports effects acknowledged a message whose effect it never
// applied; and no message routed to a consumer left the broker (done,
// expired, purged, or fanned out) without reaching it. The last two are
// losses whose cause nobody modelled and are reported as such. Messages
// still pending, dead-lettered or missed by design are not losses.
func NoLoss() Checker {
	return checkFunc{"no-loss", func(l *Ledger) []Violation {
		if l == nil {
			return nil
		}
		var out []Violation
		for _, x := range l.losses {
			r, _ := l.Record(x.ID)
			out = append(out, Violation{Check: "no-loss", Msg: x.ID, Key: r.Key, Consumer: x.Consumer, Tick: x.Tick,
				Detail: "lost (" + string(x.Cause) + ")"})
		}
		for _, b := range l.consumers {
			if !b.effects {
				continue
			}
			b.eachEntry(func(id ID, e *Delivery) {
				if e.Acked && e.Applied == 0 && e.Lost == "" {
					r := l.record(id)
					out = append(out, Violation{Check: "no-loss", Msg: id, Key: r.Key, Consumer: b.name, Tick: e.LastSeen,
						Detail: "acknowledged but its effect was never applied, and no cause was recorded"})
				}
			})
		}
		for _, b := range l.consumers {
			b.eachEntry(func(id ID, e *Delivery) {
				if !e.Expected || e.Delivered > 0 || e.Missed || e.Lost != "" {
					return
				}
				r := l.record(id)
				switch r.State {
				case StateDone, StateExpired, StatePurged, StateDelivered:
					out = append(out, Violation{Check: "no-loss", Msg: id, Key: r.Key, Consumer: b.name, Tick: r.Changed,
						Detail: "left the broker (" + r.State.String() + ") without reaching this consumer, and no cause was recorded"})
				}
			})
		}
		return out
	}}
}

// accounted reports whether a message that consumer e never applied is
// still accounted for: pending at a broker, dead-lettered, redriven or
// missed by design.
func accounted(r *Record, e *Delivery) (bool, string) {
	if e.Lost != "" {
		return false, "lost (" + string(e.Lost) + ")"
	}
	if e.Missed {
		return true, ""
	}
	switch r.State {
	case StatePending:
		return true, ""
	case StateDeadLettered:
		return true, ""
	case StateRedriven:
		return true, ""
	case StateLost:
		return false, "lost before delivery"
	}
	if e.Delivered == 0 {
		return false, "never delivered (broker state " + r.State.String() + ")"
	}
	return false, "delivered " + strconv.Itoa(int(e.Delivered)) + " time(s) but never applied (broker state " + r.State.String() + ")"
}

func perConsumer(check, name string, f func(l *Ledger, b *consumerBook, id ID, e *Delivery) (bool, string)) Checker {
	return checkFunc{check, func(l *Ledger) []Violation {
		if l == nil {
			return nil
		}
		var out []Violation
		found := false
		for _, b := range l.consumers {
			if name != "" && b.name != name {
				continue
			}
			found = true
			b.eachEntry(func(id ID, e *Delivery) {
				if !e.Expected {
					return
				}
				if bad, why := f(l, b, id, e); bad {
					r := l.record(id)
					out = append(out, Violation{Check: check, Msg: id, Key: r.Key, Consumer: b.name, Tick: evidenceTick(r, e), Detail: why})
				}
			})
		}
		if !found && name != "" {
			out = append(out, Violation{Check: check, Consumer: name, Detail: "no such consumer in the ledger"})
		}
		return out
	}}
}

// evidenceTick is the tick a violation points at: the consumer's last
// contact with the message, or the broker's last state change.
func evidenceTick(r *Record, e *Delivery) Tick {
	if e.LastSeen != 0 {
		return e.LastSeen
	}
	return r.Changed
}

func count(e *Delivery, effects bool) uint32 {
	if effects {
		return e.Applied
	}
	return e.Delivered
}

// AtLeastOnce holds when every message routed to the consumer called name
// ("" for every consumer) was applied at least once, or is still accounted
// for (pending, dead-lettered, redriven, missed by design). For a consumer
// that never reports effects, deliveries stand in for applications.
func AtLeastOnce(name string) Checker {
	return perConsumer("at-least-once", name, func(l *Ledger, b *consumerBook, id ID, e *Delivery) (bool, string) {
		if count(e, b.effects) > 0 {
			return false, ""
		}
		ok, why := accounted(l.record(id), e)
		return !ok, why
	})
}

// AtMostOnce holds when no message's effect was applied twice by the
// consumer called name ("" for every consumer). For a consumer that never
// reports effects, it holds when no message was delivered twice.
func AtMostOnce(name string) Checker {
	return perConsumer("at-most-once", name, func(l *Ledger, b *consumerBook, id ID, e *Delivery) (bool, string) {
		if n := count(e, b.effects); n > 1 {
			what := "applied"
			if !b.effects {
				what = "delivered"
			}
			return true, what + " " + strconv.Itoa(int(n)) + " times"
		}
		return false, ""
	})
}

// ExactlyOnce holds when the consumer called name ("" for every consumer)
// applied the effect of every message routed to it exactly once; messages
// still pending, dead-lettered or missed by design are exempt from the
// "at least" half, never from the "at most" half.
func ExactlyOnce(name string) Checker {
	return perConsumer("exactly-once", name, func(l *Ledger, b *consumerBook, id ID, e *Delivery) (bool, string) {
		switch n := e.Applied; {
		case n == 1:
			return false, ""
		case n > 1:
			return true, "effect applied " + strconv.Itoa(int(n)) + " times"
		}
		ok, why := accounted(l.record(id), e)
		return !ok, why
	})
}

// OrderedPerKey holds when the consumer called name ("" for every consumer)
// first applied the messages of each key in the order they were created
// (ID order). Each inversion is reported with both messages.
func OrderedPerKey(name string) Checker {
	const check = "ordered-per-key"
	return checkFunc{check, func(l *Ledger) []Violation {
		if l == nil {
			return nil
		}
		var out []Violation
		for _, b := range l.consumers {
			if name != "" && b.name != name {
				continue
			}
			last := map[string]ID{}
			for id := range b.order.all() {
				r := l.record(id)
				if r.Key == "" {
					continue
				}
				if prev, ok := last[r.Key]; ok && prev > id {
					out = append(out, Violation{Check: check, Msg: id, Key: r.Key, Consumer: b.name, Tick: b.entries.get(uint64(id)).FirstApplied,
						Detail: "applied after " + prev.String() + ", which was created later"})
					continue
				}
				last[r.Key] = id
			}
		}
		return out
	}}
}

// MaxDuplicates holds when the consumer called name ("" for all) saw at
// most n repeated deliveries in total.
func MaxDuplicates(name string, n int) Checker {
	return checkFunc{"max-duplicates", func(l *Ledger) []Violation {
		if d := l.Duplicates(name); d > n {
			return []Violation{{Check: "max-duplicates", Consumer: name,
				Detail: strconv.Itoa(d) + " duplicate deliveries, at most " + strconv.Itoa(n) + " allowed"}}
		}
		return nil
	}}
}
