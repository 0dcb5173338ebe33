//go:build !unix

package eventlog_test

import "testing"

// cpuTime is 0 where the process's CPU time is not available.
func cpuTime() int64 { return 0 }

// reportCPU reports nothing where the CPU time is not available.
func reportCPU(*testing.B, int64) {}
