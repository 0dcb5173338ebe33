package eventlog

import (
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/internal/stored"
	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package eventlog. Errors returned by the package wrap
// one of them. ErrInvalidConfig wraps sim.ErrInvalidConfig.
var (
	ErrInvalidConfig    = sim.Sentinel("eventlog: invalid config", sim.ErrInvalidConfig)
	ErrNoPartition      = errors.New("eventlog: no such partition")
	ErrOffsetOutOfRange = errors.New("eventlog: offset out of range")
	ErrStaleGeneration  = errors.New("eventlog: commit from an old generation")
	ErrNotAssigned      = errors.New("eventlog: partition not assigned to the member")
	ErrUnknownMember    = errors.New("eventlog: unknown member")
	ErrDuplicateMember  = errors.New("eventlog: member already in the group")
	ErrDuplicateGroup   = errors.New("eventlog: group already exists")
	ErrNotActive        = errors.New("eventlog: member is not in the group")
	ErrNotOutstanding   = errors.New("eventlog: record is not outstanding for the member")
	ErrBusy             = errors.New("eventlog: member is busy with a slow record")
)

// ErrUnavailable is wrapped by a produce or publish the broker refuses. It
// wraps sim.ErrUnavailable, so code publishing to any sim.Publisher can
// test errors.Is(err, sim.ErrUnavailable) once.
var ErrUnavailable = sim.Sentinel("eventlog: broker unavailable", sim.ErrUnavailable)

// The models implement the sim interfaces.
var (
	_ sim.Publisher = (*Log)(nil)
	_ sim.Component = (*Log)(nil)
	_ sim.Component = (*Member)(nil)
)

// DefaultCompactEvery is the compaction interval in ticks when
// Config.CompactEvery is 0.
const DefaultCompactEvery sim.Tick = 10

// MaxPartitions is the most partitions a topic may have, at creation and
// after AddPartitions: Config.Validate refuses more, and so does
// AddPartitions. Each partition costs memory before it holds a record, so
// the cap keeps a mistaken count from exhausting memory. Scenario files
// share the cap.
const MaxPartitions = 1024

// Config configures a Log.
type Config struct {
	// Name is required, e.g. "orders"; the trace and the World name the
	// topic "log:"+Name.
	Name string
	// Faults is consulted at the log's fault points; nil means no faults.
	Faults *faults.Injector
	// Partitions is the initial partition count; 0 means 1. It must not
	// exceed MaxPartitions.
	Partitions int
	// RetentionTicks deletes records whose age (now - produced tick) is at
	// least this many ticks; 0 keeps records forever.
	RetentionTicks sim.Tick
	// RetentionRecords caps the records kept per partition; 0 = no cap.
	RetentionRecords int
	// RetentionBytes caps the key and body bytes kept per partition; 0 = no
	// cap. It never deletes a partition's newest record, as Kafka never
	// deletes the active segment: a record larger than the cap stays until
	// a newer one arrives.
	RetentionBytes int64
	// Compact keeps only the latest record per key (a compacted topic). A
	// record with a key and a nil Body is a tombstone: it deletes the key.
	Compact bool
	// CompactEvery is the compaction interval in ticks; 0 means
	// DefaultCompactEvery.
	CompactEvery sim.Tick
	// TombstoneRetention is how long a tombstone survives compaction: it
	// stays while its age (now minus the tick it was appended) is below
	// TombstoneRetention, and the first compaction at which its age is at
	// least TombstoneRetention removes it, as Kafka's cleaner keeps a
	// tombstone while currentTime < deleteHorizonMs. 0 removes tombstones
	// at the next compaction. Must not be negative.
	TombstoneRetention sim.Tick
	// History records every send and poll for CheckHistory. It costs about
	// 40 bytes per send and per read.
	History bool
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, fmt.Errorf("%w: a topic needs a name", ErrInvalidConfig))
	}
	if c.Partitions < 0 {
		errs = append(errs, fmt.Errorf("%w: partitions %d is negative", ErrInvalidConfig, c.Partitions))
	}
	if c.Partitions > MaxPartitions {
		errs = append(errs, fmt.Errorf("%w: partitions %d exceeds the limit of %d", ErrInvalidConfig, c.Partitions, MaxPartitions))
	}
	if c.RetentionTicks < 0 || c.RetentionRecords < 0 || c.RetentionBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: retention must not be negative", ErrInvalidConfig))
	}
	if c.CompactEvery < 0 || c.TombstoneRetention < 0 {
		errs = append(errs, fmt.Errorf("%w: compaction intervals must not be negative", ErrInvalidConfig))
	}
	return errors.Join(errs...)
}

