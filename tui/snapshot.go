package tui

import (
	"strconv"

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

// count returns the exact number of messages in area w.
func (q *QueueView) count(w Where) int {
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
// log's Partitions; Committed is the next offset the group will read.
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

// OutboxView is a service's outbox table and its relays.
type OutboxView struct {
	Service string
	Pending int
	Sent    int
	Dead    int
	Relays  []RelayView
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
}

// LedgerSummary is the ground truth in numbers.
type LedgerSummary struct {
	Messages     int
	Lost         int
	Duplicates   int
	DeadLettered int
	Missed       int
}

// SummaryOf condenses ledger statistics into a LedgerSummary.
func SummaryOf(s sim.Stats) LedgerSummary {
	return LedgerSummary{
		Messages:     s.Messages,
		Lost:         s.Lost,
		Duplicates:   s.Duplicates,
		DeadLettered: s.DeadLettered,
		Missed:       s.Missed,
	}
}

// speedText formats a speed in ticks per second.
func speedText(v float64) string {
	if v <= 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " t/s"
}
