package lab

import (
	"github.com/brokerlab/brokerlab/sim"
)

// Caps that keep a snapshot, and therefore a frame, small however many
// messages the simulation holds. Runners should respect them when building
// snapshots; the views also clip to them.
const (
	// MaxChips is the number of message chips kept per queue area.
	MaxChips = 64
	// MaxTrace is the number of newest trace events kept in a snapshot.
	MaxTrace = 500
	// MaxHistory is the number of samples kept per metric series.
	MaxHistory = 512
)

// SymFault marks a notice that says something failed or was refused; the
// player shows faults with the same symbol.
const SymFault = "⚠"

// State is the play state shown in the header.
type State uint8

// The play states.
const (
	StatePaused State = iota
	StatePlaying
	StateFinished
)

// String returns "paused", "playing" or "finished".
func (s State) String() string {
	switch s {
	case StatePlaying:
		return "playing"
	case StateFinished:
		return "finished"
	}
	return "paused"
}

// Snapshot is everything the player shows for one tick. It is an immutable
// value: the runner builds a new one per tick and never modifies a snapshot
// (or the slices it references) after handing it over, so the UI goroutine can
// read it without locks. Sizes are capped (MaxChips, MaxTrace, MaxHistory) so
// that a frame costs the same with ten messages or a million.
type Snapshot struct {
	Header    Header
	Queues    []QueueView
	Topics    []TopicView
	Logs      []LogView
	Outboxes  []OutboxView
	Series    []Series
	Trace     []sim.Event // the newest events, oldest first, at most MaxTrace
	Narration Narration
	Ledger    LedgerSummary
	// Marks is parallel to Trace (same length, or nil): what the ledger
	// adds to each event, e.g. that a delivery repeats an origin.
	Marks []Mark
	// Verdict is every expectation judged on the state so far.
	Verdict Verdict
	// Effects are the per-consumer effect counts, for "charged 2×".
	Effects []EffectView
	// Intro is the lesson's introduction and what it teaches.
	Intro Intro
	// Targets are what the hand actions can act on.
	Targets Targets
	// Projections are the read models of the consumer groups the lesson
	// replays (seeks), folded from the trace: records applied per key
	// before and after the seek.
	Projections []ProjectionView
	// EffectTable is the per-key effect table of the consumers a lesson
	// compares (two to four queue consumers, each on its own queue), nil
	// otherwise.
	EffectTable *EffectsView
}

// ProjectionView is what a consumer group's projection holds: per key,
// the records applied since the start of the run, or since the group's
// last seek (a replay that rebuilds it), with what it held before.
type ProjectionView struct {
	Group  string
	Seeked bool     // the group has been seeked (replayed)
	SeekAt sim.Tick // the tick of the last seek
	Before int      // records applied before the last seek, over every key
	Keys   []ProjectionKey
}

// ProjectionKey is one key of a projection.
type ProjectionKey struct {
	Key     string
	Records int      // records of the key in the log
	Before  int      // records applied before the last seek
	Applied int      // records applied since the start or the last seek
	IDs     []sim.ID // the first of them, in the order applied
}

// EffectsView is a table of effects per key and consumer, e.g. charges:
// Cells of each key are parallel to Consumers.
type EffectsView struct {
	Consumers []string
	Keys      []EffectKey // first-seen order, at most 64
	MoreKeys  int         // keys left out
}

// EffectKey is one row of an EffectsView.
type EffectKey struct {
	Key   string
	Cells []EffectCell
}

// EffectCell is what one consumer did with one key's messages.
type EffectCell struct {
	Effects  int // effects applied (charges)
	Origins  int // distinct messages (origins) routed to the consumer
	Repeated int // effects beyond the first per origin: duplicates applied
	Absorbed int // duplicate deliveries the handler recognised and skipped
}

// Targets are the names the hand actions can act on, for the picker.
type Targets struct {
	Groups    []string // consumer groups (seek earliest)
	DLQs      []string // dead-letter queues (redrive)
	Consumers []string // queue consumers and group members (crash)
}

// Intro is what the player shows before a lesson starts and after it ends.
type Intro struct {
	Description string   // the scenario's description
	Goals       []string // what the lesson shows, from its expectations
	Remember    string   // what to remember: the last narration step
}

// EffectView counts what one logical consumer did: effects applied,
// repeated effects of an origin it had applied (a customer charged twice),
// and duplicates its handler absorbed.
type EffectView struct {
	Consumer string
	Applied  int // effects over all origins
	Repeated int // effects beyond the first per origin
	Worst    int // the most effects of one origin, e.g. 2 for "charged 2×"
	Absorbed int // deliveries recognised as duplicates and skipped
	Repeats  int // deliveries beyond the first per origin
}

// Header is the top line of the player.
type Header struct {
	Title  string   // scenario or lesson title
	Lesson string   // lesson name, empty for a scenario file
	Tick   sim.Tick // current tick
	Seed   uint64
	Speed  float64 // ticks per second while playing; set by the Controller
	State  State   // set by the Controller
	Notice string  // a short message, e.g. the result of the last action
	// Tab is the model the player opens on (a queue, topic, log or
	// service name), "" to let the player choose from the trace.
	Tab string
}

// Where is the area of a queue a message chip sits in.
type Where uint8

// The queue areas, in display order.
const (
	WhereVisible Where = iota
	WhereInFlight
	WhereDelayed
	WhereDLQ
)

// String returns the area's label.
func (w Where) String() string {
	switch w {
	case WhereInFlight:
		return "in flight"
	case WhereDelayed:
		return "delayed"
	case WhereDLQ:
		return "DLQ"
	}
	return "visible"
}

