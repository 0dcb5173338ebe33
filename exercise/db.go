package exercise

import (
	"fmt"

	"github.com/hashicorp/go-memdb"
)

// DB is a consumer's database (go-memdb) with two tables: charges (the
// effects, one row per charge) and processed (the ids of the messages
// already handled, for deduplication). Every change goes through a
// DBTxn; nothing is stored until its Commit. Exercises 4 and 5 hand one
// to the student's code.
type DB struct {
	db *memdb.MemDB
	// committed is called after every commit with the transaction; the
	// harness judges it there and may crash the process right after it.
	committed func(t *DBTxn)
	calls     func()
	nextID    int
}

// Charge is a row of the charges table: one effect of one message.
type Charge struct {
	ID      int
	Account string
	Amount  int
	// MsgID is the message that caused it.
	MsgID string
}

// processedRow is a row of the processed table.
type processedRow struct{ MsgID string }

var dbSchema = &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
	"charges": {Name: "charges", Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &memdb.IntFieldIndex{Field: "ID"}}}},
	"processed": {Name: "processed", Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "MsgID"}}}},
}}

func newDB(calls func(), committed func(t *DBTxn)) *DB {
	db, err := memdb.NewMemDB(dbSchema)
	if err != nil {
		panic(err) // the schema is fixed and valid
	}
	return &DB{db: db, calls: calls, committed: committed}
}

// DBTxn is one write transaction of a DB. Commit stores its changes;
// Abort (safe to defer, and after Commit) drops them.
type DBTxn struct {
	d    *DB
	t    *memdb.Txn
	done bool
	// Charged and Marked are what this transaction wrote, for the
	// harness.
	charged []Charge
	marked  []string
}

// Txn starts a write transaction.
func (d *DB) Txn() *DBTxn {
	d.calls()
	return &DBTxn{d: d, t: d.db.Txn(true)}
}

func (t *DBTxn) live(op string) {
	if t.done {
		panic(fmt.Sprintf("exercise: %s on a transaction that was already committed or aborted", op))
	}
}

// Processed reports whether msgID was marked processed (by a committed
// transaction, or earlier in this one).
func (t *DBTxn) Processed(msgID string) bool {
	t.live("Processed")
	raw, err := t.t.First("processed", "id", msgID)
	return err == nil && raw != nil
}

// MarkProcessed records msgID as processed. Marking it twice is allowed.
func (t *DBTxn) MarkProcessed(msgID string) {
	t.live("MarkProcessed")
	if err := t.t.Insert("processed", &processedRow{MsgID: msgID}); err != nil {
		panic(err)
	}
	t.marked = append(t.marked, msgID)
}

// Charge adds a charge of amount to account, caused by message msgID:
// the effect of the message.
func (t *DBTxn) Charge(account string, amount int, msgID string) {
	t.live("Charge")
	t.d.nextID++
	c := Charge{ID: t.d.nextID, Account: account, Amount: amount, MsgID: msgID}
	if err := t.t.Insert("charges", &c); err != nil {
		panic(err)
	}
	t.charged = append(t.charged, c)
}

// Commit stores the transaction's changes. The process may crash right
// after a commit: what was committed stays, the rest of the code does not
// run.
func (t *DBTxn) Commit() {
	t.live("Commit")
	t.done = true
	t.t.Commit()
	if t.d.committed != nil {
		t.d.committed(t)
	}
}

// Abort drops the transaction's changes; after Commit it does nothing.
func (t *DBTxn) Abort() {
	if !t.done {
		t.done = true
		t.t.Abort()
	}
}

// chargesByMsg returns how many committed charges each message caused.
func (d *DB) chargesByMsg() map[string]int {
	n := map[string]int{}
	it, err := d.db.Txn(false).Get("charges", "id")
	if err != nil {
		panic(err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		n[raw.(*Charge).MsgID]++
	}
	return n
}

// processedIDs returns the ids marked processed, sorted.
func (d *DB) processedIDs() map[string]bool {
	out := map[string]bool{}
	it, err := d.db.Txn(false).Get("processed", "id")
	if err != nil {
		panic(err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out[raw.(*processedRow).MsgID] = true
	}
	return out
}