// Position is where a record sits in a topic.
type Position struct {
	Partition int
	Offset    int64
}

// Record is a record of a partition as a consumer sees it.
type Record struct {
	Partition int
	Offset    int64
	// Tick is when the record was appended.
	Tick sim.Tick
	// Message is the produced message (ID, key, body, headers, created).
	Message sim.Message
}

// Tombstone reports whether the record deletes its key on a compacted topic
// (a keyed record with a nil body).
func (r Record) Tombstone() bool { return r.Message.Key != "" && r.Message.Body == nil }

// entry is one record of a partition as the log keeps it: 64 bytes. Its
// offset, the message's creation tick and its origin are not in it: the
// partition derives them (see partition), as most records are appended
// in offset order, in the tick they were created, as originals. The
// headers are shared with equal neighbours (package stored) and never nil.
type entry struct {
	id   sim.ID
	tick sim.Tick // when the record was appended
	key  string
	body []byte
	hdr  *sim.Headers
}

// aside is what a partition keeps beside an entry once it is wide: the
// record's offset, the message's creation tick and its origin.
type aside struct {
	off     int64
	created sim.Tick
	origin  sim.ID
}

// partition is one append-only sequence. Entries [head, recs.len()) of recs
// are the live records in offset order; head stays below recChunk, as
// dropHead lets go of every chunk it has passed; start is the offset of the
// first of them (end when there is none), which retention and compaction
// move; floor is the lowest valid fetch position, which only deletions
// (retention) move; end is the next offset. A position in [floor, end] is
// valid: one where compaction removed the record is equivalent to the next
// record that remains, or to end.
//
// A narrow partition (the usual case) keeps the entries alone: entry i has
// offset base+i, its message was created in the tick it was appended, and
// it has no origin. The first record that breaks this (a message created
// earlier, a copy with an origin, or compaction leaving a gap) makes the
// partition wide: from then on side holds an aside per entry, index by
// index, moved, dropped and truncated with recs, until the partition is
// empty again. A narrow record costs 64 bytes, a wide one 88.
type partition struct {
	first [recFirst]entry // the first chunk of recs (see seed)
	recs  records[entry]
	side  *records[aside] // nil while narrow
	base  int64           // the offset of entry 0 while narrow
	head  int
	start int64
	floor int64
	end   int64
	bytes int64
}

// seed gives the empty partition its first chunk, which it holds itself,
// and hdr, the room for its chunk headers (see records.seed), so its
// first records cost no allocation of their own. A partition holds its
// first chunk while it lives, and is never copied, as recs points into
// it: the log keeps partitions by pointer.
func (p *partition) seed(hdr [][]entry) { p.recs.seed(hdr, p.first[:]) }

// off returns the offset of entry i. O(1).
func (p *partition) off(i int) int64 {
	if p.wide() {
		return p.side.at(i).off
	}
	return p.base + int64(i)
}

// entry returns entry i, its aside (nil while the partition is narrow)
// and its offset: what a member holds of a record it fetched. O(1).
func (p *partition) entry(i int) (*entry, *aside, int64) {
	e := p.recs.at(i)
	if p.wide() {
		a := p.side.at(i)
		return e, a, a.off
	}
	return e, nil, p.base + int64(i)
}

// extra returns the creation tick and the origin of the message of entry
// i. O(1).
func (p *partition) extra(i int) (sim.Tick, sim.ID) {
	if p.wide() {
		a := p.side.at(i)
		return a.created, a.origin
	}
	return p.recs.at(i).tick, 0
}

// record returns entry i as a consumer sees it. O(1).
func (p *partition) record(part, i int) Record {
	e := p.recs.at(i)
	created, origin := p.extra(i)
	return Record{Partition: part, Offset: p.off(i), Tick: e.tick, Message: e.message(created, origin)}
}

// message returns the message of e, created at created with origin origin.
func (e *entry) message(created sim.Tick, origin sim.ID) sim.Message {
	return sim.Message{ID: e.id, Key: e.key, Body: e.body, Headers: *e.hdr, Created: created, Origin: origin}
}

