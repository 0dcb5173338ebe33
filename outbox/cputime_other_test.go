//go:build !unix

package outbox

// cpuTime is unavailable here; benchmarks then report wall time only.
func cpuTime() int64 { return 0 }
