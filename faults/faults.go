// Package faults is brokerlab's deterministic fault injector.
//
// Models and actors consult named fault Points ("consumer.crash_before_process",
// "broker.unavailable", ...) through an Injector. A Plan's Rules decide, at each
// consultation, whether a fault fires: by schedule window, by match on the
// message key, consumer, group, message type or component, by count (at most
// N firings, or only on the Nth matching opportunity) and by probability.
// Every rule draws from its own random stream derived from (seed, rule name),
// so adding a rule never changes the decisions of another one. Every firing
// is a trace event of kind "fault" that names its rule.
//
// Rules are evaluated in plan order; the first rule that fires wins and the
// rules after it are not consulted for that opportunity. A consultation costs
// O(rules for that point). A model that consults points on every message
// resolves them once with Site, which then costs a bit test for a point no
// rule targets.
//
// An injector that records (Config.Record) lists every firing as a
// Decision naming its opportunity (Fired). A Schedule of decisions can be
// replayed exactly, firing those and nothing else (Config.Replay), shrunk
// to a 1-minimal failing subset (Minimize), told in words (Words) and
// turned into explicit rules that fire exactly it (Plan, Plan.YAML, Go).
// An opportunity about a message is named by its point, context and
// occurrence over the run, so a shorter run that shifts ticks still finds
// it; one without a message by its tick and occurrence within it. Add
// returns a Handle to the rule, which counts its firings and disables it.
package faults