// fill writes the message of e, created at created with origin origin,
// into *dst field by field, as message returns it: a delivery's message is
// built where the handler reads it, not built and copied again. Every
// field of sim.Message and of its headers is written
// (TestFillWritesEveryField keeps the lists complete).
//
// A member fills the same message for every record it handles, and
// consecutive records mostly carry equal headers (package stored shares
// them), so a string or the extra headers that *dst holds already is not
// stored again: a string equal to the one held is indistinguishable from
// it, and while the collector marks, every pointer stored costs a write
// barrier.
func (e *entry) fill(dst *sim.Message, created sim.Tick, origin sim.ID) {
	dst.ID, dst.Body = e.id, e.body
	setString(&dst.Key, e.key)
	h, d := e.hdr, &dst.Headers
	setString(&d.Type, h.Type)
	setString(&d.CorrelationID, h.CorrelationID)
	setString(&d.Source, h.Source)
	d.CausationID, d.SchemaVersion = h.CausationID, h.SchemaVersion
	if d.Extra != nil || h.Extra != nil {
		d.Extra = h.Extra
	}
	dst.Created, dst.Origin = created, origin
}

// setString makes *dst equal to s, storing s only when it is not.
func setString(dst *string, s string) {
	if *dst != s {
		*dst = s
	}
}

// widen makes the partition wide, giving every entry held its aside.
// O(entries held), once until the partition is empty again.
func (p *partition) widen() {
	p.side = &records[aside]{}
	for i := range p.recs.len() {
		p.side.push(aside{off: p.base + int64(i), created: p.recs.at(i).tick})
	}
}

// wide reports whether the partition keeps an aside per entry.
func (p *partition) wide() bool { return p.side != nil }

// narrow makes the empty partition narrow again: its next record gets
// offset end.
func (p *partition) narrow() {
	p.recs.truncate(0)
	p.side = nil
	p.head = 0
	p.base = p.end
}

// push appends a record of m with headers hdr at offset end in tick now,
// and returns its offset. O(1) amortised; it allocates only when a chunk
// is full, and widens the partition (see partition) when m needs it.
func (p *partition) push(now sim.Tick, m *sim.Message, hdr *sim.Headers) int64 {
	off := p.end
	if !p.wide() && (m.Created != now || m.Origin != 0 || p.base+int64(p.recs.len()) != off) {
		p.widen()
	}
	e := p.recs.add()
	e.id, e.tick, e.key, e.body, e.hdr = m.ID, now, m.Key, m.Body, hdr
	if p.wide() {
		p.side.push(aside{off: off, created: m.Created, origin: m.Origin})
	}
	p.end++
	p.bytes += int64(len(m.Key) + len(m.Body))
	return off
}

// move copies entry i (and its aside) to index w <= i, as compaction
// closes the gaps it leaves; the partition must be wide.
func (p *partition) move(i, w int) {
	*p.recs.at(w) = *p.recs.at(i)
	*p.side.at(w) = *p.side.at(i)
}

// truncate keeps the first n entries; it narrows the partition when no
// live record is left.
func (p *partition) truncate(n int) {
	p.recs.truncate(n)
	if p.wide() {
		p.side.truncate(n)
	}
	if p.head == p.recs.len() {
		p.narrow()
	}
}

// valid reports whether off is a valid fetch position: not below what
// retention deleted and not past the end.
func (p *partition) valid(off int64) bool { return off >= p.floor && off <= p.end }

// next returns the offset of the first live record at or after off, or
// the end when there is none: the position equivalent to off. O(log n).
func (p *partition) next(off int64) int64 {
	if i := p.search(off); i < p.recs.len() {
		return p.off(i)
	}
	return p.end
}

// size returns the number of live records.
func (p *partition) size() int { return p.recs.len() - p.head }

// search returns the index in recs of the first live record with an offset
// at or after off, or recs.len(). O(1) when no compaction left gaps, else
// O(log n). A narrow partition's, the usual case, is small enough to be
// inlined; a wide one's is searchWide.
func (p *partition) search(off int64) int {
	// The fields behind wide() and recs.len() are read directly: the two
	// calls would take search over the inliner's budget.
	if p.side != nil {
		return p.searchWide(off)
	}
	// Entry i has offset base+i: off's index, clamped to the live records
	// [head, recs.len()] (head itself when there is none).
	return int(min(max(off-p.base, int64(p.head)), int64(p.recs.n)))
}

// searchWide is search of a wide partition.
func (p *partition) searchWide(off int64) int {
	n := p.size()
	if n == 0 {
		return p.recs.len()
	}
	if i := off - p.off(p.head); i >= 0 && i < int64(n) && p.off(p.head+int(i)) == off {
		return p.head + int(i)
	}
	return p.head + sort.Search(n, func(i int) bool { return p.off(p.head+i) >= off })
}

