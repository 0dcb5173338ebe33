// Package projection models a read model built from a log: a table of one
// row per key, fed by a consumer-group member's handler, and the reads
// made from it. It is a pure state machine: Handle applies one delivery,
// Read and ReadSource answer one read and trace it, and nothing runs on
// its own.
//
// A projection lags behind its source: a read right after a write may see
// the value before the write. A monotonic projection keeps a version per
// row and ignores a record whose version is not newer than the row's, so
// a redelivered or replayed older record never overwrites a newer value.
// The version is the record's log offset (VersionOffset), which the log
// orders per key, or the writer's clock (VersionClock), which is wrong
// when the writers' clocks are skewed.
package projection

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/producer"
	"github.com/brokerlab/brokerlab/sim"
)

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = sim.Sentinel("projection: invalid config", sim.ErrInvalidConfig)

// The kinds of trace event a projection emits.
const (
	// KindRead is a read that saw the source's latest value (from the
	// source, or from a projection that has caught up with it).
	KindRead sim.Kind = "read"
	// KindStaleRead is a read from the projection that saw an older value
	// than the source holds, or none where the source has one.
	KindStaleRead sim.Kind = "read_stale"
)

// Versioning says which version a row keeps and compares.
type Versioning int

// The versionings.
const (
	// VersionNone applies every record it is handed: a redelivered or
	// replayed older record overwrites a newer value.
	VersionNone Versioning = iota
	// VersionOffset versions a row by the log offset of the record that
	// wrote it: records of one key are in one partition, in order, so a
	// record at or below the row's offset is older and is ignored. Offsets
	// of different partitions do not compare: after partitions are added a
	// key's new records may sit at lower offsets of another partition, and
	// a delivery without a log position (a queue's) has offset 0. Such a
	// record that the source holds as its key's latest is a later write
	// the row cannot take: the projection traces it lost (see apply).
	VersionOffset
	// VersionClock versions a row by the writer's clock when it wrote the
	// record (the producer's clock header, else the tick it was created):
	// last write wins by clock, wrong when a writer's clock runs behind.
	VersionClock
)

var versionNames = [...]string{"none", "offset", "clock"}

// String returns the versioning's name ("none", "offset", "clock").
func (v Versioning) String() string {
	if v >= 0 && int(v) < len(versionNames) {
		return versionNames[v]
	}
	return "versioning(" + strconv.Itoa(int(v)) + ")"
}

// MarshalText returns the name String returns; an unknown versioning is an
// error wrapping ErrInvalidConfig.
func (v Versioning) MarshalText() ([]byte, error) {
	if v < 0 || int(v) >= len(versionNames) {
		return nil, fmt.Errorf("%w: unknown versioning %d", ErrInvalidConfig, int(v))
	}
	return []byte(versionNames[v]), nil
}

