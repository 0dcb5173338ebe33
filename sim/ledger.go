package sim

import (
	"math"
	"sort"
)

// Cause explains why a message was lost. Every loss the ledger records has
// one: a loss without a modelled cause is a bug in brokerlab.
type Cause string

// The modelled causes of loss.
const (
	CauseDualWrite           Cause = "dual write"               // crash between DB commit and publish
	CauseAckBeforeProcess    Cause = "ack before processing"    // at-most-once consumer crashed after acking
	CauseCommitBeforeProcess Cause = "commit before processing" // at-most-once group member crashed after committing
	CauseRetention           Cause = "retention"                // retention deleted it before it was consumed
	CauseOverflow            Cause = "overflow"                 // a bounded buffer dropped it
	CausePurge               Cause = "purge"                    // a purge deleted it unprocessed
	CauseBrokerUnavailable   Cause = "broker unavailable"       // a publish failed and nobody retried
	CauseOffsetReset         Cause = "offset reset"             // auto.offset.reset=latest skipped it
)

// State is where a message stands at the broker, as the ledger last heard.
type State uint8

// The broker-level states of a message.
const (
	StateCreated      State = iota // created, never accepted by a broker
	StatePending                   // held by a broker: visible, delayed, in flight or in a log
	StateDone                      // acknowledged and deleted
	StateDeadLettered              // in a dead-letter queue
	StateExpired                   // deleted by retention
	StatePurged                    // deleted by a purge
	StateRedriven                  // moved out of a DLQ; a new message carries it on
	StateLost                      // lost, with a cause
	StateDelivered                 // handed to subscribers and kept nowhere (pub/sub)
)

var stateNames = [...]string{"created", "pending", "done", "dead-lettered", "expired", "purged", "redriven", "lost", "delivered"}

// String returns the state's name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Record is what the ledger knows about one message at the broker level.
type Record struct {
	ID       ID
	Key      string
	Type     string
	Created  Tick
	Sends    int   // how many times it was handed to a broker (re-publishes count)
	State    State // the latest broker-level state
	Changed  Tick  // when State last changed
	Origin   ID    // for a redriven message, the dead letter it came from
	Redriven ID    // for a redriven dead letter, the new message that carries it
	Phantom  bool  // published for a business change that was never committed
}

// Delivery is what the ledger knows about one message and one logical
// consumer (a queue's worker pool, a consumer group, a subscriber).
type Delivery struct {
	Expected     bool   // the message was routed to this consumer
	Delivered    uint32 // deliveries, including redeliveries and duplicates
	Applied      uint32 // times the consumer's effect was applied
	Acked        bool
	Missed       bool  // not delivered because the consumer was offline (by design)
	Lost         Cause // set when this consumer lost the message
	FirstApplied Tick
	LastSeen     Tick
}

// Loss is one recorded loss.
type Loss struct {
	ID       ID
	Consumer string // empty when the message was lost before any consumer
	Cause    Cause
	Tick     Tick
}

// ConsumerRef is a handle on a logical consumer in a Ledger, returned by
// Ledger.Consumer. Using a handle avoids a name lookup on every call.
type ConsumerRef int32

// NoConsumer is the ConsumerRef of "no consumer".
const NoConsumer ConsumerRef = -1

// record is how the ledger stores a Record: without pointers (the key and
// type live in the ledger's strtab), so its chunks are never scanned by the
// garbage collector, and in 32 bytes instead of 96 (redrive links, which
// few messages have, live in Ledger.links).
type record struct {
	key     strRef
	typ     strRef
	created tick32
	changed tick32
	sends   uint32
	State   State
	flags   uint8
}

// tick32 is a tick stored in 32 bits. A tick outside its range (no run
// gets there tick by tick, but Clock.Set can) is stored as tickWide and
// kept in full in Ledger.wide.
type tick32 int32

const tickWide tick32 = math.MinInt32

// wideKey names a tick32 field of a record (consumer NoConsumer) or of a
// delivery.
type wideKey struct {
	id    ID
	c     ConsumerRef
	field uint8
}

