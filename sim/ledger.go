package sim

import (
	"iter"
	"math"
)

// Cause explains why a message was lost. Every loss the ledger records has
// one: a loss without a modelled cause is a bug in brokerlab.
type Cause string

// The modelled causes of loss.
const (
	CauseDualWrite           Cause = "dual write"               // crash between DB commit and publish
	CauseAckBeforeProcess    Cause = "ack before processing"    // at-most-once consumer crashed after acking
	CauseCommitBeforeProcess Cause = "commit before processing" // at-most-once group member committed, then the record was never processed
	CauseRetention           Cause = "retention"                // retention deleted it before it was consumed
	CauseCompaction          Cause = "compaction"               // compaction deleted it before it was consumed
	CauseOverflow            Cause = "overflow"                 // a bounded buffer dropped it
	CausePurge               Cause = "purge"                    // a purge deleted it unprocessed
	CauseBrokerUnavailable   Cause = "broker unavailable"       // a publish failed and nobody retried
	CauseOffsetReset         Cause = "offset reset"             // auto.offset.reset=latest skipped it
	CauseSeek                Cause = "seek"                     // a seek moved a group past it before it was read
	CauseHandlerFailed       Cause = "handler failed"           // an ephemeral delivery failed and is never redelivered
	CauseDisconnect          Cause = "disconnect"               // a subscriber disconnected with the copy in its buffer
	CauseForwardFailed       Cause = "forward failed"           // a fan-out could not hand its copy to the target
	CauseDeadRow             Cause = "dead row"                 // an outbox row exceeded its attempts and was never published
	CauseClockSkew           Cause = "clock skew"               // a projection versioned by clock skipped a later record whose writer's clock ran behind
	CauseOffsetOrder         Cause = "offset order"             // a projection versioned by offset skipped a later record at a lower offset of another partition
)

// State is where one copy of a message stands at the broker, as the ledger
// last heard from the trace.
type State uint8

// The broker-level states of a copy.
const (
	StateCreated      State = iota // created, never accepted by a broker
	StatePending                   // held by a broker or an outbox: visible, delayed, in flight or in a log
	StateDone                      // acknowledged and deleted
	StateDeadLettered              // parked in a dead-letter queue (or a dead outbox row)
	StateExpired                   // deleted by retention or compaction
	StatePurged                    // deleted by a purge
	StateRedriven                  // moved out of a DLQ; a new copy carries it on
	StateLost                      // lost before any consumer, with a cause
	StateDelivered                 // handed to subscribers and kept nowhere (pub/sub)
	StateAbsorbed                  // dropped by a broker's deduplication as a repeat of its origin
)

var stateNames = [...]string{"created", "pending", "done", "dead-lettered", "expired", "purged", "redriven", "lost", "delivered", "absorbed"}

// String returns the state's name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Record is what the ledger knows about one copy of a message at the broker
// level. A copy is identified by its ID; Origin links it to the copy it was
// made from (a redrive, a fan-out, a deduplicated send), and the root of
// that chain is the message's origin, by which the checkers judge.
type Record struct {
	ID       ID
	Key      string
	Type     string
	Where    string // the component that last held it, e.g. "queue:orders"
	Created  Tick
	Sends    int   // how many times it was handed to a broker (re-publishes count)
	State    State // the latest broker-level state
	Changed  Tick  // when State last changed
	Origin   ID    // the copy this one was made from (0 for an original)
	Redriven ID    // for a redriven dead letter, the new copy that carries it
	Phantom  bool  // published for a business change that was never committed
}

// Entry is what the ledger knows about one copy and one logical consumer
// (a queue's worker pool, a consumer group, a subscriber).
type Entry struct {
	Expected     bool   // the copy was routed to this consumer
	Delivered    uint32 // deliveries, including redeliveries and duplicates
	Applied      uint32 // effects the consumer's handler recorded
	Skipped      uint32 // deliveries the handler recognised as duplicates and absorbed
	Acked        bool
	Handled      bool  // a handler finished with it at least once (effect, skip or failure)
	Missed       bool  // not delivered because the consumer was offline (by design)
	Lost         Cause // set when this consumer lost the copy
	FirstApplied Tick
	// SecondApplied is when the handler recorded its second effect, the
	// tick at which applying the copy more than once happened; 0 while
	// Applied is below 2.
	SecondApplied Tick
	LastSeen      Tick
}

// Loss is one recorded loss.
type Loss struct {
	ID       ID
	Consumer string // empty when the message was lost before any consumer
	Cause    Cause
	Tick     Tick
}

// loss is how the ledger stores a Loss: without pointers, in 24 bytes
// (the consumer is a ConsumerRef, the cause 1 + an index into
// Ledger.causes).
type loss struct {
	id       ID
	tick     Tick
	consumer ConsumerRef
	cause    uint32
}

// allLosses yields every recorded loss, in the order recorded. The Loss
// it yields is a fresh value each time; it costs nothing per loss beyond
// the copy.
func (l *Ledger) allLosses() iter.Seq[Loss] {
	return func(yield func(Loss) bool) {
		for x := range l.losses.all() {
			out := Loss{ID: x.id, Tick: x.tick, Consumer: l.ConsumerName(x.consumer)}
			if x.cause != 0 {
				out.Cause = l.causes[x.cause-1]
			}
			if !yield(out) {
				return
			}
		}
	}
}

// ConsumerRef is a handle on a logical consumer in a Ledger.
type ConsumerRef int32

// NoConsumer is the ConsumerRef of "no consumer".
const NoConsumer ConsumerRef = -1

// record is how the ledger stores a Record: without pointers (the key
// lives in the ledger's strtab, the type is an index into Ledger.types,
// the component one into Ledger.wheres), so its chunks are never scanned
// by the garbage collector, in 24 bytes (a chunk of 128 is 3 KiB, a size
// the allocator has a class for). Lineage links live in the
// ledger's lineageTables, made with the first link, whose chunks exist
// only where some copy in their range has a link.
type record struct {
	keyLo   uint32 // the key's strRef in 48 bits (see setKey), so that the record is 4-byte aligned
	keyHi   uint16
	typ     uint16 // index into Ledger.types; typeWide: kept in Ledger.wideTypes
	created tick32
	changed tick32
	sends   uint32
	where   uint16
	State   State
	flags   uint8
}

// A record's key reference is a strRef in 48 bits: keyHi holds a small
// string's chunk number, or keyBigBit and the top of a big string's index;
// keyLo the rest. A reference that does not fit (past 32,767 chunks of
// strings, 2 GiB of distinct keys) is kept whole in Ledger.wideKeys, and
// the record holds keyWideHi.
const (
	keyBigBit = 1 << 15
	keyWideHi = 1<<16 - 1
)

// key returns the reference of r's key, and false when it is kept in
// Ledger.wideKeys.
func (r *record) key() (strRef, bool) {
	switch {
	case r.keyHi == keyWideHi:
		return 0, false
	case r.keyHi&keyBigBit != 0:
		return strRefBig | strRef(r.keyHi&^keyBigBit)<<32 | strRef(r.keyLo), true
	}
	return strRef(r.keyHi)<<32 | strRef(r.keyLo), true
}

// setKey sets r's key reference and reports whether it fits in the record.
func (r *record) setKey(k strRef) bool {
	hi := k >> 32
	if k&strRefBig != 0 {
		hi = k&^strRefBig>>32 | keyBigBit
		if k&^strRefBig>>32 >= keyBigBit-1 {
			hi = keyWideHi
		}
	} else if hi >= keyBigBit {
		hi = keyWideHi
	}
	r.keyLo, r.keyHi = uint32(k), uint16(hi)
	return hi != keyWideHi
}