// UnmarshalText sets v from its name; any other text is an error wrapping
// ErrInvalidConfig that lists the names allowed.
func (v *Versioning) UnmarshalText(text []byte) error {
	for i, n := range versionNames {
		if string(text) == n {
			*v = Versioning(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown versioning %q (allowed: none, offset, clock)", ErrInvalidConfig, text)
}

// Source answers what the source of truth holds for a key: the ID of the
// latest record written for it. LogSource reads it from a log topic.
type Source interface {
	Latest(key string) (sim.ID, bool)
}

// Config configures a projection.
type Config struct {
	// Name is required; the projection's trace events are at
	// "projection:<Name>".
	Name string
	// Versioning is how rows are versioned; the zero value is VersionNone.
	Versioning Versioning
	// Source is what reads compare against; required.
	Source Source
}

// Validate reports every configuration error at once.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, fmt.Errorf("%w: a projection needs a name", ErrInvalidConfig))
	}
	if c.Versioning < VersionNone || c.Versioning > VersionClock {
		errs = append(errs, fmt.Errorf("%w: projection %q: unknown versioning %d", ErrInvalidConfig, c.Name, int(c.Versioning)))
	}
	if c.Source == nil {
		errs = append(errs, fmt.Errorf("%w: projection %q needs a source", ErrInvalidConfig, c.Name))
	}
	return errors.Join(errs...)
}

// Row is a projection's row of one key.
type Row struct {
	// Value is the ID of the record whose value the row holds.
	Value sim.ID
	// Body is that record's body.
	Body string
	// Version is the row's version: the record's offset or clock.
	Version int64
	// where, hasPos, partition and offset are the log and the position
	// of the row's record, when it came from a log: the log's order,
	// which a clock version may contradict.
	where     string
	hasPos    bool
	partition int
	offset    int64
}

// Metrics are a projection's counters; each is a fold of its trace events.
type Metrics struct {
	Rows       int // keys with a row
	Reads      int // reads, from the source and from the projection
	StaleReads int // reads from the projection that saw an older value
}

// Projection is a read model: one row per key. Memory is O(keys); Handle
// and Read cost O(1), ReadSource what the Source costs.
type Projection struct {
	cfg   Config
	env   *sim.Env
	where string
	rows  map[string]Row
	// fate holds, per origin of a record handed to a monotonic
	// projection, whether it was applied or lost as a later write (see
	// apply): a copy of an applied record is a duplicate whatever its
	// version, and a replay of a lost one is lost again, not a skipped
	// duplicate of something never applied. O(records) of such a
	// projection.
	fate map[sim.ID]fate
	m    Metrics
}

// fate is what a monotonic projection did with a record's origin.
type fate uint8

const (
	fateApplied fate = 1 + iota
	fateLost
)

// New returns an empty projection on w's environment. It is a sim.Handler
// that applies every record; Wrap gives a handler that applies through
// another, so a scripted handler can still fail records.
func New(w *sim.World, cfg Config) (*Projection, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Projection{cfg: cfg, env: w.Env(), where: "projection:" + cfg.Name, rows: map[string]Row{}}, nil
}

// Name returns the projection's name.
func (p *Projection) Name() string { return p.cfg.Name }

// Where returns where its trace events are: "projection:<name>".
func (p *Projection) Where() string { return p.where }

// Row returns the row of key and whether there is one.
func (p *Projection) Row(key string) (Row, bool) {
	r, ok := p.rows[key]
	return r, ok
}

// Metrics returns the projection's counters.
func (p *Projection) Metrics() Metrics {
	m := p.m
	m.Rows = len(p.rows)
	return m
}

// version is the version d's record would give a row.
func (p *Projection) version(d *sim.Delivery) int64 {
	if p.cfg.Versioning == VersionClock {
		if v, ok := d.Msg.Headers.Get(producer.HeaderClock); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
		return int64(d.Msg.Created)
	}
	return d.Offset
}

// Handle applies d's record to its key's row as Wrap(nil) does.
func (p *Projection) Handle(d *sim.Delivery) error { return p.apply(d, effect) }

var effect = sim.Effect("")

// Wrap returns a handler that feeds p through next (nil: apply every
// record): each member of a group wraps its own handler, and they share
// the rows. A record whose handler fails leaves its row as it was.
func (p *Projection) Wrap(next sim.Handler) sim.Handler {
	if next == nil {
		next = effect
	}
	return &feeder{p: p, next: next}
}

// feeder is the handler Wrap returns. It is Timed when the wrapped handler
// is, so a slow handler stays slow behind it.
type feeder struct {
	p    *Projection
	next sim.Handler
}

func (f *feeder) Handle(d *sim.Delivery) error { return f.p.apply(d, f.next) }

// Duration is the wrapped handler's processing time.
func (f *feeder) Duration(d *sim.Delivery) sim.Tick { return sim.DurationOf(f.next, d) }

// Unwrap returns the wrapped handler.
func (f *feeder) Unwrap() sim.Handler { return f.next }

// apply applies d's record to its key's row through next, unless the
// projection is monotonic and the row's version is not older than the
// record's: then it skips the record (sim.Delivery.Skip) and succeeds. A
// record without a key is applied to the row of "".
//
// A record that its version calls older may still be a later write, and
// ignoring it loses it for good (a lost update): the projection then
// applies nothing, as it would for an older record, and traces the loss,
// so the ledger counts it lost for the group, not absorbed. By clock, the
// writer's clock ran behind (cause sim.CauseClockSkew): the record is one
// the source of truth holds as the key's latest, or one later than the
// row's record in the same partition of the same log. By offset, the
// record sits in another partition or log than the row's record, whose
// offsets do not compare (a key's records move to another partition when
// partitions are added), and the source of truth holds it as the key's
// latest (cause sim.CauseOffsetOrder). Either way a copy of a record
// applied before is a duplicate wherever it sits, and a replay of a
// record lost so is lost again. A later write that is neither the
// source's latest nor, by clock, in the row's partition cannot be told
// from an older one, and is skipped.
func (p *Projection) apply(d *sim.Delivery, next sim.Handler) error {
	v := p.version(d)
	r, ok := p.rows[d.Msg.Key]
	if ok && p.cfg.Versioning != VersionNone && v <= r.Version {
		if why := p.laterWrite(d, r); why != "" {
			p.lose(d, v, r, why)
			return nil
		}
		d.Skip(fmt.Sprintf("version %d is not newer than %d (%s)", v, r.Version, r.Value))
		return nil
	}
	before := d.Effects()
	err := next.Handle(d)
	if d.Effects() > before {
		p.rows[d.Msg.Key] = Row{Value: d.Msg.ID, Body: string(d.Msg.Body), Version: v,
			where: d.Where, hasPos: d.HasPos, partition: d.Partition, offset: d.Offset}
		if p.cfg.Versioning != VersionNone {
			p.setFate(originOf(&d.Msg), fateApplied)
		}
	}
	return err
}

// setFate records what the projection did with origin o.
func (p *Projection) setFate(o sim.ID, f fate) {
	if p.fate == nil {
		p.fate = map[sim.ID]fate{}
	}
	p.fate[o] = f
}

// originOf returns m's origin, or m's own ID for an original.
func originOf(m *sim.Message) sim.ID {
	if m.Origin != 0 {
		return m.Origin
	}
	return m.ID
}

// laterWrite says why d's record, which its version calls no newer than
// row r, is a later write than r's record (see apply), or returns "" when
// it is not one.
func (p *Projection) laterWrite(d *sim.Delivery, r Row) string {
	switch o := originOf(&d.Msg); {
	case p.fate[o] == fateApplied:
		return "" // a copy of a record applied before: a duplicate
	case p.fate[o] == fateLost:
		return "lost before, and replayed"
	}
	samePartition := d.HasPos && r.hasPos && d.Where == r.where && d.Partition == r.partition
	if p.cfg.Versioning == VersionOffset && samePartition {
		return "" // the log orders the partition: an older record
	}
	if latest, ok := p.cfg.Source.Latest(d.Msg.Key); ok && latest == d.Msg.ID {
		why := "the source's latest for " + strconv.Quote(d.Msg.Key)
		if p.cfg.Versioning == VersionOffset {
			why += ", and the offsets of " + apart(d, r) + " do not compare"
		}
		return why
	}
	if p.cfg.Versioning == VersionClock && samePartition && d.Offset > r.offset {
		return fmt.Sprintf("offset %d is later than %d", d.Offset, r.offset)
	}
	return ""
}

// apart names the partitions of d's record and row r's record, which
// laterWrite found different, e.g. "partitions 1 and 0 of log:orders".
func apart(d *sim.Delivery, r Row) string {
	if d.HasPos && r.hasPos && d.Where == r.where {
		return fmt.Sprintf("partitions %d and %d of %s", d.Partition, r.partition, d.Where)
	}
	return place(d.Where, d.HasPos, d.Partition) + " and " + place(r.where, r.hasPos, r.partition)
}

// place names where a record sits: a partition of a log, or a component
// without a log position.
func place(where string, hasPos bool, partition int) string {
	if !hasPos {
		return where + " (no log position)"
	}
	return "partition " + strconv.Itoa(partition) + " of " + where
}

// lose traces that the projection lost d's record, a later write than row
// r's record (why says how it is known), because its version v is not
// newer than the row's: cause sim.CauseClockSkew by clock,
// sim.CauseOffsetOrder by offset.
func (p *Projection) lose(d *sim.Delivery, v int64, r Row, why string) {
	p.setFate(originOf(&d.Msg), fateLost)
	cause := sim.CauseClockSkew
	if p.cfg.Versioning == VersionOffset {
		cause = sim.CauseOffsetOrder
	}
	e := sim.Lost(d.Where, d.Instance, d.Consumer, &d.Msg, cause)
	e.Tick, e.Attempt = p.env.Now(), d.Attempt
	e.HasPos, e.Partition, e.Offset = d.HasPos, d.Partition, d.Offset
	e.Detail = fmt.Sprintf("version %d is not newer than %d (%s), yet it is a later write: %s", v, r.Version, r.Value, why)
	p.env.Emit(e)
}

// Read reads key from the projection as a reader would and traces it: a
// "read" event when the row holds the source's latest record, else a
// "read_stale" one. It returns the row (the zero Row when there is none)
// and whether the read was stale.
func (p *Projection) Read(reader, key string) (Row, bool) {
	r := p.rows[key]
	latest, ok := p.cfg.Source.Latest(key)
	stale := ok && r.Value != latest
	kind := KindRead
	if stale {
		kind = KindStaleRead
		p.m.StaleReads++
	}
	p.m.Reads++
	detail := "projection: " + describe(r.Value)
	if stale {
		detail += ", source has " + latest.String()
	}
	p.env.Emit(sim.Event{Tick: p.env.Now(), Kind: kind, Where: p.where, Actor: reader, Msg: r.Value, Key: key, Detail: detail})
	return r, stale
}

// ReadSource reads key from the source of truth and traces it as a "read"
// event: it is never stale. It returns the latest record's ID.
func (p *Projection) ReadSource(reader, key string) sim.ID {
	latest, _ := p.cfg.Source.Latest(key)
	p.m.Reads++
	p.env.Emit(sim.Event{Tick: p.env.Now(), Kind: KindRead, Where: p.where, Actor: reader, Msg: latest, Key: key,
		Detail: "source: " + describe(latest)})
	return latest
}

func describe(id sim.ID) string {
	if id == 0 {
		return "nothing"
	}
	return id.String()
}
