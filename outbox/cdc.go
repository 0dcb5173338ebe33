package outbox

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// CDCConfig configures a CDCRelay.
type CDCConfig struct {
	// Name names the relay (trace Actor); default "cdc".
	Name string
	// Service must have been created with Config.ChangeLog. Required; it
	// must belong to the relay's world.
	Service *Service
	// Target receives the messages. Required.
	Target sim.Publisher
	// Faults is consulted at faults.BrokerUnavailable before each publish
	// and at faults.RelayCrashAfterPublish after it.
	Faults *faults.Injector
	// CommitEvery commits the relay's position (and marks the published
	// rows sent) after that many publishes; 0 commits once per step. A
	// crash re-publishes everything after the last committed position.
	CommitEvery int
	// MaxPerStep bounds the changes published per step; 0 means no bound.
	MaxPerStep int
	// RestartAfter is how many ticks a crashed relay stays down; default 1.
	RestartAfter sim.Tick
	// Start is the first tick the relay runs at.
	Start sim.Tick
	// Interval, when above 1, runs the relay only every Interval ticks
	// from Start (a connector that reads the change log in intervals);
	// default 1, every tick.
	Interval sim.Tick
}

// Validate reports a configuration error.
func (c CDCConfig) Validate() error {
	switch {
	case c.Service == nil:
		return fmt.Errorf("%w: a CDC relay needs a service", ErrInvalidConfig)
	case !c.Service.changeLog:
		return fmt.Errorf("%w: service %q has no change log", ErrInvalidConfig, c.Service.name)
	case c.Target == nil:
		return fmt.Errorf("%w: a CDC relay needs a target", ErrInvalidConfig)
	case c.CommitEvery < 0 || c.MaxPerStep < 0 || c.RestartAfter < 0 || c.Start < 0 || c.Interval < 0:
		return fmt.Errorf("%w: negative CDC setting", ErrInvalidConfig)
	}
	return nil
}

// CDCRelay publishes outbox inserts by following the service's change log,
// which the service fills from memdb change tracking (Txn.TrackChanges) at
// each commit, instead of polling the table. It is a component of the
// relay phase. Like the polling Relay, its publish makes the target emit
// the event that moves the message on in the ledger. It keeps a read position (a log sequence number) and commits
// it, together with marking the published rows sent, in one transaction;
// the committed position is the only state that survives a crash, so a
// crash after a publish re-publishes everything since the last commit. It
// never retries a row out of order: a failed publish stops the step and is
// retried at the next one. CDC relays take no leases: every CDC relay of a
// service publishes every row, so run one per service. A step costs
// O(changes published) plus one transaction per commit.
type CDCRelay struct {
	cfg       CDCConfig
	s         *Service
	pos       uint64 // last lsn published
	committed uint64 // last lsn committed
	down      bool
	killed    bool
	upAt      sim.Tick
	stats     RelayStats
}

// NewCDCRelay returns a CDC relay that starts at the beginning of the
// service's change log and registers with it, so the log keeps every
// change this relay has not committed, and adds it to the world w as
// "outbox:"+service+"/relay:"+Name.
func NewCDCRelay(w *sim.World, cfg CDCConfig) (*CDCRelay, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Service.sameWorld(w, "a CDC relay"); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "cdc"
	}
	if cfg.RestartAfter == 0 {
		cfg.RestartAfter = 1
	}
	if cfg.Interval == 0 {
		cfg.Interval = 1
	}
	r := &CDCRelay{cfg: cfg, s: cfg.Service}
	if err := w.Add(r.s.where+"/relay:"+cfg.Name, r); err != nil {
		return nil, err
	}
	if len(r.s.log) > 0 {
		r.pos = r.s.log[0].lsn - 1
		r.committed = r.pos
	}
	r.s.readers = append(r.s.readers, r)
	return r, nil
}

// Phase places relays after the producers and before the consumers.
func (r *CDCRelay) Phase() sim.Phase { return sim.PhaseRelay }

// Down reports whether the relay is crashed and not yet restarted, or
// killed.
func (r *CDCRelay) Down() bool { return r.down || r.killed }

// Kill stops the relay until Resume; its committed position survives.
func (r *CDCRelay) Kill() { r.killed = true }

// Resume restarts a killed relay.
func (r *CDCRelay) Resume() { r.killed = false }

// Killed reports whether Kill stopped the relay.
func (r *CDCRelay) Killed() bool { return r.killed }

// Name returns the relay's name.
func (r *CDCRelay) Name() string { return r.cfg.Name }

// Stats returns the relay's counters.
func (r *CDCRelay) Stats() RelayStats { return r.stats }

// Position returns the last published and the last committed log sequence
// numbers.
func (r *CDCRelay) Position() (published, committed uint64) { return r.pos, r.committed }

