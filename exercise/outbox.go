package exercise

import (
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/go-memdb"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// Outbox is the solution of exercise 1: the order function and the relay
// of a transactional outbox.
type Outbox struct {
	// PlaceOrder stores an order of amount and, in the same transaction,
	// its outbox row (the event "order placed"); it returns the order's
	// id.
	PlaceOrder func(db *Store, amount int) (int, error)
	// Relay publishes the unsent outbox rows in id order and marks each
	// row sent only after its publish succeeded. A broker error ends the
	// run and is returned; the rest waits for the next run.
	Relay func(db *Store, broker Broker) error
}

// Exercise returns "outbox".
func (Outbox) Exercise() string { return "outbox" }

// ErrBrokerDown is what Broker.Publish returns while the broker is
// unavailable.
var ErrBrokerDown = errors.New("exercise: broker unavailable")

// Broker publishes events. Publish returns an error wrapping
// ErrBrokerDown when the broker is unavailable; the event was then not
// published.
type Broker interface {
	Publish(payload string) error
}

// Order is a row of the orders table.
type Order struct {
	ID     int
	Amount int
}

// OutboxRow is a row of the outbox table: the event of one order, to be
// published by the relay.
type OutboxRow struct {
	ID      int
	OrderID int
	Payload string
	Sent    bool
}

// Store is the service's database (go-memdb) with two tables, orders and
// outbox. Every change goes through a Txn; nothing is stored until its
// Commit.
type Store struct {
	db  *memdb.MemDB
	r   *Run
	who string // "PlaceOrder" or "Relay": the function running now
}

// Txn is one write transaction of a Store. Call Commit to store its
// changes; Abort (safe to defer, and after Commit) drops them.
type Txn struct {
	s    *Store
	t    *memdb.Txn
	done bool
	// marked are the rows MarkSent marked in this transaction.
	marked []int
}

var storeSchema = &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
	"orders": {Name: "orders", Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &memdb.IntFieldIndex{Field: "ID"}}}},
	"outbox": {Name: "outbox", Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &memdb.IntFieldIndex{Field: "ID"}}}},
}}

func newStore(r *Run) *Store {
	db, err := memdb.NewMemDB(storeSchema)
	if err != nil {
		panic(err) // the schema is fixed and valid
	}
	return &Store{db: db, r: r}
}

// actor is the name the trace gives the function running now: the relay
// is "relay" in every line of the trace, as the broker and the fault
// points name it.
func (s *Store) actor() string {
	if s.who == "Relay" {
		return "relay"
	}
	return s.who
}

// Txn starts a write transaction.
func (s *Store) Txn() *Txn {
	s.r.call("runs", s.who+" did not finish: it started more than 5000 transactions")
	return &Txn{s: s, t: s.db.Txn(true)}
}

// next returns the id after the highest one in table.
func (t *Txn) next(table string) int {
	raw, err := t.t.Last(table, "id")
	if err != nil || raw == nil {
		return 1
	}
	switch v := raw.(type) {
	case *Order:
		return v.ID + 1
	case *OutboxRow:
		return v.ID + 1
	}
	return 1
}

func (t *Txn) live(op string) {
	if t.done {
		panic(fmt.Sprintf("exercise: %s on a transaction that was already committed or aborted", op))
	}
}

// InsertOrder adds an order of amount and returns its id.
func (t *Txn) InsertOrder(amount int) int {
	t.live("InsertOrder")
	o := &Order{ID: t.next("orders"), Amount: amount}
	if err := t.t.Insert("orders", o); err != nil {
		panic(err)
	}
	return o.ID
}

// InsertOutbox adds an unsent outbox row for the order and returns the
// row's id.
func (t *Txn) InsertOutbox(orderID int, payload string) int {
	t.live("InsertOutbox")
	row := &OutboxRow{ID: t.next("outbox"), OrderID: orderID, Payload: payload}
	if err := t.t.Insert("outbox", row); err != nil {
		panic(err)
	}
	return row.ID
}

// Unsent returns the unsent outbox rows in id order. Cost: O(rows).
func (t *Txn) Unsent() []OutboxRow {
	t.live("Unsent")
	it, err := t.t.Get("outbox", "id")
	if err != nil {
		panic(err)
	}
	var out []OutboxRow
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if row := raw.(*OutboxRow); !row.Sent {
			out = append(out, *row)
		}
	}
	return out
}

// MarkSent marks row id as sent. Marking a row that does not exist is a
// mistake and panics.
func (t *Txn) MarkSent(id int) {
	t.live("MarkSent")
	raw, err := t.t.First("outbox", "id", id)
	if err != nil || raw == nil {
		panic(fmt.Sprintf("exercise: MarkSent(%d): no such outbox row", id))
	}
	row := *raw.(*OutboxRow)
	row.Sent = true
	if err := t.t.Insert("outbox", &row); err != nil {
		panic(err)
	}
	t.marked = append(t.marked, id)
}