// dropHead forgets the first live record and lets go of a chunk once every
// record in it is gone.
func (p *partition) dropHead() {
	e := p.recs.at(p.head)
	p.bytes -= int64(len(e.key) + len(e.body))
	*e = entry{}
	p.head++
	switch {
	case p.head == p.recs.len():
		p.narrow()
	case p.head >= recChunk:
		p.recs.dropFront()
		if p.wide() {
			p.side.dropFront()
		} else {
			p.base += recChunk
		}
		p.head -= recChunk
	}
	if p.head < p.recs.len() {
		p.start = p.off(p.head)
	} else {
		p.start = p.end
	}
}

// at returns the index in recs of the live record at offset off, or -1
// when there is none (deleted by retention or compaction, or not written
// yet). O(1) without compaction gaps, else O(log n).
func (p *partition) at(off int64) int {
	if i := p.search(off); i < p.recs.len() && p.off(i) == off {
		return i
	}
	return -1
}

// sites are the fault points a topic, its groups and their members
// consult, resolved once when the topic is made (faults.Site), so that a
// consultation of a point no rule targets costs a bit test. The handler
// points are consulted by the handler wrapper (faults.Injector.Handler),
// not here: a member asks the injector only whether the wrapper would
// pass a delivery straight through (faults.Injector.Passes).
type sites struct {
	unavailable, ackLost, partitionsAdded, overtake       faults.Site
	leave, crash, crashAfter, crashBefore, sessionTimeout faults.Site
}

// newSites resolves the points of in, which may be nil.
func newSites(in *faults.Injector) sites {
	return sites{
		unavailable:     in.Site(faults.BrokerUnavailable),
		ackLost:         in.Site(faults.BrokerAckLost),
		partitionsAdded: in.Site(faults.PartitionsAdded),
		overtake:        in.Site(faults.RetentionOvertake),
		leave:           in.Site(faults.MemberLeave),
		crash:           in.Site(faults.MemberCrash),
		crashAfter:      in.Site(faults.ConsumerCrashAfterEffect),
		crashBefore:     in.Site(faults.ConsumerCrashBeforeCommit),
		sessionTimeout:  in.Site(faults.MemberSessionTimeout),
	}
}

// Log is a partitioned append-only log. It implements sim.Publisher and
// sim.Component: it runs in sim.PhaseBroker (retention, compaction, session
// timeouts and the log's fault points). Not safe for concurrent use.
type Log struct {
	cfg     Config
	env     *sim.Env
	where   string
	parts   []*partition
	hdrs    stored.Cache // shares equal headers of consecutive records
	keys    keyMemo      // the checksums of the keys produced to last (see produce)
	fx      sites
	rr      int
	groups  []*Group
	history *History

	lastCompact           sim.Tick
	produced, expired     int64
	compacted, rejections int64
}

// New returns an empty topic on the world w and registers it there as the
// component "log:"+cfg.Name, so it shares the world's clock, trace and
// ledger and is stepped in the broker phase.
func New(w *sim.World, cfg Config) (*Log, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: a topic needs a world", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = 1
	}
	if cfg.CompactEvery == 0 {
		cfg.CompactEvery = DefaultCompactEvery
	}
	t := &Log{cfg: cfg, env: w.Env(), where: "log:" + cfg.Name, fx: newSites(cfg.Faults)}
	// The first partitions, with their first chunks in them, and their
	// chunk headers take one allocation each: a small topic's partitions
	// cost three allocations together, not two more per partition at its
	// first records.
	n := cfg.Partitions
	parts := make([]partition, n)
	hdrs := make([][]entry, n*recHeader)
	t.parts = make([]*partition, n)
	for i := range parts {
		parts[i].seed(hdrs[i*recHeader : i*recHeader : (i+1)*recHeader])
		t.parts[i] = &parts[i]
	}
	if cfg.History {
		t.history = &History{}
	}
	if err := w.Add(t.where, t); err != nil {
		return nil, err
	}
	return t, nil
}

// Phase returns sim.PhaseBroker: a topic runs before producers and members
// in every tick.
func (t *Log) Phase() sim.Phase { return sim.PhaseBroker }

// Name returns the topic's name.
func (t *Log) Name() string { return t.cfg.Name }

// Partitions returns the current partition count.
func (t *Log) Partitions() int { return len(t.parts) }

// History returns the recorded history, or nil when Config.History is off.
func (t *Log) History() *History { return t.history }

// PartitionFor returns the partition of key among n partitions:
// crc32.ChecksumIEEE(key) % n. It returns -1 when n <= 0.
func PartitionFor(key string, n int) int {
	if n <= 0 {
		return -1
	}
	return partitionOf(checksumIEEE(key), n)
}

