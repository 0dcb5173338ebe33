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

// Asking an error for its Retry-After allocates nothing, rate limited or
// not: queue consumers ask it of every handler error.
func TestRetryAfterDoesNotAllocate(t *testing.T) {
	plain := fmt.Errorf("db: %w", ErrTransient)
	limited := fmt.Errorf("api: %w", &RateLimited{After: 2})
	if n := testing.AllocsPerRun(100, func() { RetryAfter(plain); RetryAfter(limited) }); n != 0 {
		t.Fatalf("RetryAfter allocates %v times per pair of calls, want 0", n)
	}
}