// keyString returns the key of copy id stored as r.
func (l *Ledger) keyString(id ID, r *record) string {
	if k, ok := r.key(); ok {
		return l.strs.get(k)
	}
	return l.wideKeys[id]
}

// typeWide is the type index of a record whose type did not get an index
// of its own (past maxTypes distinct types); Ledger.wideTypes holds it.
const typeWide = 1<<16 - 1

// maxTypes is the number of distinct message types records index.
const maxTypes = typeWide - 1

// typeIndex returns the index of the message type s for copy id.
func (l *Ledger) typeIndex(id ID, s string) uint16 {
	if s == l.lastType {
		return l.lastTIdx
	}
	i, ok := l.typeIdx[s]
	if !ok {
		if len(l.types) > maxTypes {
			if l.wideTypes == nil {
				l.wideTypes = map[ID]string{}
			}
			l.wideTypes[id] = s
			return typeWide
		}
		if l.typeIdx == nil {
			l.typeIdx = map[string]uint16{}
		}
		i = uint16(len(l.types))
		l.types = append(l.types, s)
		l.typeIdx[s] = i
	}
	l.lastType, l.lastTIdx = s, i
	return i
}

// typeOf returns the message type of copy id stored as r.
func (l *Ledger) typeOf(id ID, r *record) string {
	switch {
	case r.typ == typeWide:
		return l.wideTypes[id]
	case int(r.typ) < len(l.types):
		return l.types[r.typ]
	}
	return ""
}

// tick32 is a tick stored in 32 bits. A tick outside its range (no run
// gets there tick by tick, but Clock.Set can) is stored as tickWide and
// kept in full in Ledger.wide.
type tick32 int32

const tickWide tick32 = math.MinInt32

// wideKey names a field of a record (consumer NoConsumer) or of a
// delivery whose value did not fit it.
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
	fieldDelivered // a delivery's count past its field
	fieldApplied
	fieldSkipped
	fieldCause         // a delivery's loss cause past causeWide
	fieldSecondApplied // the tick of a delivery's second effect, kept for the few copies applied twice
)

// put32 returns t as a tick32, keeping it in l.wide when it does not fit.
func (l *Ledger) put32(id ID, c ConsumerRef, field uint8, t Tick) tick32 {
	if t > Tick(tickWide) && t <= math.MaxInt32 {
		return tick32(t)
	}
	l.putWide(id, c, field, t)
	return tickWide
}

// putWide keeps v, field f of copy id (and consumer c, or NoConsumer), in
// l.wide.
func (l *Ledger) putWide(id ID, c ConsumerRef, f uint8, v Tick) {
	if l.wide == nil {
		l.wide = map[wideKey]Tick{}
	}
	l.wide[wideKey{id, c, f}] = v
}

// get32 returns the tick stored as v.
func (l *Ledger) get32(id ID, c ConsumerRef, field uint8, v tick32) Tick {
	if v != tickWide {
		return Tick(v)
	}
	return l.wide[wideKey{id, c, field}]
}

// setState records a copy's new state at tick t.
func (l *Ledger) setState(id ID, r *record, s State, t Tick) {
	r.State = s
	r.changed = l.put32(id, NoConsumer, fieldChanged, t)
}

// The flags of a record.
const (
	recRegistered uint8 = 1 << iota
	recPhantom
	recLinked   // the copy has an origin or copies made from it
	recRedriven // a redriven event moved the copy out of a DLQ; never cleared (Stats.Redriven)
	recExtra    // a duplicated event gave the copy an entry in Ledger.extra; never cleared, so settleCopy asks the map only for such copies
)

// delivery is how the ledger stores an Entry: without pointers, in 8
// bytes (a chunk of 128 is 1 KiB). A run keeps one per copy and consumer,
// so with many consumers (a fan-out) deliveries are most of the ledger's
// memory, and writing their fresh pages most of its time.
//
// Each field holds the common case and marks the rest as kept in full in
// Ledger.wide, under the copy, the consumer and the field:
//   - LastSeen is a tick32 (see put32).
//   - FirstApplied is kept as its distance from LastSeen, which fits a
//     byte when a copy is applied within 127 ticks of its latest delivery,
//     as it nearly always is; offWide marks one kept in full, in the
//     consumer's firstWide table rather than Ledger.wide.
//   - Delivered counts to 254 in a byte, Applied and Skipped to 14 in half
//     a byte each. A count that reaches the field's largest value is kept
//     in full: one entry per copy and field, whatever the count.
//   - The loss cause, 1 + its index into Ledger.causes (0 = not lost),
//     stays inline for the first 14 distinct causes of a run (brokerlab
//     models 15, so a run that meets every one keeps its fifteenth in
//     full), because in some runs most deliveries are lost; a later cause
//     is kept in full.
type delivery struct {
	lastSeen  tick32
	firstOff  int8  // FirstApplied - LastSeen once applied
	delivered uint8 // count
	handled   uint8 // Applied in the low half, Skipped in the high half
	bits      uint8 // flags in the low half; the loss cause in the high half
}

// The flags of a delivery.
const (
	delExpected uint8 = 1 << iota
	delAcked
	delMissed
	delHandled
)

// The half-bytes of a delivery's handled and bits fields.
const (
	lowHalf  = 0
	highHalf = 4
)

// offWide marks a FirstApplied kept in Ledger.wide; causeWide a loss cause
// kept there.
const (
	offWide   = math.MinInt8
	causeWide = 1<<4 - 1
)

// maxCauses is how many distinct causes the ledger tells apart; a later
// new cause is recorded as the last one.
const maxCauses = 1<<24 - 1

// incByte adds one to the count *v, field f of copy id for consumer c.
// From 255 on, the count is kept in l.wide.
func (l *Ledger) incByte(id ID, c ConsumerRef, f uint8, v *uint8) {
	switch {
	case *v < math.MaxUint8-1:
		*v++
	case *v == math.MaxUint8-1:
		*v = math.MaxUint8
		l.putWide(id, c, f, math.MaxUint8)
	default:
		l.wide[wideKey{id, c, f}]++
	}
}

// byteCount returns the count stored as v by incByte.
func (l *Ledger) byteCount(id ID, c ConsumerRef, f uint8, v uint8) uint32 {
	if v != math.MaxUint8 {
		return uint32(v)
	}
	return uint32(l.wide[wideKey{id, c, f}])
}

// incHalf adds one to the count in the half of *v at shift (lowHalf or
// highHalf), field f of copy id for consumer c. From 15 on, the count is
// kept in l.wide.
func (l *Ledger) incHalf(id ID, c ConsumerRef, f uint8, v *uint8, shift uint8) {
	switch n := *v >> shift & 0xf; {
	case n < 0xf-1:
		*v += 1 << shift
	case n == 0xf-1:
		*v |= 0xf << shift
		l.putWide(id, c, f, 0xf)
	default:
		l.wide[wideKey{id, c, f}]++
	}
}

// halfCount returns the count stored by incHalf in the half of v at shift.
func (l *Ledger) halfCount(id ID, c ConsumerRef, f uint8, v uint8, shift uint8) uint32 {
	if n := v >> shift & 0xf; n != 0xf {
		return uint32(n)
	}
	return uint32(l.wide[wideKey{id, c, f}])
}

