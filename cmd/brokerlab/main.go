// Command brokerlab simulates message brokers in memory, deterministically,
// under injected faults, and plays the results as lessons.
//
//	brokerlab                         lesson menu (in a terminal)
//	brokerlab play FILE|LESSON        play one scenario in the terminal
//	brokerlab run FILE|LESSON...      run headless, print a report
//	brokerlab trace FILE|LESSON       print the trace (text, json, mermaid)
//	brokerlab check FILE...           validate scenario files
//	brokerlab list                    list the built-in lessons
//
// Exit codes: 0 success (every expectation holds), 1 an expectation failed,
// 2 bad input (usage, unreadable or invalid scenario, no terminal to play in).
package main

import (
	"os"
)

func main() {
	os.Exit(newCLI(os.Stdout, os.Stderr).main(os.Args[1:]))
}
