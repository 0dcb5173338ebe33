package outbox

import (
	"encoding/binary"
	"fmt"
	"strconv"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/sim"
)

// TableProcessed is the dedup table of idempotent consumers.
const TableProcessed = "processed"

// IndexSeen orders a consumer's processed entries by the tick they were
// recorded.
const IndexSeen = "seen"

// Processed is one dedup entry of a consumer: the consumer it belongs to,
// the key it deduplicates on (an event ID, or a business key with its time
// bucket), the message that first carried it and when it was recorded.
// Never mutated after insert.
type Processed struct {
	Consumer string
	Key      string
	Msg      sim.ID
	Seen     sim.Tick
}

// processedIndex indexes *Processed without reflection: by (Consumer, Key)
// when false, by (Consumer, Seen, Key) when true.
type processedIndex bool

func (x processedIndex) FromObject(obj any) (bool, []byte, error) {
	p, ok := obj.(*Processed)
	if !ok {
		return false, nil, fmt.Errorf("%w: table %s holds *Processed, got %T", ErrDB, TableProcessed, obj)
	}
	b := make([]byte, 0, len(p.Consumer)+len(p.Key)+10)
	b = append(append(b, p.Consumer...), 0)
	if x {
		b = binary.BigEndian.AppendUint64(b, uint64(p.Seen))
	}
	return true, append(append(b, p.Key...), 0), nil
}

// FromArgs takes (consumer, key) strings for the key index and (consumer,
// tick) for the seen index, as LowerBound needs them.
func (x processedIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("%w: the %s indexes take two arguments", ErrDB, TableProcessed)
	}
	name, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("%w: consumer %T is not a string", ErrDB, args[0])
	}
	b := append([]byte(name), 0)
	if x {
		t, err := uintArgs(args[1:])
		if err != nil {
			return nil, err
		}
		return append(b, t...), nil
	}
	key, ok := args[1].(string)
	if !ok {
		return nil, fmt.Errorf("%w: processed key %T is not a string", ErrDB, args[1])
	}
	return append(append(b, key...), 0), nil
}

// processedTable returns the schema of the dedup table.
func processedTable() *memdb.TableSchema {
	return &memdb.TableSchema{Name: TableProcessed, Indexes: map[string]*memdb.IndexSchema{
		IndexID:   {Name: IndexID, Unique: true, Indexer: processedIndex(false)},
		IndexSeen: {Name: IndexSeen, Unique: true, Indexer: processedIndex(true)},
	}}
}

// ConsumerSchema returns a consumer database schema: the dedup table plus
// the consumer's own effect tables. A service's database (Schema) has the
// dedup table too.
func ConsumerSchema(tables ...*memdb.TableSchema) *memdb.DBSchema {
	s := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{TableProcessed: processedTable()}}
	for _, t := range tables {
		if t != nil {
			s.Tables[t.Name] = t
		}
	}
	return s
}

// Dedup is how a Consumer recognises a delivery it has already applied.
type Dedup uint8

// The dedup modes.
const (
	// ByMessageID records the message (event) ID. A redriven or re-sent
	// copy has a new ID and is applied again.
	ByMessageID Dedup = iota
	// ByBusinessKey records ConsumerConfig.BusinessKey of the message
	// (BusinessKey by default), suffixed with its time bucket (created
	// tick / Bucket). It survives redrives and re-sends.
	ByBusinessKey
	// NoDedup is the naive consumer: it applies every delivery, so it
	// applies a duplicate again.
	NoDedup
)

var dedupNames = [...]string{"message_id", "business_key", "none"}

// String returns the mode's name.
func (d Dedup) String() string {
	if int(d) < len(dedupNames) {
		return dedupNames[d]
	}
	return "unknown"
}

