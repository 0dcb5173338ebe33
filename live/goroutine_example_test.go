package live_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/live"
)

// A driver remembers the goroutine that owns it and compares a caller's
// against it.
func ExampleGoroutineID() {
	owner := live.GoroutineID()
	same := make(chan bool)
	go func() { same <- live.GoroutineID() == owner }()
	fmt.Println("owner known:", owner != 0)
	fmt.Println("other goroutine is the owner:", <-same)
	// Output:
	// owner known: true
	// other goroutine is the owner: false
}
