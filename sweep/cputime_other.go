//go:build !unix

package sweep

import "time"

// CPUTime returns 0: the process's CPU time is unavailable here, and a
// Report then gives wall-clock figures only.
func CPUTime() time.Duration { return 0 }
