package exercise

import (
	"fmt"
	"slices"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// DeadLetterLoop is the solution of exercise 2: a worker loop that sends
// a message to a dead-letter list after its last allowed attempt.
type DeadLetterLoop struct {
	// ProcessAll works until the queue has no open message: it receives,
	// ticks when nothing is visible, acks after a successful handle, and
	// on a failure either leaves the message unacked (it comes back after
	// its visibility timeout) or, on the last allowed attempt, appends it
	// to dlq and acks it.
	ProcessAll func(q WorkQueue, handle func(body string) error, maxAttempts int, dlq *[]DeadLetter)
}

// Exercise returns "dead-letter".
func (DeadLetterLoop) Exercise() string { return "dead-letter" }

// WorkQueue is a work queue with a visibility timeout, seen by one worker.
type WorkQueue interface {
	// Open returns how many messages are not acked yet: visible ones and
	// those in flight.
	Open() int
	// Receive returns the next visible message and true, or false when
	// every open message is in flight (invisible until its timeout ends).
	// The message stays invisible for the visibility timeout; unless it
	// is acked by then, it becomes visible again.
	Receive() (Message, bool)
	// Ack deletes the message with id for good.
	Ack(id string)
	// Tick lets one tick of time pass.
	Tick()
}

// Message is one received message.
type Message struct {
	ID   string
	Body string
	// Attempts counts the receives of this message, this one included
	// (1 on the first).
	Attempts int
}

// DeadLetter is one entry of the dead-letter list.
type DeadLetter struct {
	Body     string
	Attempts int
	Error    string
}

// dlqMsg is what the harness knows of one message.
type dlqMsg struct {
	body     string
	receives int
	lastErr  error
	done     int  // successful handles
	acked    bool // acked
	poison   bool
	lost     bool // booked lost
	msg      sim.Message
}

// dlqRun is the harness of exercise 2; it is the WorkQueue the student's
// loop is handed.
type dlqRun struct {
	r        *Run
	q        *queue.Queue
	msgs     map[string]*dlqMsg // by body
	order    []string
	receipts map[string]queue.Delivery // by message ID
	dlq      *[]DeadLetter
	max      int
	// failedAfterAck are the bodies of messages whose handler failed
	// after they were acked. Their fate is decided by what the student's
	// loop does next, before its next call into the harness: it may still
	// put them into the dead-letter list; if it does not, they are lost.
	failedAfterAck []string
}

const dlqMaxAttempts = 3

func (o *dlqRun) budget() {
	o.settle()
	o.r.calls++
	if o.r.calls <= maxCalls && o.r.env.Now() < 400 {
		return
	}
	worst := ""
	for _, b := range o.order {
		if m := o.msgs[b]; !m.acked && (worst == "" || m.receives > o.msgs[worst].receives) {
			worst = b
		}
	}
	if worst == "" {
		panic(stop{"blocks", fmt.Sprintf("ProcessAll did not return by tick %d although every message was acked: the loop must end when q.Open() is 0", o.r.env.Now())})
	}
	if o.msgs[worst].poison {
		panic(stop{"blocks", fmt.Sprintf("a poison message blocked the queue: %s failed %d times and was never dead-lettered", worst, o.msgs[worst].receives)})
	}
	panic(stop{"blocks", fmt.Sprintf("ProcessAll did not finish by tick %d (%d calls); %s was received %d times", o.r.env.Now(), o.r.calls, worst, o.msgs[worst].receives)})
}

// Open returns the open messages.
func (o *dlqRun) Open() int { o.budget(); return o.q.Len() }

// Receive takes one visible message.
func (o *dlqRun) Receive() (Message, bool) {
	o.budget()
	ds, err := o.q.Receive("worker", 1)
	if err != nil || len(ds) == 0 {
		return Message{}, false
	}
	d := ds[0]
	id := d.Message.ID.String()
	o.receipts[id] = d
	m := o.msgs[string(d.Message.Body)]
	m.receives = d.ReceiveCount
	return Message{ID: id, Body: string(d.Message.Body), Attempts: d.ReceiveCount}, true
}

// Ack deletes a message and judges the ack. A message whose last handle
// failed and that the student's loop put into the dead-letter list is
// moved to the queue's dead-letter queue instead of deleted, so that the
// trace and the ledger of a replay show it dead-lettered; the grading is
// the same either way.
func (o *dlqRun) Ack(id string) {
	o.budget()
	d, ok := o.receipts[id]
	if !ok {
		o.r.note("queue:orders", "worker", "Ack(%q): no such message was received", id)
		return
	}
	m := o.msgs[string(d.Message.Body)]
	var err error
	if m.lastErr != nil && o.inDLQ(m.body) {
		err = o.q.DeadLetter(d.Receipt, fmt.Sprintf("put into the dead-letter list after attempt %d of %d: %v", d.ReceiveCount, o.max, m.lastErr))
	} else {
		err = o.q.Ack(d.Receipt)
	}
	if err != nil {
		o.r.note("queue:orders", "worker", "Ack(%q) refused: %v", id, err)
		return
	}
	m.acked = true
	if m.lastErr == nil {
		return
	}
	o.r.judged("last-attempt")
	if !o.inDLQ(m.body) {
		o.r.judged("no-loss")
		o.lose(m, sim.CauseHandlerFailed, "acked after its handler failed, and not in the dead-letter list")
		o.r.fail("no-loss", "%s was acked after a failure (%v) but is not in the dead-letter list: it is lost", m.body, m.lastErr)
		return
	}
	if d.ReceiveCount < o.max {
		o.r.fail("last-attempt", "a message was dead-lettered before its last attempt (%s after attempt %d of %d)", m.body, d.ReceiveCount, o.max)
	}
}

// Tick advances the world.
func (o *dlqRun) Tick() { o.budget(); o.r.w.Tick() }

func (o *dlqRun) inDLQ(body string) bool {
	for _, d := range *o.dlq {
		if d.Body == body {
			return true
		}
	}
	return false
}

// settle judges the messages whose handler failed after they were
// acked, once the student's loop has had its chance to retry or
// dead-letter them: at its next call into the harness other than handling
// the same message again, or when it returns. Nothing delivers
// such a message again, so one that is not in the dead-letter list is
// lost, and one that is was dead-lettered at the attempt of its ack.
func (o *dlqRun) settle() {
	if len(o.failedAfterAck) == 0 {
		return
	}
	bodies := o.failedAfterAck
	o.failedAfterAck = nil
	for _, b := range bodies {
		m := o.msgs[b]
		if m.done > 0 {
			continue // a try succeeded: the message was applied
		}
		if o.inDLQ(b) {
			o.r.judged("last-attempt")
			if m.receives < o.max {
				o.r.fail("last-attempt", "a message was dead-lettered before its last attempt (%s after attempt %d of %d: it was acked before its handler ran, so it never got another)", b, m.receives, o.max)
			}
			continue
		}
		o.r.judged("no-loss")
		o.lose(m, sim.CauseAckBeforeProcess, "acked before its handler ran; the handler then failed")
		o.r.fail("no-loss", "%s was acked before its handler ran, and handle(%s) then failed (%v): nothing delivers it again and it is not in the dead-letter list, so it is lost", b, b, m.lastErr)
	}
}

// lose books m lost in the trace, with cause, so that a replay's ledger
// counts the loss the grader found. A message is booked once.
func (o *dlqRun) lose(m *dlqMsg, cause sim.Cause, why string) {
	if m.lost {
		return
	}
	m.lost = true
	ev := sim.Lost("queue:orders", "worker", "orders", &m.msg, cause)
	ev.Detail = m.body + " " + why
	o.r.env.Emit(ev)
}

// handle is the handler the student's loop calls.
func (o *dlqRun) handle(body string) error {
	// Handling a message again whose handler failed after its ack is the
	// loop still deciding its fate (a retry in the loop): it is settled
	// after this try, not before it.
	o.failedAfterAck = slices.DeleteFunc(o.failedAfterAck, func(b string) bool { return b == body })
	o.budget()
	m, ok := o.msgs[body]
	if !ok {
		return fmt.Errorf("no message has the body %q", body)
	}
	c := faults.Context{Where: "queue:orders", Consumer: "worker", Key: body}
	if m.receives == 1 && m.lastErr == nil && m.done == 0 && !m.poison {
		if _, ok := o.r.fault(faults.HandlerPoison, c); ok {
			m.poison = true
			o.r.judged("blocks")
		}
	}
	switch {
	case m.poison:
		m.lastErr = fmt.Errorf("cannot parse %s", body)
	default:
		if f, ok := o.r.fault(faults.HandlerTransient, c); ok {
			m.lastErr = fmt.Errorf("%s: database timeout", f.Rule)
		} else {
			m.lastErr = nil
			m.done++
		}
	}
	if m.lastErr != nil {
		o.r.note("queue:orders", "worker", "handle(%s) failed on receive %d: %v", body, m.receives, m.lastErr)
		if m.acked && !m.lost {
			o.failedAfterAck = append(o.failedAfterAck, body)
		}
	} else {
		o.r.note("queue:orders", "worker", "handle(%s) succeeded on receive %d", body, m.receives)
	}
	return m.lastErr
}

func runDeadLetter(r *Run, sol Solution) {
	s := sol.(DeadLetterLoop)
	// The dead-letter queue only mirrors the student's list for the
	// replay: no redrive policy moves anything there by itself.
	dead, err := queue.New(r.w, queue.Config{Name: "orders-dlq"})
	if err != nil {
		panic(err)
	}
	q, err := queue.New(r.w, queue.Config{Name: "orders", VisibilityTimeout: 2, Faults: r.inj, DeadLetter: dead})
	if err != nil {
		panic(err)
	}
	var dlq []DeadLetter
	o := &dlqRun{r: r, q: q, msgs: map[string]*dlqMsg{}, receipts: map[string]queue.Delivery{}, dlq: &dlq, max: dlqMaxAttempts}
	r.harness = o
	for i := 1; i <= 6; i++ {
		body := fmt.Sprintf("order-%d", i)
		msg := r.env.NewMessage(body, []byte(body), sim.Headers{})
		o.msgs[body] = &dlqMsg{body: body, msg: msg}
		o.order = append(o.order, body)
		if err := q.Publish(msg); err != nil {
			panic(err)
		}
	}
	r.w.Tick()
	r.student("runs", "ProcessAll", func() { s.ProcessAll(o, o.handle, dlqMaxAttempts, &dlq) })
	o.settle()
	r.judged("no-loss")
	for _, b := range o.order {
		switch m := o.msgs[b]; {
		case !m.acked:
			r.fail("no-loss", "%s was still open when ProcessAll returned", b)
		case m.done == 0 && !m.lost && !o.inDLQ(b):
			o.lose(m, sim.CauseAckBeforeProcess, "acked, but never handled successfully nor dead-lettered")
			r.fail("no-loss", "%s was acked, but no handle of it succeeded and it is not in the dead-letter list: it is lost", b)
		}
	}
	for _, d := range dlq {
		r.judged("record")
		r.judged("last-attempt")
		m, ok := o.msgs[d.Body]
		switch {
		case !ok:
			r.fail("record", "the dead-letter list holds %q, which is no message's body", d.Body)
		case d.Attempts != m.receives:
			r.fail("record", "the dead letter of %s says %d attempts, but it was received %d times", d.Body, d.Attempts, m.receives)
		case d.Error == "":
			r.fail("record", "the dead letter of %s has no error text", d.Body)
		case m.done > 0:
			r.fail("last-attempt", "%s was dead-lettered although a try of it succeeded", d.Body)
		}
	}
}

func init() {
	register(&Exercise{
		Number: 2, Name: "dead-letter", Title: "Write the dead-letter loop",
		Concept: "bounded retries: a message that fails its last allowed attempt goes to a dead-letter list instead of blocking the queue",
		Lesson:  "poison-dlq",
		Ticks:   400,
		Props: []Property{
			{"no-loss", "every message is processed or dead-lettered"},
			{"last-attempt", "a message is dead-lettered only after its last allowed attempt"},
			{"blocks", "a poison message never blocks the queue"},
			{"record", "a dead letter records body, attempts and error"},
			{"runs", "ProcessAll runs without panicking"},
		},
		Plan: faults.Plan{Rules: []faults.Rule{
			{Name: "poison", Point: faults.HandlerPoison, Probability: 0.1},
			{Name: "db-timeout", Point: faults.HandlerTransient, Probability: 0.25},
		}},
		File: "solution.go",
		Bind: "exercise.DeadLetterLoop{ProcessAll: ProcessAll}",
		Stub: dlqStub,
		Task: dlqTask,
		Hints: []string{
			"A message you do not ack comes back by itself after its visibility timeout. So what is the one thing your loop must do after a failure that is not the last try?",
			"How do you know, on a failure, whether it was the last allowed attempt? Which field of the message tells you?",
			"When Receive finds nothing visible, the messages are all in flight. What has to happen before any of them can come back?",
		},
		run: runDeadLetter,
		check: func(sol Solution) error {
			return missing("ProcessAll", sol.(DeadLetterLoop).ProcessAll)
		},
	})
}

const dlqStub = `package main

import "github.com/brokerlab/brokerlab/exercise"

// ProcessAll works through q until q.Open() is 0.
//
//  1. m, ok := q.Receive(). When nothing is visible (ok is false), call
//     q.Tick() and go on.
//  2. Call handle(m.Body). On success, q.Ack(m.ID).
//  3. When handle returns an error, do not ack, unless this was the last
//     allowed attempt (maxAttempts). Then append
//     exercise.DeadLetter{Body, Attempts, Error} to *dlq and ack the
//     message: it now waits in the dead-letter list and no longer blocks
//     the queue.
//
// Contract: every message ends up processed or in *dlq, never both and
// never neither; a message is dead-lettered only after its last allowed
// attempt; the loop ends.
func ProcessAll(q exercise.WorkQueue, handle func(body string) error, maxAttempts int, dlq *[]exercise.DeadLetter) {
	// Not written yet: returns at once and leaves every message open.
}
`

const dlqTask = `Write the worker loop of a queue with a dead-letter list in solution.go:
**ProcessAll(q, handle, maxAttempts, dlq)** receives, ticks when nothing is
visible, acks after a successful handle, and on a failure leaves the
message unacked, unless it was the last allowed attempt: then it appends
body, attempts and error to the dead-letter list and acks.

The grader sends six orders into a queue with a visibility timeout of two
ticks and runs your loop with maxAttempts 3. Some orders are poison (their
handler fails on every try), and the database times out now and then (a
later try succeeds).

It checks that every message is processed or dead-lettered, that nothing
is dead-lettered before its last attempt, that a poison message does not
block the queue, and that each dead letter records its body, attempts and
error.`
