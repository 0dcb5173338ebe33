package outbox

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// Ordering says which rows a relay may publish together.
type Ordering uint8

// The relay orderings.
const (
	// InOrder takes a batch of unsent rows in id order. A row that backs
	// off after a failed publish holds back every row behind it until its
	// retry (the head-of-line blocking that keeps the order), while rows
	// leased by another relay are skipped. With one relay the rows go out
	// in id order (a first publish never overtakes an earlier row's; a
	// relay crash re-publishes rows already sent, in order again); with
	// several, only per-relay order holds. A dead letter leaves the order
	// stream; its manual retry is published out of order.
	InOrder Ordering = iota
	// PerAggregate publishes a row only when it is the oldest unsent row of
	// its aggregate, or follows that row in the same batch: a backing-off or
	// foreign-leased row blocks the rest of its aggregate, never the others.
	// Per-aggregate order then holds across several relays. A dead letter
	// leaves the order stream; its manual retry is published out of order.
	PerAggregate
)

var orderingNames = [...]string{"global", "per_aggregate"}

// String returns the ordering's name: "global" (InOrder) or
// "per_aggregate", as scenario files write it.
func (o Ordering) String() string {
	if int(o) < len(orderingNames) {
		return orderingNames[o]
	}
	return "unknown"
}

// MarshalText returns the ordering's name as String does; an ordering that
// is neither is an error wrapping ErrInvalidConfig.
func (o Ordering) MarshalText() ([]byte, error) {
	if int(o) >= len(orderingNames) {
		return nil, fmt.Errorf("%w: unknown ordering %d", ErrInvalidConfig, o)
	}
	return []byte(orderingNames[o]), nil
}

