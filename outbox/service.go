package outbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/sim"
)

// Sentinel errors of package outbox. ErrInvalidConfig wraps
// sim.ErrInvalidConfig.
var (
	ErrInvalidConfig = sim.Sentinel("outbox: invalid config", sim.ErrInvalidConfig)
	ErrInvalidOrder  = errors.New("outbox: invalid order")
	ErrInvalidEvent  = errors.New("outbox: invalid event")
	ErrNotFound      = errors.New("outbox: no such row")
	ErrNotDead       = errors.New("outbox: row is not a dead letter")
	ErrCrashed       = errors.New("outbox: crashed")
	ErrDB            = errors.New("outbox: database error")
	// ErrUnavailable reports a publish refused by fault point
	// broker.unavailable at a writer or a relay. It wraps
	// sim.ErrUnavailable, so errors.Is(err, sim.ErrUnavailable) holds for
	// it as for every model's "broker unavailable".
	ErrUnavailable = sim.Sentinel("outbox: broker unavailable", sim.ErrUnavailable)
)

// Trace kinds the outbox models emit besides the core ones.
const (
	KindClaimed   sim.Kind = "claimed"    // a relay leased an outbox row
	KindMarked    sim.Kind = "marked"     // a relay marked an outbox row sent
	KindReleased  sim.Kind = "released"   // a relay gave back a lease without publishing
	KindLeaseLost sim.Kind = "lease_lost" // a relay whose lease ran out left a row another relay had claimed alone
	KindCleaned   sim.Kind = "cleaned"    // cleanup removed processed rows
	KindWritten   sim.Kind = "written"    // a dual-write writer committed an order (an outbox write is "stored")
)

// Table and index names of the service database.
const (
	TableOrders = "orders"
	TableOutbox = "outbox"

	IndexID      = "id"        // primary key, every table
	IndexPending = "pending"   // outbox rows not yet sent and not dead, by id
	IndexSent    = "processed" // sent rows by (processed tick, id)
	IndexDead    = "dead"      // dead-letter rows by id
)

// The order event the writers produce.
const (
	AggregateCustomer = "customer"
	EventOrderPlaced  = "order.placed"
)

// State is where an outbox row stands.
type State uint8

// The states of an outbox row.
const (
	StatePending State = iota // not yet sent; relays pick it up
	StateSent                 // published and marked
	StateDead                 // failed MaxAttempts times; waits for a manual retry
)

var rowStateNames = [...]string{"pending", "sent", "dead"}

// String returns the state's name.
func (s State) String() string {
	if int(s) < len(rowStateNames) {
		return rowStateNames[s]
	}
	return "unknown"
}

// Row is one outbox row. A Row stored in the database is never modified:
// every change inserts a modified copy.
type Row struct {
	ID            uint64 // increasing from 1 in write order, with gaps where a transaction aborted; relays publish in this order
	AggregateType string
	AggregateID   string // the message key
	EventType     string
	Payload       []byte
	Msg           sim.ID // the message this row becomes; the same on every publish
	Attempts      int    // failed publish attempts
	Created       sim.Tick
	Processed     sim.Tick // when it was marked sent (StateSent only)
	RetryAfter    sim.Tick // not published before this tick
	ClaimedBy     string   // the relay holding the lease, "" when free
	LeaseUntil    sim.Tick // the lease is void from this tick on
	State         State
	LastError     string
}

// Message returns the message the row becomes when published: its stable ID,
// the aggregate id as key, the payload as body and the event type as type.
func (r *Row) Message(source string) sim.Message {
	return sim.Message{ID: r.Msg, Key: r.AggregateID, Body: r.Payload,
		Headers: sim.Headers{Type: r.EventType, Source: source}, Created: r.Created}
}

// Order is one row of the business table.
type Order struct {
	ID       uint64 // increasing from 1 in write order, with gaps where a transaction aborted
	Customer string
	Amount   int64
	Created  sim.Tick
}

// OrderPlaced is the payload of an "order.placed" event, encoded as JSON.
type OrderPlaced struct {
	OrderID  uint64 `json:"order_id"`
	Customer string `json:"customer"`
	Amount   int64  `json:"amount"`
}

