package exercise

import (
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/lab"
	"github.com/brokerlab/brokerlab/sim"
)

// dlqLoop is a ProcessAll that receives until the queue is empty,
// ticking while nothing is visible, and hands each message to each: the
// part the solutions below differ in.
func dlqLoop(each func(q WorkQueue, m Message, handle func(string) error, max int, dlq *[]DeadLetter)) Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			each(q, m, handle, max, dlq)
		}
	}}
}

// The model solution of exercise 2.
func dlqModel() Solution {
	return dlqLoop(func(q WorkQueue, m Message, handle func(string) error, max int, dlq *[]DeadLetter) {
		if err := handle(m.Body); err != nil {
			if m.Attempts >= max {
				*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
				q.Ack(m.ID)
			}
			return
		}
		q.Ack(m.ID)
	})
}

// Wrong: every failure is dead-lettered at once.
func dlqFirstFailure() Solution {
	return dlqLoop(func(q WorkQueue, m Message, handle func(string) error, max int, dlq *[]DeadLetter) {
		if err := handle(m.Body); err != nil {
			*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
		}
		q.Ack(m.ID)
	})
}

// Wrong: a failure is retried forever (no dead-letter list at all).
func dlqRetryForever() Solution {
	return dlqLoop(func(q WorkQueue, m Message, handle func(string) error, max int, dlq *[]DeadLetter) {
		if handle(m.Body) == nil {
			q.Ack(m.ID)
		}
	})
}

// Wrong: a failure is acked (swallowed) and forgotten.
func dlqSwallow() Solution {
	return dlqLoop(func(q WorkQueue, m Message, handle func(string) error, max int, dlq *[]DeadLetter) {
		_ = handle(m.Body)
		q.Ack(m.ID)
	})
}

// What the workspace's stub does.
func dlqStubbed() Solution {
	return DeadLetterLoop{ProcessAll: func(WorkQueue, func(string) error, int, *[]DeadLetter) {}}
}

// A loop that never ends after the queue is empty is stopped and told so.
func TestDeadLetterEndlessAfterEmpty(t *testing.T) {
	e, _ := Lookup("dead-letter")
	sol := dlqModel().(DeadLetterLoop)
	endless := DeadLetterLoop{ProcessAll: func(q WorkQueue, h func(string) error, max int, dlq *[]DeadLetter) {
		sol.ProcessAll(q, h, max, dlq)
		for {
			q.Tick()
		}
	}}
	rep := e.Grade(endless, 3)
	if rep.Pass() || rep.Props[2].First == nil || !strings.Contains(rep.Props[2].First.Text, "every message was acked") {
		t.Fatalf("\n%s", rep.Text(e))
	}
}

// Wrong: each message is acked as soon as it is received, before its
// handler runs; a failure after that ack is a loss, not a retry.
func dlqAckFirst() Solution {
	return dlqLoop(func(q WorkQueue, m Message, handle func(string) error, max int, dlq *[]DeadLetter) {
		q.Ack(m.ID)
		if err := handle(m.Body); err != nil {
			if m.Attempts >= max {
				*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
				q.Ack(m.ID)
			}
			return
		}
		q.Ack(m.ID)
	})
}

// Wrong: each message is acked first and dead-lettered on its first
// failure; nothing is lost, but nothing waits for its last attempt.
func dlqAckFirstDeadLetterAtOnce() Solution {
	return dlqLoop(func(q WorkQueue, m Message, handle func(string) error, max int, dlq *[]DeadLetter) {
		q.Ack(m.ID)
		if err := handle(m.Body); err != nil {
			*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
		}
	})
}

// Wrong: every message is acked and never handled.
func dlqAckOnly() Solution {
	return dlqLoop(func(q WorkQueue, m Message, _ func(string) error, _ int, _ *[]DeadLetter) {
		q.Ack(m.ID)
	})
}

// A message acked before its handler ran is lost when the handler then
// fails: the grader says so at the failure, naming the message, and the
// replay of the shrunk run traces the loss with its cause, so that the
// ledger counts it.
func TestDeadLetterAckBeforeEffect(t *testing.T) {
	e, _ := Lookup("dead-letter")
	rep := e.GradeSeed(dlqAckFirst(), 3, nil)
	if rep.Pass() {
		t.Fatalf("ack before effect passes seed 3:\n%s", rep.Text(e))
	}
	first := rep.Props[0].First
	if first == nil || !strings.Contains(first.Text, "was acked before") || !strings.Contains(first.Text, "it is lost") {
		t.Fatalf("the no-loss violation does not say which message was lost and why:\n%s", rep.Text(e))
	}
	rep = e.Grade(dlqAckFirst(), 0)
	sh := rep.Shrunk
	if sh == nil || sh.Prop != "no-loss" {
		t.Fatalf("not shrunk to a no-loss failure:\n%s", rep.Text(e))
	}
	rec, err := e.Recording(dlqAckFirst(), sh.Seed, &sh.Minimal)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, ev := range rec.Trace {
		if ev.Kind == sim.KindLost {
			lost++
			if ev.Cause != sim.CauseAckBeforeProcess || ev.Key == "" || ev.Msg == 0 {
				t.Errorf("the loss is traced without its message or cause: %+v", ev)
			}
		}
	}
	if lost == 0 {
		t.Fatal("the replay traces no loss")
	}
	if got := lab.NewPlayback(rec).Seek(rec.End).Ledger.Lost; got != lost {
		t.Errorf("the replay's ledger counts %d lost, the trace %d", got, lost)
	}
}

// TestDeadLetterRetryAfterAckIsNoLoss: a loop that acks first and then
// retries the handler in-process until it succeeds, dead-lettering what
// still fails after three tries, loses nothing: a retry that succeeds
// applies the message, and one that ends in the dead-letter list is
// there. Its dead letters come before the message's last receive, which
// last-attempt may judge; no-loss must hold on every seed.
func TestDeadLetterRetryAfterAckIsNoLoss(t *testing.T) {
	e, _ := Lookup("dead-letter")
	sol := dlqLoop(func(q WorkQueue, m Message, handle func(string) error, max int, dlq *[]DeadLetter) {
		q.Ack(m.ID)
		var err error
		for a := 1; a <= 3; a++ {
			if err = handle(m.Body); err == nil {
				break
			}
		}
		if err != nil {
			*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
		}
	})
	rep := e.Grade(sol, 40)
	for _, p := range rep.Props {
		if p.ID == "no-loss" && (p.Failed > 0 || p.Judged == 0) {
			t.Fatalf("no-loss: %d of %d seeds failed, %d judged; a retried message is no loss:\n%s", p.Failed, rep.Seeds, p.Judged, rep.Text(e))
		}
	}
}