// applied reports whether d's consumer applied the copy at least once.
func (d *delivery) applied() bool { return d.handled&0xf != 0 }

// settledBy reports whether d's consumer applied or absorbed the copy.
func (d *delivery) settledBy() bool { return d.handled != 0 }

// lostFor reports whether d records a loss.
func (d *delivery) lostFor() bool { return d.bits>>highHalf != 0 }

// open reports whether d's copy was routed to its consumer, which has not
// applied, absorbed, missed or lost it yet: the deliveries a deletion of
// the copy turns into losses (see Ledger.loseUnapplied).
func (d *delivery) open() bool {
	return d.bits&delExpected != 0 && !d.settledBy() && d.bits&delMissed == 0 && !d.lostFor()
}

// seen sets d's LastSeen, for copy id and consumer c, to t, keeping its
// FirstApplied.
func (l *Ledger) seen(id ID, c ConsumerRef, d *delivery, t Tick) {
	if !d.applied() {
		d.lastSeen = l.put32(id, c, fieldLastSeen, t)
		return
	}
	first := l.firstApplied(id, c, d)
	d.lastSeen = l.put32(id, c, fieldLastSeen, t)
	l.setFirstApplied(id, c, d, first)
}

// setFirstApplied sets d's FirstApplied, for copy id and consumer c, to
// t, as a distance from its LastSeen when that fits a byte.
func (l *Ledger) setFirstApplied(id ID, c ConsumerRef, d *delivery, t Tick) {
	off := t - l.get32(id, c, fieldLastSeen, d.lastSeen)
	if off > offWide && off <= math.MaxInt8 {
		d.firstOff = int8(off) // a full value left in firstWide is not read again
		return
	}
	d.firstOff = offWide
	*l.consumers[c].firstWide.at(uint64(id)) = t
}

// firstApplied returns d's FirstApplied, for copy id and consumer c: 0
// before the consumer applied it.
func (l *Ledger) firstApplied(id ID, c ConsumerRef, d *delivery) Tick {
	switch {
	case !d.applied():
		return 0
	case d.firstOff == offWide:
		return *l.consumers[c].firstWide.get(uint64(id))
	}
	return l.get32(id, c, fieldLastSeen, d.lastSeen) + Tick(d.firstOff)
}

// setCause records that d, the delivery of copy id to consumer c, was
// lost with the cause whose index plus one is cause (see Ledger.cause).
func (l *Ledger) setCause(id ID, c ConsumerRef, d *delivery, cause uint32) {
	v := cause
	if cause >= causeWide {
		v = causeWide
		l.putWide(id, c, fieldCause, Tick(cause))
	}
	d.bits = d.bits&0xf | uint8(v)<<highHalf
}

// causeOf returns the loss cause of d, the delivery of copy id to
// consumer c, "" when it was not lost.
func (l *Ledger) causeOf(id ID, c ConsumerRef, d *delivery) Cause {
	i := uint32(d.bits >> highHalf)
	if i == causeWide {
		i = uint32(l.wide[wideKey{id, c, fieldCause}])
	}
	if i == 0 || int(i) > len(l.causes) {
		return ""
	}
	return l.causes[i-1]
}

type consumerBook struct {
	ref     ConsumerRef
	name    string
	acted   bool       // the consumer did something a consumer does (see Ledger.acts)
	entries deliveries // indexed by ID; older chunks packed
	order   idSeq      // first applications, in order
	// firstWide holds, by ID, the FirstApplied of the deliveries whose
	// distance from LastSeen does not fit their byte (offWide). Its
	// chunks are made where such a delivery is, so a run that applies
	// copies promptly has none, and a subscriber that buffers thousands
	// of copies before applying them pays 8 bytes a copy and an array
	// write, not a map entry.
	firstWide table[Tick]
}

// lineageTables are the tables of a ledger's lineage links, made when the
// first copy gets an origin or is redriven: a run without redrives,
// fan-outs or deduplication never pays for them, in the ledger's own
// allocation or anywhere else.
type lineageTables struct {
	origins  table[ID] // the copy each copy was made from, by ID
	redrives table[ID] // the copy a redriven dead letter was carried on as, by ID
}

// lineageTables returns the ledger's lineage tables, making them on
// first use. Read-only paths test l.links for nil instead.
func (l *Ledger) lineageTables() *lineageTables {
	if l.links == nil {
		l.links = &lineageTables{}
	}
	return l.links
}

// Ledger is the ground truth about every message of a run, and it is a
// fold over the trace: its only input is Emit, which a Trace calls for
// every event, and nothing else writes it. Folding a recorded JSON Lines
// trace (ReadJSONL) therefore yields the same ledger as the live run, so
// every verdict can be audited from the trace alone.
//
// The fold reads only the structured fields of events, never Detail; the
// vocabulary it understands is documented on Ledger.Emit.
//
// Records are indexed by ID, so every event costs O(1) amortised. The
// ledger books 24 bytes per copy, plus its key's bytes the first time it
// sees that key (every time once 4,096 distinct keys were seen); per
// consumer, 8 bytes per copy in chunks of 128 IDs, plus a byte or two per
// first application (the difference from the previous one), or two bytes
// per run of up to 255 applied in ID order. Once every
// copy of a chunk is settled, the chunk is packed without losing a field
// (see packedTable): a settled copy one consumer applied then keeps about
// 5 bytes of record and 1.5 of delivery, about 12 bytes in all over a
// long run with faults. The stored records hold no pointers, so a ledger
// of millions of messages adds almost nothing to garbage collection. Once Stats has been asked for, the
// ledger keeps the summary up to date as it folds (see Stats). A nil
// *Ledger ignores every event.
type Ledger struct {
	recs      records // indexed by ID; index 0 unused; older chunks packed
	consumers []*consumerBook
	byName    map[string]ConsumerRef // consumer name -> handle, once there are more than scanMax
	losses    list[loss]
	strs      strtab           // keys and types of the records
	wide      map[wideKey]Tick // values that do not fit their field: ticks past a tick32, counts past 16 bits, causes past causeWide; and the tick of each second effect
	lastKey   strCache
	types     []string          // message types, index 0 is ""
	typeIdx   map[string]uint16 // type -> index into types
	wideTypes map[ID]string     // types past maxTypes, by copy
	wideKeys  map[ID]string     // keys whose strRef does not fit a record, by copy
	lastType  string
	causes    []Cause           // the causes deliveries refer to
	causeIdx  map[Cause]uint32  // cause -> 1 + index into causes
	links     *lineageTables    // the origins and redrives of copies; nil until a copy has one
	extra     map[ID]uint32     // copies held, by ID, for the few messages a broker duplicated
	wheres    []string          // component names, index 0 is ""
	whereIdx  map[string]uint16 // component name -> index into wheres, once there are more than scanMax
	lastWhere string
	lastName  string
	lastTIdx  uint16
	lastWIdx  uint16
	lastRef   ConsumerRef
	subs      [][]ConsumerRef // by component index: the consumers following that log (a slice, not a map, as every produced record reads it)
	last      Tick            // the tick of the latest event
	events    uint64          // events of the kinds the fold reads, so far
	cache     []Outcome       // Outcomes("") as of cacheAt events
	cacheAt   uint64
	lineage   []ID        // the copies with an origin or copies made from them (recLinked), once each
	stats     *statsIndex // the summary kept up to date, once Stats was asked for
	tidyNext  int         // the consumer whose deliveries tidy tries next
	lastKnown ID          // the copy bookKnown last found registered (0: none)
	cached    bool
	unsorted  bool // lineage is not in ID order
	noPack    bool // keep every chunk of deliveries unpacked (tests compare against it)
}

