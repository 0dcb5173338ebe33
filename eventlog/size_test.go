package eventlog

import (
	"testing"
	"unsafe"
)

// A resident record of a narrow partition costs 64 bytes beyond its key
// and body, one of a wide partition 88; a record a member holds in its
// batch costs 32.
func TestResidentRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 64 {
		t.Errorf("a resident record takes %d bytes, want at most 64", n)
	}
	if n := unsafe.Sizeof(entry{}) + unsafe.Sizeof(aside{}); n > 88 {
		t.Errorf("a resident record of a wide partition takes %d bytes, want at most 88", n)
	}
	if n := unsafe.Sizeof(held{}); n > 32 {
		t.Errorf("a held record takes %d bytes, want at most 32", n)
	}
}
