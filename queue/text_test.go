package queue_test

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/queue"
)

// TestEnumText checks the one spelling of AckMode and RetryKind: String,
// MarshalText and UnmarshalText agree, and unknown values are errors.
func TestEnumText(t *testing.T) {
	for m, w := range map[queue.AckMode]string{queue.AckAfterProcess: "after", queue.AckBeforeProcess: "before"} {
		var got queue.AckMode
		b, err := m.MarshalText()
		if m.String() != w || string(b) != w || err != nil || got.UnmarshalText([]byte(w)) != nil || got != m {
			t.Errorf("ack mode %d: String %q, MarshalText %q %v, UnmarshalText %d; want %q", m, m.String(), b, err, got, w)
		}
	}
	for k, w := range map[queue.RetryKind]string{queue.RetryNone: "none", queue.RetryFixed: "fixed", queue.RetryExponential: "exponential"} {
		var got queue.RetryKind
		b, err := k.MarshalText()
		if k.String() != w || string(b) != w || err != nil || got.UnmarshalText([]byte(w)) != nil || got != k {
			t.Errorf("retry kind %d: String %q, MarshalText %q %v, UnmarshalText %d; want %q", k, k.String(), b, err, got, w)
		}
	}
	var m queue.AckMode
	var k queue.RetryKind
	for _, err := range []error{m.UnmarshalText([]byte("ack-before-process")), k.UnmarshalText([]byte("Fixed")),
		func() error { _, err := queue.AckMode(7).MarshalText(); return err }(),
		func() error { _, err := queue.RetryKind(7).MarshalText(); return err }()} {
		if !errors.Is(err, queue.ErrInvalidConfig) {
			t.Errorf("got %v, want ErrInvalidConfig", err)
		}
	}
}
