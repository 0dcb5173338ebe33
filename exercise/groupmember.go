package exercise

import (
	"fmt"
	"strconv"

	"github.com/brokerlab/brokerlab/eventlog"
	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/sim"
)

// GroupMember is the solution of exercise 5: one poll of a consumer-group
// member that applies its records idempotently and commits after.
type GroupMember struct {
	// Consume polls m once, charges each record's payment exactly once in
	// db, and then commits the records it handled.
	Consume func(m Member, db *DB)
}

// Exercise returns "group-member".
func (GroupMember) Exercise() string { return "group-member" }

// Member is one member of a consumer group on a partitioned log.
type Member interface {
	// Poll returns the next records of the partitions the member owns
	// (nothing while it owns none). A partition may move to another member
	// at any rebalance; the new owner reads from the group's committed
	// offset.
	Poll() []Record
	// Commit commits, for each partition among recs, the offset after the
	// highest record given: the group will not read those records again.
	Commit(recs ...Record) error
	// Name is the member's name.
	Name() string
}

// Record is one record of the log: a payment.
type Record struct {
	Partition int
	Offset    int64
	// MsgID is the event's ID: the same whenever the record is read.
	MsgID   string
	Account string
	Amount  int
}

// memberRun is the harness of exercise 5; each memberOf is the Member
// the student's code is handed.
type memberRun struct {
	r     *Run
	db    *DB
	log   *eventlog.Log
	group *eventlog.Group
	cur   *eventlog.Member // the member whose Consume runs
	sent  []sim.Message
	read  map[string]Record // by message ID: records some member polled
	// polled are, per member, the records it polled that the group model
	// has not been told about yet. The student's code charges in its own
	// database, so the harness reports each record to the model as
	// processed (charged) or skipped (charged before), and the replay's
	// ledger books as lost only what no one charged.
	polled map[*eventlog.Member][]eventlog.Record
}

type memberOf struct {
	o *memberRun
	m *eventlog.Member
}

func (x memberOf) Name() string { return x.m.Name() }

func (x memberOf) Poll() []Record {
	x.o.r.call("runs", "Consume did not finish: it polled more than 5000 times")
	var out []Record
	for _, rec := range x.m.Poll(4) {
		x.o.hold(x.m, rec)
		amount, _ := strconv.Atoi(string(rec.Message.Body))
		r := Record{Partition: rec.Partition, Offset: rec.Offset, MsgID: rec.Message.ID.String(), Account: rec.Message.Key, Amount: amount}
		x.o.read[r.MsgID] = r
		out = append(out, r)
	}
	return out
}

func (x memberOf) Commit(recs ...Record) error {
	x.o.r.call("runs", "Consume did not finish: it committed more than 5000 times")
	rs := make([]eventlog.Record, len(recs))
	for i, r := range recs {
		rs[i] = eventlog.Record{Partition: r.Partition, Offset: r.Offset}
	}
	x.o.settle(x.m, recs)
	return x.m.CommitRecords(rs...)
}

// hold keeps rec, just polled by m, until the harness can tell the group
// model what became of it. A record read again replaces its earlier copy,
// so the list is bounded by the log.
func (o *memberRun) hold(m *eventlog.Member, rec eventlog.Record) {
	held := o.polled[m]
	for i := range held {
		if held[i].Partition == rec.Partition && held[i].Offset == rec.Offset {
			held[i] = rec
			return
		}
	}
	o.polled[m] = append(held, rec)
}

// report tells the group model that m is done with its held record of
// msgID: processed when charged says this delivery charged it, skipped
// as a duplicate otherwise. It reports whether m held the record.
func (o *memberRun) report(m *eventlog.Member, msgID string, charged bool) bool {
	held := o.polled[m]
	for i := range held {
		if held[i].Message.ID.String() != msgID {
			continue
		}
		d := m.Delivery(held[i])
		if charged {
			d.Apply("charged")
		} else {
			d.Skip("charged before")
		}
		_ = m.MarkProcessed(d) // a record dropped since still counts as applied
		o.polled[m] = append(held[:i], held[i+1:]...)
		return true
	}
	return false
}

// settle reports to the group model every record of recs (every held
// record of m when recs is nil) that is charged in the database: this
// member skipped it as charged before. A record no one charged stays
// outstanding, and the model books it lost if a commit passed it.
func (o *memberRun) settle(m *eventlog.Member, recs []Record) {
	charges := o.db.chargesByMsg()
	if recs == nil {
		for _, h := range append([]eventlog.Record(nil), o.polled[m]...) {
			if id := h.Message.ID.String(); charges[id] > 0 {
				o.report(m, id, false)
			}
		}
		return
	}
	for _, r := range recs {
		if charges[r.MsgID] > 0 {
			o.report(m, r.MsgID, false)
		}
	}
}

func (o *memberRun) committed(t *DBTxn) {
	r := o.r
	for _, c := range t.charged {
		o.report(o.cur, c.MsgID, true)
	}
	if len(t.charged) > 0 {
		r.judged("once")
		n := o.db.chargesByMsg()
		for _, c := range t.charged {
			if n[c.MsgID] > 1 {
				r.fail("once", "payment %s (%s) was charged %d times: a record read again after a rebalance was applied again", c.MsgID, c.Account, n[c.MsgID])
			}
		}
	}
	name := o.cur.Name()
	if f, ok := r.fault(faults.MemberCrash, faults.Context{Where: "log:payments", Consumer: name, Group: "billing"}); ok {
		r.note("log:payments", name, "member %s crashed right after a commit to its database; its partitions move to the other member", name)
		o.cur.Crash(f.Rule)
		o.polled[o.cur] = nil // the crash dropped its outstanding records
		panic(crash{faults.MemberCrash})
	}
}