// partitionOf returns the partition, among n > 0, of a key whose
// checksumIEEE is sum: PartitionFor's rule, which Log.produce applies to
// the checksum its memo of keys holds.
func partitionOf(sum uint32, n int) int { return int(sum % uint32(n)) }

// checksumIEEE equals crc32.ChecksumIEEE([]byte(key)) without converting
// the key to a byte slice (which allocates); keys are short, so the plain
// table algorithm is as fast as the sliced one.
func checksumIEEE(key string) uint32 {
	tab := crc32.IEEETable
	crc := ^uint32(0)
	for i := 0; i < len(key); i++ {
		crc = tab[byte(crc)^key[i]] ^ (crc >> 8)
	}
	return ^crc
}

// Produce appends m to the partition of its key (round robin when the key
// is empty) and returns where it landed. It traces a "produced" event,
// from which the ledger learns that every group following the topic
// expects the record. O(1) amortised.
func (t *Log) Produce(m sim.Message) (Position, error) { return t.produce(&m) }

// produce is Produce of *m, which it does not keep: Publish hands its
// message over without copying its 152 bytes once more. The partition of
// a key is PartitionFor's, from the checksum the log's memo of keys holds
// (see keyMemo).
func (t *Log) produce(m *sim.Message) (Position, error) {
	var p int
	if m.Key == "" {
		p = t.rr % len(t.parts)
		t.rr++
	} else {
		p = partitionOf(t.keys.sum(m.Key), len(t.parts))
	}
	return t.produceTo(p, m)
}

// ProduceTo appends m to partition p; see Produce. While the fault point
// broker.unavailable fires, it refuses m with an error wrapping
// ErrUnavailable (and so sim.ErrUnavailable) and traces a "rejected" event;
// whether the message is retried or given up is the producer's business.
func (t *Log) ProduceTo(p int, m sim.Message) (Position, error) { return t.produceTo(p, &m) }

// noHeaders are the headers of every record produced without any: an
// entry always points at headers, and records share these rather than
// each holding a copy of nothing. Never written.
var noHeaders sim.Headers

// produceTo is ProduceTo of *m, which it does not keep: Produce hands its
// message over without copying its 152 bytes once more.
func (t *Log) produceTo(p int, m *sim.Message) (Position, error) {
	if p < 0 || p >= len(t.parts) {
		return Position{}, fmt.Errorf("%w: %d (topic %s has %d)", ErrNoPartition, p, t.cfg.Name, len(t.parts))
	}
	if t.fx.unavailable.Armed() {
		if err := t.refuse(m); err != nil {
			return Position{}, err
		}
	}
	now := t.env.Now()
	hdr := t.hdrs.Share(m)
	if hdr == nil {
		hdr = &noHeaders
	}
	off := t.parts[p].push(now, m, hdr)
	t.produced++
	switch tr := t.env.Trace; {
	case !tr.Enabled():
		tr.Skip() // numbers the event as Emit would, without building it
	case tr.BookProduced(now, m.ID, m.Origin, t.where, m.Key, m.Headers.Type):
		// Only the ledger listens: booked without building the event.
	default:
		ev := sim.Event{Tick: now, Kind: sim.KindProduced, Where: t.where, Actor: m.Headers.Source, Msg: m.ID, Origin: m.Origin, Key: m.Key,
			Type: m.Headers.Type, Corr: m.Headers.CorrelationID, HasPos: true, Partition: p, Offset: off}
		tr.EmitRef(&ev)
	}
	if t.history != nil {
		proc := m.Headers.Source
		if proc == "" {
			proc = "producer"
		}
		t.history.Send(now, proc, p, off, m.ID)
	}
	return Position{Partition: p, Offset: off}, nil
}

// refuse consults broker.unavailable for a produce of m; when it fires, it
// traces the rejection and returns the error ProduceTo returns. Kept out
// of ProduceTo, whose frame every produce pays for.
func (t *Log) refuse(m *sim.Message) error {
	f := t.fx.unavailable.Check(&faults.Context{Where: t.where, Key: m.Key, Type: m.Headers.Type, Msg: m.ID})
	if f == nil {
		return nil
	}
	t.rejections++
	ev := sim.Event{Kind: sim.KindRejected, Where: t.where, Actor: m.Headers.Source, Msg: m.ID, Key: m.Key, Rule: f.Rule}
	if t.env.Trace.Detailed() {
		ev.Detail = "produce: broker unavailable"
	}
	t.env.Emit(ev)
	return fmt.Errorf("%w: produce to %s: %s", ErrUnavailable, t.cfg.Name, f.Error)
}

