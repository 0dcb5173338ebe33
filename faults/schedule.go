package faults

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/sim"
)

// Decision is one firing: which rule fired at which point, when, and for
// which opportunity. Tick, Point and the context fields say what happened;
// Occurrence and Nth, set when the injector records, name the opportunity
// so that Config.Replay fires it again and Plan can target it.
type Decision struct {
	Tick  sim.Tick
	Rule  string
	Point Point
	Msg   sim.ID
	// The context of the opportunity (see Context).
	Where, Consumer, Group, Key, Type string
	// Param and Error are the rule's, as the firing reported them.
	Param int64
	Error string
	// Occurrence is which consultation of Point with exactly this context
	// (message included) it was, from 1: counted over the whole run when
	// Msg is set, so that a shorter run that shifts ticks still finds it,
	// and within Tick otherwise. 0 when the run was not recorded.
	Occurrence int
	// Nth is which consultation of Point in Tick it was, from 1, among
	// those whose context has the same non-empty Where, Consumer, Group,
	// Key and Type: what a rule matching those fields counts. 0 when the
	// run was not recorded.
	Nth int
}

// Schedule is the firings of a run, in order.
type Schedule struct {
	Decisions []Decision
	// Omitted counts firings that are not listed: every firing of a run
	// that did not record, and those beyond MaxDecisions. A schedule with
	// omissions cannot be replayed.
	Omitted int
}

// Len returns the number of decisions.
func (s Schedule) Len() int { return len(s.Decisions) }

// Words describes the decision in a few words, e.g.
// "broker.duplicate of m3 at t=6".
func (d Decision) Words() string {
	var b strings.Builder
	b.WriteString(string(d.Point))
	switch {
	case d.Msg != 0 && strings.HasPrefix(string(d.Point), "broker."):
		b.WriteString(" of ")
		b.WriteString(d.Msg.String())
	case d.Msg != 0:
		b.WriteString(" on ")
		b.WriteString(d.Msg.String())
	default:
		who := d.Consumer
		if who == "" {
			who = d.Group
		}
		if who != "" {
			b.WriteString(" for ")
			b.WriteString(who)
		}
		if d.Where != "" {
			b.WriteString(" at ")
			b.WriteString(d.Where)
		}
	}
	b.WriteString(" at t=")
	b.WriteString(strconv.FormatInt(int64(d.Tick), 10))
	return b.String()
}

// Words describes the schedule in one line, e.g.
// "consumer.crash_after_effect on m3 at t=4, then broker.duplicate of m3
// at t=6"; an empty schedule is "no faults".
func (s Schedule) Words() string {
	if len(s.Decisions) == 0 {
		if s.Omitted > 0 {
			return strconv.Itoa(s.Omitted) + " firing(s), not recorded (faults.Config.Record)"
		}
		return "no faults"
	}
	parts := make([]string, len(s.Decisions))
	for i, d := range s.Decisions {
		parts[i] = d.Words()
	}
	out := strings.Join(parts, ", then ")
	if s.Omitted > 0 {
		out += fmt.Sprintf(", and %d more", s.Omitted)
	}
	return out
}

