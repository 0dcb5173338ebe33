package sim

import (
	"errors"
	"fmt"
	"testing"
)

func TestRateLimitedIsTransientWithADelay(t *testing.T) {
	err := fmt.Errorf("payment api: %w", &RateLimited{After: 3, Reason: "429"})
	if Classify(err) != ClassTransient || !errors.Is(err, ErrTransient) {
		t.Errorf("Classify(rate limited) = %v, want transient", Classify(err))
	}
	if d, ok := RetryAfter(err); !ok || d != 3 {
		t.Errorf("RetryAfter = %d, %v, want 3, true", d, ok)
	}
	if _, ok := RetryAfter(ErrTransient); ok {
		t.Error("a plain transient error has a Retry-After")
	}
	if got := err.Error(); got != "payment api: rate limited, retry after 3 ticks: 429" {
		t.Errorf("Error() = %q", got)
	}
}