func runGroupMember(r *Run, sol Solution) {
	s := sol.(GroupMember)
	o := &memberRun{r: r, read: map[string]Record{}, polled: map[*eventlog.Member][]eventlog.Record{}}
	r.harness = o
	var err error
	if o.log, err = eventlog.New(r.w, eventlog.Config{Name: "payments", Partitions: 2, Faults: r.inj}); err != nil {
		panic(err)
	}
	if o.group, err = eventlog.NewGroup(r.w, o.log, eventlog.GroupConfig{Name: "billing"}); err != nil {
		panic(err)
	}
	var members []*eventlog.Member
	for _, name := range []string{"a", "b"} {
		m, err := eventlog.NewMember(r.w, o.group, eventlog.MemberConfig{Name: name, Pull: true, RestartAfter: 3})
		if err != nil {
			panic(err)
		}
		members = append(members, m)
	}
	o.db = newDB(func() { r.call("runs", "Consume did not finish: it started more than 5000 transactions") }, o.committed)
	for t := sim.Tick(1); t <= 40; t++ {
		r.w.Tick()
		if t <= 8 {
			for i := range 2 {
				n := 2*int(t) + i - 1
				m := r.env.NewMessage(fmt.Sprintf("acct-%d", n%4+1), []byte(strconv.Itoa(5*n)), sim.Headers{})
				o.sent = append(o.sent, m)
				if err := o.log.Publish(m); err != nil {
					panic(err)
				}
			}
		}
		for _, m := range members {
			if !m.Active() {
				continue
			}
			o.cur = m
			if r.student("runs", "Consume", func() { s.Consume(memberOf{o, m}, o.db) }) == nil {
				o.settle(m, nil)
			}
		}
	}
	r.judged("never-lost")
	charges := o.db.chargesByMsg()
	for _, m := range o.sent {
		id := m.ID.String()
		if charges[id] > 0 {
			continue
		}
		rec, read := o.read[id]
		committed, ok := o.group.Committed(rec.Partition)
		switch {
		case !read:
			r.fail("never-lost", "payment %s (%s) was never charged: no member ever read it", id, m.Key)
		case ok && committed > rec.Offset:
			r.fail("never-lost", "payment %s (%s) at partition %d offset %d was never charged: its offset was committed before it was processed", id, m.Key, rec.Partition, rec.Offset)
		default:
			r.fail("never-lost", "payment %s (%s) at partition %d offset %d was read but never charged", id, m.Key, rec.Partition, rec.Offset)
		}
	}
}

func init() {
	register(&Exercise{
		Number: 5, Name: "group-member", Title: "A consumer-group member that survives rebalances",
		Concept: "consumer groups: commit the offset after processing, and make the effect idempotent, because a rebalance makes another member read the uncommitted records again",
		Lesson:  "replay-projection",
		Ticks:   40,
		Props: []Property{
			{"once", "a payment is charged at most once"},
			{"never-lost", "every payment is charged"},
			{"runs", "Consume runs without panicking"},
		},
		Plan: faults.Plan{Rules: []faults.Rule{
			{Name: "member-crash", Point: faults.MemberCrash, Probability: 0.08},
		}},
		File: "solution.go",
		Bind: "exercise.GroupMember{Consume: Consume}",
		Stub: memberStub,
		Task: memberTask,
		Hints: []string{
			"A member crashes after charging a record but before its commit. Which member reads that record next, and from which offset?",
			"What does a committed offset promise the group? When is it true?",
			"The same record can be read twice by different members. What in the database lets the second one notice?",
		},
		run: runGroupMember,
		check: func(sol Solution) error {
			return missing("Consume", sol.(GroupMember).Consume)
		},
	})
}

const memberStub = `package main

import "github.com/brokerlab/brokerlab/exercise"

// Consume handles one poll of group member m: it charges the payment of
// every record it gets, then commits those records.
//
// Contract: every payment is charged exactly once, although a member may
// crash at any time after a database Commit and its partitions then move
// to the other member, which reads from the group's committed offset.
//
// recs := m.Poll() fetches records; m.Commit(recs...) commits them. The
// database: txn := db.Txn() (defer txn.Abort()); txn.Processed(id),
// txn.MarkProcessed(id); txn.Charge(rec.Account, rec.Amount, rec.MsgID);
// txn.Commit().
func Consume(m exercise.Member, db *exercise.DB) {
	// Not written yet: reads nothing, charges nothing.
}
`

const memberTask = `Write **Consume(m, db)** in solution.go: one poll of a member of the
consumer group "billing" on a log of payments with two partitions. It
charges each record's payment in the database and commits the offsets
*after* processing, idempotently, so that a record read again is not
charged again.

The grader runs two members, a and b. A member sometimes crashes right
after a database commit; its partitions move to the other member, which
reads from the group's committed offset, and it rejoins three ticks later
(another rebalance).

It checks that no payment is charged twice and that every payment is
charged.`
