package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Violation is one breach of a delivery guarantee, with the evidence.
type Violation struct {
	Check string // the checker that found it, e.g. "no-loss"
	Msg   ID     // the message
	Key   string // its key
	// Consumer is the logical consumer the violation is about; "" for a
	// loss before any consumer, and for a message still pending in a
	// queue nothing took from (the detail names the queue).
	Consumer string
	Tick     Tick   // when the evidence was recorded
	Detail   string // what was wrong
	// Misuse marks a violation about how the check was asked rather than
	// about the run: no ledger, no checkers, a consumer name the ledger
	// does not know, a negative bound. It says the test is set up wrong;
	// searching the fault schedule for its cause is pointless. A consumer
	// (or a ledger) that saw no message is not misuse: a fault, such as a
	// producer crashing before its first send, can cause it.
	Misuse bool
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
// carrying every violation of every checker at once. The checkers that
// judge outcomes (NoLoss, AtLeastOnce, AtMostOnce, ExactlyOnce,
// MaxDuplicates) share one fold of the ledger's outcomes: a call costs one
// O(copies) pass however many of them it is given, and each checker's
// violations are the ones its Violations method returns, in its order.
func Check(l *Ledger, checks ...Checker) error {
	var all []Violation
	if l == nil {
		return &CheckError{Violations: noLedger("ledger")}
	}
	if len(checks) == 0 {
		return &CheckError{Violations: []Violation{{Check: "check", Tick: l.last, Misuse: true, Detail: "no checkers were given, so nothing was judged"}}}
	}
	// The passes of a few checkers, the common case, stay on the stack.
	var small [4]pass
	passes := small[:0]
	if len(checks) <= len(small) {
		passes = small[:len(checks)]
	} else {
		passes = make([]pass, len(checks))
	}
	walking := 0
	for i, c := range checks {
		if cf, ok := c.(checkFunc); ok && cf.start != nil {
			passes[i] = cf.start(l)
			if passes[i].visit != nil {
				walking++
			}
		}
	}
	if walking > 0 {
		l.eachOutcomeFor(passes)
	}
	for i, c := range checks {
		if passes[i].finish != nil {
			all = append(all, passes[i].finish()...)
		} else {
			all = append(all, c.Violations(l)...)
		}
	}
	if len(all) == 0 {
		return nil
	}
	return &CheckError{Violations: all}
}

// pass is a checker's judgement split around the walk over the outcomes,
// so that the checkers of one Check call can share one walk: the checker
// judges what it can before the walk when it starts, visit is handed every
// outcome of consumer (every consumer when it is ""), in the order of
// Outcomes, and finish returns the violations, in the order the checker
// reports them. A nil visit means the verdict needs no walk.
//
// A pass that judges only losses sets lossOnly: the walk may then leave
// out an outcome it can tell is no loss without folding it (an unlinked
// copy its consumer applied, absorbed or missed), and only adds how many
// it left out to *judged, when judged is not nil. Such a pass's visit
// must report nothing about an outcome that is no loss (isLoss false).
type pass struct {
	consumer string
	visit    func(o *Outcome)
	finish   func() []Violation
	judged   *int
	lossOnly bool
}

// eachOutcomeFor hands every outcome to the visit of each pass that wants
// it, in the order of Outcomes: one fold of the outcomes for all of them,
// skipping the consumers no pass wants. It costs O(copies of the wanted
// consumers).
func (l *Ledger) eachOutcomeFor(passes []pass) {
	wants := func(p *pass, consumer string) bool {
		return p.visit != nil && (p.consumer == "" || p.consumer == consumer)
	}
	visit := func(o *Outcome) {
		for i := range passes {
			if p := &passes[i]; wants(p, o.Consumer) {
				p.visit(o)
			}
		}
	}
	if l.cached && l.cacheAt == l.events {
		for i := range l.cache {
			visit(&l.cache[i])
		}
		return
	}
	for _, b := range l.consumers {
		wanted, lossOnly := false, true
		for i := range passes {
			if p := &passes[i]; wants(p, b.name) {
				wanted = true
				lossOnly = lossOnly && p.lossOnly
			}
		}
		switch {
		case !wanted:
		case lossOnly:
			if n := l.eachBookLoss(b, visit); n > 0 {
				for i := range passes {
					if p := &passes[i]; wants(p, b.name) && p.judged != nil {
						*p.judged += n
					}
				}
			}
		default:
			l.eachBookOutcome(b, visit)
		}
	}
}

// eachBookLoss is eachBookOutcome for passes that judge only losses: it
// calls f, in the same order, for every outcome of consumer b that may be
// a loss, and returns how many outcomes it left out because they are not:
// those of the unlinked copies its consumer applied, absorbed or missed,
// which it tells from the copy's delivery alone, without its record,
// without exporting it and without building its key.
func (l *Ledger) eachBookLoss(b *consumerBook, f func(o *Outcome)) (fine int) {
	return l.walkBook(b, true, f)
}

// noLedger is the violation of a checker run without a ledger.
func noLedger(check string) []Violation {
	return []Violation{{Check: check, Misuse: true, Detail: "no ledger to check"}}
}

// checkFunc is a Checker built from a function: f judges the whole
// ledger, or, for a checker that judges outcomes, start begins a pass (see
// pass) that Violations walks alone and Check walks with the others.
type checkFunc struct {
	name  string
	f     func(l *Ledger) []Violation
	start func(l *Ledger) pass
}

func (c checkFunc) Name() string { return c.name }

// Violations runs the checker alone: its own walk over the outcomes it
// judges.
func (c checkFunc) Violations(l *Ledger) []Violation {
	if c.start == nil {
		return c.f(l)
	}
	p := c.start(l)
	if p.visit != nil {
		l.eachOutcomeOf(p.consumer, p.visit)
	}
	return p.finish()
}

// done is a pass whose verdict is known before the walk.
func done(vs []Violation) pass { return pass{finish: func() []Violation { return vs }} }

// NoLoss holds when every origin reached each consumer it was routed to
// and nothing was lost on the way. Its violations are: every loss that
// stands, with its cause (one lost before any consumer, such as a dual
// write, or lost for a consumer, such as a retention deletion); every
// origin still pending for a consumer at the end of the run ("still
// pending", so a run that stopped too early never passes); every copy
// still held by a broker that no consumer is routed; and every origin that
// left the broker without an effect and without a cause. Origins parked in
// a dead-letter queue, missed by design, or absorbed as duplicates are not
// losses. A ledger that never saw a message is a violation too: the check
// never passes vacuously.
func NoLoss() Checker {
	return checkFunc{name: "no-loss", start: func(l *Ledger) pass {
		if l == nil {
			return done(noLedger("no-loss"))
		}
		var out []Violation
		if l.recs.len() <= 1 {
			return done([]Violation{{Check: "no-loss", Tick: l.last, Detail: "the ledger saw no message, so there is nothing to judge"}})
		}
		for x := range l.allLosses() {
			if l.standsBeforeConsumers(x) {
				// Named by its origin, as every other violation is.
				root, why := l.Root(x.ID), "lost before any consumer ("+string(x.Cause)+")"
				if root != x.ID {
					why += ": its copy " + x.ID.String()
				}
				out = append(out, Violation{Check: "no-loss", Msg: root, Key: l.keyOf(x.ID), Tick: x.Tick, Detail: why})
			}
		}
		visit := func(o *Outcome) {
			if bad, why := lossWhy(l, o); bad {
				out = append(out, o.violation(l, "no-loss", why))
			}
		}
		finish := func() []Violation {
			// Copies a broker holds that no consumer is routed.
			// Only a pending record is exported, and only when no
			// consumer expects it: settled records cost a state test.
			for i, x := range l.recs.all() {
				if x.flags&recRegistered == 0 || x.State != StatePending || l.routed(ID(i)) {
					continue
				}
				r := l.export(ID(i), x)
				out = append(out, Violation{Check: "no-loss", Msg: r.ID, Key: r.Key, Tick: r.Changed,
					Detail: "still pending in " + r.Where + " at t=" + strconv.FormatInt(int64(l.last), 10) + ", and no consumer is routed it"})
			}
			return out
		}
		return pass{visit: visit, finish: finish, lossOnly: true}
	}}
}

// isLoss reports whether outcome o is a loss, or unknown because it is
// still pending: what NoLoss and AtLeastOnce judge a violation, and
// lossWhy explains. The kept tally (Ledger.Tally) counts with it too.
func isLoss(o *Outcome) bool {
	return o.Verdict == VerdictLost || o.Verdict == VerdictPending || o.Verdict == VerdictUnsettled
}

// lossWhy reports whether outcome o is a loss, or unknown because it is
// still pending (isLoss), and why.
func lossWhy(l *Ledger, o *Outcome) (bool, string) {
	if !isLoss(o) {
		return false, ""
	}
	switch o.Verdict {
	case VerdictLost:
		return true, "lost (" + string(o.Cause) + ")"
	case VerdictPending:
		if o.Deliveries == 0 && o.Where != "" && l.unread(o.Consumer) {
			return true, "still pending in " + o.Where + " at t=" + strconv.FormatInt(int64(l.last), 10) +
				", and no consumer took anything from it; the run ended before it was settled"
		}
		s := "still pending at t=" + strconv.FormatInt(int64(l.last), 10)
		if o.Where != "" {
			s += " (" + o.Where + ")"
		}
		if o.Deliveries > 0 {
			s += " after " + strconv.Itoa(o.Deliveries) + " deliveries without an effect"
		}
		return true, s + "; the run ended before it was settled"
	case VerdictUnsettled:
		if o.Deliveries == 0 {
			return true, "left the broker (" + o.State.String() + ") without reaching this consumer, and no cause was recorded"
		}
		what := "delivered " + strconv.Itoa(o.Deliveries) + " time(s)"
		if o.Acked {
			what += " and acknowledged"
		}
		return true, what + " but no effect was recorded, and no cause (" + o.State.String() + ")"
	}
	return false, ""
}

// violation returns a violation of check about o, at the tick it
// happened: for an origin applied more than once, which no check judges
// but as a repeated effect, its second effect (Outcome.Again); else the
// outcome's evidence (Outcome.Tick). It names o's consumer, unless that
// consumer never acted (Ledger.unread): a queue's logical consumer that
// nothing took from is the queue, which the violation's words name as
// where the message waits.
func (o *Outcome) violation(l *Ledger, check, why string) Violation {
	t := o.Tick
	if o.Effects > 1 {
		t = o.Again
	}
	v := Violation{Check: check, Msg: o.Origin, Key: o.Key, Consumer: o.Consumer, Tick: t, Detail: why}
	if o.Verdict == VerdictPending && o.Deliveries == 0 && l.unread(o.Consumer) {
		v.Consumer = ""
	}
	return v
}

// perOrigin builds a checker that judges every origin routed to the
// consumer called name ("" for every consumer). A name the ledger does not
// know, and a consumer routed no message at all, are violations: the check
// never passes vacuously. lossOnly says that f judges no outcome bad
// unless isLoss does, so the walk may leave out outcomes it can tell are
// no loss (see pass).
func perOrigin(check, name string, lossOnly bool, f func(l *Ledger, o *Outcome) (bool, string)) Checker {
	return checkFunc{name: check, start: func(l *Ledger) pass {
		if l == nil {
			return done(noLedger(check))
		}
		if v, ok := knownConsumer(l, check, name); !ok {
			return done([]Violation{v})
		}
		var out []Violation
		n := 0
		visit := func(o *Outcome) {
			n++
			if bad, why := f(l, o); bad {
				out = append(out, o.violation(l, check, why))
			}
		}
		finish := func() []Violation {
			if n == 0 {
				who := "consumer " + strconv.Quote(name)
				if name == "" {
					who = "any consumer"
				}
				return []Violation{{Check: check, Consumer: name, Tick: l.last, Detail: "no message was routed to " + who + ", so there is nothing to judge"}}
			}
			return out
		}
		p := pass{consumer: name, visit: visit, finish: finish, lossOnly: lossOnly}
		if lossOnly {
			p.judged = &n
		}
		return p
	}}
}

// knownConsumer returns a violation when name is set and no event named
// that consumer, listing the names the ledger knows.
func knownConsumer(l *Ledger, check, name string) (Violation, bool) {
	if name == "" || l.Consumer(name) != NoConsumer {
		return Violation{}, true
	}
	known := l.Consumers()
	list := "none"
	if len(known) > 0 {
		q := make([]string, len(known))
		for i, k := range known {
			q[i] = strconv.Quote(k)
		}
		list = strings.Join(q, ", ")
	}
	return Violation{Check: check, Consumer: name, Tick: l.last, Misuse: true,
		Detail: unknownConsumer + strconv.Quote(name) + "; it knows: " + list}, false
}

// unknownConsumer begins the detail of an unknown-consumer violation.
const unknownConsumer = "the ledger knows no consumer "

// HintActors returns vs with every unknown-consumer violation explained
// when its name is that of an actor in evs (a queue's worker pool or one
// of its instances "name#k", a group member): the ledger keeps logical
// consumers only, so a check given a worker's name instead of its queue's
// says which logical consumer that actor works for and how a check names
// it. Other violations are returned unchanged, and vs itself is not
// modified. It costs O(events) per unknown-consumer violation.
func HintActors(vs []Violation, evs []Event) []Violation { return hintActors(vs, evs, goCheck) }

// hintActors is HintActors with the check spelled by spell.
func hintActors(vs []Violation, evs []Event, spell func(check, consumer string) string) []Violation {
	var out []Violation
	for i, v := range vs {
		if !v.Misuse || v.Consumer == "" || !strings.HasPrefix(v.Detail, unknownConsumer) {
			continue
		}
		if h := actorHint(v.Check, v.Consumer, evs, spell); h != "" {
			if out == nil {
				out = append([]Violation(nil), vs...)
			}
			out[i].Detail += "; " + h
		}
	}
	if out == nil {
		return vs
	}
	return out
}

// actorHint says which logical consumers the actor called name (or its
// numbered instances) acted for in evs, "" when none.
func actorHint(check, name string, evs []Event, spell func(check, consumer string) string) string {
	var roles []string
	var first string
	for i := range evs {
		e := &evs[i]
		if !consumes(e.Kind) || e.Consumer == "" || e.Consumer == name || e.Actor != name && !strings.HasPrefix(e.Actor, name+"#") {
			continue
		}
		var role string
		switch {
		case strings.HasPrefix(e.Where, "queue:"):
			role = "a worker of queue " + strconv.Quote(e.Consumer)
		case strings.HasPrefix(e.Where, "log:"):
			role = "a member of group " + strconv.Quote(e.Consumer)
		default:
			role = "an actor of consumer " + strconv.Quote(e.Consumer)
		}
		if !slices.Contains(roles, role) {
			if first == "" {
				first = e.Consumer
			}
			roles = append(roles, role)
		}
	}
	if len(roles) == 0 {
		return ""
	}
	what := "the logical consumer"
	switch {
	case len(roles) > 1:
		what = "logical consumers"
	case strings.HasPrefix(roles[0], "a worker of queue"):
		what = "the queue"
	case strings.HasPrefix(roles[0], "a member of group"):
		what = "the group"
	}
	return strconv.Quote(name) + " is " + strings.Join(roles, " and ") + ": checks name " + what + " (" + spell(check, first) + ")"
}

// ActorIndex is a Sink that keeps, for each actor, the logical consumers
// it acted for, so a check given an actor's name can be explained (see
// HintActors) from a trace that is streamed rather than kept. It keeps one
// small event per distinct (actor, consumer, component) triple, so its
// memory follows the topology, not the length of the trace.
type ActorIndex struct {
	seen map[[3]string]bool
	evs  []Event
}

// Emit notes e's actor and logical consumer when e is a consumer's act.
func (x *ActorIndex) Emit(e *Event) {
	if !consumes(e.Kind) || e.Consumer == "" || e.Actor == "" {
		return
	}
	where := e.Where
	if i := strings.IndexByte(where, ':'); i >= 0 {
		where = where[:i+1] // the kind of component is all a hint names
	}
	k := [3]string{e.Actor, e.Consumer, where}
	if x.seen[k] {
		return
	}
	if x.seen == nil {
		x.seen = map[[3]string]bool{}
	}
	x.seen[k] = true
	x.evs = append(x.evs, Event{Kind: e.Kind, Actor: e.Actor, Consumer: e.Consumer, Where: where})
}

// Hint is HintActors over the actors the index saw, with each check
// spelled by spell (nil: as Go, "sim.AtLeastOnce(\"orders\")").
func (x *ActorIndex) Hint(vs []Violation, spell func(check, consumer string) string) []Violation {
	if spell == nil {
		spell = goCheck
	}
	return hintActors(vs, x.evs, spell)
}

// consumes reports whether an event of kind k is one a consumer's actor
// does (a producer's send names the consumer it is routed to, too).
func consumes(k Kind) bool {
	switch k {
	case KindReceived, KindRedelivered, KindPolled, KindDelivered, KindProcessed, KindSkipped, KindFailed, KindAcked, KindNacked:
		return true
	}
	return false
}

// goCheck spells the checker called check on consumer as Go.
func goCheck(check, consumer string) string {
	q := strconv.Quote(consumer)
	switch check {
	case "at-least-once":
		return "sim.AtLeastOnce(" + q + ")"
	case "at-most-once":
		return "sim.AtMostOnce(" + q + ")"
	case "exactly-once":
		return "sim.ExactlyOnce(" + q + ")"
	case "ordered-per-key":
		return "sim.OrderedPerKey(" + q + ")"
	case "max-duplicates":
		return "sim.MaxDuplicates(" + q + ", n)"
	}
	return check + " of " + q
}

// AtLeastOnce holds when the consumer called name ("" for every consumer)
// applied the effect of every origin routed to it at least once, over all
// the origin's copies (redrives and fan-out copies included). Origins
// parked in a dead-letter queue, missed by design, or absorbed as
// duplicates by an idempotent handler are accounted for; lost, still
// pending and unsettled origins are violations. Deliveries never stand in
// for effects: a handler that records none has applied none.
func AtLeastOnce(name string) Checker {
	return perOrigin("at-least-once", name, true, func(l *Ledger, o *Outcome) (bool, string) {
		return lossWhy(l, o)
	})
}

// AtMostOnce holds when the consumer called name ("" for every consumer)
// applied no origin's effect more than once over all its copies. An origin
// still pending at the end is a violation too, since a later delivery could
// still apply it again; so is one applied once while a broker duplicate of
// it is still held, since at-least-once delivery will hand that copy out.
func AtMostOnce(name string) Checker {
	return perOrigin("at-most-once", name, false, func(l *Ledger, o *Outcome) (bool, string) {
		if !atMostOnceBad(l, o) {
			return false, ""
		}
		if o.Effects > 1 {
			return true, "effect applied " + strconv.Itoa(o.Effects) + " times"
		}
		if o.Verdict == VerdictPending {
			return lossWhy(l, o)
		}
		return heldAgain(l, o)
	})
}

// atMostOnceBad reports whether AtMostOnce judges outcome o a violation:
// applied more than once, still pending, or applied while a duplicate is
// held (isHeldAgain). The kept tally (Ledger.Tally) counts with it too.
func atMostOnceBad(l *Ledger, o *Outcome) bool {
	return o.Effects > 1 || o.Verdict == VerdictPending || isHeldAgain(l, o)
}

// exactlyOnceBad reports whether ExactlyOnce judges outcome o a
// violation: applied more than once, applied once while a duplicate is
// held, or never applied and lost or still pending (isLoss).
func exactlyOnceBad(l *Ledger, o *Outcome) bool {
	switch {
	case o.Effects > 1:
		return true
	case o.Effects == 1:
		return isHeldAgain(l, o)
	}
	return isLoss(o)
}

// isHeldAgain reports whether the origin of o was applied while a broker
// duplicate of its last copy is still held.
func isHeldAgain(l *Ledger, o *Outcome) bool {
	return o.Effects != 0 && o.State == StatePending && l.extra[o.Last] != 0
}

// heldAgain reports whether the origin of o was applied while a broker
// duplicate of its last copy is still held (isHeldAgain), and says so.
func heldAgain(l *Ledger, o *Outcome) (bool, string) {
	if !isHeldAgain(l, o) {
		return false, ""
	}
	s := "applied once, and a copy is still held"
	if o.Where != "" {
		s += " at " + o.Where
	}
	return true, s + " at t=" + strconv.FormatInt(int64(l.last), 10) + ": at-least-once delivery will hand it out again"
}

// ExactlyOnce holds when the consumer called name ("" for every consumer)
// applied the effect of every origin routed to it exactly once over all its
// copies. Parked, missed and absorbed origins are exempt from the "at
// least" half, never from the "at most" half.
func ExactlyOnce(name string) Checker {
	return perOrigin("exactly-once", name, false, func(l *Ledger, o *Outcome) (bool, string) {
		if !exactlyOnceBad(l, o) {
			return false, ""
		}
		if o.Effects > 1 {
			return true, "effect applied " + strconv.Itoa(o.Effects) + " times"
		}
		if o.Effects == 1 {
			return heldAgain(l, o)
		}
		return lossWhy(l, o)
	})
}

// OrderedPerKey holds when the consumer called name ("" for every consumer)
// first applied the origins of each key in the order they were created
// (origin ID order). Each inversion is reported with both origins; a
// repeated application of an origin is a duplicate, not an inversion.
func OrderedPerKey(name string) Checker {
	const check = "ordered-per-key"
	return checkFunc{name: check, f: func(l *Ledger) []Violation {
		if l == nil {
			return noLedger(check)
		}
		if v, ok := knownConsumer(l, check, name); !ok {
			return []Violation{v}
		}
		var out []Violation
		keyed := 0
		for _, b := range l.consumers {
			if name != "" && b.name != name {
				continue
			}
			// The fold Ledger.Tally keeps, run once over every first
			// application and keeping every inversion.
			f := &orderFold{last: map[string]ID{}, keep: -1}
			f.fold(l, b)
			keyed += f.keyed
			out = append(out, f.firsts...)
		}
		if keyed == 0 {
			return []Violation{{Check: check, Consumer: name, Tick: l.last, Detail: "no effect of a message with a key was applied, so there is no order to judge"}}
		}
		return out
	}}
}

// MaxDuplicates holds when the consumer called name ("" for all) saw at
// most n repeated deliveries of an origin in total (a redriven copy of a
// message it had received counts as a repeat). A name the ledger does not
// know, a consumer routed no message, and a negative n are violations.
func MaxDuplicates(name string, n int) Checker {
	const check = "max-duplicates"
	return checkFunc{name: check, start: func(l *Ledger) pass {
		if l == nil {
			return done(noLedger(check))
		}
		if n < 0 {
			return done([]Violation{{Check: check, Consumer: name, Tick: l.last, Misuse: true, Detail: "at most " + strconv.Itoa(n) + " duplicates cannot hold; give 0 or more"}})
		}
		if v, ok := knownConsumer(l, check, name); !ok {
			return done([]Violation{v})
		}
		d, routed := 0, 0
		visit := func(o *Outcome) { routed++; d += max(0, o.Deliveries-1) }
		finish := func() []Violation {
			if routed == 0 {
				return []Violation{{Check: check, Consumer: name, Tick: l.last, Detail: "no message was routed to it, so there is nothing to judge"}}
			}
			if d > n {
				return []Violation{{Check: "max-duplicates", Consumer: name, Tick: l.last,
					Detail: strconv.Itoa(d) + " duplicate deliveries, at most " + strconv.Itoa(n) + " allowed"}}
			}
			return nil
		}
		return pass{consumer: name, visit: visit, finish: finish}
	}}
}

// CheckNames lists the checks ParseCheck knows, in the spelling of
// scenario files and of `brokerlab verify --check`.
var CheckNames = []string{"no_loss", "at_least_once", "at_most_once", "exactly_once", "ordered_per_key", "max_duplicates"}

// ParseCheck returns the checker a spec names: "no_loss",
// "at_least_once:CONSUMER", "at_most_once:CONSUMER",
// "exactly_once:CONSUMER", "ordered_per_key:CONSUMER" (the consumer may be
// left out for every consumer) or "max_duplicates:CONSUMER:N". The error
// says what is allowed.
func ParseCheck(spec string) (Checker, error) {
	name, rest, _ := strings.Cut(spec, ":")
	bad := func(why string) error {
		return fmt.Errorf("%w: check %q: %s; allowed: no_loss, at_least_once:CONSUMER, at_most_once:CONSUMER, exactly_once:CONSUMER, ordered_per_key:CONSUMER, max_duplicates:CONSUMER:N",
			ErrInvalidConfig, spec, why)
	}
	switch name {
	case "no_loss":
		if rest != "" {
			return nil, bad("no_loss takes no consumer")
		}
		return NoLoss(), nil
	case "at_least_once":
		return AtLeastOnce(rest), nil
	case "at_most_once":
		return AtMostOnce(rest), nil
	case "exactly_once":
		return ExactlyOnce(rest), nil
	case "ordered_per_key":
		return OrderedPerKey(rest), nil
	case "max_duplicates":
		c, ns, ok := strings.Cut(rest, ":")
		n, err := strconv.Atoi(ns)
		if !ok || err != nil || n < 0 {
			return nil, bad("max_duplicates needs a consumer and a count of at least 0")
		}
		return MaxDuplicates(c, n), nil
	}
	return nil, bad("unknown check")
}
