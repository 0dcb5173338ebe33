package outbox

import (
	"encoding/binary"
	"fmt"
	"strconv"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// TableProcessed is the consumer's dedup table.
const TableProcessed = "processed"

// IndexSeen orders processed entries by the tick they were recorded.
const IndexSeen = "seen"

// Processed is one dedup entry of a consumer: the key it deduplicates on
// (an event ID, or a business key with its time bucket), the message that
// first carried it and when it was recorded. Never mutated after insert.
type Processed struct {
	Key  string
	Msg  sim.ID
	Seen sim.Tick
}

type processedIndex bool // true: by (Seen, Key)

func (x processedIndex) FromObject(obj any) (bool, []byte, error) {
	p, ok := obj.(*Processed)
	if !ok {
		return false, nil, fmt.Errorf("%w: table %s holds *Processed, got %T", ErrDB, TableProcessed, obj)
	}
	if !x {
		return true, []byte(p.Key + "\x00"), nil
	}
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 9+len(p.Key)), uint64(p.Seen))
	return true, append(append(b, p.Key...), 0), nil
}

func (x processedIndex) FromArgs(args ...any) ([]byte, error) {
	if x {
		return uintArgs(args)
	}
	if len(args) != 1 {
		return nil, fmt.Errorf("%w: the processed key index takes one string", ErrDB)
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("%w: processed key %T is not a string", ErrDB, args[0])
	}
	return []byte(s + "\x00"), nil
}

// ConsumerSchema returns a consumer database schema: the dedup table plus
// the consumer's own effect tables.
func ConsumerSchema(tables ...*memdb.TableSchema) *memdb.DBSchema {
	s := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		TableProcessed: {Name: TableProcessed, Indexes: map[string]*memdb.IndexSchema{
			IndexID:   {Name: IndexID, Unique: true, Indexer: processedIndex(false)},
			IndexSeen: {Name: IndexSeen, Unique: true, Indexer: processedIndex(true)},
		}},
	}}
	for _, t := range tables {
		if t != nil {
			s.Tables[t.Name] = t
		}
	}
	return s
}

// Dedup is how a Consumer recognises a message it has already applied.
type Dedup uint8

// The dedup modes.
const (
	// DedupEventID records the message (event) ID.
	DedupEventID Dedup = iota
	// DedupBusinessKey records ConsumerConfig.BusinessKey of the message,
	// suffixed with its time bucket (created tick / Bucket).
	DedupBusinessKey
	// DedupNone is the naive consumer: it applies every delivery.
	DedupNone
)

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	// Name is the logical consumer in the ledger and the trace Actor. Required.
	Name string
	// Where is the trace component; default "consumer:"+Name.
	Where string
	// Env is the shared environment; nil means a private one.
	Env *sim.Env
	// DB is the consumer's own database; it must contain the tables of
	// ConsumerSchema. Required.
	DB *memdb.MemDB
	// Effect applies the message inside txn; returning an error aborts the
	// transaction, so neither the effect nor the dedup entry is stored.
	// Required.
	Effect func(txn *memdb.Txn, m sim.Message) error
	// Dedup selects the dedup mode.
	Dedup Dedup
	// BusinessKey extracts the business key (DedupBusinessKey only).
	BusinessKey func(m sim.Message) string
	// Bucket is the time-bucket width for business keys; 0 means one bucket.
	Bucket sim.Tick
	// TTL, when positive, lets Step forget dedup entries older than TTL
	// ticks; a duplicate arriving later is applied again.
	TTL sim.Tick
	// Faults is consulted at faults.ConsumerCrashAfterEffect after the
	// effect and before the commit; firing aborts the transaction.
	Faults *faults.Injector
}

// Validate reports a configuration error.
func (c ConsumerConfig) Validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: a consumer needs a name", ErrInvalidConfig)
	case c.DB == nil:
		return fmt.Errorf("%w: a consumer needs a database", ErrInvalidConfig)
	case c.Effect == nil:
		return fmt.Errorf("%w: a consumer needs an effect", ErrInvalidConfig)
	case c.Dedup > DedupNone:
		return fmt.Errorf("%w: unknown dedup mode %d", ErrInvalidConfig, c.Dedup)
	case c.Dedup == DedupBusinessKey && c.BusinessKey == nil:
		return fmt.Errorf("%w: business-key dedup needs a BusinessKey function", ErrInvalidConfig)
	case c.Bucket < 0 || c.TTL < 0:
		return fmt.Errorf("%w: bucket and TTL must not be negative", ErrInvalidConfig)
	}
	if c.Dedup != DedupNone {
		if _, err := c.DB.Txn(false).First(TableProcessed, IndexID, ""); err != nil {
			return fmt.Errorf("%w: the database lacks the %s table: %w", ErrInvalidConfig, TableProcessed, err)
		}
	}
	return nil
}

// ConsumerStats are the counters of a consumer.
type ConsumerStats struct {
	Handled    int // calls to Handle
	Applied    int // effects committed
	Duplicates int // deliveries skipped as already applied
	Failed     int // effects that returned an error
	Crashes    int
	Forgotten  int // dedup entries removed by TTL
}