// BusinessKey is the default business key of ByBusinessKey: the message
// type, key and body, which a redriven or re-sent copy (with a new ID)
// shares with its origin.
func BusinessKey(m sim.Message) string { return sim.BusinessKey(m) }

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	// Name scopes the consumer's dedup entries in the table (several
	// consumers can share one database) and names it in skip notes.
	// Required.
	Name string
	// DB is the consumer's own database; it must contain the tables of
	// ConsumerSchema. Exactly one of DB and Service is required.
	DB *memdb.MemDB
	// Service keeps the dedup entries and the effects in the service's
	// database instead (an inbox next to the outbox). Its world must be the
	// consumer's.
	Service *Service
	// Effect applies the delivery inside txn, the consumer's write
	// transaction; returning an error aborts it, so neither the effect nor
	// the dedup entry is stored. It must not write the outbox table.
	// Exactly one of Effect and Handler is required.
	Effect func(txn *memdb.Txn, d *sim.Delivery) error
	// Handler is a handler to make idempotent instead of an Effect: the
	// consumer calls it inside its transaction and records the dedup entry
	// when the handler recorded an effect (Delivery.Apply), whatever it
	// returns. Its effects live outside the database, so unlike an Effect's
	// they do not roll back with the transaction.
	Handler sim.Handler
	// Dedup selects the dedup mode; default ByMessageID.
	Dedup Dedup
	// BusinessKey extracts the business key for ByBusinessKey; default
	// the package function BusinessKey.
	BusinessKey func(m sim.Message) string
	// Bucket is the time-bucket width for business keys; 0 means one bucket.
	Bucket sim.Tick
	// TTL, when positive, is how long a dedup entry lives, in ticks: an
	// entry recorded at tick Seen absorbs a duplicate delivered while its
	// age (now - Seen) is below TTL, that is up to tick Seen+TTL-1, and is
	// forgotten from tick Seen+TTL on (in the transaction of the next
	// delivery, or by Expire), so a duplicate arriving then is applied
	// again. 0 keeps entries for ever.
	TTL sim.Tick
	// Note is shown with every applied effect in the trace.
	Note string
}

// Validate reports a configuration error.
func (c ConsumerConfig) Validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: a consumer needs a name", ErrInvalidConfig)
	case (c.DB == nil) == (c.Service == nil):
		return fmt.Errorf("%w: a consumer needs a database or a service, not both", ErrInvalidConfig)
	case (c.Effect == nil) == (c.Handler == nil):
		return fmt.Errorf("%w: a consumer needs an effect or a handler, not both", ErrInvalidConfig)
	case c.Dedup > NoDedup:
		return fmt.Errorf("%w: unknown dedup mode %d", ErrInvalidConfig, c.Dedup)
	case c.Bucket < 0 || c.TTL < 0:
		return fmt.Errorf("%w: bucket and TTL must not be negative", ErrInvalidConfig)
	}
	db := c.DB
	if db == nil {
		db = c.Service.db
	}
	if c.Dedup != NoDedup {
		if _, err := db.Txn(false).First(TableProcessed, IndexID, c.Name, ""); err != nil {
			return fmt.Errorf("%w: the database lacks the %s table: %w", ErrInvalidConfig, TableProcessed, err)
		}
	}
	return nil
}

// ConsumerStats are the counters of a consumer.
type ConsumerStats struct {
	Handled    int // calls to Handle
	Applied    int // deliveries whose effect committed
	Duplicates int // deliveries skipped as already applied
	Failed     int // deliveries whose effect or handler returned an error
	Forgotten  int // dedup entries removed by TTL
}

// Consumer is the idempotent consumer: a sim.Handler, so it is the handler
// of a queue consumer, a consumer-group member, a pub/sub subscriber or
// anything else that delivers through sim.Delivery. Each Handle is one
// memdb write transaction: the TTL expiry, the dedup lookup, the effect
// and the dedup entry commit or abort together, so a crash or an error
// before the commit leaves neither the effect nor the entry, and the
// redelivery applies the effect once. It records the effect with
// Delivery.Apply once the transaction committed and an absorbed duplicate
// with Delivery.Skip, so the ledger sees exactly what it did. The naive
// mode (NoDedup) applies every delivery. A dedup lookup costs O(key
// length); the table holds one entry per applied key until TTL forgets it.
//
// A Consumer is not a component: it runs when a model hands it a delivery.
// It implements sim.Timed by asking its Handler, if any.
type Consumer struct {
	cfg   ConsumerConfig
	env   *sim.Env
	db    *memdb.MemDB
	stats ConsumerStats
}

// NewConsumer returns an idempotent consumer of the world w.
func NewConsumer(w *sim.World, cfg ConsumerConfig) (*Consumer, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: a consumer needs a world", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	db := cfg.DB
	if cfg.Service != nil {
		if err := cfg.Service.sameWorld(w, "a consumer"); err != nil {
			return nil, err
		}
		db = cfg.Service.db
	}
	if cfg.BusinessKey == nil {
		cfg.BusinessKey = BusinessKey
	}
	return &Consumer{cfg: cfg, env: w.Env(), db: db}, nil
}

// Name returns the consumer's name.
func (c *Consumer) Name() string { return c.cfg.Name }

// DB returns the database the consumer writes.
func (c *Consumer) DB() *memdb.MemDB { return c.db }

// Stats returns the consumer's counters.
func (c *Consumer) Stats() ConsumerStats { return c.stats }

