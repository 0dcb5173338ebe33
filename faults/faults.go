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
	{PartitionsAdded, "partitions to add (default 1)", "a log topic gets more partitions, remapping keys"},
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
// problem at once.
func (p Plan) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range p.Rules {
		if err := r.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[r.Name] {
			errs = append(errs, fmt.Errorf("%w: rule name %q used twice", ErrInvalidRule, r.Name))
		}
		seen[r.Name] = true
	}
	return errors.Join(errs...)
}

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

type ruleState struct {
	Rule
	in            *Injector  // the injector the rule belongs to
	stream        sim.Stream // held in the rule, not behind a pointer: one allocation less per rule
	opportunities int
	fired         int
	disabled      bool
	any           bool     // the rule's Match is empty: it matches every context
	until         sim.Tick // Until, or the largest tick when Until is 0 (no end)
	limit         int      // Count, or the largest int when Count is 0 (no limit)
}

// Injector decides, deterministically, whether faults fire. A nil *Injector
// never fires, so models can run without one. Not safe for concurrent use.
type Injector struct {
	env     *sim.Env
	rules   []*ruleState
	byPoint []*pointRules // in order of first use; a plan targets few points
	// targeted has bit i set when a rule targets Points[i], so a Site of
	// a point no rule targets answers without a search.
	targeted uint64
	// armedPts has bit i set when Has(Points[i]) holds: an enabled rule
	// targets the point or, when replaying, the schedule names it; and
	// consultedPts when Check can do anything at Points[i] (see
	// Site.Consulted). add, disable and New keep them, so a Site answers
	// Armed and Consulted with a bit test.
	armedPts, consultedPts uint64
	// states and pts hold the rules of the plan and their points, made
	// at once by New so a plan costs a few allocations however many
	// rules it has; add takes from them while they have room and
	// allocates a rule or point of its own after (rules added later).
	// Rules and points are referred to by pointer, so neither is ever
	// appended to past its capacity.
	states []ruleState
	pts    []pointRules
	// smallRules, smallByPoint and smallPts are where rules, byPoint and
	// pts start, for a plan of at most smallPlan rules: such a plan costs
	// two allocations, the injector and its rule states (see New).
	smallRules   [smallPlan]*ruleState
	smallByPoint [smallPlan]*pointRules
	smallPts     [smallPlan]pointRules
	last         Firing     // the latest firing, which CheckRef points to
	fired        []Decision // every firing when recording, up to MaxDecisions
	omitted      int        // firings not listed in fired
	rec          *recorder  // non-nil when recording or replaying
}

// smallPlan is the most rules a plan has for its injector to hold their
// lists and points in itself: a plan has a few rules, and with room for
// three an Injector is 440 bytes, in the 448-byte size class (see
// TestInjectorSize), so a plan of three rules costs the bytes it did with
// five allocations.
const smallPlan = 3

// pointRules are the rules of one point, in plan order.
type pointRules struct {
	i     int // the point's index in Points
	point Point
	rules []*ruleState
	// first holds the point's first rule: rules starts as first[:0:1],
	// so a point of one rule, the common case, allocates no list; a
	// second rule moves the list to the heap.
	first [1]*ruleState
}

// of returns the rules of point p: a scan of the few targeted points,
// which mostly differ in length, is cheaper than hashing p on every
// consultation.
func (in *Injector) of(p Point) []*ruleState {
	if x := in.find(p); x != nil {
		return x.rules
	}
	return nil
}