// Consumer applies messages to its own database. Handle is one write
// transaction: the dedup check, the effect and the dedup entry commit or
// abort together, so a crash between effect and commit leaves neither and
// the redelivery applies the effect once. A dedup lookup costs O(key
// length). Consumer is a sim.Actor (PhaseConsumer) only to expire dedup
// entries after TTL; the caller feeds it deliveries and acks them.
type Consumer struct {
	cfg   ConsumerConfig
	env   *sim.Env
	ref   sim.ConsumerRef
	stats ConsumerStats
}

// NewConsumer returns a consumer.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Where == "" {
		cfg.Where = "consumer:" + cfg.Name
	}
	env := cfg.Env
	if env == nil {
		env = sim.NewEnv(0)
	}
	return &Consumer{cfg: cfg, env: env, ref: env.Ledger.Consumer(cfg.Name)}, nil
}

// Stats returns the consumer's counters.
func (c *Consumer) Stats() ConsumerStats { return c.stats }

// Ref returns the consumer's ledger handle.
func (c *Consumer) Ref() sim.ConsumerRef { return c.ref }

// Key returns the dedup key of m ("" for the naive consumer).
func (c *Consumer) Key(m sim.Message) string {
	switch c.cfg.Dedup {
	case DedupEventID:
		return m.ID.String()
	case DedupBusinessKey:
		k := c.cfg.BusinessKey(m)
		if c.cfg.Bucket > 0 {
			k += "@" + strconv.FormatInt(int64(m.Created/c.cfg.Bucket), 10)
		}
		return k
	}
	return ""
}

// Handle applies m unless its dedup key was already recorded. It returns
// whether the effect was applied now; a duplicate returns false and nil.
// An effect error or a crash (an error wrapping ErrCrashed) aborts the
// transaction: the caller must not acknowledge m then.
func (c *Consumer) Handle(m sim.Message) (bool, error) {
	c.stats.Handled++
	now := c.env.Now()
	key := c.Key(m)
	txn := c.cfg.DB.Txn(true)
	if c.cfg.Dedup != DedupNone {
		obj, err := txn.First(TableProcessed, IndexID, key)
		if err != nil {
			txn.Abort()
			return false, fmt.Errorf("%w: dedup lookup: %w", ErrDB, err)
		}
		if obj != nil {
			txn.Abort()
			c.stats.Duplicates++
			c.env.Emit(sim.Event{Kind: sim.KindDeduplicated, Where: c.cfg.Where, Actor: c.cfg.Name, Msg: m.ID, Key: m.Key,
				Detail: "already applied as " + obj.(*Processed).Msg.String() + " (key " + key + ")"})
			return false, nil
		}
	}
	if err := c.cfg.Effect(txn, m); err != nil {
		txn.Abort()
		c.stats.Failed++
		c.env.Emit(sim.Event{Kind: sim.KindFailed, Where: c.cfg.Where, Actor: c.cfg.Name, Msg: m.ID, Key: m.Key, Detail: err.Error()})
		return false, fmt.Errorf("outbox: consumer %s: effect of %s: %w", c.cfg.Name, m.ID, err)
	}
	if c.cfg.Faults.Has(faults.ConsumerCrashAfterEffect) {
		if f, ok := c.cfg.Faults.Check(faults.ConsumerCrashAfterEffect, faults.Context{Where: c.cfg.Where, Consumer: c.cfg.Name,
			Key: m.Key, Type: m.Headers.Type, Msg: m.ID}); ok {
			txn.Abort()
			c.stats.Crashes++
			c.env.Emit(sim.Event{Kind: sim.KindCrashed, Where: c.cfg.Where, Actor: c.cfg.Name, Msg: m.ID, Key: m.Key, Rule: f.Rule,
				Detail: "crashed after the effect, before commit: both rolled back"})
			return false, fmt.Errorf("outbox: consumer %s on %s: %w", c.cfg.Name, m.ID, ErrCrashed)
		}
	}
	if c.cfg.Dedup != DedupNone {
		if err := txn.Insert(TableProcessed, &Processed{Key: key, Msg: m.ID, Seen: now}); err != nil {
			txn.Abort()
			return false, fmt.Errorf("%w: dedup insert: %w", ErrDB, err)
		}
	}
	txn.Commit()
	c.stats.Applied++
	c.env.Ledger.Applied(m.ID, c.ref, now)
	c.env.Emit(sim.Event{Kind: sim.KindProcessed, Where: c.cfg.Where, Actor: c.cfg.Name, Msg: m.ID, Key: m.Key})
	return true, nil
}

// Step forgets dedup entries older than TTL, oldest first, in one
// transaction; it costs O(forgotten).
func (c *Consumer) Step(now sim.Tick) {
	if c.cfg.TTL <= 0 || c.cfg.Dedup == DedupNone {
		return
	}
	cutoff := now - c.cfg.TTL
	txn := c.cfg.DB.Txn(true)
	it, err := txn.Get(TableProcessed, IndexSeen)
	if err != nil {
		txn.Abort()
		return
	}
	var old []*Processed
	for obj := it.Next(); obj != nil; obj = it.Next() {
		p := obj.(*Processed)
		if p.Seen > cutoff {
			break
		}
		old = append(old, p)
	}
	if len(old) == 0 {
		txn.Abort()
		return
	}
	for _, p := range old {
		if err := txn.Delete(TableProcessed, p); err != nil {
			txn.Abort()
			return
		}
	}
	txn.Commit()
	c.stats.Forgotten += len(old)
}