// DecodeOrderPlaced decodes the payload of an "order.placed" event.
func DecodeOrderPlaced(body []byte) (OrderPlaced, error) {
	var p OrderPlaced
	if err := json.Unmarshal(body, &p); err != nil {
		return p, fmt.Errorf("%w: payload: %w", ErrInvalidEvent, err)
	}
	return p, nil
}

func encodeOrderPlaced(o Order) []byte {
	b := make([]byte, 0, 64)
	b = append(b, `{"order_id":`...)
	b = strconv.AppendUint(b, o.ID, 10)
	b = append(b, `,"customer":`...)
	c, _ := json.Marshal(o.Customer)
	b = append(b, c...)
	b = append(b, `,"amount":`...)
	b = strconv.AppendInt(b, o.Amount, 10)
	return append(b, '}')
}

// Event is what a business transaction asks to publish.
type Event struct {
	AggregateType string
	AggregateID   string // required; the message key
	EventType     string // required
	Payload       []byte
}

// rowIndex indexes *Row without reflection.
type rowIndex uint8

const (
	rowByID rowIndex = iota
	rowPending
	rowSent
	rowDead
)

func be(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

func (x rowIndex) FromObject(obj any) (bool, []byte, error) {
	r, ok := obj.(*Row)
	if !ok {
		return false, nil, fmt.Errorf("%w: table %s holds *Row, got %T", ErrDB, TableOutbox, obj)
	}
	switch x {
	case rowPending:
		if r.State != StatePending {
			return false, nil, nil
		}
	case rowDead:
		if r.State != StateDead {
			return false, nil, nil
		}
	case rowSent:
		if r.State != StateSent {
			return false, nil, nil
		}
		return true, be(be(make([]byte, 0, 16), uint64(r.Processed)), r.ID), nil
	}
	return true, be(make([]byte, 0, 8), r.ID), nil
}

func (x rowIndex) FromArgs(args ...any) ([]byte, error) { return uintArgs(args) }

// uintArgs encodes integer arguments big-endian, one after the other.
func uintArgs(args []any) ([]byte, error) {
	out := make([]byte, 0, 8*len(args))
	for _, a := range args {
		var v uint64
		switch x := a.(type) {
		case uint64:
			v = x
		case sim.Tick:
			v = uint64(x)
		case int:
			v = uint64(x)
		case sim.ID:
			v = uint64(x)
		default:
			return nil, fmt.Errorf("%w: index argument %T is not an integer", ErrDB, a)
		}
		out = be(out, v)
	}
	return out, nil
}

type orderIndex struct{}

func (orderIndex) FromObject(obj any) (bool, []byte, error) {
	o, ok := obj.(*Order)
	if !ok {
		return false, nil, fmt.Errorf("%w: table %s holds *Order, got %T", ErrDB, TableOrders, obj)
	}
	return true, be(make([]byte, 0, 8), o.ID), nil
}

func (orderIndex) FromArgs(args ...any) ([]byte, error) { return uintArgs(args) }

// Schema returns the service database schema: the orders table, the outbox
// table, the dedup table of the consumers that keep their entries in the
// service's database (ConsumerConfig.Service) and the extra business
// tables.
func Schema(extra ...*memdb.TableSchema) *memdb.DBSchema {
	s := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		TableProcessed: processedTable(),
		TableOrders: {Name: TableOrders, Indexes: map[string]*memdb.IndexSchema{
			IndexID: {Name: IndexID, Unique: true, Indexer: orderIndex{}},
		}},
		TableOutbox: {Name: TableOutbox, Indexes: map[string]*memdb.IndexSchema{
			IndexID:      {Name: IndexID, Unique: true, Indexer: rowByID},
			IndexPending: {Name: IndexPending, Unique: true, AllowMissing: true, Indexer: rowPending},
			IndexSent:    {Name: IndexSent, Unique: true, AllowMissing: true, Indexer: rowSent},
			IndexDead:    {Name: IndexDead, Unique: true, AllowMissing: true, Indexer: rowDead},
		}},
	}}
	for _, t := range extra {
		if t != nil {
			s.Tables[t.Name] = t
		}
	}
	return s
}