// NewLedger returns an empty ledger. Attach it to a Trace (NewEnv does) to
// fold a run's events as they happen.
func NewLedger() *Ledger {
	first := make([]string, 2) // the first component name and type, "" both: one allocation for the two
	return &Ledger{wheres: first[0:1:1], types: first[1:2:2], lastRef: NoConsumer}
}

// Emit folds one trace event into the ledger. It is the ledger's only
// input. The kinds it reads, and the fields each needs:
//
//   - sent, produced, published, stored (Msg, Key, Where; Consumer for the
//     logical consumer a queue routes it to; Origin for a copy; Type): the
//     copy enters a broker (stored: an outbox) and is pending there, or,
//     for published, handed to subscribers and kept nowhere. A produced
//     record is expected by every consumer group following its log.
//   - redriven (Msg: the new copy, Origin: the dead letter, Consumer): the
//     dead letter is redriven and the new copy is pending.
//   - deduplicated (Msg, Origin): a send dropped as a repeat of Origin.
//   - received, redelivered, polled, delivered (Msg, Consumer): one more
//     delivery to the consumer.
//   - processed (Msg, Consumer): the handler recorded an applied effect.
//   - skipped (Msg, Consumer): the handler recognised a duplicate and
//     applied nothing.
//   - failed (Msg, Consumer): the handler finished without an effect.
//   - duplicated (Msg): the broker holds one more copy under the same ID;
//     until every copy is settled the message stays pending.
//   - acked (Msg, Consumer): acknowledged and deleted; pending while a
//     duplicated copy is still held.
//   - dead_lettered (Msg): parked in a dead-letter queue or as a dead
//     outbox row.
//   - expired (Msg; Cause, retention when empty), purged (Msg): deleted;
//     every expected consumer that has not applied it loses it.
//   - missed (Msg, Consumer): missed by design while offline.
//   - dropped (Msg, Consumer): lost to an overflow.
//   - lost (Msg, Cause; Consumer unless it was lost before any consumer).
//   - phantom (Msg): announces a change that never committed.
//   - subscribed (Where, Consumer; Detail "earliest" when the group reads
//     the log from its start): a consumer group follows a log.
//
// Every other kind is ignored. A loss later contradicted by an applied
// effect is reconciled: the verdict is "applied".
func (l *Ledger) Emit(e *Event) {
	if l == nil {
		return
	}
	l.begin(e.Tick, e.Msg, e.Origin)
	switch e.Kind {
	case KindSent, KindProduced, KindPublished, KindStored:
		l.enter(e)
	case KindReceived, KindRedelivered, KindPolled, KindDelivered:
		l.delivered(e)
	case KindProcessed:
		l.processed(e.Msg, l.ref(e.Consumer), e.Tick)
	case KindSkipped:
		c := l.ref(e.Consumer)
		l.acts(c)
		if d := l.entry(e.Msg, c); d != nil {
			d.bits |= delExpected | delHandled
			l.incHalf(e.Msg, c, fieldSkipped, &d.handled, highHalf)
		}
	case KindFailed:
		c := l.ref(e.Consumer)
		l.acts(c)
		if d := l.entry(e.Msg, c); d != nil {
			d.bits |= delHandled
		}
	case KindAcked:
		l.acked(e.Msg, l.ref(e.Consumer), e.Tick)
	case KindDuplicated:
		if r := l.known(e); r != nil {
			if l.extra == nil {
				l.extra = map[ID]uint32{}
			}
			if l.extra[e.Msg] == 0 {
				l.extra[e.Msg] = 1 // the copy it was made from
			}
			l.extra[e.Msg]++
			r.flags |= recExtra
			l.setState(e.Msg, r, StatePending, e.Tick)
		}
	case KindDeadLettered:
		l.settleCopy(e.Msg)
		if r := l.known(e); r != nil {
			l.setState(e.Msg, r, StateDeadLettered, e.Tick)
		}
	case KindRedriven:
		if r := l.rec(e.Origin); r != nil && e.Origin != 0 {
			l.setState(e.Origin, r, StateRedriven, e.Tick)
			r.flags |= recRedriven
			*l.lineageTables().redrives.at(uint64(e.Origin)) = e.Msg
		}
		l.enter(e)
	case KindDeduplicated:
		if r := l.known(e); r != nil && e.Origin != 0 && e.Origin != e.Msg {
			l.setOrigin(e.Msg, e.Origin)
			// Looked up again after setOrigin's lookups (see enter).
			if r = l.rec(e.Msg); r != nil {
				l.setState(e.Msg, r, StateAbsorbed, e.Tick)
			}
		}
	case KindExpired, KindPurged:
		l.settleCopy(e.Msg)
		cause, state := e.Cause, StateExpired
		if e.Kind == KindPurged {
			cause, state = CausePurge, StatePurged
		} else if cause == "" {
			cause = CauseRetention
		}
		l.deleted(e.Msg, l.known(e), state, cause, e.Tick)
	case KindMissed:
		c := l.ref(e.Consumer)
		l.acts(c)
		if d := l.entry(e.Msg, c); d != nil {
			d.bits |= delExpected | delMissed
			l.seen(e.Msg, c, d, e.Tick)
		}
	case KindDropped:
		l.lose(e, CauseOverflow)
	case KindLost:
		l.lose(e, e.Cause)
	case KindPhantom:
		if r := l.known(e); r != nil {
			r.flags |= recPhantom
		}
	case KindSubscribed:
		l.subscribe(e)
	default:
		return // a kind the fold ignores changes nothing
	}
	l.folded()
}

// folded counts one more event of a kind the fold reads, and tidies
// every tableChunk of them.
func (l *Ledger) folded() {
	l.events++
	if l.events%tableChunk == 0 {
		l.tidy()
	}
}

// processed records an applied effect of copy id by consumer c at tick t.
func (l *Ledger) processed(id ID, c ConsumerRef, t Tick) {
	l.acts(c)
	d := l.entry(id, c)
	if d == nil {
		return
	}
	if d.handled == 0 && d.lastSeen != tickWide {
		// The common case spelled out: the first effect, applied within
		// a tick32 and 127 ticks of the latest delivery.
		if off := t - Tick(d.lastSeen); off > offWide && off <= math.MaxInt8 {
			d.bits |= delExpected | delHandled
			d.handled = 1
			d.firstOff = int8(off)
			l.consumers[c].order.push(id)
			return
		}
	}
	d.bits |= delExpected | delHandled
	first := !d.applied()
	l.incHalf(id, c, fieldApplied, &d.handled, lowHalf)
	switch {
	case first:
		l.setFirstApplied(id, c, d, t)
		l.consumers[c].order.push(id)
	case d.handled&0xf == 2:
		// The second effect: the tick a duplicate effect happened at,
		// which the checkers name. Only copies applied twice pay for it.
		l.putWide(id, c, fieldSecondApplied, t)
	}
}

// bookDelivery folds a delivery (received, redelivered, polled or
// delivered) of copy id to consumer c at tick t, as Emit folds the event,
// and reports true; it changes nothing and reports false when the record
// of id is not registered yet, because registering it reads fields of the
// event (key, type, component) the caller did not pass. O(1) amortised,
// like Emit, but without its kind switch or a name lookup.
func (l *Ledger) bookDelivery(id ID, c ConsumerRef, t Tick) bool {
	if !l.bookKnown(id, t) {
		return false
	}
	if d := l.entry(id, c); d != nil {
		l.deliveredTo(id, c, d, t)
	}
	l.folded()
	return true
}