// The tick32 fields.
const (
	fieldCreated uint8 = iota
	fieldChanged
	fieldLastSeen
)

// put32 returns t as a tick32, keeping it in l.wide when it does not fit.
func (l *Ledger) put32(id ID, c ConsumerRef, field uint8, t Tick) tick32 {
	if t > Tick(tickWide) && t <= math.MaxInt32 {
		return tick32(t)
	}
	return l.putWide(id, c, field, t)
}

func (l *Ledger) putWide(id ID, c ConsumerRef, field uint8, t Tick) tick32 {
	if l.wide == nil {
		l.wide = map[wideKey]Tick{}
	}
	l.wide[wideKey{id, c, field}] = t
	return tickWide
}

// get32 returns the tick stored as v.
func (l *Ledger) get32(id ID, c ConsumerRef, field uint8, v tick32) Tick {
	if v != tickWide {
		return Tick(v)
	}
	return l.wide[wideKey{id, c, field}]
}

// setChanged records the tick of r's latest state change.
func (l *Ledger) setChanged(id ID, r *record, t Tick) {
	r.changed = l.put32(id, NoConsumer, fieldChanged, t)
}

// link is the redrive link of a record: the dead letter it came from and the
// new message that carries it on.
type link struct {
	origin, redriven ID
}

// The flags of a record.
const (
	recRegistered uint8 = 1 << iota
	recPhantom
)

// delivery is how the ledger stores a Delivery: without pointers (the loss
// cause is an index into Ledger.causes), in 24 bytes instead of 48.
type delivery struct {
	FirstApplied Tick
	lastSeen     tick32
	Delivered    uint32
	Applied      uint32
	bits         uint32 // flags in the low 8 bits; above them 1 + index into Ledger.causes, 0 = not lost
}

// The flags of a delivery.
const (
	delExpected uint32 = 1 << iota
	delAcked
	delMissed
)

// maxCauses is how many distinct causes deliveries can refer to; a later
// new cause is recorded as the last one.
const maxCauses = 1<<24 - 1

type consumerBook struct {
	ledger     *Ledger
	ref        ConsumerRef
	name       string
	entries    table[delivery] // indexed by ID
	order      list[ID]        // first applications, in order
	effects    bool            // whether the consumer ever reported an applied effect
	duplicates int
}

// Ledger is the ground truth about every message of a run: where it went,
// how often each logical consumer got it and applied its effect, and whether
// it was acknowledged, dead-lettered, expired, missed or lost, and why.
//
// Records are indexed by ID, so every call is O(1) amortised and the ledger
// costs 32 bytes per message (plus the bytes of its key and type when they
// differ from the previous message's) and 24 bytes per message and
// consumer. The stored records hold no pointers, so a ledger of millions of
// messages adds almost nothing to garbage collection.
// IDs must come from one IDs allocator per ledger. A nil *Ledger ignores every
// call, so models can run without one.
type Ledger struct {
	recs      table[record] // indexed by ID; index 0 unused
	consumers []*consumerBook
	byName    map[string]ConsumerRef
	losses    []Loss
	strs      strtab           // keys and types of the records
	wide      map[wideKey]Tick // ticks that do not fit a tick32
	lastKey   strCache
	lastType  strCache
	causes    []Cause          // the causes deliveries refer to
	causeIdx  map[Cause]uint32 // cause -> 1 + index into causes
	links     map[ID]link      // redrive links, by ID
}

// link returns the redrive link of id; most IDs have none.
func (l *Ledger) link(id ID) link {
	return l.links[id]
}

// setLink updates the redrive link of id with f.
func (l *Ledger) setLink(id ID, f func(x *link)) {
	if l.links == nil {
		l.links = map[ID]link{}
	}
	x := l.links[id]
	f(&x)
	l.links[id] = x
}

// export returns the Record stored as r under id.
func (l *Ledger) export(id ID, r *record) Record {
	x := l.link(id)
	out := Record{Created: l.get32(id, NoConsumer, fieldCreated, r.created), Sends: int(r.sends), State: r.State,
		Changed: l.get32(id, NoConsumer, fieldChanged, r.changed), Origin: x.origin, Redriven: x.redriven, Phantom: r.flags&recPhantom != 0}
	if r.flags&recRegistered != 0 {
		out.ID = id
		out.Key = l.strs.get(r.key)
		out.Type = l.strs.get(r.typ)
	}
	return out
}

