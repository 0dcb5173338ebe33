package outbox_test

import (
	"encoding"
	"errors"
	"fmt"
	"testing"

	"github.com/brokerlab/brokerlab/outbox"
)

// text is an enum of the package: it prints, marshals and unmarshals.
type text interface {
	fmt.Stringer
	encoding.TextMarshaler
}

// TestEnumText checks the one spelling of Mode, Ordering, RelayKind and
// Dedup: String and MarshalText agree, UnmarshalText reads it back, and
// unknown values are errors wrapping ErrInvalidConfig.
func TestEnumText(t *testing.T) {
	mode := func(b []byte) (any, error) { var v outbox.Mode; err := v.UnmarshalText(b); return v, err }
	ord := func(b []byte) (any, error) { var v outbox.Ordering; err := v.UnmarshalText(b); return v, err }
	kind := func(b []byte) (any, error) { var v outbox.RelayKind; err := v.UnmarshalText(b); return v, err }
	cases := []struct {
		v    text
		want string
		back func([]byte) (any, error)
	}{
		{outbox.CommitThenPublish, "commit_then_publish", mode},
		{outbox.PublishThenCommit, "publish_then_commit", mode},
		{outbox.Outbox, "outbox", mode},
		{outbox.InOrder, "global", ord},
		{outbox.PerAggregate, "per_aggregate", ord},
		{outbox.Poll, "poll", kind},
		{outbox.CDC, "cdc", kind},
	}
	for _, c := range cases {
		b, err := c.v.MarshalText()
		if c.v.String() != c.want || string(b) != c.want || err != nil {
			t.Errorf("%v: String %q, MarshalText %q %v; want %q", c.v, c.v.String(), b, err, c.want)
		}
		if got, err := c.back([]byte(c.want)); err != nil || got != any(c.v) {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", c.want, got, err, c.v)
		}
	}
	if outbox.NoDedup.String() != "none" || outbox.ByMessageID.String() != "message_id" || outbox.ByBusinessKey.String() != "business_key" {
		t.Errorf("dedup names %v %v %v", outbox.NoDedup, outbox.ByMessageID, outbox.ByBusinessKey)
	}
	bad := func(back func([]byte) (any, error), s string) error { _, err := back([]byte(s)); return err }
	for _, err := range []error{bad(mode, "commit-then-publish"), bad(ord, "in-order"), bad(kind, "CDC"),
		func() error { _, err := outbox.Mode(9).MarshalText(); return err }(),
		func() error { _, err := outbox.Ordering(9).MarshalText(); return err }(),
		func() error { _, err := outbox.RelayKind(9).MarshalText(); return err }()} {
		if !errors.Is(err, outbox.ErrInvalidConfig) {
			t.Errorf("got %v, want ErrInvalidConfig", err)
		}
	}
}
