package exercise

import (
	"errors"
	"fmt"

	"github.com/brokerlab/brokerlab/faults"
	"github.com/brokerlab/brokerlab/queue"
	"github.com/brokerlab/brokerlab/sim"
)

// Retries is the solution of exercise 6: what a worker does with a
// failed message, by the class of its error.
type Retries struct {
	// OnFailure decides, for a message whose handler failed with err on
	// attempt (from 1), whether to retry it later (RetryAfter) or give it
	// up to the dead-letter queue (GiveUp).
	OnFailure func(err error, attempt int) Next
}

// Exercise returns "retries".
func (Retries) Exercise() string { return "retries" }

// The error classes a handler's error wraps (errors.Is tells them
// apart): a transient failure may pass on a later try; a permanent one
// and a poison message never will.
var (
	ErrTransient = sim.ErrTransient
	ErrPermanent = sim.ErrPermanent
	ErrPoison    = sim.ErrPoison
)

// MaxAttempts is how many attempts a message gets at most.
const MaxAttempts = 5

// Next is what to do with a failed message; make one with RetryAfter or
// GiveUp.
type Next struct {
	retry bool
	after int
}

// RetryAfter retries the message after ticks ticks.
func RetryAfter(ticks int) Next { return Next{retry: true, after: ticks} }

// GiveUp moves the message to the dead-letter queue.
func GiveUp() Next { return Next{} }

// String says what n does.
func (n Next) String() string {
	if n.retry {
		return fmt.Sprintf("retry after %d ticks", n.after)
	}
	return "give up"
}

// retryMsg is what the harness knows of one job.
type retryMsg struct {
	key       string
	permanent error // fails every try with this error
	failsLeft int   // transient failures still to come
	lastDelay int
	done      bool
	dead      bool
}

func runRetries(r *Run, sol Solution) {
	s := sol.(Retries)
	// The dead-letter queue holds what the policy gives up on, so that a
	// replay's ledger counts it there; no redrive policy moves anything
	// there by itself.
	dead, err := queue.New(r.w, queue.Config{Name: "jobs-dlq"})
	if err != nil {
		panic(err)
	}
	q, err := queue.New(r.w, queue.Config{Name: "jobs", VisibilityTimeout: 10, Faults: r.inj, DeadLetter: dead})
	if err != nil {
		panic(err)
	}
	msgs := map[string]*retryMsg{}
	var order []string
	for i := 1; i <= 8; i++ {
		key := fmt.Sprintf("job-%d", i)
		msgs[key] = &retryMsg{key: key}
		order = append(order, key)
		if err := q.Publish(r.env.NewMessage(key, []byte(key), sim.Headers{})); err != nil {
			panic(err)
		}
	}
	for t := sim.Tick(1); t <= 150; t++ {
		r.w.Tick()
		ds, _ := q.Receive("worker", 3)
		for _, d := range ds {
			m := msgs[d.Message.Key]
			c := faults.Context{Where: "queue:jobs", Consumer: "worker", Key: m.key}
			if d.ReceiveCount == 1 {
				if f, ok := r.fault(faults.HandlerPermanent, c); ok {
					m.permanent = fmt.Errorf("%s: card declined: %w", f.Rule, ErrPermanent)
				} else if f, ok := r.fault(faults.HandlerPoison, c); ok {
					m.permanent = fmt.Errorf("%s: cannot parse %s: %w", f.Rule, m.key, ErrPoison)
				}
			}
			var herr error
			switch {
			case m.permanent != nil:
				herr = m.permanent
			case m.failsLeft > 0:
				m.failsLeft--
				herr = fmt.Errorf("database timeout: %w", ErrTransient)
			default:
				if f, ok := r.fault(faults.HandlerTransient, c); ok {
					m.failsLeft = max(int(f.Param), 1) - 1
					herr = fmt.Errorf("%s: database timeout: %w", f.Rule, ErrTransient)
				}
			}
			if herr == nil {
				m.done = true
				r.note("queue:jobs", "worker", "%s processed on attempt %d", m.key, d.ReceiveCount)
				_ = q.Ack(d.Receipt)
				continue
			}
			var next Next
			crashed := r.student("runs", "OnFailure", func() { next = s.OnFailure(herr, d.ReceiveCount) })
			if crashed != nil {
				continue // the message comes back after its visibility timeout
			}
			r.note("queue:jobs", "worker", "%s failed on attempt %d (%v): %s", m.key, d.ReceiveCount, herr, next)
			transient := !errors.Is(herr, ErrPermanent) && !errors.Is(herr, ErrPoison)
			switch {
			case !transient:
				r.judged("class")
				if next.retry {
					r.fail("class", "%s failed for good (%v) and was retried: no retry can fix it", m.key, herr)
				}
			case !next.retry && d.ReceiveCount < MaxAttempts:
				r.judged("transient")
				r.fail("transient", "%s failed transiently on attempt %d and was given up: a later try would have succeeded", m.key, d.ReceiveCount)
			case next.retry && d.ReceiveCount >= MaxAttempts:
				r.judged("bounded")
				r.fail("bounded", "%s was retried after attempt %d: at most %d attempts", m.key, d.ReceiveCount, MaxAttempts)
			case next.retry:
				r.judged("transient")
				r.judged("backoff")
				switch {
				case next.after < 1:
					r.fail("backoff", "%s was retried after %d ticks on attempt %d: a retry must wait at least one tick", m.key, next.after, d.ReceiveCount)
				case next.after <= m.lastDelay:
					r.fail("backoff", "%s was retried after %d tick(s) on attempt %d, after %d the time before: each retry must wait longer than the one before", m.key, next.after, d.ReceiveCount, m.lastDelay)
				}
			default:
				r.judged("bounded")
			}
			if next.retry {
				m.lastDelay = next.after
				if err := q.Nack(d.Receipt, sim.Tick(min(max(next.after, 0), 1000))); err != nil {
					panic(err)
				}
				continue
			}
			m.dead = true
			_ = q.DeadLetter(d.Receipt, herr.Error())
		}
	}
	r.judged("no-loss")
	for _, k := range order {
		if m := msgs[k]; !m.done && !m.dead {
			r.fail("no-loss", "%s was neither processed nor dead-lettered by the end of the run", k)
		}
	}
}