// Chip is one message shown in a queue area. A ReceiveCount above one marks
// a redelivery and is highlighted.
type Chip struct {
	ID           sim.ID
	ReceiveCount int
	Where        Where
	// Seen is set when the queue's consumer has been delivered this
	// message's origin before (a re-published, redriven or duplicated
	// copy, or a redelivery): its next delivery is a duplicate.
	Seen bool
}

// QueueView is a work queue with its dead-letter queue. The counts are
// exact; Chips holds at most MaxChips chips per area (the oldest first), and
// the panel shows the difference as "+N".
type QueueView struct {
	Name         string
	Visible      int
	InFlight     int
	Delayed      int
	DLQName      string // empty when the queue has no DLQ
	DLQDepth     int
	OldestAge    sim.Tick // age of the oldest message in ticks
	Redeliveries int      // total redeliveries so far
	Chips        []Chip
}

// Count returns the exact number of messages in area w.
func (q *QueueView) Count(w Where) int {
	switch w {
	case WhereInFlight:
		return q.InFlight
	case WhereDelayed:
		return q.Delayed
	case WhereDLQ:
		return q.DLQDepth
	}
	return q.Visible
}

// TopicView is an ephemeral pub/sub topic.
type TopicView struct {
	Name        string
	Published   int
	Subscribers []SubscriberView
}

// SubscriberView is one subscriber of a topic.
type SubscriberView struct {
	Name      string
	Online    bool
	Buffered  int
	Delivered int
	Missed    int
	Dropped   int
}

// LogView is a partitioned event log and its consumer groups.
type LogView struct {
	Name       string
	Partitions []PartitionView
	Groups     []GroupView
}

// PartitionView is one partition: records live at offsets [Start, End).
type PartitionView struct {
	Index      int
	Start, End int64
}

// GroupView is a consumer group. Committed and Lag are indexed like the
// log's Partitions; Committed is the next offset the group will read: its
// committed offset, or the log start when it committed nothing or
// retention has deleted the record at its committed offset.
type GroupView struct {
	Name       string
	Generation int
	Committed  []int64
	Lag        []int64
	Members    []string
}

// TotalLag returns the sum of the group's lag over all partitions.
func (g *GroupView) TotalLag() int64 {
	var n int64
	for _, l := range g.Lag {
		n += l
	}
	return n
}

// OutboxView is a service's two writes, business rows and published
// events, with its outbox table and relays. Rows, Published, Phantoms and
// Lost are folded from the trace; Pending, Sent and Dead are the outbox
// table's current row counts.
type OutboxView struct {
	Service string
	// Writer is how the service writes: "outbox", "commit_then_publish"
	// or "publish_then_commit".
	Writer    string
	Rows      int // business rows committed
	Published int // events published to a broker (each counted once)
	// Republished counts publishes of an event published before (a relay
	// that crashed before marking its row).
	Republished int
	Phantoms    int      // events published for a row never committed
	Lost        int      // rows committed whose event was never published
	PhantomIDs  []sim.ID // the first phantom events
	LostIDs     []sim.ID // the first lost events
	Pending     int
	Sent        int
	Dead        int
	Relays      []RelayView
}

// RelayView is one relay instance and the outbox rows it holds leases on.
type RelayView struct {
	Name    string
	Claims  []int64
	Crashed bool
}

// SeriesKind tells the metrics strip how to label and colour a series.
type SeriesKind uint8

// The series kinds, with their fixed names (see SeriesName).
const (
	SeriesPublishRate SeriesKind = iota // messages published per tick
	SeriesLag                           // lag of one consumer group (Group names it)
	SeriesDLQDepth                      // messages in dead-letter queues
	SeriesDuplicates                    // duplicate deliveries so far
	SeriesLost                          // messages lost so far
)

// Series is the history of one metric, one sample per tick, oldest first,
// at most MaxHistory samples.
type Series struct {
	Kind   SeriesKind
	Group  string // for SeriesLag: the consumer group
	Values []float64
}

// Name returns the series' fixed display name: "publish/t", "lag <group>",
// "DLQ depth", "duplicates" or "lost".
func (s *Series) Name() string {
	switch s.Kind {
	case SeriesLag:
		return "lag " + s.Group
	case SeriesDLQDepth:
		return "DLQ depth"
	case SeriesDuplicates:
		return "duplicates"
	case SeriesLost:
		return "lost"
	}
	return "publish/t"
}

// Last returns the newest sample, or 0 for an empty series.
func (s *Series) Last() float64 {
	if len(s.Values) == 0 {
		return 0
	}
	return s.Values[len(s.Values)-1]
}

// Narration is the lesson text for the current step.
type Narration struct {
	Index int // 1-based step number, 0 before the first step
	Total int
	Text  string
	// Pause asks the player to pause when the step is first shown.
	Pause bool
	// Tab names the queue, topic, log or service the step brings to the
	// front, and Filter the trace filter it sets ("" for none); the player
	// applies them when the step comes up.
	Tab, Filter string
}

// LedgerSummary is the ground truth in numbers.
type LedgerSummary struct {
	Messages     int
	Lost         int
	Duplicates   int
	DeadLettered int // copies in a dead-letter queue now (see DLQWords)
	Redriven     int // copies moved back out of a dead-letter queue
	Missed       int
}

// SummaryOf condenses ledger statistics into a LedgerSummary.
func SummaryOf(s sim.Stats) LedgerSummary {
	return LedgerSummary{
		Messages:     s.Messages,
		Lost:         s.Lost,
		Duplicates:   s.Duplicates,
		DeadLettered: s.DeadLettered,
		Redriven:     s.Redriven,
		Missed:       s.Missed,
	}
}
