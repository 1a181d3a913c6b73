package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/tetherhq/tether/api"
)

// ParseCron parses a cron schedule in standard syntax (five fields,
// minute first; descriptors such as "@hourly" and "@every 1h30m"),
// evaluated in UTC.
func ParseCron(spec string) (cron.Schedule, error) {
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("invalid cron schedule: %w", err)
	}
	return sched, nil
}

// CronNext is the schedule's first time strictly after after, in UTC.
func CronNext(spec string, after time.Time) (time.Time, error) {
	sched, err := ParseCron(spec)
	if err != nil {
		return time.Time{}, err
	}
	next := sched.Next(after.UTC())
	if next.IsZero() {
		return time.Time{}, fmt.Errorf("cron schedule %q has no next time", spec)
	}
	return next, nil
}

// CronRun is the next run of a cron workflow whose execution ended.
type CronRun struct {
	// At is when the next execution starts (its start message's
	// visible_at).
	At time.Time
	// LastCompletionResult is the result of the last execution that
	// completed: the one that just ended, or when it failed the one
	// before it (nil when none has).
	LastCompletionResult json.RawMessage
	// Retry: the next execution is a retry of a failed one (PlanRetry),
	// not a cron run.
	Retry bool
}

// PlanCron decides whether the execution that plan ends is followed by
// the next run of its cron schedule: when the instance has a schedule,
// the execution completed or failed (a cancelled one, or one whose cancel
// was requested, ends the cron), and the schedule has a next time after
// now. prevResult is the last completion result the instance holds.
func PlanCron(plan *TurnPlan, schedule string, cancelRequested bool, prevResult json.RawMessage, now time.Time) (*CronRun, error) {
	if schedule == "" || cancelRequested || plan.ContinueAsNew {
		return nil, nil
	}
	run := &CronRun{}
	switch plan.Status {
	case api.StatusCompleted:
		run.LastCompletionResult = plan.Result
	case api.StatusFailed:
		run.LastCompletionResult = prevResult
	default:
		return nil, nil
	}
	at, err := CronNext(schedule, now)
	if err != nil {
		return nil, err
	}
	run.At = at
	return run, nil
}

// PlanRetry decides whether the execution that plan ends is followed by
// another attempt under its retry policy (a child workflow's): when the
// execution failed (not cancelled, terminated or continued as new, and
// without a cancel request) and NextRetry allows attempt+1. The next
// execution starts after the policy's backoff, as a cron's next run does.
func PlanRetry(plan *TurnPlan, policy *api.RetryPolicy, attempt int32, cancelRequested bool, now time.Time) *CronRun {
	if policy == nil || cancelRequested || plan.ContinueAsNew || plan.Status != api.StatusFailed {
		return nil
	}
	var e api.Error
	if plan.Error != nil {
		e = *plan.Error
	}
	d := NextRetry(policy, attempt, e, now, nil)
	if !d.Retry {
		return nil
	}
	return &CronRun{At: now.Add(d.Delay), Retry: true}
}