func init() {
	register(&Exercise{
		Number: 6, Name: "retries", Title: "Retries by error class",
		Concept: "retry policy: transient errors are retried with a growing delay up to a limit; permanent errors and poison messages are dead-lettered at once",
		Lesson:  "poison-dlq",
		Ticks:   150,
		Props: []Property{
			{"class", "a permanent failure or a poison message is never retried"},
			{"transient", "a transient failure is retried until the last attempt"},
			{"backoff", "each retry of a message waits longer than the one before"},
			{"bounded", "no message gets more than 5 attempts"},
			{"no-loss", "every message is processed or dead-lettered"},
			{"runs", "OnFailure runs without panicking"},
		},
		Plan: faults.Plan{Rules: []faults.Rule{
			{Name: "card-declined", Point: faults.HandlerPermanent, Probability: 0.1},
			{Name: "poison", Point: faults.HandlerPoison, Probability: 0.05},
			{Name: "flaky-db", Point: faults.HandlerTransient, Probability: 0.15},
			{Name: "db-down", Point: faults.HandlerTransient, Probability: 0.05, Param: 7},
		}},
		File: "solution.go",
		Bind: "exercise.Retries{OnFailure: OnFailure}",
		Stub: retryStub,
		Task: retryTask,
		Hints: []string{
			"Which of the three error classes can a later try fix? Which can it never fix, however often you try?",
			"If every retry waits the same short time, what happens to a database that is down for a while, and to everyone else using it?",
			"What should happen on attempt 5 of a message whose database is still down?",
		},
		run: runRetries,
		check: func(sol Solution) error {
			return missing("OnFailure", sol.(Retries).OnFailure)
		},
	})
}

const retryStub = `package main

import "github.com/brokerlab/brokerlab/exercise"

// OnFailure decides what happens to a message whose handler failed with
// err on attempt (1 on the first try).
//
// Contract: err wraps one of exercise.ErrTransient, exercise.ErrPermanent
// or exercise.ErrPoison (tell them apart with errors.Is). Retry a
// transient failure with exercise.RetryAfter(ticks), each retry of a
// message waiting longer than the one before, until exercise.MaxAttempts
// attempts; give up (exercise.GiveUp(), the message goes to the
// dead-letter queue) on a permanent failure or a poison message at once,
// and on a transient one after the last attempt.
func OnFailure(err error, attempt int) exercise.Next {
	// Not written yet: retries everything at once, forever.
	return exercise.RetryAfter(0)
}
`

const retryTask = `Write **OnFailure(err, attempt)** in solution.go: the retry policy of a
worker, by the class of the error.

- a **transient** error (a database timeout) is retried, each retry of a
  message waiting longer than the one before (back-off), until the last of
  exercise.MaxAttempts (5) attempts; then the message is given up;
- a **permanent** error (a card declined) and a **poison** message (one
  that cannot be parsed) are given up at once: no retry can fix them.

The grader sends eight jobs through a queue; some fail for good, some are
poison, some meet a flaky database and some a database that is down for
seven tries in a row.

It checks that nothing permanent is retried, that a transient failure is
retried until the last attempt, that retries back off, that no message
gets more than five attempts, and that every message ends processed or
dead-lettered.`
