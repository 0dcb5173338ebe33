//go:build !unix

package lab

// processCPU is unavailable here: the frame benchmark then reports 0 for
// its CPU times.
func processCPU() int64 { return 0 }