// Config configures a Service.
type Config struct {
	// Name names the service; trace Where is "outbox:"+Name. Required.
	Name string
	// Tables are extra business tables for Update callers.
	Tables []*memdb.TableSchema
	// ChangeLog records every committed outbox insert (from memdb change
	// tracking) for CDC relays; it costs one slice entry per row until every
	// CDC relay has committed past it.
	ChangeLog bool
	// CleanupAfter, when positive, removes every sent row processed at
	// least that many ticks ago, once per tick in the observer phase,
	// whichever relay marked it; it costs O(rows removed) per tick.
	CleanupAfter sim.Tick
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("%w: a service needs a name", ErrInvalidConfig)
	}
	for _, t := range c.Tables {
		if t == nil {
			return fmt.Errorf("%w: nil table schema", ErrInvalidConfig)
		}
		if t.Name == TableOrders || t.Name == TableOutbox || t.Name == TableProcessed {
			return fmt.Errorf("%w: table name %q is reserved", ErrInvalidConfig, t.Name)
		}
	}
	if c.CleanupAfter < 0 {
		return fmt.Errorf("%w: cleanup age %d is negative", ErrInvalidConfig, c.CleanupAfter)
	}
	return nil
}

// Metrics are the outbox counters of a service. Pending, Sent and
// DeadLetters are current row counts; the rest are totals since the start.
type Metrics struct {
	Pending     int // rows not yet sent and not dead
	Sent        int // sent rows still in the table
	DeadLetters int // rows waiting for a manual retry
	Written     int // rows ever written
	Published   int // successful publishes, re-publishes included
	Marked      int // rows marked sent
	Failed      int // failed publish attempts
	Retried     int // dead letters reset by hand
	Cleaned     int // sent rows removed by cleanup
	RelayCrash  int // relay crashes
	LastLag     sim.Tick
	MaxLag      sim.Tick
	LagSum      sim.Tick // over every publish
	LagCount    int
}

// Duplicates returns how many publishes repeated a row that was already
// published; it is exact once every published row has been marked.
func (m Metrics) Duplicates() int { return m.Published - m.Marked }

// MeanLag returns the mean relay lag (publish tick minus row creation tick)
// over every publish, or 0 before the first.
func (m Metrics) MeanLag() float64 {
	if m.LagCount == 0 {
		return 0
	}
	return float64(m.LagSum) / float64(m.LagCount)
}

type change struct {
	lsn uint64
	row *Row
}

// Service is a simulated service with its own memdb database, bound to one
// World. It is passive (a database, not a component): writers, relays,
// commanders and consumers call into it. It is driven by one goroutine.
//
// Every outbox row a committed transaction writes is a "stored" trace
// event (Msg, Key, Type, Where "outbox:"+Name): from then on the ledger
// holds the row's message pending at the outbox until a relay hands it to
// a broker, whose own event moves it on.
type Service struct {
	name    string
	where   string
	w       *sim.World
	env     *sim.Env
	db      *memdb.MemDB
	orderID uint64
	rowID   uint64
	m       Metrics
	added   []*Row // rows appended by the running transaction, reused

	changeLog bool
	log       []change // committed outbox inserts, lsn ascending
	nextLSN   uint64   // lsn of the next change, from 1
	readers   []*CDCRelay
}

