//go:build !unix

package bench

// cpuTime is unavailable here; the benchmarks then report 0 cpu-ns/op and
// the report falls back to wall time.
func cpuTime() int64 { return 0 }

// peakRSS is unavailable here.
func peakRSS() int64 { return 0 }