// Commit stores the transaction's changes. A process may crash right
// after a commit: what was committed stays, the rest of the function
// does not run.
func (t *Txn) Commit() {
	t.live("Commit")
	t.done = true
	t.t.Commit()
	t.s.committed(t)
}

// Abort drops the transaction's changes; after Commit it does nothing.
func (t *Txn) Abort() {
	if !t.done {
		t.done = true
		t.t.Abort()
	}
}

// snapshot returns every order and outbox row, in id order.
func (s *Store) snapshot() ([]Order, []OutboxRow) {
	t := s.db.Txn(false)
	var os []Order
	var rows []OutboxRow
	it, _ := t.Get("orders", "id")
	for raw := it.Next(); raw != nil; raw = it.Next() {
		os = append(os, *raw.(*Order))
	}
	it, _ = t.Get("outbox", "id")
	for raw := it.Next(); raw != nil; raw = it.Next() {
		rows = append(rows, *raw.(*OutboxRow))
	}
	return os, rows
}

// outboxRun is the harness of exercise 1.
type outboxRun struct {
	r     *Run
	s     *Store
	pub   map[int]int  // successful publishes per row
	fails map[int]bool // rows whose last publish attempt failed
	early map[int]bool // rows marked sent before any publish
	// Within one Relay call: the last row published, and the row whose
	// publish failed (0 while none did).
	last  int
	broke int
	// q is the broker's queue; msgs is the message of each row, so that a
	// re-publish sends the same message again (a duplicate, not a new
	// event).
	q    *queue.Queue
	msgs map[int]sim.Message
}

// byPayload returns the outbox row whose payload is p, or nil.
func (o *outboxRun) byPayload(p string) *OutboxRow {
	_, rows := o.s.snapshot()
	for i := range rows {
		if rows[i].Payload == p {
			return &rows[i]
		}
	}
	return nil
}

// Publish is the broker the relay is handed.
func (o *outboxRun) Publish(payload string) error {
	o.r.call("runs", "Relay did not finish: it published more than 5000 times")
	row := o.byPayload(payload)
	id := 0
	if row != nil {
		id = row.ID
	}
	if f, ok := o.r.fault(faults.BrokerUnavailable, faults.Context{Where: "broker:orders", Consumer: "relay"}); ok {
		o.fails[id] = true
		if o.early[id] {
			o.r.fail("mark-after-publish", "row %d marked sent although the publish failed", id)
		}
		if o.broke == 0 {
			o.broke = id
		}
		o.r.note("broker:orders", "relay", "publish of row %d failed: broker unavailable (%s)", id, f.Rule)
		return fmt.Errorf("publish row %d: %w", id, ErrBrokerDown)
	}
	if row == nil {
		o.r.note("broker:orders", "relay", "published %q, which is no outbox row's payload", payload)
		return nil
	}
	switch {
	case o.broke != 0 && o.broke != id:
		o.r.fail("in-order", "row %d published after the publish of row %d failed in the same relay run: the relay must stop there, or the events leave out of order", id, o.broke)
	case id < o.last:
		o.r.fail("in-order", "row %d published after row %d: rows must leave in id order", id, o.last)
	}
	o.r.judged("in-order")
	o.last = id
	delete(o.early, id)
	m, ok := o.msgs[id]
	if !ok {
		m = o.r.env.NewMessage(fmt.Sprintf("order-%d", row.OrderID), []byte(payload), sim.Headers{Type: "order.placed", Source: "relay"})
		o.msgs[id] = m
	}
	if err := o.q.Publish(m); err != nil {
		panic(err) // the queue has no faults of its own and is never full
	}
	o.pub[id]++
	o.fails[id] = false
	o.r.note("broker:orders", "relay", "published row %d (order %d), copy %d", id, row.OrderID, o.pub[id])
	if _, ok := o.r.fault(faults.RelayCrashAfterPublish, faults.Context{Where: "service:shop", Consumer: "relay"}); ok {
		o.r.note("service:shop", "relay", "relay crashed after publishing row %d, before marking it", id)
		panic(crash{faults.RelayCrashAfterPublish})
	}
	return nil
}