// Plan returns explicit rules that, run normally in the same world,
// fire exactly the schedule: one rule per decision, active in the
// one-tick window of its decision, matching its context's non-empty
// fields, firing on its Nth opportunity there. Nothing is probabilistic.
// A rule is named after the rule that fired ("crash", then "crash-2", ...).
// The plan is exact for a recorded schedule (Config.Record) whose ticks
// are those of the run it came from: re-run a subset with Replay and take
// its Fired before calling Plan. For an unrecorded decision the rule fires
// on the first matching opportunity of the tick. It costs
// O(decisions²) for decisions at the same point and tick.
func (s Schedule) Plan() Plan {
	used := map[string]bool{}
	p := Plan{Rules: make([]Rule, 0, len(s.Decisions))}
	for i, d := range s.Decisions {
		base := d.Rule
		if base == "" {
			base = "fault"
		}
		name := base
		for k := 2; used[name]; k++ {
			name = base + "-" + strconv.Itoa(k)
		}
		used[name] = true
		pattern := Context{Where: d.Where, Consumer: d.Consumer, Group: d.Group, Key: d.Key, Type: d.Type}
		r := Rule{Name: name, Point: d.Point, From: d.Tick, Until: d.Tick + 1, Param: d.Param, Error: d.Error,
			Match: Match{Where: escape(d.Where), Consumer: escape(d.Consumer), Group: escape(d.Group), Key: escape(d.Key), Type: escape(d.Type)}}
		if d.Nth > 0 {
			// The rules of earlier decisions at this point and tick come
			// first in the plan: their opportunities never reach this one.
			r.Nth = d.Nth
			for _, e := range s.Decisions[:i] {
				x := Context{Where: e.Where, Consumer: e.Consumer, Group: e.Group, Key: e.Key, Type: e.Type}
				if e.Point == d.Point && e.Tick == d.Tick && covers(&pattern, &x) {
					r.Nth--
				}
			}
			if r.Nth < 1 {
				r.Nth = 1
			}
		} else {
			r.Count = 1
		}
		p.Rules = append(p.Rules, r)
	}
	return p
}

// escape quotes the glob characters of a name so a Match field matches
// exactly it.
func escape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Go returns a Go snippet that adds the rules of s.Plan() to an injector
// called in, one call per line.
func (s Schedule) Go() string {
	var b strings.Builder
	for _, r := range s.Plan().Rules {
		fmt.Fprintf(&b, "in.Add(%#v)\n", r)
	}
	return b.String()
}

// GoString returns the rule as a Go composite literal naming the point's
// constant, with only the fields that are set, e.g.
// faults.Rule{Name: "dup", Point: faults.BrokerDuplicate, Nth: 2}.
func (r Rule) GoString() string {
	var f []string
	add := func(name, v string) { f = append(f, name+": "+v) }
	add("Name", strconv.Quote(r.Name))
	if c, ok := pointConst[r.Point]; ok {
		add("Point", "faults."+c)
	} else {
		add("Point", "faults.Point("+strconv.Quote(string(r.Point))+")")
	}
	if r.Probability != 0 {
		add("Probability", strconv.FormatFloat(r.Probability, 'g', -1, 64))
	}
	if r.From != 0 {
		add("From", strconv.FormatInt(int64(r.From), 10))
	}
	if r.Until != 0 {
		add("Until", strconv.FormatInt(int64(r.Until), 10))
	}
	if r.Count != 0 {
		add("Count", strconv.Itoa(r.Count))
	}
	if r.Nth != 0 {
		add("Nth", strconv.Itoa(r.Nth))
	}
	var m []string
	for _, x := range [...]struct{ n, v string }{{"Key", r.Match.Key}, {"Consumer", r.Match.Consumer}, {"Group", r.Match.Group}, {"Type", r.Match.Type}, {"Where", r.Match.Where}} {
		if x.v != "" {
			m = append(m, x.n+": "+strconv.Quote(x.v))
		}
	}
	if len(m) > 0 {
		add("Match", "faults.Match{"+strings.Join(m, ", ")+"}")
	}
	if r.Param != 0 {
		add("Param", strconv.FormatInt(r.Param, 10))
	}
	if r.Error != "" {
		add("Error", strconv.Quote(r.Error))
	}
	return "faults.Rule{" + strings.Join(f, ", ") + "}"
}

