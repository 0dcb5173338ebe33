// Command brokerlab simulates message brokers in memory, deterministically,
// under injected faults.
package main

import (
	"fmt"
	"io"
	"os"
)

// version is the brokerlab release; overridden with -ldflags at release time.
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Fprintln(stdout, "brokerlab", version)
		return 0
	}
	fmt.Fprintf(stdout, "brokerlab %s: deterministic message-broker simulator\n\n", version)
	fmt.Fprintln(stdout, "Available now as a Go library: sim (clock, trace, ledger, checkers) and faults.")
	fmt.Fprintln(stdout, "Coming next: the queue, pub/sub, event log and outbox models, scenario files,")
	fmt.Fprintln(stdout, "the run/trace/check/list commands and the lesson player.")
	return 0
}