// committed checks a commit: the orders and the outbox must match, and a
// row marked sent must have been published. Then a fault may crash the
// process right after it.
func (s *Store) committed(t *Txn) {
	r := s.r
	o := r.harness.(*outboxRun)
	for _, id := range t.marked {
		r.judged("mark-after-publish")
		switch {
		case o.fails[id]:
			r.fail("mark-after-publish", "row %d marked sent although the publish failed", id)
		case o.pub[id] == 0:
			// Judged when the publish is tried: a failure then is the
			// breach a student can see in the trace.
			o.early[id] = true
		}
	}
	orders, rows := s.snapshot()
	if len(t.marked) > 0 {
		r.note("service:shop", s.actor(), "commit: row(s) %v marked sent", t.marked)
	} else {
		r.note("service:shop", s.actor(), "commit: %d orders, %d outbox rows", len(orders), len(rows))
	}
	if s.who == "PlaceOrder" {
		if _, ok := r.fault(faults.WriterCrashAfterCommit, faults.Context{Where: "service:shop", Consumer: "PlaceOrder"}); ok {
			r.note("service:shop", "PlaceOrder", "the process crashed right after the commit")
			panic(crash{faults.WriterCrashAfterCommit})
		}
	}
}

// checkRows reports an order without its outbox row, or a row without
// its order.
func (o *outboxRun) checkRows() {
	orders, rows := o.s.snapshot()
	if len(orders)+len(rows) > 0 {
		o.r.judged("atomic-order")
	}
	has := map[int]bool{}
	for _, row := range rows {
		has[row.OrderID] = true
	}
	ids := map[int]bool{}
	for _, ord := range orders {
		ids[ord.ID] = true
		if !has[ord.ID] {
			o.r.fail("atomic-order", "order %d was stored without its event (crash between insert and outbox row)", ord.ID)
		}
	}
	for _, row := range rows {
		if !ids[row.OrderID] {
			o.r.fail("atomic-order", "outbox row %d announces order %d, which was never stored", row.ID, row.OrderID)
		}
	}
}

// lose books the event of row, never published by the end of the run,
// lost in the trace with its cause, so that a replay's ledger counts the
// loss the grader found: a row marked sent that no publish reached (its
// publish failed, or none was tried) is lost for good, and so is a row
// the relay never published although the broker was back.
func (o *outboxRun) lose(row OutboxRow) {
	m := o.r.env.NewMessage(fmt.Sprintf("order-%d", row.OrderID), []byte(row.Payload), sim.Headers{Type: "order.placed", Source: "relay"})
	cause, why := sim.CauseDeadRow, "never published by the relay"
	switch {
	case row.Sent && o.fails[row.ID]:
		cause, why = sim.CauseBrokerUnavailable, "marked sent, but its publish failed and no relay run tries it again"
	case row.Sent:
		cause, why = sim.CauseDualWrite, "marked sent, but never published"
	}
	ev := sim.Lost("service:shop", "relay", "", &m, cause)
	ev.Type = m.Headers.Type // the loss is the only event that names the message
	ev.Detail = fmt.Sprintf("row %d (order %d) %s", row.ID, row.OrderID, why)
	o.r.env.Emit(ev)
}

func runOutbox(r *Run, sol Solution) {
	s := sol.(Outbox)
	o := &outboxRun{r: r, pub: map[int]int{}, fails: map[int]bool{}, early: map[int]bool{}, msgs: map[int]sim.Message{}}
	r.harness = o
	var err error
	if o.q, err = queue.New(r.w, queue.Config{Name: "orders"}); err != nil {
		panic(err)
	}
	o.s = newStore(r)
	relay := func() {
		o.last, o.broke = 0, 0
		o.s.who = "Relay"
		var err error
		if c := r.student("runs", "Relay", func() { err = s.Relay(o.s, o) }); c == nil && err != nil && !errors.Is(err, ErrBrokerDown) {
			r.fail("none-lost", "Relay returned %q, which is not the broker's error", err)
		}
	}
	for t := sim.Tick(1); t <= 12; t++ {
		r.w.Tick()
		if t <= 6 {
			amount := 10 * int(t)
			o.s.who = "PlaceOrder"
			before, _ := o.s.snapshot()
			var id int
			var err error
			r.judged("stored")
			c := r.student("runs", "PlaceOrder", func() { id, err = s.PlaceOrder(o.s, amount) })
			after, _ := o.s.snapshot()
			switch {
			case c != nil:
				r.note("service:shop", "PlaceOrder", "PlaceOrder(%d) crashed", amount)
			case err != nil:
				r.fail("stored", "PlaceOrder(%d) returned an error: %v", amount, err)
			case len(after) != len(before)+1:
				r.fail("stored", "PlaceOrder(%d) returned, but %d orders were stored instead of 1", amount, len(after)-len(before))
			case after[len(after)-1].ID != id:
				r.fail("stored", "PlaceOrder(%d) returned id %d, but stored order %d", amount, id, after[len(after)-1].ID)
			default:
				r.note("service:shop", "PlaceOrder", "PlaceOrder(%d) stored order %d", amount, id)
			}
			o.checkRows()
		}
		if t%2 == 0 {
			relay()
		}
	}
	// The broker is back for good; the relay runs twice more.
	for _, rule := range r.ex.Plan.Rules {
		_ = r.inj.Disable(rule.Name)
	}
	for range 2 {
		r.w.Tick()
		r.note("service:shop", "relay", "relay run with the broker back")
		relay()
	}
	_, rows := o.s.snapshot()
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	for _, row := range rows {
		r.judged("none-lost")
		if o.early[row.ID] {
			r.fail("mark-after-publish", "row %d marked sent although it was never published", row.ID)
		}
		switch {
		case o.pub[row.ID] == 0:
			o.lose(row)
			r.fail("none-lost", "row %d (order %d) was never published, even by a second relay run", row.ID, row.OrderID)
		case !row.Sent:
			r.fail("none-lost", "row %d was published but is still unsent after a second relay run", row.ID)
		}
	}
}