// exportDelivery returns the Delivery stored as e, for id and consumer c.
func (l *Ledger) exportDelivery(id ID, c ConsumerRef, e *delivery) Delivery {
	d := Delivery{Expected: e.bits&delExpected != 0, Delivered: e.Delivered, Applied: e.Applied,
		Acked: e.bits&delAcked != 0, Missed: e.bits&delMissed != 0, FirstApplied: e.FirstApplied,
		LastSeen: l.get32(id, c, fieldLastSeen, e.lastSeen)}
	if i := e.bits >> 8; i != 0 {
		d.Lost = l.causes[i-1]
	}
	return d
}

// cause returns the index of c in l.causes, plus one, adding it on first use.
func (l *Ledger) cause(c Cause) uint32 {
	if i, ok := l.causeIdx[c]; ok {
		return i
	}
	if l.causeIdx == nil {
		l.causeIdx = map[Cause]uint32{}
	}
	if len(l.causes) == maxCauses {
		return maxCauses
	}
	l.causes = append(l.causes, c)
	i := uint32(len(l.causes))
	l.causeIdx[c] = i
	return i
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{byName: map[string]ConsumerRef{}}
}

// Consumer returns the handle of the logical consumer called name, creating
// it on first use. Consumers are listed in the order they were first named.
func (l *Ledger) Consumer(name string) ConsumerRef {
	if l == nil {
		return NoConsumer
	}
	if c, ok := l.byName[name]; ok {
		return c
	}
	c := ConsumerRef(len(l.consumers))
	l.consumers = append(l.consumers, &consumerBook{ledger: l, ref: c, name: name})
	l.byName[name] = c
	return c
}

// Consumers returns the names of the logical consumers in first-use order.
func (l *Ledger) Consumers() []string {
	if l == nil {
		return nil
	}
	out := make([]string, len(l.consumers))
	for i, c := range l.consumers {
		out[i] = c.name
	}
	return out
}

// ConsumerName returns the name behind a handle.
func (l *Ledger) ConsumerName(c ConsumerRef) string {
	if l == nil || c < 0 || int(c) >= len(l.consumers) {
		return ""
	}
	return l.consumers[c].name
}

// rec returns the record of id, growing the table as needed; nil for ID 0.
// It spells out table.at's fast path: the generic method is compiled for
// a shape and not inlined, and this is the ledger's most frequent call.
func (l *Ledger) rec(id ID) *record {
	// The fast path, small enough to be inlined: an ID below the table's
	// length whose chunk exists (every call after the message's first).
	if i := uint64(id); i < l.recs.n && id != 0 {
		if p := l.recs.chunks[i/tableChunk]; p != nil {
			return &p[i%tableChunk]
		}
	}
	return l.recGrow(id)
}

// recGrow is rec for an ID at or past the table's length.
func (l *Ledger) recGrow(id ID) *record {
	if id == 0 {
		return nil
	}
	t, i := &l.recs, uint64(id)
	if c := i / tableChunk; c < uint64(len(t.chunks)) {
		if p := t.chunks[c]; p != nil {
			if i >= t.n {
				t.n = i + 1
			}
			return &p[i%tableChunk]
		}
	}
	return t.grow(i)
}

// entry returns the delivery of id to consumer c, growing the consumer's
// table as needed; nil for ID 0 or an unknown consumer. Like rec, it spells
// out table.at's fast path.
func (l *Ledger) entry(id ID, c ConsumerRef) *delivery {
	// The fast path, as in rec.
	if c >= 0 && int(c) < len(l.consumers) {
		if t, i := &l.consumers[c].entries, uint64(id); i < t.n && id != 0 {
			if p := t.chunks[i/tableChunk]; p != nil {
				return &p[i%tableChunk]
			}
		}
	}
	return l.entryGrow(id, c)
}

