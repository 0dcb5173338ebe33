package main

import (
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/sweep"
)

// BenchmarkExploreJobs runs brokerlab explore over 1000 seeds of a lesson
// with 1 and with 2 jobs in the same run; compare the seeds/s of the two
// (the ratio is the speed-up of the worker pool on this machine, when its
// cores are idle) and their seeds/cpu-s (equal when the workers share
// nothing that costs CPU: no lock, no allocation they contend for).
func BenchmarkExploreJobs(b *testing.B) {
	for _, jobs := range []int{1, 2} {
		b.Run("jobs="+strconv.Itoa(jobs), func(b *testing.B) {
			c := newCLI(io.Discard, io.Discard)
			seeds := 0
			start, cpu := time.Now(), sweep.CPUTime()
			for b.Loop() {
				code := c.main([]string{"explore", "--seeds", "1000", "--jobs", strconv.Itoa(jobs), "--no-shrink", "architecture-choice"})
				if code != exitOK && code != exitFailed {
					b.Fatalf("exit %d", code)
				}
				seeds += 1000
			}
			b.ReportMetric(float64(seeds)/time.Since(start).Seconds(), "seeds/s")
			if used := sweep.CPUTime() - cpu; used > 0 {
				b.ReportMetric(float64(seeds)/used.Seconds(), "seeds/cpu-s")
			}
		})
	}
}