func init() {
	register(&Exercise{
		Number: 1, Name: "outbox", Title: "Repair the outbox",
		Concept: "transactional outbox: the order and its event commit together; the relay marks a row sent only after the publish",
		Lesson:  "outbox-relay",
		Ticks:   20,
		Props: []Property{
			{"stored", "PlaceOrder stores the order and returns its id"},
			{"atomic-order", "an order is never stored without its event"},
			{"mark-after-publish", "a row is marked sent only after its publish succeeded"},
			{"in-order", "rows leave in id order; a failed publish ends the relay run"},
			{"none-lost", "after a second relay run every event is published and marked"},
			{"runs", "the functions run without panicking"},
		},
		Plan: faults.Plan{Rules: []faults.Rule{
			{Name: "crash-mid-order", Point: faults.WriterCrashAfterCommit, Probability: 0.15},
			{Name: "broker-outage", Point: faults.BrokerUnavailable, Probability: 0.2},
			{Name: "relay-crash", Point: faults.RelayCrashAfterPublish, Probability: 0.05},
		}},
		File: "solution.go",
		Bind: "exercise.Outbox{PlaceOrder: PlaceOrder, Relay: Relay}",
		Stub: outboxStub,
		Task: outboxTask,
		Hints: []string{
			"List every state the database can be in if the process dies between two of your statements. Is there one with an order but no outbox row?",
			"What does the relay know about a row right after broker.Publish returned an error? What may it write about that row, and what must it leave alone?",
			"Three unsent rows, and the broker fails on the second. Which rows may be marked sent now, and which row must the next relay run publish first?",
		},
		run: runOutbox,
		check: func(sol Solution) error {
			s := sol.(Outbox)
			return missing("PlaceOrder", s.PlaceOrder, "Relay", s.Relay)
		},
	})
}

const outboxStub = `package main

import (
	"errors"

	"github.com/brokerlab/brokerlab/exercise"
)

// PlaceOrder stores an order of amount and, in the same transaction, its
// outbox row: the event "order placed", with a payload that names the
// order (for example fmt.Sprintf("order %d placed, amount %d", id, amount)).
// It returns the order's id.
//
// Contract: whenever the process dies (right after any Commit), the
// database holds either the order and its row, or neither.
//
// The Store's transactions: db.Txn() starts one; txn.InsertOrder(amount)
// returns the new order's id; txn.InsertOutbox(orderID, payload) adds an
// unsent row; txn.Commit() stores everything; defer txn.Abort() drops what
// was not committed.
func PlaceOrder(db *exercise.Store, amount int) (int, error) {
	return 0, errors.New("PlaceOrder is not written yet")
}

// Relay publishes every unsent outbox row, in id order, with
// broker.Publish(row.Payload), and marks a row sent (txn.MarkSent(row.ID),
// then Commit) only after its publish succeeded.
//
// Contract: a row is never marked sent unless its publish succeeded; when
// a publish fails, Relay returns that error at once and leaves the row and
// every later one unsent for the next run. txn.Unsent() lists the unsent
// rows in id order.
func Relay(db *exercise.Store, broker exercise.Broker) error {
	return errors.New("Relay is not written yet")
}
`

const outboxTask = `Write the two halves of a transactional outbox in solution.go.

- **PlaceOrder(db, amount)** stores the order and, in the *same*
  transaction, an outbox row with its event. Returns the order id.
- **Relay(db, broker)** publishes the unsent rows in id order and marks a
  row sent only *after* its publish succeeded. A broker error ends the run
  and is returned; the remaining rows wait for the next run.

The grader places six orders and runs the relay every second tick, while
the process may crash right after any commit, the broker may be down for
a publish, and the relay may crash between a publish and its mark. At the
end the broker comes back and the relay runs twice more.

It checks that an order is never stored without its event, that a row is
never marked sent when its publish failed, that rows leave in id order,
and that after the second relay run every event went out. A duplicate
publish after a relay crash is allowed: the outbox gives at-least-once.`
