//go:build unix

package bench

import "syscall"

// cpuTime returns the process's user plus system CPU time in nanoseconds,
// or 0 when it is unavailable. It counts every thread of the process, the
// collector's background workers included, so a benchmark is charged for
// the garbage it leaves behind even when the collector runs on another core.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// peakRSS returns the process's peak resident set size in bytes (Linux
// reports ru_maxrss in KiB), or 0 when it is unavailable.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10
}