// bookDeliveries folds a delivered event of copy id to each consumer of
// f in turn at tick t, as bookDelivery folds each, and reports true; it
// changes nothing and reports false when the record of id is not
// registered yet (see bookDelivery), or when f names no consumer. A
// consumer's handle is looked up, and the consumer made, on its first
// delivery, in the order the events would have named them. O(f.Len())
// amortised.
func (l *Ledger) bookDeliveries(id ID, f *LedgerFanout, t Tick) bool {
	if len(f.names) == 0 || !l.bookKnown(id, t) {
		return false
	}
	plain := t > Tick(tickWide) && t <= math.MaxInt32 // t fits a tick32
	i := uint64(id)
	for j, c := range f.refs {
		if c < 0 {
			c = l.ref(f.names[j])
			f.refs[j] = c
		}
		// entry and deliveredTo, their common case spelled out: a plain
		// chunk, a copy delivered a few times and not applied yet.
		var d *delivery
		if c >= 0 && int(c) < len(l.consumers) {
			if tb := &l.consumers[c].entries.t; i/tableChunk < uint64(len(tb.chunks)) {
				if p := tb.chunks[i/tableChunk]; p != nil {
					if i >= tb.n {
						tb.n = i + 1
					}
					d = &p[i%tableChunk]
				}
			}
		}
		switch {
		case d != nil && plain && d.delivered < math.MaxUint8-1 && !d.applied():
			l.consumers[c].acted = true
			d.bits |= delExpected
			d.delivered++
			d.lastSeen = tick32(t)
		case d != nil:
			l.deliveredTo(id, c, d, t)
		default:
			if d = l.entry(id, c); d != nil {
				l.deliveredTo(id, c, d, t)
			}
		}
		l.folded()
	}
	return true
}

// bookKnown begins booking an event about copy id at tick t, as Emit
// begins folding one, and reports true; it changes nothing and reports
// false when the record of id is not registered yet, because registering
// it reads fields of the event (key, type, component) a typed entry does
// not pass. A fan-out books one copy for each subscriber in turn, so the
// copy it last found registered is remembered (no record is ever
// unregistered) and asked about once. O(1).
func (l *Ledger) bookKnown(id ID, t Tick) bool {
	if id != l.lastKnown || id == 0 {
		if l.recFlags(id)&recRegistered == 0 {
			return false
		}
		l.lastKnown = id
	}
	l.begin(t, id, 0)
	return true
}

// begin starts folding an event about copy id (0 for none), made from
// origin (0 for none), at tick t, as Emit and every booking do: the tick
// becomes the last one, and the kept stats note both copies as touched.
// O(1), and inlined.
func (l *Ledger) begin(t Tick, id, origin ID) {
	l.last = t
	if l.stats != nil {
		l.stats.touchPair(id, origin)
	}
}

// bookArrival folds an event of kind k (sent, produced or published):
// copy id (made from origin, with key and type typ) handed to the queue,
// appended to the log or published to the topic where at tick t, and
// expected by consumer (none when empty: only a queue's send names one),
// as Emit folds it. The consumer is named to arrive, which looks it up
// where Emit's fold does, so a consumer first named by a send is made at
// the same point in both. O(1) amortised, like Emit, but without
// building the event or its kind switch.
func (l *Ledger) bookArrival(k Kind, id, origin ID, t Tick, where, key, typ, consumer string) {
	l.begin(t, id, origin)
	l.arrive(k, id, origin, t, where, key, typ, consumer)
	l.folded()
}

// bookExpired folds the expiry of copy id with cause (retention when
// empty) at tick t, as Emit folds an expired event, and reports true; it
// changes nothing and reports false when the record of id is not
// registered yet, because registering it reads fields of the event the
// caller did not pass. O(consumers), like Emit.
func (l *Ledger) bookExpired(id ID, cause Cause, t Tick) bool {
	if !l.bookKnown(id, t) {
		return false
	}
	if cause == "" {
		cause = CauseRetention
	}
	l.settleCopy(id)
	l.deleted(id, l.rec(id), StateExpired, cause, t)
	l.folded()
	return true
}

// deleted records that copy id, whose record is r (nil for ID 0), was
// deleted at tick t and is now in state (expired or purged): every
// consumer expecting it that has not applied it lost it with cause.
func (l *Ledger) deleted(id ID, r *record, state State, cause Cause, t Tick) {
	if r != nil {
		l.setState(id, r, state, t)
	}
	l.loseUnapplied(id, cause, t)
}

// bookEffect folds an applied effect (processed) of copy id by consumer
// c at tick t, as Emit folds the event. O(1) amortised.
func (l *Ledger) bookEffect(id ID, c ConsumerRef, t Tick) {
	l.begin(t, id, 0)
	l.processed(id, c, t)
	l.folded()
}

// tidy gives the records and one consumer's deliveries, in turn, a chance
// to pack chunks that settled after their turn to be packed (see
// packedTable.tidy). Emit calls it every tableChunk events, so packing
// keeps up with copies settling, not only with new copies arriving; it
// costs O(tableChunk) per call at most, and nothing when no chunk waits.
func (l *Ledger) tidy() {
	l.recs.tidy()
	if n := len(l.consumers); n > 0 {
		l.tidyNext = (l.tidyNext + 1) % n
		l.consumers[l.tidyNext].entries.tidy()
	}
}

// settleCopy notes that one copy of id left the broker and reports
// whether another is still held (a broker duplicate). Only a copy whose
// record carries recExtra can have an entry in l.extra, so for every other
// copy it costs a read of the record's flags, not a map lookup.
func (l *Ledger) settleCopy(id ID) bool {
	if l.recFlags(id)&recExtra == 0 {
		return false
	}
	n, ok := l.extra[id]
	if !ok {
		return false
	}
	if n <= 1 {
		delete(l.extra, id)
		return false
	}
	l.extra[id] = n - 1
	return true
}

// known returns the record of e's message, registering it if the ledger
// has not seen it yet (so a loss of a message that never reached a broker
// still names its key).
func (l *Ledger) known(e *Event) *record {
	r := l.rec(e.Msg)
	if r != nil && r.flags&recRegistered == 0 {
		l.register(e.Msg, r, e)
	}
	return r
}

// enter records that e's copy entered the component e.Where.
func (l *Ledger) enter(e *Event) {
	l.arrive(e.Kind, e.Msg, e.Origin, e.Tick, e.Where, e.Key, e.Type, e.Consumer)
}

// arrive records that copy id (made from origin, with key and type typ)
// entered the component where at tick t, handed over by an event of kind
// k that names consumer or none: the fold of a sent, produced, published,
// stored or redriven event, whose fields it takes one by one so that a
// typed entry point (Trace.BookProduced) folds exactly as Emit does.
func (l *Ledger) arrive(k Kind, id, origin ID, t Tick, where, key, typ, consumer string) {
	r := l.rec(id)
	if r == nil {
		return
	}
	state := StatePending
	if k == KindPublished {
		state = StateDelivered
	}
	if r.flags&recRegistered == 0 && origin == 0 {
		// A new copy, as nearly every arrival is: registerAt has set its
		// component and stamped Changed with t already, so the copy
		// needs only its first send and its state.
		l.registerAt(id, r, t, where, key, typ, 0)
		r.sends, r.State = 1, state
		l.expect(k, id, r.where, consumer)
		return
	}
	if r.flags&recRegistered == 0 {
		l.registerAt(id, r, t, where, key, typ, origin)
	} else if origin != 0 {
		l.setOrigin(id, origin)
	}
	if origin != 0 {
		// setOrigin looked other records up, and a lookup may begin a
		// chunk that packs an older one (see packedTable): look r up
		// again rather than rely on which chunks that can touch.
		if r = l.rec(id); r == nil {
			return
		}
	}
	r.sends++
	r.where = l.where(where)
	l.setState(id, r, state, t)
	l.expect(k, id, r.where, consumer)
}

