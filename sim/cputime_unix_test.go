//go:build unix

package sim

import (
	"syscall"
	"testing"
)

// cpuTime returns the process's user plus system CPU time in nanoseconds,
// or 0 when it is unavailable: on a shared machine it varies far less
// than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the CPU time since start per operation.
func reportCPU(b *testing.B, start int64) {
	if start != 0 && b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}
