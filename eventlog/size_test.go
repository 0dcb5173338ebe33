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

// A group allocates its members once, so a sweep allocates them once per
// seed. A handler member of at most 320 bytes takes the 320-byte size
// class (an object of at most 512 bytes carries no allocation header),
// as it keeps its delivery (320 bytes itself) behind a pointer, made only
// when it first hands a record to its handler (see Member.delivery). The
// room for a few partitions (Member.ownRoom) fills the class: a field
// added to it moves every member to the 352-byte class.
func TestMemberSize(t *testing.T) {
	if n := unsafe.Sizeof(Member{}); n > 320 {
		t.Errorf("a Member takes %d bytes, above its 320-byte size class", n)
	}
}

// A group keeps a state of at most 128 bytes per partition: a group of
// the six partitions of the log sweep takes its states in one 768-byte
// allocation, and a state of 136 bytes would move them to the 896-byte
// class.
func TestGroupPartSize(t *testing.T) {
	if n := unsafe.Sizeof(groupPart{}); n > 128 {
		t.Errorf("a group's state of a partition takes %d bytes, want at most 128", n)
	}
}

// A Log of at most 760 bytes takes the 768-byte size class: an object
// above 512 bytes that holds pointers carries an 8-byte header. Its memo
// of keys (keyMemo, 320 bytes) fills it: any field added would move every
// log to the 896-byte class.
func TestLogSize(t *testing.T) {
	if n := unsafe.Sizeof(Log{}); n > 760 {
		t.Errorf("a Log takes %d bytes, above the 760 its 768-byte size class holds beside its header", n)
	}
}