// expect marks copy id, handed over by an event of kind k to component
// w, as expected by consumer (none when empty) and, for a produced
// record, by every consumer group following the log w. O(consumers of w).
func (l *Ledger) expect(k Kind, id ID, w uint16, consumer string) {
	if consumer != "" {
		if d := l.entry(id, l.ref(consumer)); d != nil {
			d.bits |= delExpected
		}
	}
	if k == KindProduced && int(w) < len(l.subs) {
		for _, c := range l.subs[w] {
			if d := l.entry(id, c); d != nil {
				d.bits |= delExpected
			}
		}
	}
}

// registerAt fills in the fresh record r of copy id, first seen at tick t
// in the component where, with key and type typ, made from origin.
func (l *Ledger) registerAt(id ID, r *record, t Tick, where, key, typ string, origin ID) {
	created, changed := l.put32(id, NoConsumer, fieldCreated, t), tick32(t)
	if created == tickWide {
		changed = l.put32(id, NoConsumer, fieldChanged, t)
	}
	*r = record{created: created, changed: changed,
		flags: recRegistered | r.flags&(recLinked|recRedriven|recExtra), typ: l.typeIndex(id, typ), where: l.where(where)}
	if !r.setKey(l.lastKey.put(&l.strs, key)) {
		if l.wideKeys == nil {
			l.wideKeys = map[ID]string{}
		}
		l.wideKeys[id] = key
	}
	if origin != 0 && origin != id {
		l.setOrigin(id, origin)
	}
}

// register fills in the fresh record r of e's message, id.
func (l *Ledger) register(id ID, r *record, e *Event) {
	l.registerAt(id, r, e.Tick, e.Where, e.Key, e.Type, e.Origin)
}

// setOrigin links copy id to the copy it was made from.
func (l *Ledger) setOrigin(id, origin ID) {
	if origin == 0 || origin >= id {
		return // origins are older than their copies; anything else would make a cycle
	}
	*l.lineageTables().origins.at(uint64(id)) = origin
	l.link(origin)
	l.link(id)
}

// link marks copy id as part of a lineage.
func (l *Ledger) link(id ID) {
	if l.recFlags(id)&recLinked != 0 {
		return // already linked; reading leaves a packed chunk packed
	}
	if r := l.rec(id); r != nil && r.flags&recLinked == 0 {
		r.flags |= recLinked
		if n := len(l.lineage); n > 0 && l.lineage[n-1] > id {
			l.unsorted = true
		}
		l.lineage = append(l.lineage, id)
	}
}

// delivered records one more delivery of e's copy to e.Consumer.
func (l *Ledger) delivered(e *Event) {
	c := l.ref(e.Consumer)
	d := l.entry(e.Msg, c)
	if d == nil {
		return
	}
	if l.recFlags(e.Msg)&recRegistered == 0 {
		if r := l.rec(e.Msg); r != nil && r.flags&recRegistered == 0 {
			l.register(e.Msg, r, e)
		}
	}
	l.deliveredTo(e.Msg, c, d, e.Tick)
}

// deliveredTo records one more delivery at tick t in d, the delivery of
// copy id to consumer c.
func (l *Ledger) deliveredTo(id ID, c ConsumerRef, d *delivery, t Tick) {
	l.consumers[c].acted = true // d is c's, so c is a consumer of the ledger
	d.bits |= delExpected
	l.incByte(id, c, fieldDelivered, &d.delivered)
	l.seen(id, c, d, t)
}

// lose records that e's copy was lost with cause: for e.Consumer, or
// before any consumer when e names none.
func (l *Ledger) lose(e *Event, cause Cause) {
	if cause == "" {
		cause = "unknown"
	}
	if e.Consumer == "" {
		if r := l.known(e); r != nil {
			l.setState(e.Msg, r, StateLost, e.Tick)
		}
	} else {
		// A copy lost on its way to its consumer before any broker held it
		// (a fan-out's forward given up) is lost, and lost for that
		// consumer, under its origin's lineage.
		if r := l.known(e); r != nil && r.State == StateCreated && e.Origin != 0 {
			l.setState(e.Msg, r, StateLost, e.Tick)
		}
		c := l.ref(e.Consumer)
		l.acts(c)
		if d := l.entry(e.Msg, c); d != nil {
			d.bits |= delExpected
			l.setCause(e.Msg, c, d, l.cause(cause))
			l.seen(e.Msg, c, d, e.Tick)
		}
	}
	v := loss{id: e.Msg, tick: e.Tick, consumer: l.ref(e.Consumer), cause: l.cause(cause)}
	l.losses.push(v)
	if l.stats != nil && v.consumer == NoConsumer {
		l.stats.lostBefore(v)
	}
}

// loseUnapplied records that every consumer expecting copy id that has not
// applied, absorbed, missed or lost it yet lost it with cause at tick t.
// A consumer whose delivery of id lies in a packed chunk with no open
// delivery (see deliveryCodec.quiet) is passed over without decoding it,
// as nearly every consumer is when retention deletes an old record; the
// others cost a lookup each. O(consumers).
func (l *Ledger) loseUnapplied(id ID, cause Cause, t Tick) {
	for _, b := range l.consumers {
		if b.entries.quietAt(uint64(id)) {
			continue
		}
		if d, ok := b.entries.get(uint64(id)); !ok || !d.open() {
			continue
		}
		d := b.entries.at(uint64(id))
		l.setCause(id, b.ref, d, l.cause(cause))
		l.seen(id, b.ref, d, t)
		l.losses.push(loss{id: id, tick: t, consumer: b.ref, cause: l.cause(cause)})
	}
}

// subscribe records that e.Consumer follows the log e.Where.
func (l *Ledger) subscribe(e *Event) {
	w, c := l.where(e.Where), l.ref(e.Consumer)
	if c == NoConsumer {
		return
	}
	l.acts(c)
	for int(w) >= len(l.subs) {
		l.subs = append(l.subs, nil)
	}
	for _, x := range l.subs[w] {
		if x == c {
			return
		}
	}
	l.subs[w] = append(l.subs[w], c)
	if e.Detail != "earliest" {
		return
	}
	// A group reading from the log start expects every record still in
	// the log: one pass over the records, once per subscription.
	for i, r := range l.recs.all() {
		if r.flags&recRegistered != 0 && r.where == w && r.State == StatePending {
			if d := l.entry(ID(i), c); d != nil {
				d.bits |= delExpected
				if l.stats != nil {
					l.stats.touch(ID(i))
				}
			}
		}
	}
}

