package live

import (
	"bytes"
	"runtime"
)

// GoroutineID returns the calling goroutine's id, read from the header of
// its stack trace ("goroutine 7 [running]:"), or 0 if the header cannot be
// read. A driver that owns a simulation on one goroutine, as Driver and
// the Watermill adapter's lockstep driver do, compares it with its owner's
// to recognise a call made from inside one of its own callbacks (a
// reentrant call) and refuse it instead of waiting for itself. Go has no
// API for the id; the header has had this form since Go 1, and
// golang.org/x/net/http2 reads it the same way to check which goroutine it
// is on. A caller treats 0 as "unknown", never as a match. It costs one
// short stack trace, about a microsecond; the deterministic core never
// calls it.
func GoroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return 0
	}
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
