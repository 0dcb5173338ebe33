package bench

import "testing"

// reportCPU reports the process CPU time spent since start (a cpuTime
// reading taken when the timed loop began) per operation, as cpu-ns/op.
// On a loaded machine wall time swings with the neighbours' load; CPU time
// counts only this process's work and is the figure the report's ratios
// use. It costs one getrusage call.
func reportCPU(b *testing.B, start int64) {
	if start == 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuLoop runs op as `for b.Loop()` would and reports cpu-ns/op.
func cpuLoop(b *testing.B, op func()) {
	start := cpuTime()
	for b.Loop() {
		op()
	}
	reportCPU(b, start)
}
