package exercise

import (
	"strings"
	"testing"
)

// The model solution of exercise 2.
func dlqModel() Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			if err := handle(m.Body); err != nil {
				if m.Attempts >= max {
					*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
					q.Ack(m.ID)
				}
				continue
			}
			q.Ack(m.ID)
		}
	}}
}

// Wrong: every failure is dead-lettered at once.
func dlqFirstFailure() Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			if err := handle(m.Body); err != nil {
				*dlq = append(*dlq, DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
			}
			q.Ack(m.ID)
		}
	}}
}

// Wrong: a failure is retried forever (no dead-letter list at all).
func dlqRetryForever() Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			if handle(m.Body) == nil {
				q.Ack(m.ID)
			}
		}
	}}
}

// Wrong: a failure is acked (swallowed) and forgotten.
func dlqSwallow() Solution {
	return DeadLetterLoop{ProcessAll: func(q WorkQueue, handle func(string) error, max int, dlq *[]DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			_ = handle(m.Body)
			q.Ack(m.ID)
		}
	}}
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
