//go:build unix

package sweep

import (
	"syscall"
	"time"
)

// CPUTime returns the process's user plus system CPU time, or 0 when it
// is unavailable. It counts every thread of the process, the collector's
// background workers included, so a sweep is charged for the garbage its
// seeds leave behind. It costs one getrusage call.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
