// Command brokerlab simulates message brokers in memory, deterministically,
// under injected faults, and plays the results as lessons.
//
//	brokerlab                         lesson menu (in a terminal)
//	brokerlab play FILE|LESSON        play one scenario in the terminal
//	brokerlab play --compare A B      play two runs side by side (or A --seeds N,M, or a lesson's variants)
//	brokerlab record FILE|LESSON      write an asciinema cast of the player (--cast OUT.cast)
//	brokerlab run FILE|LESSON...      run headless, print a report
//	brokerlab trace FILE|LESSON       print the trace (text, json, mermaid)
//	brokerlab check FILE...           validate scenario files
//	brokerlab schema                  print the JSON Schema of scenario files
//	brokerlab verify TRACE.jsonl      fold the ledger from a trace and check it
//	brokerlab explore FILE|LESSON     sweep seeds, shrink the first failure, write NAME.min.yaml
//	brokerlab list                    list the built-in lessons
//
// Exit codes: 0 success (every expectation holds), 1 an expectation failed,
// 2 bad input (usage, unreadable or invalid scenario, a run over its budget,
// no terminal to play in; brokerlab with no arguments and no terminal prints
// its help and exits 0).
package main

import (
	"os"
	"runtime/debug"
)

// memoryLimit is the soft memory limit the command runs under unless
// GOMEMLIMIT says otherwise: the garbage collector works harder near it, so
// a run's memory stays close to what it really holds (the budget on derived
// work bounds that) instead of growing to twice its live heap.
const memoryLimit = 192 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(newCLI(os.Stdout, os.Stderr).main(os.Args[1:]))
}