import (
	"errors"
	"fmt"
	"math"
	"path"
	"sort"

	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package faults.
var (
	ErrInvalidRule  = sim.Sentinel("faults: invalid rule", sim.ErrInvalidConfig)
	ErrUnknownPoint = errors.New("faults: unknown fault point")
	ErrUnknownRule  = errors.New("faults: unknown rule")
)

// Point names a place where a fault can be injected.
type Point string

// The fault points. The model that consults each one is named in its
// description (see Points).
const (
	ConsumerCrashBeforeProcess Point = "consumer.crash_before_process"
	ConsumerCrashAfterEffect   Point = "consumer.crash_after_effect"
	ConsumerCrashBeforeCommit  Point = "consumer.crash_before_commit"
	HandlerTransient           Point = "handler.transient"
	HandlerPermanent           Point = "handler.permanent"
	HandlerPoison              Point = "handler.poison"
	HandlerSlow                Point = "handler.slow"
	HandlerRateLimited         Point = "handler.rate_limited"
	BrokerUnavailable          Point = "broker.unavailable"
	BrokerAckLost              Point = "broker.ack_lost"
	BrokerDuplicate            Point = "broker.duplicate"
	BrokerDelay                Point = "broker.delay"
	BrokerReorder              Point = "broker.reorder"
	SubscriberOffline          Point = "subscriber.offline"
	SubscriberSlow             Point = "subscriber.slow"
	RelayCrashAfterPublish     Point = "relay.crash_after_publish"
	WriterCrashAfterCommit     Point = "writer.crash_after_commit"
	WriterCrashAfterPublish    Point = "writer.crash_after_publish"
	MemberCrash                Point = "member.crash"
	MemberLeave                Point = "member.leave"
	MemberSessionTimeout       Point = "member.session_timeout"
	PartitionsAdded            Point = "log.partitions_added"
	RetentionOvertake          Point = "log.retention_overtake"
	SagaStepFailed             Point = "saga.step_failed"
	SagaStepSilent             Point = "saga.step_silent"
	SagaCompensationDuplicate  Point = "saga.compensation_duplicate"
)

// PointInfo documents a fault point.
type PointInfo struct {
	Point Point
	// Param says what Rule.Param means at this point ("" when unused).
	Param string
	// Doc says what firing does.
	Doc string
}

// Points lists every fault point, sorted by name.
var Points = sortedPoints(points[:])

// points are the fault points, in an array so that its length is a
// constant: at most 64, one bit each of Injector.targeted.
var points = [...]PointInfo{
	{ConsumerCrashBeforeProcess, "", "a queue consumer crashes after receiving, before its handler runs; the message is not acked"},
	{ConsumerCrashAfterEffect, "", "a consumer crashes after its effect was applied, before its forward, the ack or commit"},
	{ConsumerCrashBeforeCommit, "", "a log group member crashes after processing, before committing its offset"},
	{HandlerTransient, "failing attempts before success (default 1)", "the handler fails with a transient error and succeeds on a later attempt"},
	{HandlerPermanent, "", "the handler fails with a permanent error (retrying cannot help)"},
	{HandlerPoison, "", "the message is poison: the handler fails on every attempt"},
	{HandlerSlow, "extra ticks of processing (default 1)", "the handler takes longer, possibly past the visibility timeout"},
	{HandlerRateLimited, "Retry-After in ticks (default 1)", "a downstream refuses the handler's call with a rate limit (HTTP 429 with Retry-After): a transient failure that says when to retry"},
	{BrokerUnavailable, "", "sends, receives, publishes, acks, deletes, visibility changes and commits fail with a connection error"},
	{BrokerAckLost, "", "an ack, delete or offset commit is lost on its way: the consumer believes it succeeded, the broker never got it"},
	{BrokerDuplicate, "", "the broker delivers the message twice"},
	{BrokerDelay, "ticks of delay (default 1)", "the broker delays a delivery"},
	{BrokerReorder, "", "the broker delivers a message after the one behind it"},
	{SubscriberOffline, "", "a pub/sub subscriber is offline while the rule is active"},
	{SubscriberSlow, "ticks per message (default 1)", "a pub/sub subscriber drains its buffer slowly"},
	{RelayCrashAfterPublish, "", "an outbox relay crashes after publishing a row, before marking it sent"},
	{WriterCrashAfterCommit, "", "a dual-write service crashes between its DB commit and its publish"},
	{WriterCrashAfterPublish, "", "a dual-write service crashes after publishing, before its DB commit"},
	{MemberCrash, "", "a consumer-group member crashes and rejoins"},
	{MemberLeave, "", "a consumer-group member leaves the group"},
	{MemberSessionTimeout, "", "a consumer-group member misses its session timeout"},
	{PartitionsAdded, "partitions to add (default 1; the log stops at its partition cap)", "a log topic gets more partitions, remapping keys"},
	{RetentionOvertake, "", "retention deletes records a slow group has not read"},
	{SagaStepFailed, "", "a saga step's participant answers with a failure (the payment is declined)"},
	{SagaStepSilent, "", "a saga step's participant never answers; the orchestrator times the step out"},
	{SagaCompensationDuplicate, "", "a saga compensation is delivered twice to its participant"},
}

func sortedPoints(p []PointInfo) []PointInfo {
	sort.Slice(p, func(i, j int) bool { return p[i].Point < p[j].Point })
	return p
}

// Known reports whether p is a declared fault point.
func Known(p Point) bool { return index(p) >= 0 }

// pointIndex maps each fault point to its index in Points. Models
// resolve a dozen points per world (Site), so a world built per seed of
// a sweep looks them up by hash rather than by a binary search of string
// comparisons.
var pointIndex = func() map[Point]int {
	m := make(map[Point]int, len(Points))
	for i, x := range Points {
		m[x.Point] = i
	}
	return m
}()

// index returns the index of p in Points, -1 when p is not a fault
// point. O(1).
func index(p Point) int {
	if i, ok := pointIndex[p]; ok {
		return i
	}
	return -1
}

// Match restricts a rule to some opportunities. Empty fields match anything;
// a field may be a glob in the syntax of path.Match ("kunde-*").
type Match struct {
	Key      string // message key
	Consumer string // consumer, subscriber, relay or member name
	Group    string // consumer group
	Type     string // message type header
	Where    string // component, e.g. "queue:orders"
}

// Rule is one line of a fault plan.
type Rule struct {
	// Name identifies the rule in the trace; unique within a plan.
	Name string
	// Point is where the rule applies.
	Point Point
	// Probability of firing at a matching opportunity, in [0, 1]; 0 means 1
	// (always), so a rule that states no probability is deterministic.
	Probability float64
	// From and Until bound the active window [From, Until) in ticks; Until 0
	// means no end.
	From, Until sim.Tick
	// Count caps the number of firings; 0 means no cap.
	Count int
	// Nth, when positive, fires only on the Nth matching opportunity in the
	// window (1-based), e.g. "the broker fails on the 2nd row".
	Nth int
	// Match restricts the opportunities.
	Match Match
	// Param is point-specific (see PointInfo.Param).
	Param int64
	// Error is the error text a handler or broker reports when it fires.
	Error string
}

// Validate reports whether the rule is well formed.
func (r Rule) Validate() error {
	switch {
	case r.Name == "":
		return fmt.Errorf("%w: a rule needs a name", ErrInvalidRule)
	case !Known(r.Point):
		return fmt.Errorf("%w: rule %q: %w %q", ErrInvalidRule, r.Name, ErrUnknownPoint, r.Point)
	case math.IsNaN(r.Probability) || r.Probability < 0 || r.Probability > 1:
		return fmt.Errorf("%w: rule %q: probability %v is outside [0, 1]", ErrInvalidRule, r.Name, r.Probability)
	case r.From < 0 || r.Until < 0:
		return fmt.Errorf("%w: rule %q: window ticks must not be negative", ErrInvalidRule, r.Name)
	case r.Until != 0 && r.Until <= r.From:
		return fmt.Errorf("%w: rule %q: window [%d, %d) is empty", ErrInvalidRule, r.Name, r.From, r.Until)
	case r.Count < 0:
		return fmt.Errorf("%w: rule %q: count %d is negative", ErrInvalidRule, r.Name, r.Count)
	case r.Nth < 0:
		return fmt.Errorf("%w: rule %q: nth %d is negative", ErrInvalidRule, r.Name, r.Nth)
	case r.Param < 0:
		return fmt.Errorf("%w: rule %q: param %d is negative", ErrInvalidRule, r.Name, r.Param)
	}
	if r.Match == (Match{}) {
		return nil // no pattern to check, as in most rules
	}
	for _, g := range []string{r.Match.Key, r.Match.Consumer, r.Match.Group, r.Match.Type, r.Match.Where} {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("%w: rule %q: bad pattern %q: %v", ErrInvalidRule, r.Name, g, err)
		}
	}
	return nil
}