// entryGrow is entry for an ID at or past the consumer's table's length.
func (l *Ledger) entryGrow(id ID, c ConsumerRef) *delivery {
	if id == 0 || c < 0 || int(c) >= len(l.consumers) {
		return nil
	}
	t, i := &l.consumers[c].entries, uint64(id)
	if k := i / tableChunk; k < uint64(len(t.chunks)) {
		if p := t.chunks[k]; p != nil {
			if i >= t.n {
				t.n = i + 1
			}
			return &p[i%tableChunk]
		}
	}
	return t.grow(i)
}

// Register records that m exists. Registering an ID again is a no-op, so a
// re-published event keeps its first record.
func (l *Ledger) Register(m *Message) {
	if l == nil {
		return
	}
	r := l.rec(m.ID)
	if r == nil || r.flags&recRegistered != 0 {
		return
	}
	l.register(r, m)
}

// register fills in the fresh record r of m.
func (l *Ledger) register(r *record, m *Message) {
	*r = record{created: l.put32(m.ID, NoConsumer, fieldCreated, m.Created), changed: l.put32(m.ID, NoConsumer, fieldChanged, m.Created),
		flags: recRegistered, key: l.lastKey.put(&l.strs, m.Key), typ: l.lastType.put(&l.strs, m.Headers.Type)}
	if l.links != nil {
		delete(l.links, m.ID) // a fresh record has no redrive links
	}
}

// Sent records that message id was handed to a broker at tick t; it becomes
// pending again even if an earlier copy was already acknowledged.
func (l *Ledger) Sent(id ID, t Tick) {
	if l == nil {
		return
	}
	if r := l.rec(id); r != nil {
		r.sends++
		r.State = StatePending
		l.setChanged(id, r, t)
	}
}

// SetState records a new broker-level state for message id at tick t.
func (l *Ledger) SetState(id ID, s State, t Tick) {
	if l == nil {
		return
	}
	if r := l.rec(id); r != nil {
		r.State = s
		l.setChanged(id, r, t)
	}
}

// MarkPhantom records that message id announces a change that never
// committed (publish-then-commit with a failed commit).
func (l *Ledger) MarkPhantom(id ID) {
	if l == nil {
		return
	}
	if r := l.rec(id); r != nil {
		r.flags |= recPhantom
	}
}

// Link records that dead letter orig was redriven as the new message next.
func (l *Ledger) Link(orig, next ID, t Tick) {
	if l == nil {
		return
	}
	if r := l.rec(orig); r != nil {
		r.State = StateRedriven
		l.setChanged(orig, r, t)
		l.setLink(orig, func(x *link) { x.redriven = next })
	}
	if r := l.rec(next); r != nil {
		l.setLink(next, func(x *link) { x.origin = orig })
	}
}

// SentTo records, in one call, that message m was handed at tick t to a
// broker that routes it to consumer c: Register(m), Sent(m.ID, t) and
// Expect(m.ID, c), with one lookup of the record.
func (l *Ledger) SentTo(m *Message, c ConsumerRef, t Tick) {
	if l == nil {
		return
	}
	id := m.ID
	if r := l.rec(id); r != nil {
		if r.flags&recRegistered == 0 {
			l.register(r, m)
		}
		r.sends++
		r.State = StatePending
		l.setChanged(id, r, t)
	}
	if e := l.entry(id, c); e != nil {
		e.bits |= delExpected
	}
}

// AckedDone records, in one call, that consumer c acknowledged message id
// and that the broker deleted it at tick t: Acked(id, c) followed by
// SetState(id, StateDone, t).
func (l *Ledger) AckedDone(id ID, c ConsumerRef, t Tick) {
	if l == nil {
		return
	}
	if e := l.entry(id, c); e != nil {
		e.bits |= delAcked
	}
	if r := l.rec(id); r != nil {
		r.State = StateDone
		l.setChanged(id, r, t)
	}
}

// Expect records that message id was routed to consumer c.
func (l *Ledger) Expect(id ID, c ConsumerRef) {
	if l == nil {
		return
	}
	if e := l.entry(id, c); e != nil {
		e.bits |= delExpected
	}
}

