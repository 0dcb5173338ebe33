package sim

import (
	"errors"
	"strings"
	"testing"
)

// TestScriptSchemaVersions checks a script's readable versions: a message
// outside them fails permanently, an unversioned one reads as v1, and Fix
// lifts the bounds.
func TestScriptSchemaVersions(t *testing.T) {
	w, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	env := w.Env()
	handle := func(s *Script, v int) error {
		var d Delivery
		d.Reset(env, Message{ID: 1, Key: "k", Headers: Headers{SchemaVersion: v}}, "queue:q", "c", "c", 1)
		return s.Handle(&d)
	}
	old := &Script{MaxVersion: 1}
	if err := handle(old, 0); err != nil {
		t.Errorf("unversioned message on a v1 reader: %v", err)
	}
	err = handle(old, 2)
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "cannot parse schema v2 (reads up to v1)") {
		t.Errorf("v2 on a v1 reader: %v", err)
	}
	renamed := &Script{MinVersion: 2}
	if err := handle(renamed, 1); err == nil || !strings.Contains(err.Error(), "reads v2 and later") {
		t.Errorf("v1 on a v2-only reader: %v", err)
	}
	old.Fix()
	if err := handle(old, 2); err != nil {
		t.Errorf("after Fix: %v", err)
	}
	if err := (&Script{MinVersion: 3, MaxVersion: 2}).Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("min above max: %v", err)
	}
}