// Plan is an ordered list of rules.
type Plan struct {
	Rules []Rule
}

// Validate checks every rule and that names are unique; it reports every
// problem at once. A plan of up to planScan rules, as nearly every plan
// is, is checked for repeated names by comparing each with the valid
// rules before it, without building a set of names: O(rules^2) then, and
// O(rules) with a map for a longer plan.
func (p Plan) Validate() error {
	var errs []error
	var seen map[string]bool
	if len(p.Rules) > planScan {
		seen = make(map[string]bool, len(p.Rules))
	}
	var valid [planScan]bool // by rule, while the plan is scanned
	for i, r := range p.Rules {
		if err := r.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen != nil {
			if seen[r.Name] {
				errs = append(errs, usedTwice(r.Name))
			}
			seen[r.Name] = true
			continue
		}
		for j := range i {
			if valid[j] && p.Rules[j].Name == r.Name {
				errs = append(errs, usedTwice(r.Name))
				break
			}
		}
		valid[i] = true
	}
	return errors.Join(errs...)
}

// usedTwice is Plan.Validate's error for a rule named like one before it.
func usedTwice(name string) error {
	return fmt.Errorf("%w: rule name %q used twice", ErrInvalidRule, name)
}

// planScan is the longest plan whose names Plan.Validate compares in
// pairs rather than through a map.
const planScan = 16