// Delivered records a delivery of message id to consumer c at tick t and
// returns how many deliveries the consumer has had of it, this one included.
// Every delivery after the first counts as a duplicate.
func (l *Ledger) Delivered(id ID, c ConsumerRef, t Tick) int {
	if l == nil {
		return 0
	}
	e := l.entry(id, c)
	if e == nil {
		return 0
	}
	e.bits |= delExpected
	e.Delivered++
	e.lastSeen = l.put32(id, c, fieldLastSeen, t)
	if e.Delivered > 1 {
		l.consumers[c].duplicates++
	}
	return int(e.Delivered)
}

// Applied records that consumer c applied the effect of message id at tick t.
func (l *Ledger) Applied(id ID, c ConsumerRef, t Tick) {
	if l == nil {
		return
	}
	e := l.entry(id, c)
	if e == nil {
		return
	}
	b := l.consumers[c]
	b.effects = true
	e.Applied++
	if e.Applied == 1 {
		e.FirstApplied = t
		b.order.push(id)
	}
}

// Acked records that consumer c acknowledged message id.
func (l *Ledger) Acked(id ID, c ConsumerRef) {
	if l == nil {
		return
	}
	if e := l.entry(id, c); e != nil {
		e.bits |= delAcked
	}
}

// Missed records that consumer c missed message id at tick t because it was
// offline: by design for ephemeral pub/sub, and not a loss.
func (l *Ledger) Missed(id ID, c ConsumerRef, t Tick) {
	if l == nil {
		return
	}
	if e := l.entry(id, c); e != nil {
		e.bits |= delMissed
		e.lastSeen = l.put32(id, c, fieldLastSeen, t)
	}
}

// Lost records that message id was lost at tick t for consumer c (NoConsumer
// when it was lost before reaching any consumer), with its cause.
func (l *Ledger) Lost(id ID, c ConsumerRef, cause Cause, t Tick) {
	if l == nil {
		return
	}
	if e := l.entry(id, c); e != nil {
		e.bits = e.bits&0xff | delExpected | l.cause(cause)<<8
	} else if r := l.rec(id); r != nil {
		r.State = StateLost
		l.setChanged(id, r, t)
	}
	l.losses = append(l.losses, Loss{ID: id, Consumer: l.ConsumerName(c), Cause: cause, Tick: t})
}

// Record returns the broker-level record of message id.
func (l *Ledger) Record(id ID) (Record, bool) {
	if l == nil || id == 0 {
		return Record{}, false
	}
	r := l.recs.get(uint64(id))
	if r == nil || r.flags&recRegistered == 0 {
		return Record{}, false
	}
	return l.export(id, r), true
}

// Delivery returns what consumer c knows of message id.
func (l *Ledger) Delivery(id ID, c ConsumerRef) Delivery {
	if l == nil || c < 0 || int(c) >= len(l.consumers) {
		return Delivery{}
	}
	if e := l.consumers[c].entries.get(uint64(id)); e != nil {
		return l.exportDelivery(id, c, e)
	}
	return Delivery{}
}

// Records returns the broker-level records in ID order.
func (l *Ledger) Records() []Record {
	if l == nil {
		return nil
	}
	var out []Record
	l.eachRecord(func(r *Record) { out = append(out, *r) })
	return out
}

// Losses returns every recorded loss in the order they happened.
func (l *Ledger) Losses() []Loss {
	if l == nil {
		return nil
	}
	return l.losses
}

// ApplyOrder returns the IDs consumer c applied, in order of first
// application, as a new slice: O(applied messages).
func (l *Ledger) ApplyOrder(c ConsumerRef) []ID {
	if l == nil || c < 0 || int(c) >= len(l.consumers) {
		return nil
	}
	return l.consumers[c].order.slice()
}

// Duplicates returns how many deliveries to the consumer called name were
// repeats of a message it had already received; "" sums every consumer.
func (l *Ledger) Duplicates(name string) int {
	n := 0
	l.eachConsumer(name, func(b *consumerBook) { n += b.duplicates })
	return n
}

