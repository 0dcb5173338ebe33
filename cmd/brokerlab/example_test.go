package main

import (
	"fmt"
	"os"
)

// `brokerlab run --quiet` prints one verdict per scenario, and a total line
// when there are several; the exit code
// is 0 when every expectation of every scenario holds. --seed may follow
// the lesson names.
func Example_run() {
	c := newCLI(os.Stdout, os.Stdout)
	code := c.main([]string{"run", "--quiet", "dual-write", "poison-dlq", "--seed", "4"})
	fmt.Println("exit", code)
	// Output:
	// PASS dual-write (seed 4, 18 ticks)
	// PASS poison-dlq (seed 4, 70 ticks)
	// TOTAL: 2 of 2 scenarios passed
	// exit 0
}
