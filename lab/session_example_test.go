package lab_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/lab"
)

// A session steps a lesson, takes a hand action, and keeps it when time
// travel goes back before it and forward again; acting in the past
// branches off and says what it drops.
func Example() {
	s, err := lab.OpenLesson("poison-dlq", lab.SessionOptions{})
	if err != nil {
		panic(err)
	}
	for s.Now() < 14 {
		s.Step()
	}
	snap, _ := s.Do(lab.Redrive(""))
	fmt.Printf("t=%d %s\n", snap.Header.Tick, snap.Header.Notice)
	s.Seek(10)
	snap = s.Seek(20)
	fmt.Printf("t=%d redriven %d, %d action(s) in the log\n", snap.Header.Tick, snap.Ledger.Redriven, len(s.Log()))
	s.Seek(10)
	snap, _ = s.Do(lab.Crash("worker"))
	fmt.Printf("t=%d %s\n", snap.Header.Tick, snap.Header.Notice)
	snap = s.Seek(20)
	fmt.Printf("t=%d redriven %d, verdict %s\n", snap.Header.Tick, snap.Ledger.Redriven, snap.Verdict.Line())
	// Output:
	// t=14 redrove 4 messages from orders-dlq
	// t=20 redriven 4, 1 action(s) in the log
	// t=10 crashed worker; dropped the redrive at t=14
	// t=20 redriven 0, verdict so far 1 of 7 hold, 6 not yet
}
