//go:build unix

package eventlog_test

import (
	"syscall"
	"testing"
)

// cpuTime returns the process's CPU time (user and system) in
// nanoseconds, or 0 when it is unavailable: on a busy machine it is a
// steadier cost than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the CPU time per operation since start as cpu-ns/op.
func reportCPU(b *testing.B, start int64) {
	if end := cpuTime(); start != 0 && b.N > 0 {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}