// Publish implements sim.Publisher: it produces m keyed by m.Key.
func (t *Log) Publish(m sim.Message) error {
	_, err := t.produce(&m)
	return err
}

// Start returns the log start offset of partition p: the offset of its
// first record still in the log (the end when there is none), moved by
// retention and by compaction; -1 for an unknown partition. A position
// below it that only compaction emptied is still valid and reads from
// Start, as every position in a compaction hole reads from the next record
// that remains.
func (t *Log) Start(p int) int64 {
	if p < 0 || p >= len(t.parts) {
		return -1
	}
	return t.parts[p].start
}

// End returns the log end offset of partition p (the offset the next record
// will get), or -1 for an unknown partition.
func (t *Log) End(p int) int64 {
	if p < 0 || p >= len(t.parts) {
		return -1
	}
	return t.parts[p].end
}

// Fetch appends to dst up to max records of partition p at or after offset
// off and returns the extended slice. It is a read outside any group: it
// emits no event, so the ledger counts no delivery. An offset past the end,
// or below the log start where retention deleted the records, is
// ErrOffsetOutOfRange; an offset whose record compaction removed reads
// from the next record that remains. O(log n + max).
func (t *Log) Fetch(p int, off int64, max int, dst []Record) ([]Record, error) {
	if p < 0 || p >= len(t.parts) {
		return dst, fmt.Errorf("%w: %d", ErrNoPartition, p)
	}
	part := t.parts[p]
	if !part.valid(off) {
		return dst, fmt.Errorf("%w: offset %d, partition %d holds [%d, %d)", ErrOffsetOutOfRange, off, p, part.start, part.end)
	}
	for i := part.search(off); i < part.recs.len() && max > 0; i++ {
		dst = append(dst, part.record(p, i))
		max--
	}
	return dst, nil
}

// OffsetForTick returns the offset of the first record of partition p
// appended at or after tick at, or the end offset when there is none.
// O(log n).
func (t *Log) OffsetForTick(p int, at sim.Tick) (int64, error) {
	if p < 0 || p >= len(t.parts) {
		return 0, fmt.Errorf("%w: %d", ErrNoPartition, p)
	}
	part := t.parts[p]
	n := part.size()
	i := sort.Search(n, func(i int) bool { return part.recs.at(part.head+i).tick >= at })
	if i == n {
		return part.end, nil
	}
	return part.off(part.head + i), nil
}

// AddPartitions adds n empty partitions. Keys are remapped from now on, so a
// key's later records may land in another partition than its earlier ones:
// per-key order is no longer guaranteed across the change. Every group
// with members rebalances. It is traced as an action whose position is
// offset 0 of the last new partition, so a fold of the trace knows how
// many partitions there are. It returns an error wrapping ErrInvalidConfig,
// and adds nothing, when n < 1 or when the topic would have more than
// MaxPartitions partitions.
func (t *Log) AddPartitions(n int) error {
	if n < 1 {
		return fmt.Errorf("%w: add %d partitions", ErrInvalidConfig, n)
	}
	if n > MaxPartitions-len(t.parts) {
		return fmt.Errorf("%w: add %d partitions to %d: a topic has at most %d", ErrInvalidConfig, n, len(t.parts), MaxPartitions)
	}
	old := len(t.parts)
	for i := 0; i < n; i++ {
		p := &partition{}
		p.seed(make([][]entry, 0, recHeader))
		t.parts = append(t.parts, p)
	}
	ev := sim.Event{Kind: sim.KindAction, Where: t.where, HasPos: true, Partition: len(t.parts) - 1}
	if t.env.Trace.Detailed() {
		ev.Detail = "partitions " + strconv.Itoa(old) + " -> " + strconv.Itoa(len(t.parts)) + ": keys remapped"
	}
	t.env.Emit(ev)
	for _, g := range t.groups {
		g.addPartitions(n)
	}
	return nil
}

// Step runs the topic's periodic work at tick now: the log's fault points
// (partitions added, up to MaxPartitions; retention overtaking a group), retention, compaction
// and the groups' session timeouts. O(partitions + groups x members +
// records deleted), plus O(records) when compaction runs.
func (t *Log) Step(now sim.Tick) {
	// At MaxPartitions the point is not consulted: a firing there would
	// be traced, and counted by a shrinker, with nothing added.
	if s := t.fx.partitionsAdded; s.Armed() && len(t.parts) < MaxPartitions {
		if f := s.Check(&faults.Context{Where: t.where}); f != nil {
			// Param partitions (at least 1), but never past MaxPartitions.
			_ = t.AddPartitions(int(max(min(f.Param, int64(MaxPartitions-len(t.parts))), 1)))
		}
	}
	if s := t.fx.overtake; s.Armed() {
		for _, g := range t.groups {
			if f := s.Check(&faults.Context{Where: t.where, Group: g.cfg.Name}); f != nil {
				t.overtake(g, *f)
			}
		}
	}
	t.retain(now)
	if t.cfg.Compact && now-t.lastCompact >= t.cfg.CompactEvery {
		t.Compact()
	}
	for _, g := range t.groups {
		g.expireSessions(now)
	}
}