// Context describes one opportunity for a fault.
type Context struct {
	Where    string // component consulting the point, e.g. "queue:orders"
	Consumer string
	Group    string
	Key      string
	Type     string
	Msg      sim.ID
}

// Firing is a fault that fired.
type Firing struct {
	Rule  string
	Point Point
	Param int64
	Error string
}

// Config configures an Injector.
type Config struct {
	Plan Plan
	// Record makes the injector note, at every consultation of a point a
	// rule targets, which opportunity it is (Decision.Occurrence and
	// Decision.Nth), so that Fired can be replayed (Replay) and turned into
	// an exact Plan. It costs a map update and a copy of the Context per
	// consultation, and memory per firing, message and point. Without it,
	// Fired lists nothing and only counts the firings (Schedule.Omitted),
	// so a run that does not record pays nothing on its hot path.
	Record bool
	// Replay, when non-nil, fires exactly the listed decisions, each at
	// the opportunity it names, and nothing else: the plan's rules draw
	// nothing and fire nothing, though they still count the firings of
	// their name (Handle.Fired). Replay implies Record, so the run's Fired
	// can be replayed in turn. The schedule must have been recorded.
	Replay *Schedule
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	err := c.Plan.Validate()
	if c.Replay != nil {
		err = errors.Join(err, c.Replay.replayable())
	}
	return err
}

// ruleState is a rule of an injector and what the run did with it so
// far: its stream, counts and switch, and its place in its point's list.
// It keeps the rule's fields but Until, Count and Match in their own
// names, Until and Count in the form draw compares against and Match
// behind a pointer, nil for the empty Match of most rules (original
// rebuilds the rule as added). 160 bytes, so a plan of three rules takes
// one 480-byte block and one of two a 320-byte block.
type ruleState struct {
	Name        string
	Point       Point
	Probability float64
	From        sim.Tick
	Nth         int
	Param       int64
	Error       string
	until       sim.Tick   // Until, or the largest tick when Until is 0 (no end)
	limit       int        // Count, or the largest int when Count is 0 (no limit)
	match       *Match     // the rule's Match, nil when it is empty: the rule matches every context
	stream      sim.Stream // held in the rule, not behind a pointer: one allocation less per rule
	next        *ruleState // the next rule of the same point in plan order, nil for its last
	opportunities,
	fired int
	pi       uint8 // the index of the rule's point in Points
	disabled bool
	noEnd    bool // Until was 0
	noLimit  bool // Count was 0
}

// original returns the rule as it was added.
func (r *ruleState) original() Rule {
	x := Rule{Name: r.Name, Point: r.Point, Probability: r.Probability, From: r.From, Until: r.until,
		Count: r.limit, Nth: r.Nth, Param: r.Param, Error: r.Error}
	if r.noEnd {
		x.Until = 0
	}
	if r.noLimit {
		x.Count = 0
	}
	if r.match != nil {
		x.Match = *r.match
	}
	return x
}

// Injector decides, deterministically, whether faults fire. A nil *Injector
// never fires, so models can run without one. Not safe for concurrent use.
//
// The rules of a point form a list in plan order through ruleState.next,
// so a point's rules cost no list of their own and a Site holds the
// point's first rule. A plan costs two allocations however many rules it
// has, the injector and its rules, and a third when any of its rules has
// a Match, for their Matches. A rule added later costs two, the rule and
// its Handle, three with a Match; the first Add also makes the list of
// added rules.
type Injector struct {
	env *sim.Env
	// states holds the rules of the plan, in plan order, made at once by
	// New; added holds the rules Add appended since, in order, each
	// allocated on its own. Rules are referred to by pointer (Site,
	// Handle, ruleState.next), so states is never appended to. Every
	// rule, in order, is states then added (see all).
	states []ruleState
	added  []*ruleState
	// targeted has bit i set when a rule targets Points[i], so a Site of
	// a point no rule targets answers without a search.
	targeted uint64
	// armedPts has bit i set when Has(Points[i]) holds: an enabled rule
	// targets the point or, when replaying, the schedule names it; and
	// consultedPts when Check can do anything at Points[i] (see
	// Site.Consulted). add, disable and New keep them, so a Site answers
	// Armed and Consulted with a bit test.
	armedPts, consultedPts uint64
	// plainPts has bit i set when a rule targets Points[i], none of them
	// has a Match and the injector neither records nor replays: then a
	// consultation reads its context only when a rule fires (see draw),
	// so the handler wrapper builds it only then. rearm keeps it.
	plainPts uint64
	last     Firing    // the latest firing, which CheckRef points to
	omitted  int       // firings not listed in rec.fired (every firing when not recording)
	rec      *recorder // non-nil when recording or replaying
}