// where returns the index of the component name s.
func (l *Ledger) where(s string) uint16 {
	if s == l.lastWhere {
		return l.lastWIdx
	}
	i, ok := uint16(0), false
	if l.whereIdx == nil {
		for k, w := range l.wheres {
			if w == s {
				i, ok = uint16(k), true
				break
			}
		}
	} else {
		i, ok = l.whereIdx[s]
	}
	if !ok {
		if len(l.wheres) > maxWheres {
			return maxWheres // past the cap, further components share the last name
		}
		i = uint16(len(l.wheres))
		l.wheres = append(l.wheres, s)
		switch {
		case l.whereIdx != nil:
			l.whereIdx[s] = i
		case len(l.wheres) > scanMax:
			l.whereIdx = make(map[string]uint16, len(l.wheres))
			for k, w := range l.wheres {
				l.whereIdx[w] = uint16(k)
			}
		}
	}
	l.lastWhere, l.lastWIdx = s, i
	return i
}

// maxWheres is the number of distinct component names records remember.
const maxWheres = 1<<16 - 1

// scanMax is how many consumers or component names the ledger finds by a
// scan: runs have few, and models pass the same name strings every time,
// so a scan (string comparison short-cuts on equal data) beats hashing and
// a short run builds no map. Past it, a map finds them.
const scanMax = 32

// ref returns the handle of the consumer called name, creating it on first
// use; NoConsumer for "". It scans the books, or uses the map past
// scanMax consumers.
func (l *Ledger) ref(name string) ConsumerRef {
	if name == "" {
		return NoConsumer
	}
	if l.lastRef != NoConsumer {
		if name == l.lastName {
			return l.lastRef
		}
		// A fan-out names its subscribers in turn, in the order the
		// ledger first saw them: try the consumer after the last one
		// before searching.
		if n := int(l.lastRef) + 1; n < len(l.consumers) && l.consumers[n].name == name {
			l.lastName, l.lastRef = name, ConsumerRef(n)
			return l.lastRef
		}
	}
	c := l.lookup(name)
	if c == NoConsumer {
		c = ConsumerRef(len(l.consumers))
		l.consumers = append(l.consumers, &consumerBook{ref: c, name: name, entries: deliveries{off: l.noPack}})
		switch {
		case l.byName != nil:
			l.byName[name] = c
		case len(l.consumers) > scanMax:
			l.byName = make(map[string]ConsumerRef, len(l.consumers))
			for _, b := range l.consumers {
				l.byName[b.name] = b.ref
			}
		}
	}
	l.lastName, l.lastRef = name, c
	return c
}

// lookup returns the handle of the consumer called name, or NoConsumer.
func (l *Ledger) lookup(name string) ConsumerRef {
	if l.byName != nil {
		if c, ok := l.byName[name]; ok {
			return c
		}
		return NoConsumer
	}
	for _, b := range l.consumers {
		if b.name == name {
			return b.ref
		}
	}
	return NoConsumer
}

// acked is the fold of an acked event of copy id for consumer c at tick
// t, Emit's and BookAcked's: the delivery is marked acked, and the record
// settles, done unless a broker duplicate of it is still held. O(1)
// amortised.
func (l *Ledger) acked(id ID, c ConsumerRef, t Tick) {
	l.acts(c)
	if d := l.entry(id, c); d != nil {
		d.bits |= delAcked
	}
	if r := l.rec(id); r != nil {
		if l.settleCopy(id) {
			l.setState(id, r, StatePending, t) // another copy is still held
		} else {
			l.setState(id, r, StateDone, t)
		}
	}
}

// acts notes that consumer c (NoConsumer: none) did something a
// consumer does: it was delivered a copy, handled, acknowledged, missed or
// lost one, or followed a log. A consumer that only sends named, as a
// queue's logical consumer is named by the queue, has not acted: nothing
// takes from that queue (see Ledger.unread).
func (l *Ledger) acts(c ConsumerRef) {
	if c >= 0 && int(c) < len(l.consumers) {
		l.consumers[c].acted = true
	}
}

// unread reports whether the consumer called name was only ever named as
// where copies are routed (a queue's logical consumer, named by the
// queue's sends) and never acted (see acts): a copy pending for it waits
// in a component nothing takes from.
func (l *Ledger) unread(name string) bool {
	c := l.Consumer(name)
	return c != NoConsumer && !l.consumers[c].acted
}

// Reach notes that the run went on to tick t with no event the fold
// reads, as an event of a kind the fold ignores at tick t does when Emit
// folds it: what is still pending at the end is then pending as of t. A
// run calls it with the tick it ended at before it judges its
// expectations; the trace carries that tick in the "checked" events it
// traces there, so a ledger folded from the trace reaches it as well.
func (l *Ledger) Reach(t Tick) {
	if l != nil {
		l.last = t
	}
}

// linked reports whether copy id has a lineage: an origin or copies made
// from it.
func (l *Ledger) linked(id ID) bool {
	return l.recFlags(id)&recLinked != 0
}

// originOf returns the copy id was made from, or 0.
func (l *Ledger) originOf(id ID) ID {
	if l.links == nil {
		return 0
	}
	if p := l.links.origins.get(uint64(id)); p != nil {
		return *p
	}
	return 0
}

// Root returns the origin of copy id: the first copy of its lineage.
// Lineage links always point to older IDs, so the walk ends.
func (l *Ledger) Root(id ID) ID {
	if l == nil {
		return id
	}
	for {
		o := l.originOf(id)
		if o == 0 {
			return id
		}
		id = o
	}
}

// export returns the Record stored as r under id.
func (l *Ledger) export(id ID, r *record) Record {
	out := Record{Created: l.get32(id, NoConsumer, fieldCreated, r.created), Sends: int(r.sends), State: r.State,
		Changed: l.get32(id, NoConsumer, fieldChanged, r.changed), Phantom: r.flags&recPhantom != 0}
	if r.flags&recLinked != 0 {
		out.Origin = l.originOf(id)
		if l.links != nil {
			if p := l.links.redrives.get(uint64(id)); p != nil {
				out.Redriven = *p
			}
		}
	}
	if r.flags&recRegistered != 0 {
		out.ID = id
		out.Key = l.keyString(id, r)
		out.Type = l.typeOf(id, r)
		if int(r.where) < len(l.wheres) {
			out.Where = l.wheres[r.where]
		}
	}
	return out
}