// overtake deletes, in every partition, records group g has not read yet:
// up to Param (default 1) records past its position.
func (t *Log) overtake(g *Group, f faults.Firing) {
	n := f.Param
	if n < 1 {
		n = 1
	}
	why := ""
	if t.env.Trace.Detailed() {
		why = "retention overtook group " + g.cfg.Name
	}
	for p, part := range t.parts {
		pos := g.readFrom(p)
		target := min(part.end, max(pos, part.start)+n)
		for part.start < target && part.head < part.recs.len() {
			t.expire(p, part, why, f.Rule)
		}
	}
}

// retain applies retention by age and size (records and bytes; retention
// by bytes keeps the newest record). In each partition it traces
// the expiry of every record retention deletes at the head, then deletes
// them together (see drop): what the groups remember of them and what
// members hold of them is dealt with once per partition, not once per
// record. O(partitions + records deleted + groups x members for each
// partition that deletes any: it detaches its run once, see drop).
func (t *Log) retain(now sim.Tick) {
	c := &t.cfg
	if c.RetentionTicks == 0 && c.RetentionRecords == 0 && c.RetentionBytes == 0 {
		return
	}
	for p, part := range t.parts {
		// n and bytes are what the partition holds once the records
		// before i are deleted.
		i, n, bytes := part.head, part.size(), part.bytes
		for ; i < part.recs.len(); i++ {
			e := part.recs.at(i)
			why := ""
			switch {
			case c.RetentionTicks > 0 && now-e.tick >= c.RetentionTicks:
				why = "retention: age"
			case c.RetentionRecords > 0 && n > c.RetentionRecords:
				why = "retention: size"
			case c.RetentionBytes > 0 && bytes > c.RetentionBytes && n > 1:
				why = "retention: bytes"
			}
			if why == "" {
				break
			}
			t.book(p, part, i, why, "")
			n--
			bytes -= int64(len(e.key) + len(e.body))
		}
		t.drop(p, part, i-part.head)
	}
}

// expire deletes the first live record of partition p and traces it as
// "expired" with sim.CauseRetention: from that event the ledger books the
// loss for every group that expected the record and had not applied it.
func (t *Log) expire(p int, part *partition, why, rule string) {
	t.book(p, part, part.head, why, rule)
	t.drop(p, part, 1)
}

// book traces entry i of partition p, which retention is about to delete,
// as "expired" with sim.CauseRetention (see expire) and counts it. drop
// deletes it.
func (t *Log) book(p int, part *partition, i int, why, rule string) {
	e := part.recs.at(i)
	t.expired++
	switch tr := t.env.Trace; {
	case !tr.Enabled():
		tr.Skip() // numbers the event as Emit would, without building it
	case tr.BookExpired(t.env.Now(), e.id, sim.CauseRetention):
		// Only the ledger listens: booked without building the event.
	default:
		ev := sim.Event{Tick: t.env.Now(), Kind: sim.KindExpired, Where: t.where, Msg: e.id, Key: e.key, Cause: sim.CauseRetention,
			HasPos: true, Partition: p, Offset: part.off(i), Rule: rule}
		if tr.Detailed() {
			ev.Detail = why
		}
		tr.EmitRef(&ev)
	}
	t.history.Remove(t.env.Now(), sim.CauseRetention, p, part.off(i), e.id)
}

// drop deletes the first k live records of partition p, which book has
// traced: the groups forget them, the members that hold any of them
// unhandled get copies (detach), and the log start moves past them.
// Deleting a run at once is deleting its records one by one: forgetting
// up to an offset and moving the floor are monotone, and the run's
// offsets form one range. O(k + groups x members).
func (t *Log) drop(p int, part *partition, k int) {
	if k == 0 {
		return
	}
	first, last := part.off(part.head), part.off(part.head+k-1)
	t.forget(p, last)
	t.detach(p, first, last+1)
	part.floor = last + 1
	for range k {
		part.dropHead()
	}
}

