package main

import (
	"io"
	"strconv"
	"testing"
	"time"
)

// BenchmarkExploreJobs runs brokerlab explore over 1000 seeds of a lesson
// with 1 and with 2 jobs in the same run; compare the seeds/s of the two
// (the ratio is the speed-up of the worker pool on this machine).
func BenchmarkExploreJobs(b *testing.B) {
	for _, jobs := range []int{1, 2} {
		b.Run("jobs="+strconv.Itoa(jobs), func(b *testing.B) {
			c := newCLI(io.Discard, io.Discard)
			seeds := 0
			start := time.Now()
			for b.Loop() {
				code := c.main([]string{"explore", "--seeds", "1000", "--jobs", strconv.Itoa(jobs), "--no-shrink", "architecture-choice"})
				if code != exitOK && code != exitFailed {
					b.Fatalf("exit %d", code)
				}
				seeds += 1000
			}
			b.ReportMetric(float64(seeds)/time.Since(start).Seconds(), "seeds/s")
		})
	}
}
