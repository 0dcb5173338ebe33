package exercise_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/exercise"
)

// A dead-letter loop that dead-letters every failure at once is graded
// over 50 seeds: the grader names the property it breaks, shrinks the
// lowest failing seed to the one fault that matters and tells it by tick.
func ExampleExercise_Grade() {
	e, err := exercise.Lookup("dead-letter")
	if err != nil {
		fmt.Println(err)
		return
	}
	hasty := exercise.DeadLetterLoop{ProcessAll: func(q exercise.WorkQueue, handle func(string) error, max int, dlq *[]exercise.DeadLetter) {
		for q.Open() > 0 {
			m, ok := q.Receive()
			if !ok {
				q.Tick()
				continue
			}
			if err := handle(m.Body); err != nil {
				*dlq = append(*dlq, exercise.DeadLetter{Body: m.Body, Attempts: m.Attempts, Error: err.Error()})
			}
			q.Ack(m.ID)
		}
	}}
	fmt.Print(e.Grade(hasty, 50).Text(e))
	// Output:
	// exercise 2, dead-letter: Write the dead-letter loop
	//   ok    every message is processed or dead-lettered
	//   FAIL  a message is dead-lettered only after its last allowed attempt: 47 of 50 seeds; seed 1: a message was dead-lettered before its last attempt (order-4 after attempt 1 of 3)
	//   ok    a poison message never blocks the queue
	//   ok    a dead letter records body, attempts and error
	//   ok    ProcessAll runs without panicking
	// FAIL: 3 of 50 seeds passed
	//
	// Seed 1, shrunk from 3 faults to 1 (4 runs):
	//   t=1   fault  a poison message: its handler fails on every try (handler.poison, rule poison, key order-4)
	//   t=1   FAIL   a message was dead-lettered before its last attempt (order-4 after attempt 1 of 3)
	// Replay it in the player: go run . play   (seed 1, exactly these faults)
}