// New returns a service of the world w with an empty database. With
// CleanupAfter it adds its cleaner to w as "outbox:"+Name+"/cleanup"
// (observer phase).
func New(w *sim.World, cfg Config) (*Service, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: a service needs a world", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	db, err := memdb.NewMemDB(Schema(cfg.Tables...))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	s := &Service{name: cfg.Name, where: "outbox:" + cfg.Name, w: w, env: w.Env(), db: db,
		changeLog: cfg.ChangeLog, nextLSN: 1}
	if cfg.CleanupAfter > 0 {
		if err := w.Add(s.where+"/cleanup", &cleaner{s: s, after: cfg.CleanupAfter}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// cleaner removes a service's old sent rows once per tick.
type cleaner struct {
	s     *Service
	after sim.Tick
}

// Phase places the cleaner after every broker, relay and consumer.
func (c *cleaner) Phase() sim.Phase { return sim.PhaseObserver }

// Step removes the sent rows processed at least CleanupAfter ticks ago.
func (c *cleaner) Step(sim.Tick) { _, _ = c.s.Cleanup(c.after, 0) }

// sameWorld reports an error unless s belongs to the world w.
func (s *Service) sameWorld(w *sim.World, what string) error {
	if w == nil {
		return fmt.Errorf("%w: %s needs a world", ErrInvalidConfig, what)
	}
	if s.w != w {
		return fmt.Errorf("%w: %s and service %q belong to different worlds", ErrInvalidConfig, what, s.name)
	}
	return nil
}

// Name returns the service name.
func (s *Service) Name() string { return s.name }

// Where returns the trace component name, "outbox:"+Name.
func (s *Service) Where() string { return s.where }

// World returns the world the service belongs to.
func (s *Service) World() *sim.World { return s.w }

// DB returns the database, for reads and for tests; writes to the outbox
// table must go through the service so its counters stay true.
func (s *Service) DB() *memdb.MemDB { return s.db }

// Metrics returns the counters.
func (s *Service) Metrics() Metrics { return s.m }

// Tx is one write transaction of the service. It is valid only inside the
// function given to Update.
type Tx struct {
	s   *Service
	txn *memdb.Txn
}

// Txn returns the underlying memdb transaction, for business tables.
func (tx *Tx) Txn() *memdb.Txn { return tx.txn }

// InsertOrder inserts a new order with the next order id. The id is taken
// from the service's sequence at once and not given back if the
// transaction aborts, so ids increase in write order with gaps, as a
// database sequence's do.
func (tx *Tx) InsertOrder(customer string, amount int64) (Order, error) {
	if customer == "" || amount <= 0 {
		return Order{}, fmt.Errorf("%w: customer %q, amount %d", ErrInvalidOrder, customer, amount)
	}
	tx.s.orderID++
	o := &Order{ID: tx.s.orderID, Customer: customer, Amount: amount, Created: tx.s.env.Now()}
	if err := tx.txn.Insert(TableOrders, o); err != nil {
		return Order{}, fmt.Errorf("%w: insert order: %w", ErrDB, err)
	}
	return *o, nil
}

// Append writes an outbox row for e in this transaction. It allocates the
// row's id from the service's sequence and the row's message (and so its
// stable sim.ID) now; when the transaction commits, the row is a "stored"
// event; if it aborts, no event ever names that message, the ledger never
// hears of it, and its row id is never used: row ids increase in write
// order with gaps, as a database sequence's do, so a relay must never
// expect the next id to be the last one plus one.
func (tx *Tx) Append(e Event) (Row, error) {
	if e.AggregateID == "" || e.EventType == "" {
		return Row{}, fmt.Errorf("%w: aggregate id and event type are required", ErrInvalidEvent)
	}
	s := tx.s
	m := s.env.NewMessage(e.AggregateID, e.Payload, sim.Headers{Type: e.EventType, Source: s.name})
	s.rowID++
	r := &Row{ID: s.rowID, AggregateType: e.AggregateType, AggregateID: e.AggregateID, EventType: e.EventType,
		Payload: e.Payload, Msg: m.ID, Created: m.Created}
	if err := tx.txn.Insert(TableOutbox, r); err != nil {
		return Row{}, fmt.Errorf("%w: insert outbox row: %w", ErrDB, err)
	}
	s.added = append(s.added, r)
	return *r, nil
}

// Update runs fn in one write transaction and commits it when fn returns
// nil; otherwise it aborts, so no write of fn survives, and returns fn's
// error. fn writes business tables through tx.Txn() and outbox rows only
// through tx.Append, so the counters, the change log and the "stored"
// events stay true; objects already in the database must be copied, never
// modified.
func (s *Service) Update(fn func(tx *Tx) error) error {
	return s.update(fn, nil, "", nil)
}

// update runs fn, then beforeCommit (a crash point), then commits, and
// emits a "stored" event for every outbox row fn appended, by actor, with
// note(row) as its detail when a sink shows details.
func (s *Service) update(fn func(tx *Tx) error, beforeCommit func() error, actor string, note func(r *Row) string) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	if s.changeLog {
		txn.TrackChanges()
	}
	s.added = s.added[:0]
	tx := &Tx{s: s, txn: txn}
	err := fn(tx)
	if err == nil && beforeCommit != nil {
		err = beforeCommit()
	}
	if err != nil {
		s.added = s.added[:0]
		return err
	}
	rows := len(s.added)
	var created []*Row
	if s.changeLog && rows > 0 {
		for _, c := range txn.Changes() {
			if c.Table == TableOutbox && c.Created() {
				created = append(created, c.After.(*Row))
			}
		}
	}
	txn.Commit()
	s.m.Written += rows
	s.m.Pending += rows
	for _, r := range created {
		s.log = append(s.log, change{lsn: s.nextLSN, row: r})
		s.nextLSN++
	}
	if rows > 0 {
		detailed := s.env.Trace.Detailed()
		for i, r := range s.added {
			ev := sim.Event{Tick: s.env.Now(), Kind: sim.KindStored, Where: s.where, Actor: actor, Msg: r.Msg, Key: r.AggregateID, Type: r.EventType}
			if detailed {
				if note != nil {
					ev.Detail = note(r)
				} else {
					ev.Detail = "row " + strconv.FormatUint(r.ID, 10)
				}
			}
			s.added[i] = nil
			s.env.Trace.EmitRef(&ev)
		}
		s.added = s.added[:0]
	}
	return nil
}

func orderEvent(o Order) Event {
	return Event{AggregateType: AggregateCustomer, AggregateID: o.Customer, EventType: EventOrderPlaced,
		Payload: encodeOrderPlaced(o)}
}

// PlaceOrder inserts an order and its "order.placed" outbox row in one
// transaction: either both are stored or neither is.
func (s *Service) PlaceOrder(customer string, amount int64) (Order, Row, error) {
	var o Order
	var r Row
	err := s.Update(func(tx *Tx) error {
		var err error
		if o, err = tx.InsertOrder(customer, amount); err != nil {
			return err
		}
		r, err = tx.Append(orderEvent(o))
		return err
	})
	if err != nil {
		return Order{}, Row{}, err
	}
	return o, r, nil
}

// OrderRequest is one order to place.
type OrderRequest struct {
	Customer string
	Amount   int64
}

// PlaceOrders places every order with its outbox row in one transaction
// (a group commit): all are stored or none is.
func (s *Service) PlaceOrders(reqs []OrderRequest) ([]Order, error) {
	out := make([]Order, 0, len(reqs))
	err := s.Update(func(tx *Tx) error {
		for _, q := range reqs {
			o, err := tx.InsertOrder(q.Customer, q.Amount)
			if err != nil {
				return err
			}
			if _, err := tx.Append(orderEvent(o)); err != nil {
				return err
			}
			out = append(out, o)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Order returns the order with the given id.
func (s *Service) Order(id uint64) (Order, bool) {
	o, err := s.db.Txn(false).First(TableOrders, IndexID, id)
	if err != nil || o == nil {
		return Order{}, false
	}
	return *o.(*Order), true
}

// Orders returns every order in id order; it costs O(orders).
func (s *Service) Orders() []Order {
	var out []Order
	it, err := s.db.Txn(false).Get(TableOrders, IndexID)
	if err != nil {
		return nil
	}
	for o := it.Next(); o != nil; o = it.Next() {
		out = append(out, *o.(*Order))
	}
	return out
}

// Row returns the outbox row with the given id.
func (s *Service) Row(id uint64) (Row, bool) {
	r, err := s.db.Txn(false).First(TableOutbox, IndexID, id)
	if err != nil || r == nil {
		return Row{}, false
	}
	return *r.(*Row), true
}

func (s *Service) rows(index string, max int) []Row {
	var out []Row
	it, err := s.db.Txn(false).Get(TableOutbox, index)
	if err != nil {
		return nil
	}
	for r := it.Next(); r != nil && (max <= 0 || len(out) < max); r = it.Next() {
		out = append(out, *r.(*Row))
	}
	return out
}

// Rows returns every outbox row in id order; it costs O(rows).
func (s *Service) Rows() []Row { return s.rows(IndexID, 0) }

// PendingRows returns up to max unsent rows in id order (max <= 0: all).
func (s *Service) PendingRows(max int) []Row { return s.rows(IndexPending, max) }

// DeadLetters is the dead-letter view: every row that failed MaxAttempts
// times, in id order. It costs O(dead letters).
func (s *Service) DeadLetters() []Row { return s.rows(IndexDead, 0) }

// Retry resets the dead-letter row id by hand: attempts back to 0, no
// back-off, no lease, pending again. The row keeps its message ID; it is
// a "stored" event again, so the ledger holds the message pending at the
// outbox until a relay publishes it.
func (s *Service) Retry(id uint64) error {
	var r Row
	err := s.Update(func(tx *Tx) error {
		obj, err := tx.txn.First(TableOutbox, IndexID, id)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrDB, err)
		}
		if obj == nil {
			return fmt.Errorf("%w: %d", ErrNotFound, id)
		}
		r = *obj.(*Row)
		if r.State != StateDead {
			return fmt.Errorf("%w: row %d is %s", ErrNotDead, id, r.State)
		}
		r.State, r.Attempts, r.RetryAfter, r.ClaimedBy, r.LeaseUntil = StatePending, 0, 0, "", 0
		n := r
		if err := tx.txn.Insert(TableOutbox, &n); err != nil {
			return fmt.Errorf("%w: %w", ErrDB, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.m.DeadLetters--
	s.m.Pending++
	s.m.Retried++
	ev := sim.Event{Kind: sim.KindStored, Where: s.where, Msg: r.Msg, Key: r.AggregateID, Type: r.EventType}
	if s.env.Trace.Detailed() {
		ev.Detail = "row " + strconv.FormatUint(id, 10) + " reset by hand (retry of a dead row)"
	}
	s.env.Emit(ev)
	return nil
}

// Cleanup removes up to max sent rows (max <= 0: all) that were processed
// at least k ticks ago, oldest first, in one transaction, and returns how
// many it removed. It costs O(removed) thanks to the processed index.
func (s *Service) Cleanup(k sim.Tick, max int) (int, error) {
	if k < 0 {
		return 0, fmt.Errorf("%w: cleanup age %d is negative", ErrInvalidConfig, k)
	}
	cutoff := s.env.Now() - k
	n := 0
	err := s.Update(func(tx *Tx) error {
		it, err := tx.txn.Get(TableOutbox, IndexSent)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrDB, err)
		}
		var victims []*Row
		for obj := it.Next(); obj != nil && (max <= 0 || len(victims) < max); obj = it.Next() {
			r := obj.(*Row)
			if r.Processed > cutoff {
				break
			}
			victims = append(victims, r)
		}
		for _, r := range victims {
			if err := tx.txn.Delete(TableOutbox, r); err != nil {
				return fmt.Errorf("%w: %w", ErrDB, err)
			}
		}
		n = len(victims)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		s.m.Sent -= n
		s.m.Cleaned += n
		ev := sim.Event{Kind: KindCleaned, Where: s.where}
		if s.env.Trace.Detailed() {
			ev.Detail = strconv.Itoa(n) + " processed row(s) removed"
		}
		s.env.Emit(ev)
	}
	return n, nil
}

// trim drops change-log entries every CDC relay has committed past.
func (s *Service) trim() {
	if len(s.readers) == 0 || len(s.log) == 0 {
		return
	}
	min := s.readers[0].committed
	for _, r := range s.readers[1:] {
		if r.committed < min {
			min = r.committed
		}
	}
	k := 0
	for k < len(s.log) && s.log[k].lsn <= min {
		k++
	}
	if k == 0 {
		return
	}
	if k == len(s.log) {
		s.log = s.log[:0]
		return
	}
	s.log = append(s.log[:0], s.log[k:]...)
}