// exportDelivery returns the Entry stored as e, for id and consumer c.
func (l *Ledger) exportDelivery(id ID, c ConsumerRef, e *delivery) Entry {
	d := Entry{Expected: e.bits&delExpected != 0, Delivered: l.byteCount(id, c, fieldDelivered, e.delivered),
		Applied: l.halfCount(id, c, fieldApplied, e.handled, lowHalf), Skipped: l.halfCount(id, c, fieldSkipped, e.handled, highHalf),
		Acked: e.bits&delAcked != 0, Handled: e.bits&delHandled != 0, Missed: e.bits&delMissed != 0, FirstApplied: l.firstApplied(id, c, e),
		LastSeen: l.get32(id, c, fieldLastSeen, e.lastSeen), Lost: l.causeOf(id, c, e)}
	if d.Applied > 1 {
		d.SecondApplied = l.wide[wideKey{id, c, fieldSecondApplied}]
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

// Consumer returns the handle of the logical consumer called name, or
// NoConsumer when no event has named it.
func (l *Ledger) Consumer(name string) ConsumerRef {
	if l == nil {
		return NoConsumer
	}
	if name == "" {
		return NoConsumer
	}
	return l.lookup(name)
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

// LastTick returns the tick of the latest event folded.
func (l *Ledger) LastTick() Tick {
	if l == nil {
		return 0
	}
	return l.last
}

// rec returns the record of id, growing the table as needed; nil for ID 0.
// It spells out table.at's fast path: the generic method is compiled for
// a shape and not inlined, and this is the ledger's most frequent call.
func (l *Ledger) rec(id ID) *record {
	if i := uint64(id); id != 0 && i/tableChunk < uint64(len(l.recs.t.chunks)) {
		if p := l.recs.t.chunks[i/tableChunk]; p != nil {
			if i >= l.recs.t.n {
				l.recs.t.n = i + 1
			}
			return &p[i%tableChunk]
		}
	}
	if id == 0 {
		return nil
	}
	return l.recs.at(uint64(id))
}

// recFlags returns the flags of the record of id without growing or
// unpacking the table: 0 for a copy the ledger never booked. It reads the
// one byte in place when its chunk is plain, as nearly always on the hot
// path, rather than copying the record out (a copy that the store of its
// fields and the wider loads after it make stall), and costs O(1) either
// way.
func (l *Ledger) recFlags(id ID) uint8 {
	i := uint64(id)
	if c := i / tableChunk; c < uint64(len(l.recs.t.chunks)) && i < l.recs.t.n {
		if p := l.recs.t.chunks[c]; p != nil {
			return p[i%tableChunk].flags
		}
	}
	if x, ok := l.recs.get(i); ok {
		return x.flags
	}
	return 0
}

// entry returns the delivery of id to consumer c, growing the consumer's
// table as needed; nil for ID 0 or no consumer.
func (l *Ledger) entry(id ID, c ConsumerRef) *delivery {
	if c < 0 || int(c) >= len(l.consumers) || id == 0 {
		return nil
	}
	t, i := &l.consumers[c].entries.t, uint64(id)
	if i/tableChunk < uint64(len(t.chunks)) {
		if p := t.chunks[i/tableChunk]; p != nil {
			if i >= t.n {
				t.n = i + 1 // a new copy in a chunk begun already, as most are
			}
			return &p[i%tableChunk]
		}
	}
	return l.consumers[c].entries.at(i)
}

// Record returns the broker-level record of copy id.
func (l *Ledger) Record(id ID) (Record, bool) {
	if l == nil || id == 0 {
		return Record{}, false
	}
	r, ok := l.recs.get(uint64(id))
	if !ok || r.flags&recRegistered == 0 {
		return Record{}, false
	}
	return l.export(id, &r), true
}

// Entry returns what consumer c knows of copy id.
func (l *Ledger) Entry(id ID, c ConsumerRef) Entry {
	if l == nil || c < 0 || int(c) >= len(l.consumers) {
		return Entry{}
	}
	if e, ok := l.consumers[c].entries.get(uint64(id)); ok {
		return l.exportDelivery(id, c, &e)
	}
	return Entry{}
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

// Losses returns every loss the verdicts still stand by, in the order they
// happened: a loss later contradicted (the consumer applied the message
// after all, or a message lost before any consumer reached a broker
// later) is left out. It costs O(copies x consumers).
func (l *Ledger) Losses() []Loss {
	if l == nil || l.losses.len() == 0 {
		return nil
	}
	lost := map[originKey]bool{}
	l.eachOutcome(func(o *Outcome) {
		if o.Verdict == VerdictLost {
			lost[originKey{o.Origin, o.Consumer}] = true
		}
	})
	var out []Loss
	for x := range l.allLosses() {
		if x.Consumer == "" && l.standsBeforeConsumers(x) || x.Consumer != "" && lost[originKey{l.Root(x.ID), x.Consumer}] {
			out = append(out, x)
		}
	}
	return out
}

// eachOutcome calls f for every outcome of Outcomes(""), in its order,
// without keeping them all: from the cache when it is current, else one
// consumer's outcomes at a time, so a summary of many consumers costs the
// memory of the largest one, not of all.
func (l *Ledger) eachOutcome(f func(o *Outcome)) {
	if l.cached && l.cacheAt == l.events {
		for i := range l.cache {
			f(&l.cache[i])
		}
		return
	}
	for _, b := range l.consumers {
		l.eachBookOutcome(b, f)
	}
}

// standsBeforeConsumers reports whether x is a loss before any consumer
// that no later event contradicted: the copy never reached a broker
// after it.
func (l *Ledger) standsBeforeConsumers(x Loss) bool {
	if x.Consumer != "" {
		return false
	}
	r, ok := l.recs.get(uint64(x.ID))
	return ok && r.State == StateLost
}

// originKey names one origin and one consumer.
type originKey struct {
	origin   ID
	consumer string
}

// ApplyOrder returns the copies consumer c applied, in order of first
// application, as a new slice: O(applied messages).
func (l *Ledger) ApplyOrder(c ConsumerRef) []ID {
	if l == nil || c < 0 || int(c) >= len(l.consumers) {
		return nil
	}
	return l.consumers[c].order.slice()
}

// Duplicates returns how many deliveries to the consumer called name were
// repeats of a message it had already been delivered, counted per origin
// (a redriven copy of a message it had received is a repeat); "" sums
// every consumer.
func (l *Ledger) Duplicates(name string) int {
	n := 0
	for _, o := range l.Outcomes(name) {
		if o.Deliveries > 1 {
			n += o.Deliveries - 1
		}
	}
	return n
}

// DuplicateEffects returns how many times the consumer called name applied
// an effect of an origin it had already applied; "" sums every consumer.
func (l *Ledger) DuplicateEffects(name string) int {
	n := 0
	for _, o := range l.Outcomes(name) {
		if o.Effects > 1 {
			n += o.Effects - 1
		}
	}
	return n
}

// routed reports whether some consumer expects copy id. A delivery in a
// plain chunk is read in place, as entry reads it, and one in a packed
// chunk decoded; O(consumers) either way.
func (l *Ledger) routed(id ID) bool {
	i := uint64(id)
	for _, b := range l.consumers {
		if t := &b.entries.t; i < t.n && i/tableChunk < uint64(len(t.chunks)) {
			if p := t.chunks[i/tableChunk]; p != nil {
				if p[i%tableChunk].bits&delExpected != 0 {
					return true
				}
				continue
			}
		}
		if e, ok := b.entries.get(i); ok && e.bits&delExpected != 0 {
			return true
		}
	}
	return false
}

// eachRecord calls f for every registered record in ID order. The Record
// f gets is a copy that is reused for the next call.
func (l *Ledger) eachRecord(f func(r *Record)) {
	var x Record
	for i, r := range l.recs.all() {
		if r.flags&recRegistered != 0 {
			x = l.export(ID(i), r)
			f(&x)
		}
	}
}

// record returns a copy of the record of id without growing the table; an
// unknown ID yields a zero record. It does not allocate.
func (l *Ledger) record(id ID) Record {
	if x, ok := l.recs.get(uint64(id)); ok {
		return l.export(id, &x)
	}
	return Record{}
}

// keyOf returns the key of copy id, "" when unknown.
func (l *Ledger) keyOf(id ID) string {
	if x, ok := l.recs.get(uint64(id)); ok && x.flags&recRegistered != 0 {
		return l.keyString(id, &x)
	}
	return ""
}

// stateOfRec returns the state, component and last change of copy id,
// whose record is x (the zero record when the ledger has none).
func (l *Ledger) stateOfRec(id ID, x *record) (State, string, Tick) {
	w := ""
	if int(x.where) < len(l.wheres) {
		w = l.wheres[x.where]
	}
	return x.State, w, l.get32(id, NoConsumer, fieldChanged, x.changed)
}