// Step publishes the changes committed since the relay's position, at
// the ticks the relay runs at (from Start, every Interval, unless killed).
func (r *CDCRelay) Step(now sim.Tick) {
	if now < r.cfg.Start || r.killed {
		return
	}
	if iv := r.cfg.Interval; iv > 1 && (now-r.cfg.Start)%iv != 0 {
		return
	}
	if r.down {
		if now < r.upAt {
			return
		}
		r.down = false
		r.pos = r.committed
	}
	_ = r.run(now)
}

func (r *CDCRelay) check(p faults.Point, row *Row) *faults.Firing {
	return checkRow(r.cfg.Faults, p, r.s.where, r.cfg.Name, row)
}

func (r *CDCRelay) run(now sim.Tick) error {
	r.stats.Polls++
	log := r.s.log
	// The log is lsn-ascending and dense; find the first change after pos.
	i := 0
	if len(log) > 0 && r.pos >= log[0].lsn {
		i = int(r.pos - log[0].lsn + 1)
	}
	var batch []*Row
	n := 0
	for ; i < len(log); i++ {
		if r.cfg.MaxPerStep > 0 && n >= r.cfg.MaxPerStep {
			break
		}
		c := log[i]
		row := c.row
		var err error
		if f := r.check(faults.BrokerUnavailable, row); f != nil {
			err = unavailable(f)
		} else {
			err = r.cfg.Target.Publish(row.Message(r.s.name))
		}
		detailed := r.s.env.Trace.Detailed()
		if err != nil {
			r.stats.Failed++
			r.s.m.Failed++
			ev := sim.Event{Kind: sim.KindFailed, Where: r.s.where, Actor: r.cfg.Name, Msg: row.Msg, Key: row.AggregateID}
			if detailed {
				ev.Detail = err.Error()
			}
			r.s.env.Emit(ev)
			break
		}
		n++
		r.pos = c.lsn
		r.stats.Published++
		m := &r.s.m
		m.Published++
		lag := now - row.Created
		m.LastLag, m.LagSum, m.LagCount = lag, m.LagSum+lag, m.LagCount+1
		if lag > m.MaxLag {
			m.MaxLag = lag
		}
		ev := sim.Event{Kind: sim.KindRelayed, Where: r.s.where, Actor: r.cfg.Name, Msg: row.Msg, Key: row.AggregateID, Attempt: 1}
		if detailed {
			ev.Detail = "lsn " + strconv.FormatUint(c.lsn, 10) + " lag=" + strconv.FormatInt(int64(lag), 10)
		}
		r.s.env.Emit(ev)
		batch = append(batch, row)
		if f := r.check(faults.RelayCrashAfterPublish, row); f != nil {
			r.down = true
			r.upAt = now + r.cfg.RestartAfter
			r.stats.Crashes++
			r.s.m.RelayCrash++
			ev := sim.Event{Kind: sim.KindCrashed, Where: r.s.where, Actor: r.cfg.Name, Msg: row.Msg, Key: row.AggregateID, Rule: f.Rule}
			if detailed {
				ev.Detail = "crashed after publish, before committing lsn " + strconv.FormatUint(c.lsn, 10)
			}
			r.s.env.Emit(ev)
			return fmt.Errorf("outbox: CDC relay %s: %w", r.cfg.Name, ErrCrashed)
		}
		if r.cfg.CommitEvery > 0 && len(batch) >= r.cfg.CommitEvery {
			if err := r.commit(now, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := r.commit(now, batch); err != nil {
		return err
	}
	r.s.trim() // after the loop: trimming shifts the log in place
	return nil
}

// commit marks the rows sent and advances the committed position in one
// transaction. Each row marked is traced as "marked", as a polling
// relay's are, so the service's pending rows are a fold of the trace.
func (r *CDCRelay) commit(now sim.Tick, rows []*Row) error {
	if r.pos == r.committed {
		return nil
	}
	marked := 0
	var done []*Row
	err := r.s.Update(func(tx *Tx) error {
		done = done[:0]
		for _, row := range rows {
			obj, err := tx.txn.First(TableOutbox, IndexID, row.ID)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrDB, err)
			}
			if obj == nil || obj.(*Row).State != StatePending {
				continue
			}
			n := *obj.(*Row)
			n.State, n.Processed, n.ClaimedBy, n.LeaseUntil = StateSent, now, "", 0
			if err := tx.txn.Insert(TableOutbox, &n); err != nil {
				return fmt.Errorf("%w: %w", ErrDB, err)
			}
			marked++
			done = append(done, row)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.committed = r.pos
	for _, row := range done {
		r.s.env.Emit(sim.Event{Kind: KindMarked, Where: r.s.where, Actor: r.cfg.Name, Msg: row.Msg, Key: row.AggregateID})
	}
	r.stats.Marked += marked
	r.s.m.Marked += marked
	r.s.m.Pending -= marked
	r.s.m.Sent += marked
	return nil
}
