package eventlog

import (
	"testing"
	"unsafe"
)

// A resident record costs at most 256 bytes beyond its key and body.
func TestResidentRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 256 {
		t.Errorf("a resident record takes %d bytes", n)
	}
}
