//go:build unix

package lab

import "syscall"

// processCPU returns the process's user plus system CPU time in
// nanoseconds (every thread, the collector's included), or 0 when it is
// unavailable.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
