package faults

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// validateByMap is Plan.Validate as it was written before short plans
// were scanned in pairs: the reference the scan must agree with.
func validateByMap(p Plan) error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range p.Rules {
		if err := r.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[r.Name] {
			errs = append(errs, fmt.Errorf("%w: rule name %q used twice", ErrInvalidRule, r.Name))
		}
		seen[r.Name] = true
	}
	return errors.Join(errs...)
}

// TestPlanValidateMatchesTheMapOfNames checks Plan.Validate against
// validateByMap on random plans, short and long, with repeated names,
// invalid rules (an invalid rule's name is not taken) and rules with
// patterns, good and bad.
func TestPlanValidateMatchesTheMapOfNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	names := []string{"a", "b", "c", "d", ""}
	for round := range 2000 {
		n := rng.IntN(planScan + 6)
		var p Plan
		for range n {
			r := Rule{Name: names[rng.IntN(len(names))], Point: HandlerTransient, Probability: 0.5}
			switch rng.IntN(6) {
			case 0:
				r.Point = "no.such.point"
			case 1:
				r.Probability = 2
			case 2:
				r.Match.Key = "kunde-*"
			case 3:
				r.Match.Where = "[" // a bad pattern
			}
			p.Rules = append(p.Rules, r)
		}
		got, want := p.Validate(), validateByMap(p)
		if fmt.Sprint(got) != fmt.Sprint(want) || errors.Is(got, ErrInvalidRule) != errors.Is(want, ErrInvalidRule) {
			t.Fatalf("round %d, plan %+v:\ngot  %v\nwant %v", round, p.Rules, got, want)
		}
	}
}

// TestRuleValidateChecksEveryPattern checks that a bad pattern in any
// field of a rule's Match is rejected, whatever the other fields hold:
// Rule.Validate skips the patterns only of a rule without a Match.
func TestRuleValidateChecksEveryPattern(t *testing.T) {
	fields := []func(m *Match) *string{
		func(m *Match) *string { return &m.Key },
		func(m *Match) *string { return &m.Consumer },
		func(m *Match) *string { return &m.Group },
		func(m *Match) *string { return &m.Type },
		func(m *Match) *string { return &m.Where },
	}
	for i, bad := range fields {
		for j, other := range fields {
			r := Rule{Name: "r", Point: HandlerTransient}
			*bad(&r.Match) = "["
			if j != i {
				*other(&r.Match) = "kunde-*"
			}
			if err := r.Validate(); !errors.Is(err, ErrInvalidRule) {
				t.Errorf("bad pattern in field %d (field %d set): %v, want ErrInvalidRule", i, j, err)
			}
		}
	}
	if err := (Rule{Name: "r", Point: HandlerTransient, Match: Match{Key: "kunde-*", Where: "queue:*"}}).Validate(); err != nil {
		t.Errorf("good patterns: %v", err)
	}
}
