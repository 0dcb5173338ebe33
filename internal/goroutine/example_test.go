package goroutine_test

import (
	"fmt"

	"github.com/brokerlab/brokerlab/internal/goroutine"
)

// A driver remembers the goroutine that owns it and compares a caller's
// against it.
func ExampleID() {
	owner := goroutine.ID()
	same := make(chan bool)
	go func() { same <- goroutine.ID() == owner }()
	fmt.Println("owner known:", owner != 0)
	fmt.Println("other goroutine is the owner:", <-same)
	// Output:
	// owner known: true
	// other goroutine is the owner: false
}
