package producer_test

import (
	"errors"
	"testing"

	"github.com/brokerlab/brokerlab/producer"
)

// TestEnumText checks the one spelling of KeyOrder and OnRefused:
// MarshalText writes the value ("" as the default's name), UnmarshalText
// reads only the names, and other values are errors wrapping
// ErrInvalidConfig.
func TestEnumText(t *testing.T) {
	for _, c := range []struct {
		o    producer.KeyOrder
		want string
	}{{"", "round_robin"}, {producer.RoundRobin, "round_robin"}, {producer.Random, "random"}} {
		b, err := c.o.MarshalText()
		var back producer.KeyOrder
		if string(b) != c.want || err != nil || back.UnmarshalText(b) != nil || string(back) != c.want {
			t.Errorf("key order %q: MarshalText %q %v, back %q; want %q", c.o, b, err, back, c.want)
		}
	}
	for _, c := range []struct {
		p    producer.OnRefused
		want string
	}{{"", "retry"}, {producer.OnRefusedRetry, "retry"}, {producer.OnRefusedDrop, "drop"}} {
		b, err := c.p.MarshalText()
		var back producer.OnRefused
		if string(b) != c.want || err != nil || back.UnmarshalText(b) != nil || string(back) != c.want {
			t.Errorf("on-refused %q: MarshalText %q %v, back %q; want %q", c.p, b, err, back, c.want)
		}
	}
	var o producer.KeyOrder
	var p producer.OnRefused
	for _, err := range []error{o.UnmarshalText([]byte("sequential")), o.UnmarshalText(nil), p.UnmarshalText([]byte("Drop")),
		func() error { _, err := producer.KeyOrder("shuffled").MarshalText(); return err }(),
		func() error { _, err := producer.OnRefused("keep").MarshalText(); return err }()} {
		if !errors.Is(err, producer.ErrInvalidConfig) {
			t.Errorf("got %v, want ErrInvalidConfig", err)
		}
	}
}
