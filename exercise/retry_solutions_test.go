package exercise

import "errors"

// The model solution of exercise 6.
func retryModel() Solution {
	return Retries{OnFailure: func(err error, attempt int) Next {
		if errors.Is(err, ErrPermanent) || errors.Is(err, ErrPoison) || attempt >= MaxAttempts {
			return GiveUp()
		}
		return RetryAfter(1 << (attempt - 1))
	}}
}

// Wrong: every error is retried, whatever its class.
func retryAll() Solution {
	return Retries{OnFailure: func(err error, attempt int) Next {
		if attempt >= MaxAttempts {
			return GiveUp()
		}
		return RetryAfter(1 << (attempt - 1))
	}}
}

// Wrong: every error is given up at once.
func retryNever() Solution {
	return Retries{OnFailure: func(error, int) Next { return GiveUp() }}
}

// Wrong: transient errors are retried at once, without back-off.
func retryNow() Solution {
	return Retries{OnFailure: func(err error, attempt int) Next {
		if errors.Is(err, ErrPermanent) || errors.Is(err, ErrPoison) || attempt >= MaxAttempts {
			return GiveUp()
		}
		return RetryAfter(1)
	}}
}

// What the workspace's stub does.
func retryStubbed() Solution {
	return Retries{OnFailure: func(error, int) Next { return RetryAfter(0) }}
}
