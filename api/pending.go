package api

import (
	"encoding/json"
	"time"
)

// States of a pending activity (PendingActivity.State) and of a pending
// child workflow (PendingChild.State).
const (
	// PendingScheduled: the attempt waits for a worker to fetch it.
	PendingScheduled = "scheduled"
	// PendingStarted: a worker holds the attempt.
	PendingStarted = "started"
	// PendingBackoff: the last attempt failed; the next one waits for its
	// retry time (next_retry_at).
	PendingBackoff = "backoff"
	// PendingCancelRequested: cancellation was requested and not yet
	// acknowledged.
	PendingCancelRequested = "cancel_requested"
	// PendingRunning: a child workflow is running.
	PendingRunning = "running"
)

// PendingStates returns every state of a pending activity or child.
func PendingStates() []string {
	return []string{PendingScheduled, PendingStarted, PendingBackoff, PendingCancelRequested, PendingRunning}
}

// MaxPendingListed bounds each of describe's pending lists
// (pending_activities, pending_children, pending_timers); the counts
// (pending_activity_count, …) tell how many there are in all.
const MaxPendingListed = 100

// LastFailure is the failure of an activity's previous attempt, kept on
// the attempt that retries it.
type LastFailure struct {
	// Type is the error's type (as in Error.Type).
	Type string `json:"type,omitempty"`
	// Message is the error's message.
	Message string `json:"message"`
	// Stack is the stack trace of a panic, when there was one.
	Stack string `json:"stack,omitempty"`
	// TimeoutType is set for a Timeout: start_to_close, heartbeat, ….
	TimeoutType string `json:"timeout_type,omitempty"`
	// At is when the attempt failed.
	At time.Time `json:"at"`
}

// PendingActivity is one activity of the current execution that has not
// finished: its current attempt.
type PendingActivity struct {
	// ActivityID is the activity's id within its execution.
	ActivityID int64 `json:"activity_id"`
	// ActivityType is the activity's registered name.
	ActivityType string `json:"activity_type"`
	// TaskQueue is the queue the attempt is dispatched on.
	TaskQueue string `json:"task_queue"`
	// State is scheduled, started, backoff or cancel_requested.
	State string `json:"state"`
	// Attempt is the current attempt's number, from 1.
	Attempt int32 `json:"attempt"`
	// MaximumAttempts is the retry policy's bound (0: unlimited).
	MaximumAttempts int32 `json:"maximum_attempts"`
	// ScheduledAt is when the current attempt was scheduled.
	ScheduledAt time.Time `json:"scheduled_at"`
	// StartedAt is when a worker fetched the current attempt (absent: not
	// fetched).
	StartedAt *time.Time `json:"started_at,omitempty"`
	// NextRetryAt is when the attempt becomes available again (state
	// backoff only).
	NextRetryAt *time.Time `json:"next_retry_at,omitempty"`
	// LastFailure is the failure of the previous attempt (absent on a
	// first attempt).
	LastFailure *LastFailure `json:"last_failure,omitempty"`
	// LastHeartbeatAt is when the current attempt last recorded heartbeat
	// details (absent: never).
	LastHeartbeatAt *time.Time `json:"last_heartbeat_at,omitempty"`
	// HeartbeatDetails are the last details recorded (carried over from
	// earlier attempts).
	HeartbeatDetails json.RawMessage `json:"heartbeat_details,omitempty" swaggertype:"object"`
	// WorkerID is the worker holding the attempt (state started).
	WorkerID string `json:"worker_id,omitempty"`
	// CancelReason is why cancellation was requested (state
	// cancel_requested).
	CancelReason string `json:"cancel_reason,omitempty"`
}

// PendingChild is a running child workflow of the current execution.
type PendingChild struct {
	// InstanceID is the child's instance id.
	InstanceID string `json:"instance_id"`
	// WorkflowType is the child's workflow type.
	WorkflowType string `json:"workflow_type"`
	// ExecutionID is the child's current execution.
	ExecutionID int64 `json:"execution_id"`
	// ChildID is the child's number within the parent execution.
	ChildID int64 `json:"child_id"`
	// State is running or cancel_requested.
	State string `json:"state"`
	// StartedAt is when the child was started.
	StartedAt time.Time `json:"started_at"`
}

// PendingTimer is a timer of the current execution that has not been
// delivered to the workflow.
type PendingTimer struct {
	// TimerID is the timer's id within its execution.
	TimerID int64 `json:"timer_id"`
	// FireAt is when the timer fires.
	FireAt time.Time `json:"fire_at"`
}

// TaskFailing describes a workflow whose turns fail (a panic,
// nondeterminism) and are retried with a backoff.
type TaskFailing struct {
	// Failures is the number of consecutive failed turns.
	Failures int32 `json:"failures"`
	// Attempt is the number of the next attempt of the turn (failures + 1).
	Attempt int32 `json:"attempt"`
	// LastError is the error of the last failed turn.
	LastError *Error `json:"last_error,omitempty"`
	// Since is when the first of these consecutive failures happened.
	Since *time.Time `json:"since,omitempty"`
}
