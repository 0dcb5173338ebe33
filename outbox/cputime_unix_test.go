//go:build unix

package outbox

import "syscall"

// cpuTime returns the process's user plus system CPU time in nanoseconds,
// or 0 when it is unavailable. Benchmarks report it next to wall time
// because wall time is noisy on a shared machine.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
