package engine

import (
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
)

// Goal: PlanRetry retries a failed execution with attempts left, after
// the policy's backoff, and nothing else.
func TestPlanRetry(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &api.RetryPolicy{InitialInterval: api.Duration(time.Second), MaximumAttempts: 3}
	failed := TurnPlan{Status: api.StatusFailed, Error: &api.Error{Type: "Boom"}}
	if r := PlanRetry(&failed, p, 1, false, now); r == nil || !r.Retry || !r.At.Equal(now.Add(time.Second)) {
		t.Fatalf("attempt 1: %+v, want a retry at +1s", r)
	}
	if r := PlanRetry(&failed, p, 2, false, now); r == nil || !r.At.Equal(now.Add(2*time.Second)) {
		t.Fatalf("attempt 2: %+v, want a retry at +2s", r)
	}
	if r := PlanRetry(&failed, p, 3, false, now); r != nil {
		t.Fatalf("attempt 3 of 3 retried: %+v", r)
	}
	if r := PlanRetry(&failed, p, 1, true, now); r != nil {
		t.Fatalf("a cancel-requested execution retried: %+v", r)
	}
	if r := PlanRetry(&failed, nil, 1, false, now); r != nil {
		t.Fatalf("no policy, retried: %+v", r)
	}
	nonRetryable := &api.RetryPolicy{NonRetryableErrorTypes: []string{"Boom"}}
	if r := PlanRetry(&failed, nonRetryable, 1, false, now); r != nil {
		t.Fatalf("a non-retryable error retried: %+v", r)
	}
	for _, st := range []string{api.StatusCompleted, api.StatusCanceled, api.StatusTerminated} {
		if r := PlanRetry(&TurnPlan{Status: st}, p, 1, false, now); r != nil {
			t.Fatalf("%s retried: %+v", st, r)
		}
	}
}
