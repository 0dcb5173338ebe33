//go:build !unix

package sim

import "testing"

// cpuTime is unavailable here; benchmarks report wall time only.
func cpuTime() int64 { return 0 }

// reportCPU reports nothing without a CPU clock.
func reportCPU(b *testing.B, start int64) {}