// DuplicateEffects returns how many times the consumer called name applied
// an effect it had already applied; "" sums every consumer.
func (l *Ledger) DuplicateEffects(name string) int {
	n := 0
	l.eachConsumer(name, func(b *consumerBook) {
		for i := uint64(1); i < b.entries.len(); i++ {
			if e := b.entries.get(i); e != nil && e.Applied > 1 {
				n += int(e.Applied) - 1
			}
		}
	})
	return n
}

func (l *Ledger) eachConsumer(name string, f func(b *consumerBook)) {
	if l == nil {
		return
	}
	for _, b := range l.consumers {
		if name == "" || b.name == name {
			f(b)
		}
	}
}

// CauseCount is the number of losses with one cause.
type CauseCount struct {
	Cause Cause
	Count int
}

// Stats summarises the ledger.
type Stats struct {
	Messages         int // registered messages
	Pending          int // still held by a broker
	Done             int // acknowledged and deleted
	DeadLettered     int
	Expired          int
	Purged           int
	Redriven         int
	Phantoms         int
	Delivered        int // deliveries over all consumers
	Duplicates       int // repeated deliveries over all consumers
	Applied          int // effects applied over all consumers
	DuplicateEffects int // repeated effects over all consumers
	Missed           int // (message, consumer) pairs missed by design
	Lost             int // recorded losses
	LostBy           []CauseCount
}

// Stats computes the summary in O(messages x consumers).
func (l *Ledger) Stats() Stats {
	var s Stats
	if l == nil {
		return s
	}
	for i := uint64(1); i < l.recs.len(); i++ {
		r := l.recs.get(i)
		if r == nil || r.flags&recRegistered == 0 {
			continue
		}
		s.Messages++
		switch r.State {
		case StatePending:
			s.Pending++
		case StateDone:
			s.Done++
		case StateDeadLettered:
			s.DeadLettered++
		case StateExpired:
			s.Expired++
		case StatePurged:
			s.Purged++
		case StateRedriven:
			s.Redriven++
		}
		if r.flags&recPhantom != 0 {
			s.Phantoms++
		}
	}
	for _, b := range l.consumers {
		s.Duplicates += b.duplicates
		for i := uint64(1); i < b.entries.len(); i++ {
			e := b.entries.get(i)
			if e == nil {
				continue
			}
			s.Delivered += int(e.Delivered)
			s.Applied += int(e.Applied)
			if e.Applied > 1 {
				s.DuplicateEffects += int(e.Applied) - 1
			}
			if e.bits&delMissed != 0 {
				s.Missed++
			}
		}
	}
	s.Lost = len(l.losses)
	by := map[Cause]int{}
	for _, x := range l.losses {
		by[x.Cause]++
	}
	for c, n := range by {
		s.LostBy = append(s.LostBy, CauseCount{c, n})
	}
	sort.Slice(s.LostBy, func(i, j int) bool { return s.LostBy[i].Cause < s.LostBy[j].Cause })
	return s
}

// eachRecord calls f for every registered record in ID order. The Record
// f gets is a copy that is reused for the next call.
func (l *Ledger) eachRecord(f func(r *Record)) {
	var x Record
	for i := uint64(1); i < l.recs.len(); i++ {
		if r := l.recs.get(i); r != nil && r.flags&recRegistered != 0 {
			x = l.export(ID(i), r)
			f(&x)
		}
	}
}

// record returns a copy of the record of id without growing the table; an
// unknown ID yields a zero record.
func (l *Ledger) record(id ID) *Record {
	r := &Record{}
	if x := l.recs.get(uint64(id)); x != nil {
		*r = l.export(id, x)
	}
	return r
}

// eachEntry calls f for every entry of the consumer in ID order. The
// Delivery f gets is a copy that is reused for the next call.
func (b *consumerBook) eachEntry(f func(id ID, e *Delivery)) {
	var d Delivery
	for i := uint64(1); i < b.entries.len(); i++ {
		if e := b.entries.get(i); e != nil {
			d = b.ledger.exportDelivery(ID(i), b.ref, e)
			f(ID(i), &d)
		}
	}
}