// Key returns the dedup key of m ("" for the naive consumer).
func (c *Consumer) Key(m sim.Message) string {
	switch c.cfg.Dedup {
	case ByMessageID:
		return m.ID.String()
	case ByBusinessKey:
		k := c.cfg.BusinessKey(m)
		if c.cfg.Bucket > 0 {
			k += "@" + strconv.FormatInt(int64(m.Created/c.cfg.Bucket), 10)
		}
		return k
	}
	return ""
}

// Duration returns the Handler's processing time for d (sim.Timed), 0
// for an Effect.
func (c *Consumer) Duration(d *sim.Delivery) sim.Tick {
	if c.cfg.Handler != nil {
		return sim.DurationOf(c.cfg.Handler, d)
	}
	return 0
}

// Handle applies d unless its dedup key was already recorded, in one write
// transaction. A duplicate is skipped (Delivery.Skip) and returns nil. An
// effect error aborts the transaction and is returned wrapped, keeping its
// failure class (sim.Classify); the model must not acknowledge d then.
func (c *Consumer) Handle(d *sim.Delivery) error {
	c.stats.Handled++
	dedup := c.cfg.Dedup != NoDedup
	txn := c.db.Txn(true)
	defer txn.Abort()
	forgot := 0
	if dedup && c.cfg.TTL > 0 {
		n, err := c.expire(txn, d.Now())
		if err != nil {
			return err
		}
		forgot = n
	}
	var key string
	if dedup {
		key = c.Key(d.Msg)
		obj, err := txn.First(TableProcessed, IndexID, c.cfg.Name, key)
		if err != nil {
			return fmt.Errorf("%w: dedup lookup: %w", ErrDB, err)
		}
		if obj != nil {
			c.commit(txn, forgot)
			c.stats.Duplicates++
			why := ""
			if c.env.Trace.Detailed() {
				why = c.cfg.Name + " already applied " + strconv.Quote(key) + " as " + obj.(*Processed).Msg.String()
			}
			d.Skip(why)
			return nil
		}
	}
	var herr error
	if c.cfg.Effect != nil {
		if err := c.cfg.Effect(txn, d); err != nil {
			c.stats.Failed++
			return fmt.Errorf("outbox: consumer %s: effect of %s: %w", c.cfg.Name, d.Msg.ID, err)
		}
	} else {
		before := d.Effects()
		herr = c.cfg.Handler.Handle(d)
		if herr != nil {
			c.stats.Failed++
		}
		if d.Effects() == before {
			c.commit(txn, forgot) // nothing applied: keep only the expiry
			return herr
		}
	}
	if dedup {
		if err := txn.Insert(TableProcessed, &Processed{Consumer: c.cfg.Name, Key: key, Msg: d.Msg.ID, Seen: d.Now()}); err != nil {
			return fmt.Errorf("%w: dedup insert: %w", ErrDB, err)
		}
	}
	c.commit(txn, forgot)
	c.stats.Applied++
	if c.cfg.Effect != nil {
		d.Apply(c.cfg.Note)
	}
	return herr
}

// commit commits txn and counts the entries it forgot.
func (c *Consumer) commit(txn *memdb.Txn, forgot int) {
	txn.Commit()
	c.stats.Forgotten += forgot
}

// expire deletes, in txn, the consumer's dedup entries whose age has
// reached TTL (recorded at now-TTL or earlier), oldest first; it costs
// O(forgotten).
func (c *Consumer) expire(txn *memdb.Txn, now sim.Tick) (int, error) {
	cutoff := now - c.cfg.TTL
	if cutoff < 0 {
		return 0, nil
	}
	it, err := txn.LowerBound(TableProcessed, IndexSeen, c.cfg.Name, sim.Tick(0))
	if err != nil {
		return 0, fmt.Errorf("%w: dedup expiry: %w", ErrDB, err)
	}
	var old []*Processed
	for obj := it.Next(); obj != nil; obj = it.Next() {
		p := obj.(*Processed)
		if p.Consumer != c.cfg.Name || p.Seen > cutoff {
			break
		}
		old = append(old, p)
	}
	for _, p := range old {
		if err := txn.Delete(TableProcessed, p); err != nil {
			return 0, fmt.Errorf("%w: dedup expiry: %w", ErrDB, err)
		}
	}
	return len(old), nil
}

// Expire forgets, in one write transaction, the dedup entries whose age
// has reached TTL at the current tick, as the next Handle would, and
// returns how many it removed.
func (c *Consumer) Expire() (int, error) {
	if c.cfg.TTL <= 0 || c.cfg.Dedup == NoDedup {
		return 0, nil
	}
	txn := c.db.Txn(true)
	defer txn.Abort()
	n, err := c.expire(txn, c.env.Now())
	if err != nil {
		return 0, err
	}
	c.commit(txn, n)
	return n, nil
}
