package scenario

import (
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/outbox"
	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/projection"
	"github.com/brokerlab/brokerlab/pubsub"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// The resource caps. A scenario that exceeds one is refused at load time,
// before anything is allocated for it, so a runaway file cannot exhaust
// memory or run forever.
const (
	MaxFileSize     = 1 << 20                // bytes of YAML
	MaxTicks        = 1_000_000              // run length and every tick value
	MaxMessages     = 500_000                // messages over all producers: held in one queue at once, they fit in 256 MiB
	MaxRate         = 10_000                 // messages per tick of one producer
	MaxPartitions   = eventlog.MaxPartitions // partitions of one log, also after add_partitions
	MaxEntities     = 256                    // queues, topics, logs, groups or services of each kind
	MaxActors       = 1024                   // producers, consumers, members, relays or subscribers of each kind
	MaxInstances    = 64                     // instances of one consumer
	MaxBatch        = 10_000                 // receive, poll and relay batch sizes
	MaxBuffer       = 100_000                // pub/sub subscriber buffer
	MaxKeys         = 1_000_000              // distinct keys of one producer (key_count)
	MaxKeyList      = 10_000                 // keys written out as a list
	MaxReceiveCount = 1000                   // dead_letter.max_receive_count
	MaxAttempts     = 1000                   // outbox relay attempts before a row is dead
	MaxCascade      = 1000                   // topic cascade_limit
	MaxRetries      = 1000                   // fan_out_retry immediate and backoff retries, each

	// The budget on derived work, enforced as a run goes (sim.Budget): a
	// run that exceeds one stops at once with a runtime error naming it.
	MaxCopies            = 500_000     // message copies created: produced, emitted, redriven, fanned out; with their ledger state they fit in 256 MiB
	MaxDeliveriesPerTick = 1_000_000   // deliveries within one tick
	MaxCascadePerRoot    = 100_000     // copies one root publish may cause through emits
	MaxSends             = 500_000     // copies handed to brokers and outboxes over a run, re-sends included: bounds what brokers hold
	MaxEvents            = 10_000_000  // events traced over a run: the work budget, which bounds a run's time
	MaxSteps             = 100_000_000 // component steps over a run (one per actor, queue, topic... per tick)
	MaxEmits             = 100         // messages a subscriber emits per message it handles
	MaxFaults            = 1024        // fault rules
	MaxTimeline          = 10_000      // timeline actions
	MaxNarration         = 10_000      // narration steps
	MaxExpect            = 1000        // expectations
	MaxFailures          = 1000        // handler failures before a transient handler succeeds
	MaxNameLen           = 64          // bytes of a name
	MaxVariants          = 32          // variants of one file (each is decoded again to check it)
	MaxSchemaVersion     = 1000        // schema versions of messages and handlers
)

// Scenario is a loaded, validated scenario file. Every reference in it
// (a consumer's queue, a group's log, a fault's point) names something
// that exists, every value is within its range and cap, and defaults are
// filled in. The runner builds a World from it; the TUI plays it as a
// lesson (Title, Summary, Description, Narration).
type Scenario struct {
	Node
	// File is the name the scenario was loaded under, used in positions.
	File string
	// Version is the format version; only 1 exists.
	Version int
	// Title names the scenario in menus and reports.
	Title string
	// Summary is one line for menus ("" when not given).
	Summary string
	// Description is the lesson's introduction (may span lines).
	Description string
	// Seed makes the run reproducible; default 1.
	Seed uint64
	// Run says how long to run.
	Run Length
	// Topology is the brokers and services.
	Topology Topology
	// Actors are the producers, consumers, group members and relays.
	Actors Actors
	// Faults is the fault plan, in file order.
	Faults []Fault
	// Timeline is the actions at ticks, in file order; actions due at the
	// same tick run in file order.
	Timeline []Action
	// Narration is the lesson's steps, in file order.
	Narration []Step
	// Expect is what must hold at the end of the run.
	Expect []Expectation
	// View is how a player first shows the scenario.
	View View
	// Variants are the named versions of the scenario, in file order;
	// Variant builds one.
	Variants []Variant
	// src is the file's text (without a byte order mark), which Variant
	// decodes again with the overrides applied.
	src []byte
}

// View is how a player first shows a scenario.
type View struct {
	Node
	// Tab is the queue, topic, log or service a player opens first; ""
	// leaves the choice to the player.
	Tab string
}

// Variant is a named version of a scenario: the file with the values of
// its set entries in place of the ones written (see Scenario.Variant).
type Variant struct {
	Node
	Name        string
	Description string
	sets        []override
}

// override is one set entry of a variant: the dotted path, where its key
// was written, and the YAML value that replaces the one at the path.
type override struct {
	path  string
	pos   Pos
	quote bool // the key was quoted, so its text starts one column later
	value ast.Node
}

// UntilDrained is the only Length.Until condition: every producer is done, no
// queue holds a visible, delayed or in-flight message (dead-letter queues
// may keep theirs), every group has zero lag and no outbox row is pending.
const UntilDrained = "drained"

// Length is the run length: a fixed number of ticks, or until a condition
// holds, always with a hard cap.
type Length struct {
	Node
	// Ticks is the fixed run length; 0 when Until is set.
	Ticks sim.Tick
	// Until is "" or UntilDrained.
	Until string
	// MaxTicks caps a run with Until; default 10,000.
	MaxTicks sim.Tick
}

// Cap returns the last tick the run may reach.
func (r Length) Cap() sim.Tick {
	if r.Until == "" {
		return r.Ticks
	}
	return r.MaxTicks
}

// Topology is the simulated brokers and services.
type Topology struct {
	Node
	Queues   []Queue
	Topics   []Topic
	Logs     []Log
	Groups   []Group
	Services []Service
}

// Queue is a work queue: the model's configuration (queue.Config, whose
// fields document themselves) as the file sets it, and the redrive policy
// by name. The loader sets the fields the format has (see the field
// table); the runner adds Config.Faults and, for the redrive policy,
// Config.DeadLetter and Config.MaxReceiveCount when it makes the queue.
type Queue struct {
	Node
	queue.Config
	// DeadLetter is the redrive policy as written, naming its queue; nil
	// means none. It stands in front of Config.DeadLetter, the made queue
	// the runner sets.
	DeadLetter *DeadLetter
}

// DeadLetter moves a message to Queue when its receive count would exceed
// MaxReceiveCount.
type DeadLetter struct {
	Node
	Queue string
	// MaxReceiveCount defaults to 3.
	MaxReceiveCount int
}

// Topic is an ephemeral pub/sub topic.
type Topic struct {
	Node
	Name        string
	Subscribers []Subscriber
	// FanOutToQueues are durable queues that get a copy of every publish.
	FanOutToQueues []string
	fanOutPos      []Pos
	// CascadeLimit caps how deep events caused by events may go; 0 means
	// no limit.
	CascadeLimit int
	// FanOutRetry is how a forward a fan-out queue refused is retried;
	// nil means pubsub.DefaultForwardRetry. It needs FanOutToQueues.
	FanOutRetry *FanOutRetry
}

// FanOutRetry is the retry policy of a topic's fan-out forwards: the
// model's pubsub.ForwardRetry (whose fields document themselves, and whose
// Delay defaults to 1 in a file), or None, written `none`.
type FanOutRetry struct {
	Node
	pubsub.ForwardRetry
	// None gives a refused forward up at once (pubsub.NoForwardRetry).
	None bool
}

// Policy returns the pubsub.ForwardRetry of r: NoForwardRetry for None.
func (r *FanOutRetry) Policy() pubsub.ForwardRetry {
	if r.None {
		return pubsub.NoForwardRetry
	}
	return r.ForwardRetry
}

// Subscriber is a pub/sub subscriber of one topic. The runner maps it onto
// pubsub.SubscriberConfig, whose fields document the meaning: Overflow is
// its Policy, Emits its Emits (an Emit's Topic is the pubsub.Emit's
// Subject); the other fields have the same names. The field table
// (fields.go) gives the keys and the file's defaults.
type Subscriber struct {
	Node
	Name        string
	Buffer      int
	Overflow    pubsub.Policy
	Offline     bool
	Emits       []Emit
	SourceCheck bool
	Supervisor  bool
}

// Emit is a message a subscriber publishes for each message it handles
// (pubsub.Emit, with the topic by name).
type Emit struct {
	Node
	Topic string
	Count int
	Type  string
}

// Log is a partitioned event log topic. The runner maps it onto
// eventlog.Config: Compaction is its Compact, and Retention its
// RetentionTicks, RetentionRecords and RetentionBytes (nil keeps every
// record).
type Log struct {
	Node
	Name       string
	Partitions int
	Retention  *Retention
	Compaction bool
}

// Retention deletes log records older than Ticks, beyond Records per
// partition, or beyond Bytes of keys and bodies per partition (never a
// partition's newest record); 0 means no limit of that kind, and at least
// one is set.
type Retention struct {
	Node
	Ticks   sim.Tick
	Records int
	Bytes   int64
}

// Group is a consumer group of a log, by name. The runner maps it onto
// eventlog.GroupConfig (Assignment is its Strategy, AutoOffsetReset its
// Reset), gives AutoCommitInterval to its members
// (eventlog.MemberConfig.AutoCommitEvery), and with Projection feeds a
// projection.Projection versioned by Versioning. What a file adds:
// IdempotencyPerMember gives each idempotent member a dedup table of its
// own, as a consumer that keeps it in memory has; by default the members
// share one table per idempotency key, as a service that keeps it in its
// database does, so the member that takes a partition over skips what
// another applied.
type Group struct {
	Node
	Name                 string
	Log                  string
	Assignment           eventlog.Strategy
	AutoOffsetReset      eventlog.Reset
	SessionTimeout       sim.Tick
	AutoCommitInterval   sim.Tick
	IdempotencyPerMember bool
	Projection           bool
	Versioning           projection.Versioning
}

// Service is a simulated service with its own database (outbox.Service)
// that turns each command it receives into a business row and an event,
// written by its Writer (outbox.WriterConfig.Mode) to PublishTo. Cleanup is
// the service's outbox.Config.CleanupAfter and MaxAttempts its relays'
// outbox.RelayConfig.MaxAttempts.
type Service struct {
	Node
	Name        string
	Writer      outbox.Mode
	PublishTo   Target
	MaxAttempts int
	Cleanup     sim.Tick
}

// The kinds of Target.
const (
	TargetQueue   = "queue"
	TargetTopic   = "topic"
	TargetLog     = "log"
	TargetService = "service"
)

// Target names where messages go: written as {queue: name}, {topic: name},
// {log: name} or, for producers, {service: name}.
type Target struct {
	Node
	Kind string
	Name string
}

// String formats t as `queue "orders"`.
func (t Target) String() string { return t.Kind + " " + strconv.Quote(t.Name) }

// Actors are the active parts of a scenario.
type Actors struct {
	Node
	Producers []Producer
	Consumers []Consumer
	Members   []Member
	Relays    []Relay
	Sagas     []Saga
}

// Saga is a saga orchestrator (saga.Orchestrator): one saga per order on
// its queue, through its steps in order.
type Saga struct {
	Node
	Name       string
	Queue      string
	Steps      []SagaStep
	Timeout    sim.Tick
	Compensate bool
}

// SagaStep is one step of a saga and the compensation that undoes it
// (saga.Step, field for field).
type SagaStep struct {
	Node
	Name         string
	Compensation string
}

// Producer is a producer: the model's configuration (producer.Config,
// whose fields document themselves) as the file sets it, and its target
// by name, which the runner resolves into Config.Target. Unlike the
// model's, a file's key_count defaults to 1, so a loaded KeyCount is 0
// only when the producer has no key pattern.
type Producer struct {
	Node
	producer.Config
	// To is where its messages go, by kind and name.
	To Target
}

// NumKeys returns the number of distinct keys the producer uses; 0 means
// its messages have no key.
func (p *Producer) NumKeys() int {
	if p.Keys != nil {
		return len(p.Keys)
	}
	if p.KeyPattern == "" {
		return 0
	}
	return p.KeyCount
}

// Key returns key number k (0-based, k < NumKeys()): Keys[k], or the
// pattern with "%d" replaced by k+1. The runner picks k as i % NumKeys()
// for message i in round_robin order, or draws it from the producer's
// stream in random order. It costs one small allocation for a pattern.
func (p *Producer) Key(k int) string {
	if p.Keys != nil {
		return p.Keys[k]
	}
	before, after, ok := strings.Cut(p.KeyPattern, "%d")
	if !ok {
		return p.KeyPattern
	}
	return before + strconv.Itoa(k+1) + after
}

// Handler is how a consumer or member handles a message: the fields of a
// sim.Script, which document the meaning (Kind is its Behaviour), as the
// file sets them.
type Handler struct {
	Node
	Kind                   sim.Behaviour
	Keys                   string
	Failures               int
	Ticks                  sim.Tick
	Error                  string
	MinVersion, MaxVersion int
}

// Retry is how a failing queue consumer delays the next attempt: a
// queue.RetryPolicy as a file writes it. Policy is its Kind and Base its
// Delay; Cap applies to exponential delays only, and Jitter on means
// "equal jitter" (RetryPolicy.Jitter 0.5).
type Retry struct {
	Node
	Policy     queue.RetryKind
	Base       sim.Tick
	Cap        sim.Tick
	Jitter     bool
	SameForAll bool
}

// Consumer is a queue consumer, run as Instances competing instances:
// a queue.ConsumerConfig as a file writes it, with its queue by name. Ack
// is its AckMode; ShortPoll, written `wait_time: short`, is WaitTime
// queue.ShortPoll; Handler and Retry become its Handler and Retry policy,
// Idempotency wraps the handler (sim.IdempotencyKey), and Forward's target
// is resolved by name. The other fields have the model's names and
// meaning.
type Consumer struct {
	Node
	Name              string
	Queue             string
	Instances         int
	Batch             int
	VisibilityTimeout sim.Tick
	WaitTime          sim.Tick
	ShortPoll         bool
	Handler           Handler
	Ack               queue.AckMode
	Retry             Retry
	Idempotency       sim.IdempotencyKey
	Start             sim.Tick
	Forward           *Forward
}

// Forward is a queue consumer's outgoing message (queue.Forward, with
// its target by name).
type Forward struct {
	Node
	To     Target
	Type   string
	Resend bool
}

// Member is a consumer-group member of a log: an eventlog.MemberConfig
// as a file writes it, with its group by name, its Handler a sim.Script
// and Idempotency wrapping it. The other fields have the model's names and
// meaning.
type Member struct {
	Node
	Name        string
	Group       string
	Commit      eventlog.CommitMode
	Handler     Handler
	Batch       int
	Idempotency sim.IdempotencyKey
	Start       sim.Tick
}

// Relay is an outbox relay of one service, by name: an
// outbox.RelayConfig (Mode outbox.Poll) or outbox.CDCConfig (outbox.CDC)
// as a file writes it. Interval is the relay's PollEvery (a CDC relay's
// Interval), Order its Ordering, Batch a CDC relay's MaxPerStep; Lease,
// Backoff and Order apply to polling relays only.
type Relay struct {
	Node
	Name     string
	Service  string
	Mode     outbox.RelayKind
	Batch    int
	Interval sim.Tick
	Lease    sim.Tick
	Backoff  sim.Tick
	Order    outbox.Ordering
	Start    sim.Tick
}

// Fault is one rule of the fault plan: the injector's faults.Rule as the
// file writes it, whose Name defaults to "fault-N" (N is the 1-based
// position in the plan).
type Fault struct {
	Node
	faults.Rule
	// matchNode keeps the positions of the match fields.
	matchNode Node
	// untilOK says until was written and valid.
	untilOK bool
	// consumerGlob is the match.consumer pattern the runner gives the
	// models: Match.Consumer widened to the instances of the consumers it
	// names (set by Load; "" means Match.Consumer as it is).
	consumerGlob string
}

// FaultPlan returns the fault plan in file order. It passes
// faults.Plan.Validate, since Load checked every rule.
func (s *Scenario) FaultPlan() faults.Plan {
	p := faults.Plan{Rules: make([]faults.Rule, len(s.Faults))}
	for i, f := range s.Faults {
		p.Rules[i] = f.Rule
	}
	return p
}

// The timeline actions.
const (
	ActionConnect       = "connect"
	ActionDisconnect    = "disconnect"
	ActionMute          = "mute"
	ActionUnmute        = "unmute"
	ActionSeek          = "seek"
	ActionRedrive       = "redrive"
	ActionPurge         = "purge"
	ActionAddPartitions = "add_partitions"
	ActionFixHandler    = "fix_handler"
	ActionCrash         = "crash"
	ActionKillRelay     = "kill_relay"
	ActionStartRelay    = "start_relay"
	ActionDisableFault  = "disable_fault"
	ActionRead          = "read"
)

// Where a read action reads from.
const (
	ReadFromProjection = "projection"
	ReadFromSource     = "source"
)

// Action is one timeline entry. Which fields are set depends on Action;
// see the format reference.
type Action struct {
	Node
	At     sim.Tick
	Action string
	// The subject: exactly the ones the action takes are set.
	Queue, Log, Group, Consumer, Member, Subscriber, Relay, Fault string
	// To is the seek target: eventlog.SeekToEarliest, SeekToLatest,
	// SeekToOffset or SeekToTick (set only for a seek).
	To eventlog.SeekTo
	// Offset is the seek offset (To "offset").
	Offset int64
	// Tick is the seek tick (To "tick").
	Tick sim.Tick
	// Partition is the partition a seek applies to; -1 means all.
	Partition int
	// Count is the partitions to add, or the most messages to redrive (0:
	// all).
	Count int
	// Key is the key a read reads.
	Key string
	// From is where a read reads: ReadFromProjection (default) or
	// ReadFromSource.
	From string
}

// Step is a narration step shown from tick At.
type Step struct {
	Node
	At   sim.Tick
	Text string
	// Pause asks a player to pause when the step is shown.
	Pause bool
	// Tab, if set, is the queue, topic, log or service a player brings to
	// the front when the step is shown (as View.Tab at the start).
	Tab string
	// Filter, if set, is the trace filter a player sets when the step is
	// shown, so the events the step talks about are on screen.
	Filter string
}

// The check names of expectations.
const (
	CheckNoLoss        = "no_loss"
	CheckAtLeastOnce   = "at_least_once"
	CheckAtMostOnce    = "at_most_once"
	CheckExactlyOnce   = "exactly_once"
	CheckOrderedPerKey = "ordered_per_key"
	CheckMaxDuplicates = "max_duplicates"
)

// Expectation is a ledger check (Check set) or a metric comparison
// (Metric set).
type Expectation struct {
	Node
	Check string
	// Consumer is the logical consumer a check is about; "" means all.
	Consumer string
	// Max is the max_duplicates bound.
	Max int
	// Violated turns a check around: it holds when the checker finds at
	// least one violation (a guarantee a lesson breaks on purpose).
	Violated bool
	// Metric, Op and Value state "Metric Op Value".
	Metric Metric
	Op     string
	Value  float64
	// By, when given (Has("by")), is the tick the expectation is judged
	// at instead of the end of the run: its value or violations at the end
	// of that tick are its outcome, in the live verdict from then on and
	// in the report. A run that ends before By judges it at its end.
	By sim.Tick
}

// Judged reports whether e is judged at a tick of its own (by:) rather
// than at the end of the run.
func (e Expectation) Judged() bool { return e.Has("by") }

// String formats e as written, e.g. "exactly_once(billing)",
// "at_most_once(billing) violated" or "queue.orders-dlq.depth == 0".
func (e Expectation) String() string {
	if e.Check == "" {
		s := e.Metric.String() + " " + e.Op + " " + strconv.FormatFloat(e.Value, 'g', -1, 64)
		if e.Judged() {
			s += " by t=" + strconv.FormatInt(int64(e.By), 10)
		}
		return s
	}
	var b strings.Builder
	b.WriteString(e.Check)
	if e.Consumer != "" || e.Check == CheckMaxDuplicates {
		b.WriteByte('(')
		b.WriteString(e.Consumer)
		if e.Check == CheckMaxDuplicates {
			if e.Consumer != "" {
				b.WriteString(", ")
			}
			b.WriteString("max=")
			b.WriteString(strconv.Itoa(e.Max))
		}
		b.WriteByte(')')
	}
	if e.Violated {
		b.WriteString(" violated")
	}
	if e.Judged() {
		b.WriteString(" by t=" + strconv.FormatInt(int64(e.By), 10))
	}
	return b.String()
}

// Holds reports whether the metric value v satisfies the comparison.
func (e Expectation) Holds(v float64) bool {
	switch e.Op {
	case "==":
		return v == e.Value
	case "!=":
		return v != e.Value
	case "<":
		return v < e.Value
	case "<=":
		return v <= e.Value
	case ">":
		return v > e.Value
	case ">=":
		return v >= e.Value
	}
	return false
}

// Checker returns the sim checker of a check expectation, or nil for a
// metric expectation. A consumer name is mapped to its ledger name: a
// queue consumer's logical consumer is its queue (competing consumers
// share one), groups and subscribers are their own logical consumers.
func (s *Scenario) Checker(e Expectation) sim.Checker {
	name := s.LedgerConsumer(e.Consumer)
	switch e.Check {
	case CheckNoLoss:
		return sim.NoLoss()
	case CheckAtLeastOnce:
		return sim.AtLeastOnce(name)
	case CheckAtMostOnce:
		return sim.AtMostOnce(name)
	case CheckExactlyOnce:
		return sim.ExactlyOnce(name)
	case CheckOrderedPerKey:
		return sim.OrderedPerKey(name)
	case CheckMaxDuplicates:
		return sim.MaxDuplicates(name, e.Max)
	}
	return nil
}

// LedgerConsumer maps a name an expectation may use (a queue consumer, a
// queue, a group or a subscriber) to the logical consumer name the ledger
// keeps: the queue's name for a queue consumer, the name itself otherwise.
func (s *Scenario) LedgerConsumer(name string) string {
	for _, c := range s.Actors.Consumers {
		if c.Name == name {
			return c.Queue
		}
	}
	return name
}
