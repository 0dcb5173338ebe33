package exercise

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// IdempotentConsumer is the solution of exercise 4: a consumer whose
// effect and dedup row commit in one go-memdb transaction.
type IdempotentConsumer struct {
	// Handle charges payment p exactly once, however often it is
	// delivered: the charge and the mark "p.MsgID processed" are written
	// in the same transaction, and a payment already marked is skipped.
	// A nil error acks the delivery.
	Handle func(db *DB, p Payment) error
}

// Exercise returns "idempotent".
func (IdempotentConsumer) Exercise() string { return "idempotent" }

// Payment is one delivered payment message.
type Payment struct {
	// MsgID is the message's ID: the same on every delivery of it.
	MsgID   string
	Account string
	Amount  int
	// Attempt counts the deliveries of this copy, from 1.
	Attempt int
}

// idemRun is the harness of exercise 4.
type idemRun struct {
	r    *Run
	db   *DB
	sent []sim.Message
	lost map[string]bool // payments acked without a charge
}

func (o *idemRun) committed(t *DBTxn) {
	r := o.r
	if len(t.charged) > 0 {
		r.judged("once")
	}
	r.note("db:billing", "consumer", "commit: %d charge(s), %d processed mark(s)", len(t.charged), len(t.marked))
	if len(t.charged) > 0 {
		n := o.db.chargesByMsg()
		for _, c := range t.charged {
			if n[c.MsgID] > 1 {
				r.fail("once", "payment %s (%s) was charged %d times: a repeated delivery charged again", c.MsgID, c.Account, n[c.MsgID])
			}
		}
	}
	if _, ok := r.fault(faults.ConsumerCrashAfterEffect, faults.Context{Where: "queue:payments", Consumer: "billing"}); ok {
		r.note("db:billing", "consumer", "the consumer crashed right after the commit, before its ack")
		panic(crash{faults.ConsumerCrashAfterEffect})
	}
}

// acked judges a payment Handle let the harness ack: the queue never
// delivers it again, so one that no committed charge applied is lost for
// good, and the trace books the loss with its cause for the replay's
// ledger.
func (o *idemRun) acked(m sim.Message) {
	id := m.ID.String()
	if o.lost[id] || o.db.chargesByMsg()[id] > 0 {
		return
	}
	o.lost[id] = true
	ev := sim.Lost("queue:payments", "billing", "payments", &m, sim.CauseAckBeforeProcess)
	ev.Detail = "acked without a charge"
	o.r.env.Emit(ev)
	o.r.judged("never-lost")
	if o.db.processedIDs()[id] {
		o.r.fail("never-lost", "payment %s (%s) is marked processed but was never charged (crash between the dedup row and the charge): Handle returned nil, the delivery was acked, and it is lost", id, m.Key)
		return
	}
	o.r.fail("never-lost", "payment %s (%s) was acked, but Handle never charged it: it is lost", id, m.Key)
}