var pointConst = map[Point]string{
	ConsumerCrashBeforeProcess: "ConsumerCrashBeforeProcess",
	ConsumerCrashAfterEffect:   "ConsumerCrashAfterEffect",
	ConsumerCrashBeforeCommit:  "ConsumerCrashBeforeCommit",
	HandlerTransient:           "HandlerTransient",
	HandlerPermanent:           "HandlerPermanent",
	HandlerPoison:              "HandlerPoison",
	HandlerSlow:                "HandlerSlow",
	HandlerRateLimited:         "HandlerRateLimited",
	BrokerUnavailable:          "BrokerUnavailable",
	BrokerAckLost:              "BrokerAckLost",
	BrokerDuplicate:            "BrokerDuplicate",
	BrokerDelay:                "BrokerDelay",
	BrokerReorder:              "BrokerReorder",
	SubscriberOffline:          "SubscriberOffline",
	SubscriberSlow:             "SubscriberSlow",
	RelayCrashAfterPublish:     "RelayCrashAfterPublish",
	WriterCrashAfterCommit:     "WriterCrashAfterCommit",
	WriterCrashAfterPublish:    "WriterCrashAfterPublish",
	MemberCrash:                "MemberCrash",
	MemberLeave:                "MemberLeave",
	MemberSessionTimeout:       "MemberSessionTimeout",
	PartitionsAdded:            "PartitionsAdded",
	RetentionOvertake:          "RetentionOvertake",
	SagaStepFailed:             "SagaStepFailed",
	SagaStepSilent:             "SagaStepSilent",
	SagaCompensationDuplicate:  "SagaCompensationDuplicate",
}

// YAML returns the plan as the faults: section of a scenario file
// (docs/scenario-format.md), rules in plan order with only the fields
// that are set; an empty plan is "faults: []". The format is scenario's:
// scenario.FaultsYAML writes the section through the file's field table,
// and a test there holds this writer, kept for packages scenario's
// models import (simtest/core), to the same bytes.
func (p Plan) YAML() string {
	if len(p.Rules) == 0 {
		return "faults: []\n"
	}
	var b strings.Builder
	b.WriteString("faults:\n")
	for _, r := range p.Rules {
		fmt.Fprintf(&b, "  - name: %s\n", QuoteYAML(r.Name))
		fmt.Fprintf(&b, "    point: %s\n", r.Point)
		var m []string
		for _, x := range [...]struct{ n, v string }{{"key", r.Match.Key}, {"consumer", r.Match.Consumer}, {"group", r.Match.Group}, {"type", r.Match.Type}, {"where", r.Match.Where}} {
			if x.v != "" {
				m = append(m, fmt.Sprintf("      %s: %s\n", x.n, QuoteYAML(x.v)))
			}
		}
		if len(m) > 0 {
			b.WriteString("    match:\n")
			for _, x := range m {
				b.WriteString(x)
			}
		}
		if r.Probability != 0 {
			fmt.Fprintf(&b, "    probability: %s\n", strconv.FormatFloat(r.Probability, 'g', -1, 64))
		}
		if r.From != 0 {
			fmt.Fprintf(&b, "    from: %d\n", r.From)
		}
		if r.Until != 0 {
			fmt.Fprintf(&b, "    until: %d\n", r.Until)
		}
		if r.Count != 0 {
			fmt.Fprintf(&b, "    count: %d\n", r.Count)
		}
		if r.Nth != 0 {
			fmt.Fprintf(&b, "    nth: %d\n", r.Nth)
		}
		if r.Param != 0 {
			fmt.Fprintf(&b, "    param: %d\n", r.Param)
		}
		if r.Error != "" {
			fmt.Fprintf(&b, "    error: %s\n", QuoteYAML(r.Error))
		}
	}
	return b.String()
}

// QuoteYAML writes s plain when it is a simple name that YAML reads back
// as the same string, else double-quoted (YAML's double-quoted escapes
// agree with Go's for what Quote emits in ASCII mode): the one spelling of
// a name, pattern or text in a written faults section.
func QuoteYAML(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			plain = false
			break
		}
	}
	if plain && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') && !yamlReserved[strings.ToLower(s)] {
		return s
	}
	return strconv.QuoteToASCII(s)
}

var yamlReserved = map[string]bool{"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true, "null": true, "y": true, "n": true}