// all yields every rule of the injector in the order it was added: the
// plan's, then those Add appended. O(rules).
func (in *Injector) all(yield func(*ruleState) bool) {
	for i := range in.states {
		if !yield(&in.states[i]) {
			return
		}
	}
	for _, r := range in.added {
		if !yield(r) {
			return
		}
	}
}

// rule returns the rule called name, nil when there is none. O(rules).
func (in *Injector) rule(name string) *ruleState {
	for r := range in.all {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// head returns the first rule of point p in plan order, whose next links
// the point's other rules; nil when no rule targets p. O(rules).
func (in *Injector) head(p Point) *ruleState {
	// Written out rather than ranging over all: Has and CheckRef ask
	// for every message, and the loops need no closure.
	for i := range in.states {
		if in.states[i].Point == p {
			return &in.states[i]
		}
	}
	for _, r := range in.added {
		if r.Point == p {
			return r
		}
	}
	return nil
}

// headAt is head for the point Points[i]: O(rules), comparing integers.
func (in *Injector) headAt(i int) *ruleState {
	for r := range in.all {
		if int(r.pi) == i {
			return r
		}
	}
	return nil
}

// New returns an Injector for the plan, bound to the world w: its clock,
// its trace (every firing is an event) and its seed (each rule draws from
// its own stream).
func New(w *sim.World, cfg Config) (*Injector, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: no world", ErrInvalidRule)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	in := &Injector{env: w.Env()}
	var matches []Match // where the plan's rules with a Match keep it, made at once
	if n := len(cfg.Plan.Rules); n > 0 {
		in.states = make([]ruleState, 0, n)
		m := 0
		for _, r := range cfg.Plan.Rules {
			if r.Match != (Match{}) {
				m++
			}
		}
		if m > 0 {
			matches = make([]Match, m)
		}
	}
	for _, r := range cfg.Plan.Rules {
		var m *Match
		if r.Match != (Match{}) {
			m, matches = &matches[0], matches[1:]
		}
		in.add(r, m)
	}
	if cfg.Record || cfg.Replay != nil {
		in.rec = newRecorder(cfg.Replay)
	}
	in.rearm()
	return in, nil
}

// replaying reports whether the injector replays a schedule.
func (in *Injector) replaying() bool { return in.rec != nil && in.rec.replay != nil }

// rearm sets armedPts, consultedPts and plainPts from the rules, the
// recorder and the replayed schedule. O(points targeted + rules); it
// runs when a rule is added or disabled, never per consultation.
func (in *Injector) rearm() {
	in.plainPts = 0
	if in.rec == nil {
		in.plainPts = in.targeted
		for r := range in.all {
			if r.match != nil {
				in.plainPts &^= 1 << r.pi
			}
		}
	}
	if in.replaying() {
		var pts uint64
		for _, p := range in.rec.points {
			if i := index(p); i >= 0 {
				pts |= 1 << i
			}
		}
		in.armedPts, in.consultedPts = pts, pts
		return
	}
	var armed uint64
	for r := range in.all {
		if !r.disabled {
			armed |= 1 << r.pi
		}
	}
	in.armedPts, in.consultedPts = armed, in.targeted
}

// disable switches r, one of the injector's rules, off for the rest of
// the run.
func (in *Injector) disable(r *ruleState) {
	r.disabled = true
	in.rearm()
}

// add appends rule r, which Validate accepted, to the injector's rules
// and to the end of its point's list, and rearms the injector; m is
// where r's Match is kept when it is not empty, nil to allocate it.
// O(rules).
func (in *Injector) add(r Rule, m *Match) *ruleState {
	var rs *ruleState
	if len(in.states) < cap(in.states) {
		in.states = in.states[:len(in.states)+1]
		rs = &in.states[len(in.states)-1]
	} else {
		rs = &ruleState{}
	}
	// Filled in place: a literal would be built in a temporary and copied.
	rs.Name, rs.Point, rs.Probability, rs.From, rs.Nth, rs.Param, rs.Error = r.Name, r.Point, r.Probability, r.From, r.Nth, r.Param, r.Error
	rs.until, rs.limit, rs.noEnd, rs.noLimit = r.Until, r.Count, r.Until == 0, r.Count == 0
	if rs.noEnd {
		rs.until = math.MaxInt64
	}
	if rs.noLimit {
		rs.limit = math.MaxInt
	}
	if r.Match != (Match{}) {
		if m == nil {
			m = new(Match)
		}
		*m = r.Match
		rs.match = m
	}
	rs.stream, rs.pi = *in.env.Stream("fault/" + r.Name), uint8(index(r.Point))
	// Linked after the point's last rule so far, which is not rs: a rule
	// of the plan is found among states only after its point's earlier
	// rules, and a rule added later is not among the rules yet.
	if in.targeted&(1<<rs.pi) != 0 {
		last := in.headAt(int(rs.pi))
		for last.next != nil {
			last = last.next
		}
		last.next = rs
	}
	in.targeted |= 1 << rs.pi
	if len(in.states) == 0 || rs != &in.states[len(in.states)-1] {
		in.added = append(in.added, rs)
	}
	in.rearm()
	return rs
}

// Add appends a rule at run time (a fault injected by hand) and returns
// its handle. The rule is consulted after every earlier rule of its point.
// When the injector replays a schedule, the rule draws and fires nothing
// of its own; its handle counts the replayed firings of its name.
func (in *Injector) Add(r Rule) (*Handle, error) {
	if in == nil {
		return nil, fmt.Errorf("%w: no injector", ErrInvalidRule)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if in.rule(r.Name) != nil {
		return nil, fmt.Errorf("%w: rule name %q used twice", ErrInvalidRule, r.Name)
	}
	return &Handle{in: in, r: in.add(r, nil)}, nil
}

// Disable switches a rule off for the rest of the run ("fix the bug").
func (in *Injector) Disable(name string) error {
	if in != nil {
		if r := in.rule(name); r != nil {
			in.disable(r)
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrUnknownRule, name)
}

// Has reports whether any enabled rule targets point p; models use it to
// skip building a Context on hot paths.
func (in *Injector) Has(p Point) bool {
	if in == nil {
		return false
	}
	if in.replaying() {
		return in.rec.replays(p)
	}
	for r := in.head(p); r != nil; r = r.next {
		if !r.disabled {
			return true
		}
	}
	return false
}

func glob(pattern, s string) bool {
	if pattern == "" || pattern == s {
		return true
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

// matchesContext reports whether c matches the rule's Match, which is
// not empty.
func (r *ruleState) matchesContext(c *Context) bool {
	m := r.match
	return glob(m.Key, c.Key) && glob(m.Consumer, c.Consumer) && glob(m.Group, c.Group) &&
		glob(m.Type, c.Type) && glob(m.Where, c.Where)
}

// Check consults point p for the opportunity c at the current tick. It
// returns the firing and true when a rule fired, and traces it.
func (in *Injector) Check(p Point, c Context) (Firing, bool) {
	if f := in.CheckRef(p, &c); f != nil {
		return *f, true
	}
	return Firing{}, false
}

// CheckRef is Check for a model on a hot path: the context is passed by
// pointer and not retained, and the result is a pointer to the firing, nil
// when no rule fired, so neither is copied for every opportunity. The
// Firing belongs to the injector and is overwritten by the next firing.
// It costs a scan of the rules for p's first one and, for each matching
// rule of p, one draw from the rule's stream, exactly as Check.
func (in *Injector) CheckRef(p Point, c *Context) *Firing {
	if in == nil {
		return nil
	}
	return in.check(p, in.head(p), c)
}

// check is CheckRef for point p whose first rule is head (nil when no
// rule targets p).
func (in *Injector) check(p Point, head *ruleState, c *Context) *Firing {
	if in.rec != nil {
		return in.checkRecorded(p, head, c)
	}
	if head == nil {
		return nil
	}
	if r := draw(head, in.env.Clock.Now(), c); r != nil {
		return in.fire(r.Name, r.Point, r.Param, r.Error, c, 0, 0)
	}
	return nil
}

// draw consults the rules of one point in plan order, from head on, for
// the opportunity c at tick now, and returns the first that fires (its
// count already raised), or nil. It reads c only for a rule with a
// Match, so c may be nil when none of them has one. Every rule that
// applies counts the opportunity and, past its nth filter, draws once
// from its own stream; the rules after the one that fires are not
// consulted. Recording and plain runs share it, so both decide alike.
// O(rules of the point).
func draw(head *ruleState, now sim.Tick, c *Context) *ruleState {
	for r := head; r != nil; r = r.next {
		// Whether r applies now, to c (written out so it is not a call).
		if r.disabled || now < r.From || now >= r.until || r.fired >= r.limit || r.match != nil && !r.matchesContext(c) {
			continue
		}
		r.opportunities++
		if r.Nth > 0 && r.opportunities != r.Nth {
			continue
		}
		p := r.Probability
		if p == 0 {
			p = 1
		}
		if !r.stream.Chance(p) {
			continue
		}
		r.fired++
		return r
	}
	return nil
}

// fire traces a firing of rule at point p for c, notes it in Fired and
// returns it; occ and nth are its opportunity indexes (0 when not
// recording).
func (in *Injector) fire(rule string, p Point, param int64, text string, c *Context, occ, nth int) *Firing {
	actor := c.Consumer
	if actor == "" {
		actor = c.Group
	}
	now := in.env.Clock.Now()
	in.env.Emit(sim.Event{Kind: sim.KindFault, Where: c.Where, Actor: actor, Msg: c.Msg, Key: c.Key, Rule: rule, Detail: string(p)})
	if in.rec != nil && len(in.rec.fired) < MaxDecisions {
		in.rec.fired = append(in.rec.fired, Decision{Tick: now, Rule: rule, Point: p, Msg: c.Msg, Where: c.Where,
			Consumer: c.Consumer, Group: c.Group, Key: c.Key, Type: c.Type, Param: param, Error: text,
			Occurrence: occ, Nth: nth})
	} else {
		in.omitted++
	}
	in.last = Firing{Rule: rule, Point: p, Param: param, Error: text}
	return &in.last
}

// RuleStat is how often a rule was consulted and fired.
type RuleStat struct {
	Name          string
	Point         Point
	Opportunities int
	Fired         int
	Disabled      bool
}

// Stats returns one entry per rule, in plan order.
func (in *Injector) Stats() []RuleStat {
	if in == nil {
		return nil
	}
	out := make([]RuleStat, 0, len(in.states)+len(in.added))
	for r := range in.all {
		out = append(out, RuleStat{Name: r.Name, Point: r.Point, Opportunities: r.opportunities, Fired: r.fired, Disabled: r.disabled})
	}
	return out
}