func runIdempotent(r *Run, sol Solution) {
	s := sol.(IdempotentConsumer)
	q, err := queue.New(r.w, queue.Config{Name: "payments", VisibilityTimeout: 2, Faults: r.inj})
	if err != nil {
		panic(err)
	}
	o := &idemRun{r: r, lost: map[string]bool{}}
	r.harness = o
	o.db = newDB(func() { r.call("runs", "Handle did not finish: it started more than 5000 transactions") }, o.committed)
	for t := sim.Tick(1); t <= 30; t++ {
		r.w.Tick()
		if t <= 6 {
			acct := fmt.Sprintf("acct-%d", t)
			m := r.env.NewMessage(acct, []byte(strconv.Itoa(10*int(t))), sim.Headers{})
			o.sent = append(o.sent, m)
			if err := q.Publish(m); err != nil {
				panic(err)
			}
		}
		ds, _ := q.Receive("billing", 2)
		for _, d := range ds {
			amount, _ := strconv.Atoi(string(d.Message.Body))
			p := Payment{MsgID: d.Message.ID.String(), Account: d.Message.Key, Amount: amount, Attempt: d.ReceiveCount}
			var herr error
			c := r.student("runs", "Handle", func() { herr = s.Handle(o.db, p) })
			switch {
			case c != nil:
				r.note("queue:payments", "billing", "Handle(%s) crashed; the message comes back after its visibility timeout", p.MsgID)
			case herr != nil:
				r.note("queue:payments", "billing", "Handle(%s) returned %v; not acked", p.MsgID, herr)
			default:
				_ = q.Ack(d.Receipt)
				o.acked(d.Message)
			}
		}
	}
	r.judged("never-lost")
	charges, done := o.db.chargesByMsg(), o.db.processedIDs()
	for _, m := range o.sent {
		id := m.ID.String()
		switch n := charges[id]; {
		case o.lost[id]:
		case n > 1:
			r.fail("once", "payment %s (%s) was charged %d times: a repeated delivery charged again", id, m.Key, n)
		case n == 0 && done[id]:
			r.fail("never-lost", "payment %s (%s) is marked processed but was never charged (crash between the dedup row and the charge)", id, m.Key)
		case n == 0:
			r.fail("never-lost", "payment %s (%s) was never charged", id, m.Key)
		}
	}
}

func init() {
	register(&Exercise{
		Number: 4, Name: "idempotent", Title: "An idempotent consumer, one transaction",
		Concept: "idempotent consumer: the dedup row is written in the same database transaction as the effect",
		Lesson:  "idempotent-consumer",
		Ticks:   30,
		Props: []Property{
			{"once", "a payment is charged at most once"},
			{"never-lost", "every payment is charged"},
			{"runs", "Handle runs without panicking"},
		},
		Plan: faults.Plan{Rules: []faults.Rule{
			{Name: "broker-dup", Point: faults.BrokerDuplicate, Probability: 0.15},
			{Name: "crash-after-commit", Point: faults.ConsumerCrashAfterEffect, Probability: 0.15},
		}},
		File: "solution.go",
		Bind: "exercise.IdempotentConsumer{Handle: Handle}",
		Stub: idemStub,
		Task: idemTask,
		Hints: []string{
			"The same payment can reach Handle twice. What does Handle have to find in the database to know it has charged this one before?",
			"Suppose the process dies right after a Commit. For each Commit in your Handle, what does the database hold then, and what happens when the payment is delivered again?",
			"Is there a way to make the charge and the record that you charged happen together or not at all?",
		},
		run: runIdempotent,
		check: func(sol Solution) error {
			return missing("Handle", sol.(IdempotentConsumer).Handle)
		},
	})
}

const idemStub = `package main

import (
	"errors"

	"github.com/brokerlab/brokerlab/exercise"
)

// Handle charges payment p exactly once, however often it is delivered.
//
// Contract: a payment may arrive more than once (a broker duplicate, a
// redelivery after a crash). Charge each p.MsgID exactly once; a payment
// that was charged before is skipped and acked (return nil). The process
// may crash right after any Commit; the payment then comes back.
//
// The database: txn := db.Txn() starts a transaction (defer txn.Abort());
// txn.Processed(id) and txn.MarkProcessed(id) read and write the dedup
// table; txn.Charge(p.Account, p.Amount, p.MsgID) is the effect;
// txn.Commit() stores it all.
func Handle(db *exercise.DB, p exercise.Payment) error {
	return errors.New("Handle is not written yet")
}
`

const idemTask = `Write **Handle(db, p)** in solution.go: a consumer of payments that
charges each payment exactly once, with its dedup row (the payment's
message ID, marked processed) written in the same go-memdb transaction as
the charge.

The grader sends six payments through a queue with a visibility timeout
of two ticks. The broker sometimes delivers a message twice, and the
consumer sometimes crashes right after a commit, before its ack, so the
payment comes back.

It checks that no payment is charged twice and that every payment is
charged.`
