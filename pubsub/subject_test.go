package pubsub

import (
	"errors"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, subject string
		want             bool
	}{
		{"orders", "orders", true},
		{"orders", "orders.created", false},
		{"orders.created", "orders.created", true},
		{"orders.created", "orders.updated", false},
		{"orders.*", "orders.created", true},
		{"orders.*", "orders", false},
		{"orders.*", "orders.eu.created", false},
		{"orders.*.created", "orders.eu.created", true},
		{"orders.*.created", "orders.eu.updated", false},
		{"*.created", "orders.created", true},
		{"*", "orders", true},
		{"*", "orders.created", false},
		{"orders.>", "orders.created", true},
		{"orders.>", "orders.eu.created", true},
		{"orders.>", "orders", false},
		{">", "orders", true},
		{">", "orders.eu.created", true},
		{"*.>", "orders", false},
		{"*.>", "orders.created", true},
		{"orders.*.>", "orders.eu", false},
		{"orders.*.>", "orders.eu.created.v2", true},
		{"order", "orders", false},
		{"orders", "order", false},
		{"a.b", "a.bc", false},
		// Invalid patterns and subjects never match.
		{"orders.>.x", "orders.a.x", false},
		{"ord*", "orders", false},
		{"orders..x", "orders..x", false},
		{"orders.*", "orders.*", false},
		{"orders", "", false},
		{"", "orders", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.subject); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.subject, got, tt.want)
		}
	}
}

func TestPatternAndSubjectErrors(t *testing.T) {
	for _, p := range []string{"", ".", "a.", ".a", "a..b", "a.>.b", "a*", "a.b>", "a b", "a.\tb"} {
		if _, err := ParsePattern(p); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParsePattern(%q) = %v, want ErrInvalidSubject", p, err)
		}
	}
	for _, s := range []string{"", "a.*", ">", "a..b", "a.b*", "a b"} {
		if err := ValidSubject(s); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ValidSubject(%q) = %v, want ErrInvalidSubject", s, err)
		}
	}
	for _, p := range []string{"a", "a.b", "*", ">", "a.*.c", "a.>", "kunde-1.x_y"} {
		if _, err := ParsePattern(p); err != nil {
			t.Errorf("ParsePattern(%q): %v", p, err)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("orders.*", "orders.created")
	f.Add("orders.>", "orders.eu.created")
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		p, err := ParsePattern(pattern)
		if err != nil {
			return
		}
		if ValidSubject(subject) != nil {
			return
		}
		got := p.Match(subject)
		if p.String() == subject && !got {
			t.Errorf("literal pattern %q does not match itself", pattern)
		}
	})
}