// forget drops what the groups remember of the record at off of partition
// p, which retention deleted: the first of the partition.
func (t *Log) forget(p int, off int64) {
	for _, g := range t.groups {
		g.parts[p].forgetTo(off)
	}
}

// detach gives every member that holds records of partition p at offsets
// in [from, to) it has not handled yet a copy of their entries, which the
// partition is about to clear or move. O(groups x members) when no member
// is in the middle of a batch, as is usual when the log steps.
func (t *Log) detach(p int, from, to int64) {
	for _, g := range t.groups {
		for _, m := range g.all {
			for i := m.next; i < len(m.got); i++ {
				if h := &m.got[i]; h.p == p && h.off >= from && h.off < to {
					e := *h.e
					h.e = &e
					if h.a != nil {
						a := *h.a
						h.a = &a
					}
				}
			}
		}
	}
}

// Compact keeps, in every partition, only the latest record of each key;
// keyless records stay, and a tombstone stays while its age is below
// Config.TombstoneRetention (removed once its age is at least that). Every
// removed record is traced as "expired" with sim.CauseCompaction, so a
// group that expected a superseded value and had not applied it loses it
// with that cause. When the first records go, the log start moves to the
// first record that remains (the end when none does); offsets stay valid
// positions, so no group's position is out of range because of
// compaction. O(records). It does nothing on a topic without
// Config.Compact.
func (t *Log) Compact() {
	if !t.cfg.Compact {
		return
	}
	now := t.env.Now()
	t.lastCompact = now
	detailed := t.env.Trace.Detailed()
	for p, part := range t.parts {
		t.detach(p, part.start, part.end)
		latest := make(map[string]int64, part.size())
		for i := part.head; i < part.recs.len(); i++ {
			if e := part.recs.at(i); e.key != "" {
				latest[e.key] = part.off(i)
			}
		}
		keep := func(i int) bool {
			e := part.recs.at(i)
			return e.key == "" || latest[e.key] == part.off(i) && (e.body != nil || now-e.tick < t.cfg.TombstoneRetention)
		}
		w := part.head
		for i := part.head; i < part.recs.len(); i++ {
			if keep(i) {
				if w < i {
					if !part.wide() {
						part.widen() // a gap opens: offsets are kept from now on
					}
					part.move(i, w)
				}
				w++
				continue
			}
			e, off := part.recs.at(i), part.off(i)
			t.compacted++
			part.bytes -= int64(len(e.key) + len(e.body))
			ev := sim.Event{Kind: sim.KindExpired, Where: t.where, Msg: e.id, Key: e.key, Cause: sim.CauseCompaction, HasPos: true, Partition: p, Offset: off}
			if detailed {
				ev.Detail = "compacted"
			}
			t.env.Emit(ev)
			t.history.Remove(now, sim.CauseCompaction, p, off, e.id)
		}
		part.truncate(w)
		if part.head == part.recs.len() {
			part.start = part.end
		} else {
			part.start = part.off(part.head)
		}
		for _, g := range t.groups {
			g.parts[p].forgetGone(part)
		}
	}
}

// PartitionMetrics describes one partition.
type PartitionMetrics struct {
	Partition int
	LogStart  int64 // offset of the first record still in the log (End when none is)
	End       int64 // next offset to be assigned
	Records   int   // live records (fewer than End-LogStart after compaction)
	Bytes     int64 // key and body bytes of the live records
}

// Metrics summarises a topic and its groups.
type Metrics struct {
	Partitions []PartitionMetrics
	Produced   int64 // records appended
	Expired    int64 // records deleted by retention
	Compacted  int64 // records removed by compaction
	Rejected   int64 // produces refused while the broker was unavailable
	Groups     []GroupMetrics
}

// Metrics returns the topic's metrics. O(partitions x groups x log n).
func (t *Log) Metrics() Metrics {
	m := Metrics{Produced: t.produced, Expired: t.expired, Compacted: t.compacted, Rejected: t.rejections}
	for i, p := range t.parts {
		m.Partitions = append(m.Partitions, PartitionMetrics{Partition: i, LogStart: p.start, End: p.end, Records: p.size(), Bytes: p.bytes})
	}
	for _, g := range t.groups {
		m.Groups = append(m.Groups, g.Metrics())
	}
	return m
}

// Group returns the group called name, or nil.
func (t *Log) Group(name string) *Group {
	for _, g := range t.groups {
		if g.cfg.Name == name {
			return g
		}
	}
	return nil
}

// Groups returns the topic's groups in creation order.
func (t *Log) Groups() []*Group { return t.groups }