// find returns the rules of point p, nil when no rule targets it.
// O(points targeted).
func (in *Injector) find(p Point) *pointRules {
	for _, x := range in.byPoint {
		if x.point == p {
			return x
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
	in.rules, in.byPoint, in.pts = in.smallRules[:0], in.smallByPoint[:0], in.smallPts[:0]
	if n := len(cfg.Plan.Rules); n > 0 {
		if n > smallPlan {
			in.rules = make([]*ruleState, 0, n)
			in.byPoint = make([]*pointRules, 0, n)
			in.pts = make([]pointRules, 0, n)
		}
		in.states = make([]ruleState, 0, n)
	}
	for _, r := range cfg.Plan.Rules {
		in.add(r)
	}
	if cfg.Record || cfg.Replay != nil {
		in.rec = newRecorder(cfg.Replay)
	}
	in.rearm()
	return in, nil
}

// replaying reports whether the injector replays a schedule.
func (in *Injector) replaying() bool { return in.rec != nil && in.rec.replay != nil }

// rearm sets armedPts and consultedPts from the rules and the replayed
// schedule. O(points targeted + rules); it runs when a rule is added or
// disabled, never per consultation.
func (in *Injector) rearm() {
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
	for _, x := range in.byPoint {
		if in.armed(x.point, x.rules) {
			armed |= 1 << x.i
		}
	}
	in.armedPts, in.consultedPts = armed, in.targeted
}

// disable switches r off for the rest of the run.
func (r *ruleState) disable() {
	r.disabled = true
	r.in.rearm()
}

// add appends rule r, which Validate accepted, to its point's rules and
// rearms the injector. O(points targeted + rules).
func (in *Injector) add(r Rule) *ruleState {
	var rs *ruleState
	if len(in.states) < cap(in.states) {
		in.states = in.states[:len(in.states)+1]
		rs = &in.states[len(in.states)-1]
	} else {
		rs = &ruleState{}
	}
	// Filled in place: a literal would be built in a temporary and copied.
	rs.Rule, rs.in, rs.stream, rs.any = r, in, *in.env.Stream("fault/" + r.Name), r.Match == Match{}
	rs.until, rs.limit = r.Until, r.Count
	if rs.until == 0 {
		rs.until = math.MaxInt64
	}
	if rs.limit == 0 {
		rs.limit = math.MaxInt
	}
	in.rules = append(in.rules, rs)
	x := in.find(r.Point)
	if x == nil {
		if len(in.pts) < cap(in.pts) {
			in.pts = in.pts[:len(in.pts)+1]
			x = &in.pts[len(in.pts)-1]
		} else {
			x = &pointRules{}
		}
		x.i, x.point = index(r.Point), r.Point
		x.rules = x.first[:0:1]
		in.byPoint = append(in.byPoint, x)
		in.targeted |= 1 << x.i
	}
	x.rules = append(x.rules, rs)
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
	for _, x := range in.rules {
		if x.Name == r.Name {
			return nil, fmt.Errorf("%w: rule name %q used twice", ErrInvalidRule, r.Name)
		}
	}
	return &Handle{r: in.add(r)}, nil
}

// Disable switches a rule off for the rest of the run ("fix the bug").
func (in *Injector) Disable(name string) error {
	if in != nil {
		for _, r := range in.rules {
			if r.Name == name {
				r.disable()
				return nil
			}
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
	return in.armed(p, in.of(p))
}

// armed is Has for point p whose rules are rules.
func (in *Injector) armed(p Point, rules []*ruleState) bool {
	if in.replaying() {
		return in.rec.replays(p)
	}
	for _, r := range rules {
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

// matchesContext reports whether c matches the rule's Match.
func (r *ruleState) matchesContext(c *Context) bool {
	m := &r.Match
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
// It costs a scan of the few targeted points and, for each matching rule
// of p, one draw from the rule's stream, exactly as Check.
func (in *Injector) CheckRef(p Point, c *Context) *Firing {
	if in == nil {
		return nil
	}
	return in.check(p, in.of(p), c)
}

// check is CheckRef for point p whose rules are rules.
func (in *Injector) check(p Point, rules []*ruleState, c *Context) *Firing {
	if in.rec != nil {
		return in.checkRecorded(p, rules, c)
	}
	if len(rules) == 0 {
		return nil
	}
	if r := draw(rules, in.env.Clock.Now(), c); r != nil {
		return in.fire(r.Name, r.Point, r.Param, r.Error, c, 0, 0)
	}
	return nil
}

// draw consults rules, the rules of one point in plan order, for the
// opportunity c at tick now, and returns the first that fires (its count
// already raised), or nil. Every rule that applies counts the
// opportunity and, past its nth filter, draws once from its own stream;
// the rules after the one that fires are not consulted. Recording and
// plain runs share it, so both decide alike. O(len(rules)).
func draw(rules []*ruleState, now sim.Tick, c *Context) *ruleState {
	for _, r := range rules {
		// Whether r applies now, to c (written out so it is not a call).
		if r.disabled || now < r.From || now >= r.until || r.fired >= r.limit || !r.any && !r.matchesContext(c) {
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
	if in.rec != nil && len(in.fired) < MaxDecisions {
		in.fired = append(in.fired, Decision{Tick: now, Rule: rule, Point: p, Msg: c.Msg, Where: c.Where,
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
	out := make([]RuleStat, len(in.rules))
	for i, r := range in.rules {
		out[i] = RuleStat{Name: r.Name, Point: r.Point, Opportunities: r.opportunities, Fired: r.fired, Disabled: r.disabled}
	}
	return out
}