// UnmarshalText sets o from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (o *Ordering) UnmarshalText(text []byte) error {
	for i, n := range orderingNames {
		if n == string(text) {
			*o = Ordering(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown ordering %q", ErrInvalidConfig, text)
}

// RelayKind says how a relay finds the rows to publish: Poll for a
// polling Relay (NewRelay), CDC for a CDCRelay (NewCDCRelay). It is what a
// front end decodes to choose the constructor.
type RelayKind uint8

// The relay kinds.
const (
	// Poll claims unsent rows of the outbox table with a lease (Relay).
	Poll RelayKind = iota
	// CDC follows the service database's change log (CDCRelay); it needs
	// Config.ChangeLog.
	CDC
)

var relayKindNames = [...]string{"poll", "cdc"}

// String returns the kind's name: "poll" or "cdc", as scenario files
// write it.
func (k RelayKind) String() string {
	if int(k) < len(relayKindNames) {
		return relayKindNames[k]
	}
	return "unknown"
}

// MarshalText returns the kind's name as String does; a kind that is
// neither is an error wrapping ErrInvalidConfig.
func (k RelayKind) MarshalText() ([]byte, error) {
	if int(k) >= len(relayKindNames) {
		return nil, fmt.Errorf("%w: unknown relay kind %d", ErrInvalidConfig, k)
	}
	return []byte(relayKindNames[k]), nil
}

// UnmarshalText sets k from its name as String returns it; any other text
// is an error wrapping ErrInvalidConfig.
func (k *RelayKind) UnmarshalText(text []byte) error {
	for i, n := range relayKindNames {
		if n == string(text) {
			*k = RelayKind(i)
			return nil
		}
	}
	return fmt.Errorf("%w: unknown relay kind %q", ErrInvalidConfig, text)
}

// The defaults of RelayConfig.
const (
	DefaultBatch       = 10
	DefaultPollEvery   = sim.Tick(1)
	DefaultLease       = sim.Tick(5)
	DefaultMaxAttempts = 5
)

// RelayConfig configures a polling Relay.
type RelayConfig struct {
	// Name names the relay instance (trace Actor, lease owner); default "relay".
	Name string
	// Service is the service whose outbox the relay drains. Required; it
	// must belong to the relay's world.
	Service *Service
	// Target receives the messages (a queue, a pub/sub topic or a log topic,
	// keyed by aggregate id). Required.
	Target sim.Publisher
	// Faults is consulted at faults.BrokerUnavailable before each publish
	// and at faults.RelayCrashAfterPublish after it; nil means no faults.
	// The relay's opportunities carry Where "outbox:"+service and the relay
	// name as Consumer, so a rule can target one relay, or the relay rather
	// than a target that shares the injector. A target's own refusal (for
	// example queue.ErrUnavailable) counts as a failed attempt too.
	Faults *faults.Injector
	// Batch bounds the rows claimed per poll; default 10.
	Batch int
	// ScanLimit bounds the pending rows looked at per poll (rows that back
	// off or are leased elsewhere are skipped); default 64 + 4*Batch.
	ScanLimit int
	// PollEvery is the poll interval in ticks; default 1.
	PollEvery sim.Tick
	// Lease is how long a claim holds; default 5 ticks. A crashed relay's
	// rows become claimable by others when it runs out.
	Lease sim.Tick
	// MaxAttempts turns a row into a dead letter after that many failed
	// publishes; default 5.
	MaxAttempts int
	// Backoff is the base back-off: after the nth failure a row waits
	// Backoff<<(n-1) ticks, at most MaxBackoff. 0 retries at the next poll.
	Backoff    sim.Tick
	MaxBackoff sim.Tick // default 64*Backoff
	// Ordering is InOrder (default) or PerAggregate.
	Ordering Ordering
	// MarkEach marks every row in its own transaction right after its
	// publish; otherwise a poll marks its whole batch in one transaction
	// (cheaper, but a crash re-publishes every unmarked row of the batch).
	MarkEach bool
	// ContinueOnError goes on with the rest of the batch after a failed
	// publish, skipping the rest of that aggregate; by default the poll
	// stops at the first failure and nothing after it is published. It
	// needs PerAggregate: in InOrder mode a failed row holds back every row
	// behind it, so there is nothing to go on with.
	ContinueOnError bool
	// RestartAfter is how many ticks a crashed relay stays down; default 1.
	RestartAfter sim.Tick
	// CleanupAfter, when positive, removes after each poll up to 4*Batch
	// sent rows processed at least that many ticks ago.
	CleanupAfter sim.Tick
	// Start is the first tick the relay polls at; before it the relay is
	// not running yet.
	Start sim.Tick
}

// Validate reports a configuration error.
func (c RelayConfig) Validate() error {
	switch {
	case c.Service == nil:
		return fmt.Errorf("%w: a relay needs a service", ErrInvalidConfig)
	case c.Target == nil:
		return fmt.Errorf("%w: a relay needs a target", ErrInvalidConfig)
	case c.Batch < 0 || c.ScanLimit < 0 || c.MaxAttempts < 0:
		return fmt.Errorf("%w: batch, scan limit and max attempts must not be negative", ErrInvalidConfig)
	case c.PollEvery < 0 || c.Lease < 0 || c.Backoff < 0 || c.MaxBackoff < 0 || c.RestartAfter < 0 || c.CleanupAfter < 0 || c.Start < 0:
		return fmt.Errorf("%w: tick durations must not be negative", ErrInvalidConfig)
	case c.Ordering > PerAggregate:
		return fmt.Errorf("%w: unknown ordering %d", ErrInvalidConfig, c.Ordering)
	case c.ContinueOnError && c.Ordering != PerAggregate:
		return fmt.Errorf("%w: ContinueOnError needs PerAggregate ordering (in-order, a failed row holds back every row behind it)", ErrInvalidConfig)
	}
	return nil
}

func (c *RelayConfig) defaults() {
	if c.Name == "" {
		c.Name = "relay"
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if c.ScanLimit == 0 {
		c.ScanLimit = 64 + 4*c.Batch
	}
	if c.PollEvery == 0 {
		c.PollEvery = DefaultPollEvery
	}
	if c.Lease == 0 {
		c.Lease = DefaultLease
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 64 * c.Backoff
	}
	if c.RestartAfter == 0 {
		c.RestartAfter = 1
	}
}

// RelayStats are the counters of one relay instance.
type RelayStats struct {
	Polls        int
	Claimed      int
	Published    int
	Marked       int
	Failed       int
	DeadLettered int
	Released     int
	Crashes      int
	LeaseLost    int // failures and releases not written because the row's lease had passed to another relay
}

// Relay is a polling outbox relay, a component of the relay phase. Each
// poll is one claim transaction (a bounded scan of the pending index), the
// publishes, and one finishing transaction (marks, failures, releases), or
// one transaction per row with MarkEach. It never scans sent rows.
//
// The relay's publish makes the target broker emit its own event (sent,
// produced, published) for the row's message, which moves the message on
// from the outbox in the ledger. A row that fails MaxAttempts times is
// "dead_lettered" at "outbox:"+service: parked until a manual Retry. A
// crash after a publish and before the mark publishes the same message
// (the same ID) again later: one more delivery of the same copy, which the
// ledger counts as a duplicate of its origin.
type Relay struct {
	cfg      RelayConfig
	s        *Service
	where    string
	down     bool
	killed   bool
	upAt     sim.Tick
	nextPoll sim.Tick
	stats    RelayStats
	blocked  map[string]bool // per poll, PerAggregate only; never iterated
}

// NewRelay returns a relay and adds it to the world w as
// "outbox:"+service+"/relay:"+Name.
func NewRelay(w *sim.World, cfg RelayConfig) (*Relay, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Service.sameWorld(w, "a relay"); err != nil {
		return nil, err
	}
	cfg.defaults()
	r := &Relay{cfg: cfg, s: cfg.Service, where: cfg.Service.where, blocked: map[string]bool{}}
	if err := w.Add(r.where+"/relay:"+cfg.Name, r); err != nil {
		return nil, err
	}
	return r, nil
}

// Phase places relays after the producers and before the consumers.
func (r *Relay) Phase() sim.Phase { return sim.PhaseRelay }

// Name returns the relay's name.
func (r *Relay) Name() string { return r.cfg.Name }

// Stats returns the relay's counters.
func (r *Relay) Stats() RelayStats { return r.stats }

// Down reports whether the relay is crashed and not yet restarted, or
// killed.
func (r *Relay) Down() bool { return r.down || r.killed }

// Kill stops the relay until Resume, as an operator stopping its process
// would: it keeps its leases, which run out.
func (r *Relay) Kill() { r.killed = true }

// Resume restarts a killed relay.
func (r *Relay) Resume() { r.killed = false }

// Killed reports whether Kill stopped the relay.
func (r *Relay) Killed() bool { return r.killed }

// Step polls when the relay has started, is neither killed nor down, and
// its poll interval has passed.
func (r *Relay) Step(now sim.Tick) {
	if now < r.cfg.Start || r.killed {
		return
	}
	if r.down {
		if now < r.upAt {
			return
		}
		r.down = false
	}
	if now < r.nextPoll {
		return
	}
	r.nextPoll = now + r.cfg.PollEvery
	_ = r.poll(now)
}

// Poll runs one poll now, regardless of the interval, the start tick and
// Kill, restarting a crashed relay first. It returns the publish error that stopped the batch (or the
// first one, with ContinueOnError), or an error wrapping ErrCrashed when the
// relay crashed after a publish.
func (r *Relay) Poll() error {
	r.down = false
	return r.poll(r.s.env.Now())
}

type failure struct {
	row *Row
	err error
}

func (r *Relay) poll(now sim.Tick) error {
	r.stats.Polls++
	rows, err := r.claim(now)
	if err != nil {
		return err
	}
	var done, rest []*Row
	var failed []failure
	var skip map[string]bool
	var first error
	for i, row := range rows {
		if skip != nil && skip[row.AggregateID] {
			rest = append(rest, row)
			continue
		}
		if err := r.publish(row); err != nil {
			if first == nil {
				first = fmt.Errorf("outbox: relay %s: row %d: %w", r.cfg.Name, row.ID, err)
			}
			failed = append(failed, failure{row, err})
			if !r.cfg.ContinueOnError { // Validate allows it only with PerAggregate
				rest = append(rest, rows[i+1:]...)
				break
			}
			if skip == nil {
				skip = map[string]bool{}
			}
			skip[row.AggregateID] = true
			continue
		}
		r.published(row, now)
		if f := r.check(faults.RelayCrashAfterPublish, row); f != nil {
			r.crash(now, row, f)
			return fmt.Errorf("outbox: relay %s after publishing row %d: %w", r.cfg.Name, row.ID, ErrCrashed)
		}
		if r.cfg.MarkEach {
			if err := r.finish(now, []*Row{row}, nil, nil); err != nil {
				return err
			}
			continue
		}
		done = append(done, row)
	}
	if err := r.finish(now, done, failed, rest); err != nil {
		return err
	}
	if r.cfg.CleanupAfter > 0 {
		if _, err := r.s.Cleanup(r.cfg.CleanupAfter, 4*r.cfg.Batch); err != nil {
			return err
		}
	}
	return first
}

func (r *Relay) check(p faults.Point, row *Row) *faults.Firing {
	return checkRow(r.cfg.Faults, p, r.where, r.cfg.Name, row)
}

// checkRow consults point p of in for a relay's row.
func checkRow(in *faults.Injector, p faults.Point, where, relay string, row *Row) *faults.Firing {
	if !in.Has(p) {
		return nil
	}
	c := faults.Context{Where: where, Consumer: relay, Key: row.AggregateID, Type: row.EventType, Msg: row.Msg}
	return in.CheckRef(p, &c)
}

func (r *Relay) publish(row *Row) error {
	if f := r.check(faults.BrokerUnavailable, row); f != nil {
		return unavailable(f)
	}
	return r.cfg.Target.Publish(row.Message(r.s.name))
}

// unavailable returns the error of a broker.unavailable firing; it wraps
// ErrUnavailable and so sim.ErrUnavailable.
func unavailable(f *faults.Firing) error {
	if f.Error != "" {
		return fmt.Errorf("%w: %s", ErrUnavailable, f.Error)
	}
	return fmt.Errorf("%w: connection refused (rule %s)", ErrUnavailable, f.Rule)
}

func (r *Relay) published(row *Row, now sim.Tick) {
	r.stats.Published++
	m := &r.s.m
	m.Published++
	lag := now - row.Created
	m.LastLag = lag
	m.LagSum += lag
	m.LagCount++
	if lag > m.MaxLag {
		m.MaxLag = lag
	}
	ev := sim.Event{Kind: sim.KindRelayed, Where: r.where, Actor: r.cfg.Name, Msg: row.Msg, Key: row.AggregateID, Attempt: row.Attempts + 1}
	if r.s.env.Trace.Detailed() {
		ev.Detail = r.rowDetail(row, "lag="+strconv.FormatInt(int64(lag), 10))
	}
	r.s.env.Emit(ev)
}

// rowDetail describes row for a trace event's Detail; callers build it
// only when a sink shows details.
func (r *Relay) rowDetail(row *Row, extra string) string {
	if !r.s.env.Trace.Detailed() {
		return ""
	}
	d := "row " + strconv.FormatUint(row.ID, 10)
	if extra != "" {
		d += " " + extra
	}
	return d
}

func (r *Relay) crash(now sim.Tick, row *Row, f *faults.Firing) {
	r.down = true
	r.upAt = now + r.cfg.RestartAfter
	r.stats.Crashes++
	r.s.m.RelayCrash++
	r.s.env.Emit(sim.Event{Kind: sim.KindCrashed, Where: r.where, Actor: r.cfg.Name, Msg: row.Msg, Key: row.AggregateID,
		Rule: f.Rule, Detail: r.rowDetail(row, "crashed after publish, before mark")})
}

// claim leases up to Batch eligible pending rows in one transaction. A row
// is eligible when it does not back off (RetryAfter has come) and no other
// relay holds a valid lease on it. In PerAggregate mode an ineligible row
// blocks the rest of its aggregate; in InOrder mode a backing-off row ends
// the scan, so nothing behind it is published first, and a row leased
// elsewhere is skipped.
func (r *Relay) claim(now sim.Tick) ([]*Row, error) {
	txn := r.s.db.Txn(true)
	defer txn.Abort()
	it, err := txn.Get(TableOutbox, IndexPending)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDB, err)
	}
	perAgg := r.cfg.Ordering == PerAggregate
	if perAgg {
		clear(r.blocked)
	}
	var picked []*Row
	scanned := 0
	for obj := it.Next(); obj != nil && len(picked) < r.cfg.Batch && scanned < r.cfg.ScanLimit; obj = it.Next() {
		scanned++
		row := obj.(*Row)
		if perAgg && r.blocked[row.AggregateID] {
			continue
		}
		backingOff := row.RetryAfter > now
		free := !backingOff && (row.ClaimedBy == "" || row.ClaimedBy == r.cfg.Name || row.LeaseUntil <= now)
		if !free {
			if perAgg {
				r.blocked[row.AggregateID] = true
				continue
			}
			if backingOff {
				break // in order: the rows behind a backing-off row wait for it
			}
			continue
		}
		picked = append(picked, row)
	}
	if len(picked) == 0 {
		return nil, nil
	}
	until := now + r.cfg.Lease
	claimed := make([]Row, len(picked))
	for i, row := range picked {
		claimed[i] = *row
		c := &claimed[i]
		c.ClaimedBy, c.LeaseUntil = r.cfg.Name, until
		if err := txn.Insert(TableOutbox, c); err != nil {
			return nil, fmt.Errorf("%w: claim: %w", ErrDB, err)
		}
		picked[i] = c
	}
	txn.Commit()
	r.stats.Claimed += len(picked)
	detailed := r.s.env.Trace.Detailed()
	for _, row := range picked {
		ev := sim.Event{Kind: KindClaimed, Where: r.where, Actor: r.cfg.Name, Msg: row.Msg, Key: row.AggregateID, Attempt: row.Attempts + 1}
		if detailed {
			ev.Detail = r.rowDetail(row, "until="+strconv.FormatInt(int64(until), 10))
		}
		r.s.env.Emit(ev)
	}
	return picked, nil
}

func (r *Relay) backoff(attempts int) sim.Tick {
	b := r.cfg.Backoff
	if b == 0 {
		return 0
	}
	for i := 1; i < attempts && b < r.cfg.MaxBackoff; i++ {
		b *= 2
	}
	if b > r.cfg.MaxBackoff {
		b = r.cfg.MaxBackoff
	}
	return b
}

type outcome struct {
	row  *Row
	kind sim.Kind
	err  error
}

// finish marks the published rows, records the failures and releases the
// untouched claims, in one transaction. A row that is no longer pending is
// left alone. A failure or a release is written only while this relay
// still holds the row's claim: when its lease ran out and another relay
// claimed the row meanwhile, the row is that relay's, and this one's
// failure path must not clear the other's lease or count an attempt; it
// is traced as "lease_lost" instead. (A mark is written whoever holds the
// row: the message was published, and the other relay's publish is a
// duplicate either way.)
func (r *Relay) finish(now sim.Tick, done []*Row, failed []failure, rest []*Row) error {
	if len(done)+len(failed)+len(rest) == 0 {
		return nil
	}
	var out []outcome
	err := r.s.Update(func(tx *Tx) error {
		cur := func(id uint64) (*Row, error) {
			obj, err := tx.txn.First(TableOutbox, IndexID, id)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrDB, err)
			}
			if obj == nil {
				return nil, nil
			}
			return obj.(*Row), nil
		}
		put := func(n Row, k sim.Kind, e error) error {
			if err := tx.txn.Insert(TableOutbox, &n); err != nil {
				return fmt.Errorf("%w: %w", ErrDB, err)
			}
			out = append(out, outcome{&n, k, e})
			return nil
		}
		for _, d := range done {
			c, err := cur(d.ID)
			if err != nil {
				return err
			}
			if c == nil || c.State != StatePending {
				continue
			}
			n := *c
			n.State, n.Processed, n.ClaimedBy, n.LeaseUntil = StateSent, now, "", 0
			if err := put(n, KindMarked, nil); err != nil {
				return err
			}
		}
		for _, f := range failed {
			c, err := cur(f.row.ID)
			if err != nil {
				return err
			}
			if c == nil || c.State != StatePending {
				continue
			}
			if c.ClaimedBy != r.cfg.Name {
				out = append(out, outcome{c, KindLeaseLost, f.err})
				continue
			}
			n := *c
			n.Attempts++
			n.LastError = f.err.Error()
			n.RetryAfter = now + r.backoff(n.Attempts)
			n.ClaimedBy, n.LeaseUntil = "", 0
			k := sim.KindFailed
			if n.Attempts >= r.cfg.MaxAttempts {
				n.State = StateDead
				k = sim.KindDeadLettered
			}
			if err := put(n, k, f.err); err != nil {
				return err
			}
		}
		for _, x := range rest {
			c, err := cur(x.ID)
			if err != nil {
				return err
			}
			if c == nil || c.State != StatePending {
				continue
			}
			if c.ClaimedBy != r.cfg.Name {
				out = append(out, outcome{c, KindLeaseLost, nil})
				continue
			}
			n := *c
			n.ClaimedBy, n.LeaseUntil = "", 0
			if err := put(n, KindReleased, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	m := &r.s.m
	detailed := r.s.env.Trace.Detailed()
	for _, o := range out {
		row := o.row
		ev := sim.Event{Kind: o.kind, Where: r.where, Actor: r.cfg.Name, Msg: row.Msg, Key: row.AggregateID}
		switch o.kind {
		case KindMarked:
			r.stats.Marked++
			m.Marked++
			m.Pending--
			m.Sent++
		case KindReleased:
			r.stats.Released++
		case KindLeaseLost:
			r.stats.LeaseLost++
			if detailed {
				ev.Detail = "the lease ran out and the row was claimed by another relay meanwhile; outcome not written"
				if row.ClaimedBy != "" {
					ev.Detail = "the lease passed to " + row.ClaimedBy + " (until t=" + strconv.FormatInt(int64(row.LeaseUntil), 10) + "); outcome not written"
				}
				if o.err != nil {
					ev.Detail += ": " + o.err.Error()
				}
			}
		case sim.KindFailed, sim.KindDeadLettered:
			r.stats.Failed++
			m.Failed++
			ev.Attempt = row.Attempts
			if detailed {
				ev.Detail = o.err.Error()
			}
			if o.kind == sim.KindDeadLettered {
				r.stats.DeadLettered++
				m.DeadLetters++
				m.Pending--
				if detailed {
					ev.Detail = "after " + strconv.Itoa(row.Attempts) + " attempts: " + ev.Detail
				}
			}
		}
		r.s.env.Emit(ev)
	}
	return nil
}
