// Package api holds the wire types of Tether's HTTP/JSON control plane.
//
// The server (package server) and the Go SDK (package sdk/...) both use these
// types, so that a field renamed here is renamed on both sides at once. JSON
// field names are snake_case, durations are Go duration strings ("30s") carried
// by [Duration], and payloads (input, result, details) are any JSON value,
// carried as [json.RawMessage].
package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Workflow instance statuses.
const (
	StatusRunning    = "running"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	StatusCanceled   = "canceled"
	StatusTerminated = "terminated"
)

// Worker states (see docs/liveness.md).
const (
	WorkerActive    = "active"
	WorkerInactive  = "inactive"
	WorkerCleanedUp = "cleaned_up"
)

// Duration is a time.Duration that travels as a Go duration string ("30s",
// "1m30s"). It also accepts a JSON number of nanoseconds on input.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON encodes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON decodes a duration string such as "250ms" or a number of
// nanoseconds; null leaves d unchanged. A value of another kind or a string
// that is not a duration is reported as a *json.UnmarshalTypeError, so that
// encoding/json names the offending field in the error.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[Duration]()}
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(s), Type: reflect.TypeFor[Duration]()}
	}
	*d = Duration(v)
	return nil
}

// jsonKind describes a JSON value the way encoding/json's errors do.
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	default:
		return "number " + string(b)
	}
}

// Error is a failure recorded for an activity or a workflow.
type Error struct {
	// Message is the human-readable description.
	Message string `json:"message" validate:"required,max=32768"`
	// Type classifies the error; retry policies match it against
	// non_retryable_error_types. Tether's own types: "Timeout", "WorkerLost",
	// "Poison", "Panic", "Canceled", "Nondeterminism".
	Type string `json:"type,omitempty" validate:"max=256"`
	// Retryable=false stops server-side retries of an activity at once.
	Retryable *bool `json:"retryable,omitempty"`
	// TimeoutType is set for Type "Timeout": schedule_to_start,
	// start_to_close, heartbeat or schedule_to_close.
	TimeoutType string `json:"timeout_type,omitempty"`
	// Details is any JSON value the failing code attached.
	Details json.RawMessage `json:"details,omitempty" swaggertype:"object"`
	// Stack is the stack trace of a panic, when there was one.
	Stack string `json:"stack,omitempty" validate:"max=65536"`
	// Cause is the error this one wraps, recorded the same way (Temporal's
	// Failure.cause), absent when none: the SDK rebuilds the chain from it,
	// so that errors.As finds each error of the chain. The server stores
	// it as it is.
	Cause *Error `json:"cause,omitempty"`
	// Activity is set when the error is an activity's failure as its
	// workflow saw it (Temporal's ActivityFailureInfo): Cause is the
	// activity's own error.
	Activity *ErrorActivity `json:"activity,omitempty"`
	// ChildWorkflow is set when the error is a child workflow's failure as
	// its parent saw it (Temporal's ChildWorkflowExecutionFailureInfo):
	// Cause is the child's own error.
	ChildWorkflow *ErrorChildWorkflow `json:"child_workflow,omitempty"`
}

// ErrorActivity names the activity whose failure an Error is.
type ErrorActivity struct {
	// ActivityType is the activity's type.
	ActivityType string `json:"activity_type" validate:"max=256"`
	// ActivityID is the activity's id within its execution.
	ActivityID int64 `json:"activity_id"`
}

// ErrorChildWorkflow names the child workflow whose failure an Error is.
type ErrorChildWorkflow struct {
	// WorkflowID is the child's workflow id.
	WorkflowID string `json:"workflow_id" validate:"max=256"`
	// WorkflowType is the child's workflow type.
	WorkflowType string `json:"workflow_type" validate:"max=256"`
}

// Error implements the error interface: the type, the message, and the
// cause's when the message does not already end with it.
func (e *Error) Error() string {
	msg := e.Message
	if e.Type != "" {
		msg = e.Type + ": " + msg
	}
	if c := e.Cause; c != nil && !strings.HasSuffix(e.Message, c.Message) {
		msg += ": " + c.Error()
	}
	return msg
}

// Problem is an RFC 9457 problem document, the body of every error answer
// (content type application/problem+json).
type Problem struct {
	// Type is a URI naming the kind of problem (api.Problem*).
	Type string `json:"type"`
	// Title is a short summary of the kind of problem.
	Title string `json:"title"`
	// Status is the HTTP status code of the answer.
	Status int `json:"status"`
	// Detail explains this occurrence of the problem.
	Detail string `json:"detail,omitempty"`
	// Errors names each invalid field of the request.
	Errors []FieldProblem `json:"errors,omitempty"`
	// Reason classifies a 503 whose cause is the database
	// (type …/database-unavailable): connection_refused,
	// connection_lost, connection_failure, too_many_connections,
	// admin_shutdown, crash_shutdown or cannot_connect_now.
	Reason string `json:"reason,omitempty"`
	// Limit names the bound a 409 …/limit-exceeded answer hit: the server
	// flag that sets it (docs/security.md); for a 409
	// …/concurrency-limit, "concurrency:" and the concurrency key.
	Limit string `json:"limit,omitempty"`
}

// FieldProblem names one invalid field of a request.
type FieldProblem struct {
	// Field is the path of the invalid field, such as "commands[2].activity_id".
	Field string `json:"field"`
	// Message says what is wrong with the field.
	Message string `json:"message"`
}

// ---------------------------------------------------------------------------
// Workflows

// StartWorkflowRequest is the body of POST /workflows.
type StartWorkflowRequest struct {
	// WorkflowType is the registered name of the workflow to run.
	WorkflowType string `json:"workflow_type" validate:"required,name"`
	// TaskQueue is the queue whose workers run the workflow's turns.
	TaskQueue string `json:"task_queue" validate:"required,name"`
	// Input is the workflow's argument, any JSON value.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// InstanceID names the instance; the server generates one when it is empty.
	InstanceID string `json:"instance_id,omitempty" validate:"omitempty,name"`
	// ExecutionTimeout fails the workflow when it runs longer (0: no limit).
	ExecutionTimeout Duration `json:"execution_timeout,omitempty" swaggertype:"string" example:"1h"`
	// CronSchedule makes a cron workflow: standard cron syntax (five
	// fields, minute first, UTC; or a descriptor such as "@hourly" or
	// "@every 1h30m"). The first run starts at the schedule's next time,
	// and each run that completes or fails is followed by the next, as
	// the instance's next execution; a cancel ends it.
	CronSchedule string `json:"cron_schedule,omitempty" validate:"max=256" example:"*/5 * * * *"`
	// SearchAttributes are the workflow's search attribute values by name
	// (at most 64; each name registered in the namespace and each value of
	// its type).
	SearchAttributes map[string]json.RawMessage `json:"search_attributes,omitempty" validate:"max=64" swaggertype:"object"`
	// Memo is any JSON object shown by describe (at most 32 KiB).
	Memo json.RawMessage `json:"memo,omitempty" swaggertype:"object"`
	// Header is the call's header: payloads by key that the SDK's
	// interceptors and context propagators read and write (at most
	// MaxHeaderFields keys and MaxHeaderBytes in all; absent: none).
	Header Header `json:"header,omitempty" swaggertype:"object"`
	// Priority orders the workflow's start among the queue's work, and is
	// inherited by its activities and children (docs/api.md, "Flow control").
	Priority *Priority `json:"priority,omitempty"`
	// Concurrency limits how many workflows of its key run at once
	// (docs/api.md, "Concurrency limits"); absent: no limit.
	Concurrency *Concurrency `json:"concurrency,omitempty"`
}

// Concurrency is a concurrency limit per key: at most Limit workflows
// started with Key run at once in the namespace; a start past it is
// handled by Strategy (docs/api.md, "Concurrency limits").
type Concurrency struct {
	// Key names the group the limit counts (a customer, a tenant).
	Key string `json:"key" validate:"required,max=128" example:"customer-7"`
	// Limit is how many workflows of the key may run at once (1 … 10000).
	// The latest start's limit is the key's limit.
	Limit int `json:"limit" validate:"gte=1,lte=10000" example:"2"`
	// Strategy is what a start past the limit does: queue (the default:
	// it waits, first in first out), cancel_newest (it is refused) or
	// cancel_oldest (the oldest running workflow of the key is asked to
	// cancel, and the start runs when it has closed).
	Strategy string `json:"strategy,omitempty" validate:"omitempty,oneof=queue cancel_newest cancel_oldest" example:"queue"`
}

// WorkflowConcurrency is a workflow's concurrency limit and its place in
// it (Workflow.Concurrency).
type WorkflowConcurrency struct {
	Concurrency
	// State is running (the workflow holds one of the key's slots) or
	// waiting (it waits for one: no turn is offered to workers).
	State string `json:"state"`
	// Running is how many workflows of the key hold a slot (describe only).
	Running int64 `json:"running,omitempty"`
	// Waiting is how many workflows of the key wait for one (describe only).
	Waiting int64 `json:"waiting,omitempty"`
}

// ConcurrencyKeyUsage is the use of one concurrency key
// (TaskQueue.ConcurrencyKeys, GET /concurrency-keys).
type ConcurrencyKeyUsage struct {
	// Key is the concurrency key.
	Key string `json:"key"`
	// Limit is the key's limit (the latest start's).
	Limit int64 `json:"limit"`
	// Running is how many workflows of the key hold a slot.
	Running int64 `json:"running"`
	// Waiting is how many workflows of the key wait for a slot.
	Waiting int64 `json:"waiting"`
}

// Priority is Temporal's task priority (temporal.Priority): where a task
// goes among the work of its task queue (docs/api.md, "Flow control").
type Priority struct {
	// PriorityKey is 1 (first) … 5 (last); 0 means the default, 3. Work of a
	// higher priority (a smaller key) is dispatched before any of a lower.
	PriorityKey int `json:"priority_key,omitempty" validate:"gte=0,lte=5"`
	// FairnessKey names whose work this is (a tenant, a customer): within a
	// priority, keys share the queue in weighted round robin.
	FairnessKey string `json:"fairness_key,omitempty" validate:"max=64"`
	// FairnessWeight is the key's share (0 means 1; at most 1000): a key of
	// weight 2 is dispatched twice as often as one of weight 1.
	FairnessWeight float32 `json:"fairness_weight,omitempty" validate:"gte=0,lte=1000"`
}

// MaxPriorityKey is the last (lowest) priority key; DefaultPriorityKey is
// the one of work that names none.
const (
	MaxPriorityKey     = 5
	DefaultPriorityKey = 3
)

// SignalWithStartRequest is the body of POST
// /workflows/{id}/signal-with-start: the signal, and the workflow to start
// when the instance is not running.
type SignalWithStartRequest struct {
	// SignalName is the signal sent, whether or not the workflow was started.
	SignalName string `json:"signal_name" validate:"required,name"`
	// SignalInput is the signal's payload, any JSON value.
	SignalInput json.RawMessage `json:"signal_input,omitempty" swaggertype:"object"`
	// WorkflowType, TaskQueue, Input and ExecutionTimeout are those of
	// StartWorkflowRequest; they are used only when the call starts the
	// workflow.
	WorkflowType string `json:"workflow_type" validate:"required,name"`
	// TaskQueue is the queue of a started workflow's turns.
	TaskQueue string `json:"task_queue" validate:"required,name"`
	// Input is the workflow's argument when it is started, any JSON value.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// ExecutionTimeout fails a started workflow that runs longer (0: no limit).
	ExecutionTimeout Duration `json:"execution_timeout,omitempty" swaggertype:"string" example:"1h"`
	// SearchAttributes are a started workflow's search attributes (as
	// StartWorkflowRequest's; checked only when the call starts it).
	SearchAttributes map[string]json.RawMessage `json:"search_attributes,omitempty" validate:"max=64" swaggertype:"object"`
	// Memo is a started workflow's memo (a JSON object, at most 32 KiB).
	Memo json.RawMessage `json:"memo,omitempty" swaggertype:"object"`
	// Header is the header of the signal and of a started workflow's
	// start (bounded as StartWorkflowRequest's).
	Header Header `json:"header,omitempty" swaggertype:"object"`
	// Priority is a started workflow's priority (as StartWorkflowRequest's).
	Priority *Priority `json:"priority,omitempty"`
	// Concurrency is a started workflow's concurrency limit (as
	// StartWorkflowRequest's; not used when the call signals a running one).
	Concurrency *Concurrency `json:"concurrency,omitempty"`
}

// SignalWithStartResponse is the answer of POST
// /workflows/{id}/signal-with-start.
type SignalWithStartResponse struct {
	// InstanceID is the workflow signalled.
	InstanceID string `json:"instance_id"`
	// ExecutionID is the execution that received the signal.
	ExecutionID int64 `json:"execution_id"`
	// RunID is that execution's run id (a UUID).
	RunID string `json:"run_id"`
	// Status is the workflow's status (running).
	Status string `json:"status"`
	// Started is true when the call started the execution, false when it
	// signalled one already running.
	Started bool `json:"started"`
}

// StartWorkflowResponse is the answer of POST /workflows.
type StartWorkflowResponse struct {
	// InstanceID is the started instance's id.
	InstanceID string `json:"instance_id"`
	// ExecutionID is the started execution (1 for a new instance).
	ExecutionID int64 `json:"execution_id"`
	// RunID is the started execution's run id: a UUID of its own for every
	// execution.
	RunID string `json:"run_id"`
	// Status is the instance's status (running).
	Status string `json:"status"`
}

// Workflow describes one workflow instance.
type Workflow struct {
	// Namespace is the instance's namespace.
	Namespace string `json:"namespace"`
	// InstanceID is the instance's id.
	InstanceID string `json:"instance_id"`
	// WorkflowType is the workflow's registered name.
	WorkflowType string `json:"workflow_type"`
	// TaskQueue is the queue of the workflow's turns.
	TaskQueue string `json:"task_queue"`
	// Priority is the workflow's priority, when it was given one (its
	// activities and children inherit it).
	Priority *Priority `json:"priority,omitempty"`
	// Status is running, completed, failed, canceled or terminated.
	Status string `json:"status"`
	// ExecutionID is the current execution (continue-as-new starts the next).
	ExecutionID int64 `json:"execution_id"`
	// RunID is the current execution's run id: a UUID of its own for every
	// execution.
	RunID string `json:"run_id"`
	// Input is the current execution's argument.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// Result is the workflow's result, once completed.
	Result json.RawMessage `json:"result,omitempty" swaggertype:"object"`
	// Error is why the workflow failed, once failed.
	Error *Error `json:"error,omitempty"`
	// CancelRequested tells whether cancellation was requested.
	CancelRequested bool `json:"cancel_requested"`
	// CancelReason is the reason given with the cancel request.
	CancelReason string `json:"cancel_reason,omitempty"`
	// LastTaskError is the error of the last failed turn, while it is retried.
	LastTaskError *Error `json:"last_task_error,omitempty"`
	// CreatedAt is when the instance was started.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the instance last changed.
	UpdatedAt time.Time `json:"updated_at"`
	// CompletedAt is when the instance closed, once closed.
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	// CronSchedule is the schedule of a cron workflow (absent otherwise);
	// while it runs, Result holds the last completed run's result.
	CronSchedule string `json:"cron_schedule,omitempty"`
	// ParentWorkflowID and ParentExecutionID: the parent execution that
	// started this instance as a child workflow (absent: none).
	ParentWorkflowID string `json:"parent_workflow_id,omitempty"`
	// ParentExecutionID is the parent's execution (child workflows only).
	ParentExecutionID int64 `json:"parent_execution_id,omitempty"`
	// ParentRunID is the parent execution's run id (child workflows only).
	ParentRunID string `json:"parent_run_id,omitempty"`
	// SearchAttributes are the workflow's search attribute values by name
	// (absent: none).
	SearchAttributes map[string]json.RawMessage `json:"search_attributes,omitempty" swaggertype:"object"`
	// Memo is the memo given at start (absent: none; never in a list).
	Memo json.RawMessage `json:"memo,omitempty" swaggertype:"object"`
	// TaskFailing is set while the workflow's turns fail and are retried
	// (in a list too: its last_error then has no details or stack).
	TaskFailing *TaskFailing `json:"task_failing,omitempty"`
	// Concurrency is the workflow's concurrency limit and whether it runs
	// or waits for a slot (absent: it was started without one).
	Concurrency *WorkflowConcurrency `json:"concurrency,omitempty"`
	// PendingActivities are the running execution's unfinished activities,
	// at most MaxPendingListed (100) in activity id order (describe only).
	PendingActivities []PendingActivity `json:"pending_activities,omitempty"`
	// PendingActivityCount is how many activities are pending in all
	// (describe only).
	PendingActivityCount int64 `json:"pending_activity_count,omitempty"`
	// PendingChildren are the running execution's running child workflows,
	// at most 100 (describe only).
	PendingChildren []PendingChild `json:"pending_children,omitempty"`
	// PendingChildCount is how many children are running in all (describe
	// only).
	PendingChildCount int64 `json:"pending_child_count,omitempty"`
	// PendingTimers are the running execution's timers not yet delivered,
	// at most 100, soonest first (describe only).
	PendingTimers []PendingTimer `json:"pending_timers,omitempty"`
	// PendingTimerCount is how many timers are pending in all (describe
	// only).
	PendingTimerCount int64 `json:"pending_timer_count,omitempty"`
	// HistoryLength is the number of events of the current execution's
	// history (describe only; never in a list).
	HistoryLength int64 `json:"history_length,omitempty"`
	// HistoryBytes is the size of the current execution's history, in
	// bytes of its events as stored (describe only), bounded by the
	// server's --max-history-bytes.
	HistoryBytes int64 `json:"history_bytes,omitempty"`
	// ResetFrom is set when the current run was made by a reset: the run
	// it was reset from and the reset point (describe only).
	ResetFrom *ResetFrom `json:"reset_from,omitempty"`
	// Warnings name the bounds the workflow is close to (describe only):
	// a history past the server's soft limit (--history-events-warn) is
	// terminated at the hard one (--max-history-events).
	Warnings []string `json:"warnings,omitempty"`
}

// ListWorkflowsResponse is the answer of GET /workflows.
type ListWorkflowsResponse struct {
	// Workflows are this page's instances, newest first.
	Workflows []Workflow `json:"workflows"`
	// NextPageToken, when set, is the page_token of the next page.
	NextPageToken string `json:"next_page_token,omitempty"`
}

// CancelWorkflowRequest is the body of POST /workflows/{id}/cancel.
type CancelWorkflowRequest struct {
	// Reason is recorded with the cancel request and shown to the workflow.
	Reason string `json:"reason,omitempty" validate:"max=1024"`
}

// TerminateWorkflowRequest is the body of POST /workflows/{id}/terminate.
type TerminateWorkflowRequest struct {
	// Reason is recorded in the WorkflowTerminated event and the instance's
	// error message.
	Reason string `json:"reason,omitempty" validate:"max=1024"`
	// Details, any JSON value, is recorded in the WorkflowTerminated event
	// and the instance's error details.
	Details json.RawMessage `json:"details,omitempty" swaggertype:"object"`
	// ExecutionID, when set, must be the instance's current execution (the
	// SDK's run id); otherwise the request fails with 409 not-running.
	ExecutionID int64 `json:"execution_id,omitempty" validate:"min=0"`
	// RunID, when set, names the execution instead of ExecutionID: a run
	// id (a UUID) or an execution id in decimal.
	RunID string `json:"run_id,omitempty" validate:"max=64"`
}

// SignalRequest is the body of POST /workflows/{id}/signals/{name}.
type SignalRequest struct {
	// Input is the signal's payload, any JSON value.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// Header is the call's header: payloads by key that the SDK's
	// interceptors and context propagators read and write (at most
	// MaxHeaderFields keys and MaxHeaderBytes in all; absent: none).
	Header Header `json:"header,omitempty" swaggertype:"object"`
}

// Empty is the body of an answer that carries nothing but its status.
type Empty struct{}

// Accepted is the body of a 202 answer.
type Accepted struct {
	// Changed is false when the request was valid but had no effect (a
	// second cancel request, a cancel of a finished workflow).
	Changed bool `json:"changed"`
}

// HistoryResponse is the answer of GET /workflows/{id}/history: one page
// of an execution's events, in order.
type HistoryResponse struct {
	// ExecutionID is the execution whose events these are.
	ExecutionID int64 `json:"execution_id"`
	// RunID is that execution's run id (empty for an execution whose
	// WorkflowStarted event predates run ids and is no longer current).
	RunID string `json:"run_id,omitempty"`
	// Events are the execution's events in event_id order.
	Events []Event `json:"events"`
	// NextPageToken, when set, is the page_token of the next page.
	NextPageToken string `json:"next_page_token,omitempty"`
}

// Event kinds recorded in history.
const (
	EventWorkflowStarted         = "WorkflowStarted"
	EventActivityScheduled       = "ActivityScheduled"
	EventActivityCompleted       = "ActivityCompleted"
	EventActivityFailed          = "ActivityFailed"
	EventActivityCancelRequested = "ActivityCancelRequested"
	// EventActivityCanceled records that a cancelled activity with
	// wait_for_cancellation is over without a result: its attempt reported
	// a "Canceled" error, was never started, or its worker was lost after
	// the cancellation. It follows the activity's ActivityCancelRequested.
	EventActivityCanceled = "ActivityCanceled"
	// EventActivityAttemptCancelRequested records that the server cancelled
	// one attempt of an activity and scheduled the next (StartToClose or
	// Heartbeat timeout, lost worker); the activity itself goes on.
	EventActivityAttemptCancelRequested = "ActivityAttemptCancelRequested"
	EventTimerCreated                   = "TimerCreated"
	EventTimerFired                     = "TimerFired"
	// EventTimerCanceled records a cancel_timer command: the timer never
	// fires.
	EventTimerCanceled = "TimerCanceled"
	// EventMarkerRecorded records a record_marker command: a value the
	// workflow code decided once (a side effect, a version) and reads back
	// from history on replay.
	EventMarkerRecorded    = "MarkerRecorded"
	EventSignalReceived    = "SignalReceived"
	EventCancelRequested   = "CancelRequested"
	EventContinuedAsNew    = "ContinuedAsNew"
	EventWorkflowCompleted = "WorkflowCompleted"
	EventWorkflowFailed    = "WorkflowFailed"
	EventWorkflowCanceled  = "WorkflowCanceled"
	// EventWorkflowTerminated records POST /workflows/{id}/terminate: the
	// execution was closed from outside, at once, without a turn; Reason
	// and Details are the request's.
	EventWorkflowTerminated = "WorkflowTerminated"
	// EventWorkflowReset ends a run that POST /workflows/{id}/reset
	// replaced (appended after its close when it had closed already):
	// Reason, ResetEventID (the reset point), NewExecutionID and NewRunID
	// (the run that replaces it).
	EventWorkflowReset = "WorkflowReset"
	// EventExternalSignalInitiated records a signal_external command; its
	// outcome arrives as an ExternalCompleted or ExternalFailed message.
	EventExternalSignalInitiated = "ExternalSignalInitiated"
	// EventExternalCancelInitiated records a cancel_external command; its
	// outcome arrives as an ExternalCompleted or ExternalFailed message.
	EventExternalCancelInitiated = "ExternalCancelInitiated"
	// EventExternalCompleted: the signal or cancel request external_id
	// reached its target (a message, written by the ack that applied it).
	EventExternalCompleted = "ExternalCompleted"
	// EventExternalFailed: the signal or cancel request external_id found
	// no running target (error type ExternalWorkflowNotFound).
	EventExternalFailed = "ExternalFailed"
	// EventChildWorkflowInitiated records a start_child_workflow command:
	// the child instance was created in the same transaction, or its id
	// was taken (then StartChildWorkflowFailed follows).
	EventChildWorkflowInitiated = "ChildWorkflowInitiated"
	// EventChildWorkflowStarted (a message): the child started.
	EventChildWorkflowStarted = "ChildWorkflowStarted"
	// EventStartChildWorkflowFailed (a message): a running instance held
	// the child's workflow id; nothing was started.
	EventStartChildWorkflowFailed = "StartChildWorkflowFailed"
	// EventChildWorkflowCompleted (a message): the child completed; Result.
	EventChildWorkflowCompleted = "ChildWorkflowCompleted"
	// EventChildWorkflowFailed (a message): the child failed; Error.
	EventChildWorkflowFailed = "ChildWorkflowFailed"
	// EventChildWorkflowCanceled (a message): the child was canceled.
	EventChildWorkflowCanceled = "ChildWorkflowCanceled"
	// EventChildWorkflowTerminated (a message): the child was terminated.
	EventChildWorkflowTerminated = "ChildWorkflowTerminated"
	// EventChildWorkflowCancelRequested records a
	// request_cancel_child_workflow command: the child was asked to cancel.
	EventChildWorkflowCancelRequested = "ChildWorkflowCancelRequested"
	// EventUpsertWorkflowSearchAttributes records an
	// upsert_search_attributes command (search_attributes: the values as
	// the command gave them).
	EventUpsertWorkflowSearchAttributes = "UpsertWorkflowSearchAttributes"
	// EventUpsertWorkflowMemo records an upsert_memo command (memo: the
	// fields as the command gave them; null removes one).
	EventUpsertWorkflowMemo = "UpsertWorkflowMemo"
)

// Event is one entry of a workflow execution's history, and also the shape
// of a new message handed to a workflow turn (then EventID is 0: the server
// assigns it when the turn is acknowledged). Only the fields of its Kind are
// set.
type Event struct {
	// EventID is the event's position in its execution's history, from 1.
	EventID int64 `json:"event_id,omitempty"`
	// Kind is the event's kind (WorkflowStarted, ActivityScheduled, …).
	Kind string `json:"kind"`
	// Timestamp is when the event was recorded.
	Timestamp time.Time `json:"timestamp"`

	// WorkflowStarted, ContinuedAsNew
	WorkflowType string `json:"workflow_type,omitempty"`
	// Priority is the workflow's priority (WorkflowStarted), when it has one.
	Priority *Priority `json:"priority,omitempty"`
	// WorkflowStarted, ActivityScheduled, SignalReceived, ContinuedAsNew
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// Header is the header that came with the input (WorkflowStarted,
	// SignalReceived, ActivityScheduled, WorkflowUpdateAccepted,
	// StartChildWorkflowInitiated, ExternalSignalInitiated).
	Header Header `json:"header,omitempty" swaggertype:"object"`
	// ActivityScheduled, ActivityCompleted, ActivityFailed, ActivityCancelRequested, ActivityCanceled
	ActivityID int64 `json:"activity_id,omitempty"`
	// ActivityType is the activity's registered name (ActivityScheduled).
	ActivityType string `json:"activity_type,omitempty"`
	// WorkflowStarted, ActivityScheduled
	TaskQueue string `json:"task_queue,omitempty"`
	// ActivityScheduled
	Options *ActivityOptions `json:"options,omitempty"`
	// ActivityCompleted, ActivityFailed, ActivityCanceled, ActivityAttemptCancelRequested
	Attempt int32 `json:"attempt,omitempty"`
	// ActivityCompleted, WorkflowCompleted
	Result json.RawMessage `json:"result,omitempty" swaggertype:"object"`
	// ActivityFailed, ActivityCanceled, WorkflowFailed
	Error *Error `json:"error,omitempty"`
	// TimerCreated, TimerFired, TimerCanceled
	TimerID int64 `json:"timer_id,omitempty"`
	// FireAfter is how long after its creation the timer fires (TimerCreated).
	FireAfter Duration `json:"fire_after,omitempty" swaggertype:"string"`
	// SignalReceived
	SignalName string `json:"signal_name,omitempty"`
	// ActivityCancelRequested, ActivityAttemptCancelRequested, CancelRequested,
	// WorkflowTerminated
	Reason string `json:"reason,omitempty"`
	// ExternalSignalInitiated, ExternalCancelInitiated, ExternalCompleted,
	// ExternalFailed: the request's sequence number; the target (the
	// initiated events).
	ExternalID int64 `json:"external_id,omitempty"`
	// TargetInstanceID is the workflow signalled or cancelled (External*Initiated).
	TargetInstanceID string `json:"target_instance_id,omitempty"`
	// TargetExecutionID is the target's execution, 0 for whichever runs (External*Initiated).
	TargetExecutionID int64 `json:"target_execution_id,omitempty"`
	// TargetRunID is the target's run id when the command named one (External*Initiated).
	TargetRunID string `json:"target_run_id,omitempty"`
	// WorkflowTerminated: the details given with the request.
	Details json.RawMessage `json:"details,omitempty" swaggertype:"object"`
	// ContinuedAsNew: the execution that follows.
	NewExecutionID int64 `json:"new_execution_id,omitempty"`
	// NewRunID is the run id of the execution that follows (ContinuedAsNew).
	NewRunID string `json:"new_run_id,omitempty"`
	// RunID is the run id of the execution the event starts (WorkflowStarted).
	RunID string `json:"run_id,omitempty"`
	// WorkflowStarted of an execution started by continue-as-new: the
	// execution it continues.
	ContinuedFromExecutionID int64 `json:"continued_from_execution_id,omitempty"`
	// ContinuedFromRunID is the run id of the execution it continues
	// (WorkflowStarted of an execution started by continue-as-new).
	ContinuedFromRunID string `json:"continued_from_run_id,omitempty"`
	// WorkflowStarted of a cron workflow's run after the first: the result
	// of the last run that completed (absent when none has).
	LastCompletionResult json.RawMessage `json:"last_completion_result,omitempty" swaggertype:"object"`
	// MarkerRecorded: the marker's kind (the SDK's "SideEffect",
	// "MutableSideEffect", "Version"), its id within that kind, and its
	// value.
	MarkerName string `json:"marker_name,omitempty"`
	// MarkerID is the marker's id within its kind (MarkerRecorded).
	MarkerID string `json:"marker_id,omitempty"`
	// MarkerDetails is the marker's value (MarkerRecorded).
	MarkerDetails json.RawMessage `json:"marker_details,omitempty" swaggertype:"object"`
	// SearchAttributes are the values an UpsertWorkflowSearchAttributes
	// event set (null: removed); on WorkflowStarted, the execution's search
	// attributes when it started (absent: none).
	SearchAttributes map[string]json.RawMessage `json:"search_attributes,omitempty" swaggertype:"object"`
	// Memo is the execution's memo when it started (WorkflowStarted;
	// absent: none), or the fields an UpsertWorkflowMemo event set (null:
	// removed).
	Memo map[string]json.RawMessage `json:"memo,omitempty" swaggertype:"object"`
	// WorkflowUpdateAccepted, WorkflowUpdateCompleted: the update's id;
	// WorkflowUpdateAccepted also its name (and Input its arguments),
	// WorkflowUpdateCompleted its Result or Error.
	UpdateID string `json:"update_id,omitempty"`
	// UpdateName is the update's name (WorkflowUpdateAccepted).
	UpdateName string `json:"update_name,omitempty"`
	// TurnMessages is set on the first event of a turn that consumed more
	// than one message: how many message events the turn recorded (they
	// follow one another). The SDK applies them all before the code runs,
	// on replay as when the turn was live; absent means one.
	TurnMessages int `json:"turn_messages,omitempty"`
	// ChildWorkflowInitiated, ChildWorkflowStarted, StartChildWorkflowFailed,
	// ChildWorkflowCompleted/Failed/Canceled/Terminated,
	// ChildWorkflowCancelRequested: the child's number within the parent
	// execution (the start_child_workflow command's child_id), its
	// workflow id and (once started) its execution.
	ChildID int64 `json:"child_id,omitempty"`
	// ChildWorkflowID is the child workflow's instance id (child workflow events).
	ChildWorkflowID string `json:"child_workflow_id,omitempty"`
	// ChildExecutionID is the child workflow's execution (child workflow events).
	ChildExecutionID int64 `json:"child_execution_id,omitempty"`
	// ChildRunID is the child workflow's run id (ChildWorkflowStarted).
	ChildRunID string `json:"child_run_id,omitempty"`
	// ChildWorkflowInitiated: what happens to the child when the parent
	// closes (ParentClosePolicy*).
	ParentClosePolicy string `json:"parent_close_policy,omitempty"`
	// WorkflowStarted of a child workflow: its parent.
	ParentWorkflowID string `json:"parent_workflow_id,omitempty"`
	// ParentExecutionID is the parent's execution (WorkflowStarted of a child workflow).
	ParentExecutionID int64 `json:"parent_execution_id,omitempty"`
	// ParentRunID is the parent execution's run id (WorkflowStarted of a child workflow).
	ParentRunID string `json:"parent_run_id,omitempty"`
	// ResetFrom is set on the WorkflowStarted of a run made by a reset:
	// the run it was reset from and the reset point.
	ResetFrom *ResetFrom `json:"reset_from,omitempty"`
	// ResetEventID is the reset point in this run (WorkflowReset; the new
	// run is NewExecutionID, NewRunID).
	ResetEventID int64 `json:"reset_event_id,omitempty"`
}

// ---------------------------------------------------------------------------
// Workflow tasks (turns)

// PollWorkflowTaskRequest is the body of POST /workflow-tasks/poll.
type PollWorkflowTaskRequest struct {
	// TaskQueue is the queue to take a turn from.
	TaskQueue string `json:"task_queue" validate:"required,name"`
	// WorkerID is the polling worker's session id.
	WorkerID string `json:"worker_id" validate:"required,name"`
	// Wait bounds the long poll (default 30s, at most 60s; 0s answers at once).
	Wait *Duration `json:"wait,omitempty" swaggertype:"string" example:"30s"`
	// LockFor is how long the turn's lock lasts (default 10s, 1s … 10m).
	LockFor Duration `json:"lock_for,omitempty" swaggertype:"string" example:"10s"`
	// BuildID is the worker's build id (empty: none). An execution takes
	// the build id of the worker that fetches its first turn; its later
	// turns go only to workers of that build id, or to any worker when it
	// has none. A worker without a build id gets only executions without
	// one.
	BuildID string `json:"build_id,omitempty" validate:"max=256"`
	// MaxTasks is how many turns the poll may take at once (default 1, at
	// most MaxWorkflowTasksPerPoll): the first is the answer itself, the
	// others come in its more_tasks. Each is locked for lock_for and
	// acknowledged on its own; a turn never acknowledged is delivered
	// again when its lock expires.
	MaxTasks int `json:"max_tasks,omitempty" validate:"omitempty,min=1,max=16" example:"1"`
}

// MaxWorkflowTasksPerPoll bounds PollWorkflowTaskRequest.MaxTasks.
const MaxWorkflowTasksPerPoll = 16

// WorkflowTask is a locked workflow turn: the execution's history and the new
// messages to feed it.
type WorkflowTask struct {
	// LockToken identifies the turn's lock: acknowledge the turn with it.
	LockToken string `json:"lock_token"`
	// Namespace is the instance's namespace.
	Namespace string `json:"namespace"`
	// InstanceID is the instance whose turn this is.
	InstanceID string `json:"instance_id"`
	// ExecutionID is the execution the turn belongs to.
	ExecutionID int64 `json:"execution_id"`
	// RunID is that execution's run id (a UUID): the SDK's
	// workflow.GetInfo(ctx).WorkflowExecution.RunID.
	RunID string `json:"run_id"`
	// WorkflowType is the workflow's registered name.
	WorkflowType string `json:"workflow_type"`
	// TaskQueue is the workflow's task queue.
	TaskQueue string `json:"task_queue"`
	// Input is the execution's argument.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// LockedUntil is when the turn's lock expires and the turn is delivered again.
	LockedUntil time.Time `json:"locked_until"`
	// Attempt counts failed turns since the last successful one (1 = first try).
	Attempt int32 `json:"attempt"`
	// HistoryFromEventID, when greater than 1, says that History holds only
	// the events from this id on: the polling worker acknowledged the
	// previous turn and is expected to hold the earlier events (its cached
	// state). A worker that does not must read the whole history with
	// GET /workflows/{id}/history?execution_id=. 0 means History is whole.
	HistoryFromEventID int64 `json:"history_from_event_id,omitempty"`
	// HistoryNextPageToken, when set, says that History holds only the
	// first events of the execution (as many as the server's history page
	// size): the worker reads the rest with GET
	// /workflows/{id}/history?page_token=, a page at a time, before it
	// replays. Empty: History is whole (or starts at HistoryFromEventID).
	HistoryNextPageToken string `json:"history_next_page_token,omitempty"`
	// History are the execution's events so far, to replay.
	History []Event `json:"history"`
	// Messages are the new events the turn must handle, in order.
	Messages []Event `json:"messages"`
	// MoreTasks are the further turns a poll with max_tasks > 1 took at
	// the same time (at most max_tasks-1, each of another instance, each
	// with an empty more_tasks); absent otherwise.
	MoreTasks []WorkflowTask `json:"more_tasks,omitempty"`
}

// Command types of a workflow turn.
const (
	CommandScheduleActivity = "schedule_activity"
	CommandStartTimer       = "start_timer"
	CommandCancelTimer      = "cancel_timer"
	CommandRecordMarker     = "record_marker"
	CommandCompleteWorkflow = "complete_workflow"
	CommandFailWorkflow     = "fail_workflow"
	CommandCancelWorkflow   = "cancel_workflow"
	CommandContinueAsNew    = "continue_as_new"
	// CommandSignalExternal signals another workflow (SDK:
	// SignalExternalWorkflow); applied in the ack's transaction.
	CommandSignalExternal = "signal_external"
	// CommandCancelExternal requests another workflow's cancellation (SDK:
	// RequestCancelExternalWorkflow); applied in the ack's transaction.
	CommandCancelExternal = "cancel_external"
	// CommandStartChildWorkflow starts a child workflow (child_id,
	// workflow_id, workflow_type, task_queue, input, execution_timeout,
	// parent_close_policy).
	CommandStartChildWorkflow = "start_child_workflow"
	// CommandRequestCancelChildWorkflow asks a child workflow to cancel
	// (child_id, workflow_id).
	CommandRequestCancelChildWorkflow = "request_cancel_child_workflow"
	// CommandUpsertSearchAttributes sets the workflow's search attributes
	// (search_attributes; a null value removes one) — SDK:
	// workflow.UpsertSearchAttributes.
	CommandUpsertSearchAttributes = "upsert_search_attributes"
	// CommandUpsertMemo sets fields of the workflow's memo (memo; a null
	// value removes one) — SDK: workflow.UpsertMemo.
	CommandUpsertMemo = "upsert_memo"
)

// Parent close policies: what happens to a child workflow still running
// when its parent closes or is canceled (Temporal's ParentClosePolicy).
const (
	// ParentClosePolicyTerminate (the default) terminates the child, in
	// the transaction that closes or cancels the parent, as the terminate
	// endpoint does (reason parent_closed or parent_canceled).
	ParentClosePolicyTerminate = "terminate"
	// ParentClosePolicyRequestCancel asks the child to cancel.
	ParentClosePolicyRequestCancel = "request_cancel"
	// ParentClosePolicyAbandon leaves the child running.
	ParentClosePolicyAbandon = "abandon"
)

// Command is one decision of a workflow turn, in the order the code issued it.
type Command struct {
	// Type is what the command does: schedule_activity, start_timer, cancel_timer, record_marker, complete_workflow, fail_workflow, cancel_workflow, continue_as_new, complete_update, reject_update, signal_external, cancel_external, start_child_workflow, request_cancel_child_workflow, upsert_search_attributes or upsert_memo.
	Type string `json:"type" validate:"required,oneof=schedule_activity start_timer cancel_timer record_marker complete_workflow fail_workflow cancel_workflow continue_as_new complete_update reject_update signal_external cancel_external start_child_workflow request_cancel_child_workflow upsert_search_attributes upsert_memo"`
	// schedule_activity
	ActivityID int64 `json:"activity_id,omitempty" validate:"required_if=Type schedule_activity,gte=0"`
	// ActivityType is the activity's registered name (schedule_activity).
	ActivityType string `json:"activity_type,omitempty" validate:"required_if=Type schedule_activity,omitempty,name"`
	// TaskQueue is the activity's queue (schedule_activity; default the workflow's).
	TaskQueue string `json:"task_queue,omitempty" validate:"omitempty,name"`
	// Options are the activity's timeouts and retry policy (schedule_activity).
	Options *ActivityOptions `json:"options,omitempty"`
	// schedule_activity, continue_as_new
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// Header is the header the activity (schedule_activity), the child's
	// start (start_child_workflow), the signal (signal_external) or the
	// next execution's start (continue_as_new) carries, bounded as a
	// request's header.
	Header Header `json:"header,omitempty" swaggertype:"object"`
	// start_timer, cancel_timer
	TimerID int64 `json:"timer_id,omitempty" validate:"required_if=Type start_timer,required_if=Type cancel_timer,gte=0"`
	// FireAfter is how long after the turn the timer fires (start_timer).
	FireAfter Duration `json:"fire_after,omitempty" swaggertype:"string" validate:"gte=0"`
	// complete_workflow
	Result json.RawMessage `json:"result,omitempty" swaggertype:"object"`
	// fail_workflow
	Error *Error `json:"error,omitempty" validate:"required_if=Type fail_workflow"`
	// continue_as_new: optional new workflow type (the task queue stays);
	// start_child_workflow: the child's type (required).
	WorkflowType string `json:"workflow_type,omitempty" validate:"required_if=Type start_child_workflow,omitempty,name"`
	// record_marker: the marker's kind and id (recorded as given in a
	// MarkerRecorded event) and its value (JSON, required).
	MarkerName string `json:"marker_name,omitempty" validate:"required_if=Type record_marker,max=256"`
	// MarkerID is the marker's id within its kind (record_marker).
	MarkerID string `json:"marker_id,omitempty" validate:"max=1024"`
	// MarkerDetails is the marker's value, any JSON value (record_marker).
	MarkerDetails json.RawMessage `json:"marker_details,omitempty" swaggertype:"object" validate:"required_if=Type record_marker"`
	// SearchAttributes are the values upsert_search_attributes sets, by
	// name (1 to 64; null removes an attribute).
	SearchAttributes map[string]json.RawMessage `json:"search_attributes,omitempty" swaggertype:"object" validate:"max=64"`
	// Memo are the memo fields upsert_memo sets, by name (null removes a
	// field), or a child's memo (start_child_workflow); the workflow's
	// whole memo stays within MaxMemoBytes.
	Memo map[string]json.RawMessage `json:"memo,omitempty" swaggertype:"object"`
	// complete_update, reject_update: the update the turn received (a
	// WorkflowUpdateAccepted message). complete_update carries the
	// handler's result or error; reject_update the validator's error (the
	// update then leaves no event).
	UpdateID string `json:"update_id,omitempty" validate:"required_if=Type complete_update,required_if=Type reject_update,max=256"`
	// signal_external, cancel_external: the per-execution sequence number
	// of the request (1, 2, …, chosen by the SDK), which the outcome
	// message (ExternalCompleted / ExternalFailed) carries back; the
	// target instance, and its execution (0: whichever runs).
	ExternalID int64 `json:"external_id,omitempty" validate:"required_if=Type signal_external,required_if=Type cancel_external,gte=0"`
	// TargetInstanceID is the instance signalled or cancelled (signal_external, cancel_external).
	TargetInstanceID string `json:"target_instance_id,omitempty" validate:"required_if=Type signal_external,required_if=Type cancel_external,omitempty,name"`
	// TargetExecutionID is the target's execution (0: whichever runs).
	TargetExecutionID int64 `json:"target_execution_id,omitempty" validate:"gte=0"`
	// TargetRunID, when set, names the target's execution instead of
	// TargetExecutionID: a run id (a UUID) or an execution id in decimal.
	TargetRunID string `json:"target_run_id,omitempty" validate:"max=64"`
	// SignalName is the signal's name (signal_external; its payload is Input).
	SignalName string `json:"signal_name,omitempty" validate:"required_if=Type signal_external,omitempty,name"`
	// Reason is recorded in the target's cancel request (cancel_external).
	Reason string `json:"reason,omitempty" validate:"max=1024"`
	// start_child_workflow, request_cancel_child_workflow: the child's
	// number within the execution (chosen by the SDK, unique) and its
	// workflow id (the child instance's id).
	ChildID int64 `json:"child_id,omitempty" validate:"required_if=Type start_child_workflow,required_if=Type request_cancel_child_workflow,gte=0"`
	// WorkflowID is the child instance's id (start_child_workflow, request_cancel_child_workflow).
	WorkflowID string `json:"workflow_id,omitempty" validate:"required_if=Type start_child_workflow,required_if=Type request_cancel_child_workflow,omitempty,name"`
	// start_child_workflow: the child's execution_timeout and parent
	// close policy (ParentClosePolicy*, default terminate).
	ExecutionTimeout Duration `json:"execution_timeout,omitempty" swaggertype:"string" validate:"gte=0"`
	// ParentClosePolicy is the child's policy (start_child_workflow; default terminate).
	ParentClosePolicy string `json:"parent_close_policy,omitempty" validate:"omitempty,oneof=terminate request_cancel abandon"`
	// RetryPolicy retries the child's failed executions (start_child_workflow;
	// absent: a failed child is not retried): a failed execution with
	// attempts left is followed, after the policy's backoff, by the next
	// one, and only the last failure reaches the parent.
	RetryPolicy *RetryPolicy `json:"retry_policy,omitempty"`
	// Priority is the child's priority (start_child_workflow; absent: the
	// parent's).
	Priority *Priority `json:"priority,omitempty"`
	// Concurrency limits how many workflows of its key run at once
	// (start_child_workflow; docs/api.md, "Concurrency limits"); absent:
	// no limit, whatever the parent's.
	Concurrency *Concurrency `json:"concurrency,omitempty"`
	// CronSchedule makes the child a cron workflow (start_child_workflow;
	// Temporal's ChildWorkflowOptions.CronSchedule): standard cron syntax,
	// in UTC. Its first run starts at the schedule's next time and each
	// run that ends is followed by the next; the parent sees the child
	// running until it is canceled or terminated.
	CronSchedule string `json:"cron_schedule,omitempty" validate:"max=256"`
}

// ActivityOptions are the timeouts and retry policy of a scheduled activity.
// Zero durations mean "no such timeout".
type ActivityOptions struct {
	// ScheduleToStartTimeout bounds the wait of an attempt for a worker.
	ScheduleToStartTimeout Duration `json:"schedule_to_start_timeout,omitempty" swaggertype:"string" validate:"gte=0"`
	// StartToCloseTimeout bounds one attempt's run.
	StartToCloseTimeout Duration `json:"start_to_close_timeout,omitempty" swaggertype:"string" validate:"gte=0"`
	// ScheduleToCloseTimeout bounds the activity over all its attempts.
	ScheduleToCloseTimeout Duration `json:"schedule_to_close_timeout,omitempty" swaggertype:"string" validate:"gte=0"`
	// HeartbeatTimeout bounds the time between an attempt's heartbeats.
	HeartbeatTimeout Duration `json:"heartbeat_timeout,omitempty" swaggertype:"string" validate:"gte=0"`
	// RetryPolicy decides whether and when a failed attempt is retried.
	RetryPolicy *RetryPolicy `json:"retry_policy,omitempty"`
	// WaitForCancellation (Temporal's): when the activity is cancelled
	// (activity_cancels, a workflow cancel request), the workflow gets the
	// outcome of the attempt that was running — ActivityCompleted,
	// ActivityFailed (never retried) or ActivityCanceled (a "Canceled"
	// error) — after its ActivityCancelRequested, instead of nothing; an
	// attempt nobody held, or whose worker is lost, ends as
	// ActivityCanceled. False (the default): the cancellation ends the
	// activity for the workflow and a later outcome is dropped.
	WaitForCancellation bool `json:"wait_for_cancellation,omitempty"`
	// Priority orders the activity's attempts among their queue's work
	// (absent: the workflow's).
	Priority *Priority `json:"priority,omitempty"`
	// Concurrency limits how many attempts of activities with its key run
	// at once in the namespace (docs/api.md, "Concurrency limits of
	// activities"): past the limit an attempt waits for a slot. Only the
	// strategy queue applies to activities. Absent: no limit.
	Concurrency *Concurrency `json:"concurrency,omitempty"`
}

// RetryPolicy says how the server retries a failed activity attempt. The
// delay before attempt n+1 is min(initial_interval * backoff_coefficient^(n-1),
// maximum_interval).
type RetryPolicy struct {
	// InitialInterval defaults to 1s.
	InitialInterval Duration `json:"initial_interval,omitempty" swaggertype:"string" validate:"gte=0"`
	// BackoffCoefficient defaults to 2 and must be >= 1.
	BackoffCoefficient float64 `json:"backoff_coefficient,omitempty" validate:"omitempty,gte=1"`
	// MaximumInterval defaults to 100 × InitialInterval.
	MaximumInterval Duration `json:"maximum_interval,omitempty" swaggertype:"string" validate:"gte=0"`
	// MaximumAttempts of 0 means unlimited; 1 means no retry.
	MaximumAttempts int32 `json:"maximum_attempts,omitempty" validate:"gte=0"`
	// NonRetryableErrorTypes fail the activity at once when the error's type matches.
	NonRetryableErrorTypes []string `json:"non_retryable_error_types,omitempty"`
}

// ActivityCancel asks, within a turn, that the attempts of one activity be
// flagged cancelled.
type ActivityCancel struct {
	// ActivityID is the activity whose cancellation the turn requests.
	ActivityID int64 `json:"activity_id" validate:"required,gt=0"`
	// Reason is told to the attempt's worker.
	Reason string `json:"reason" validate:"required,max=256"`
}

// CompleteWorkflowTaskRequest is the body of POST /workflow-tasks/{token}/complete.
type CompleteWorkflowTaskRequest struct {
	// Commands are the turn's decisions, applied in order.
	Commands []Command `json:"commands" validate:"max=10000,dive"`
	// ActivityCancels are the running activities whose cancellation the turn requests.
	ActivityCancels []ActivityCancel `json:"activity_cancels,omitempty" validate:"max=100000,dive"`
	// EagerActivities, when set, asks the server to claim for the
	// acknowledging worker, in the ack's transaction, up to Max of the
	// attempts this turn schedules on the listed task queues, and to return
	// them in activity_tasks — exactly as an activity poll by that worker
	// would have claimed them. The worker saves a poll and the attempt its
	// trip through the queue. Attempts not claimed (no slot, another queue,
	// a delay) wait in their queue as usual.
	EagerActivities *EagerActivities `json:"eager_activities,omitempty"`
}

// EagerActivities asks for a turn's new attempts to be handed out in the
// ack (see CompleteWorkflowTaskRequest).
type EagerActivities struct {
	// TaskQueues are the queues the worker serves (as in an activity poll).
	TaskQueues []string `json:"task_queues" validate:"required,min=1,max=16,dive,name"`
	// Max is how many attempts the worker can start now (its free slots).
	Max int32 `json:"max" validate:"min=1,max=1000"`
	// LockFor is the attempts' lock, as in an activity poll (default 30s,
	// 1s … 10m).
	LockFor Duration `json:"lock_for,omitempty" swaggertype:"string" example:"30s"`
}

// CompleteWorkflowTaskResponse is the answer of a turn's ack.
type CompleteWorkflowTaskResponse struct {
	// Status is the instance status after the turn.
	Status string `json:"status"`
	// ExecutionID is the instance's execution after the turn (the next one after continue_as_new).
	ExecutionID int64 `json:"execution_id"`
	// NextEventID is the id the next event of the execution will get.
	NextEventID int64 `json:"next_event_id"`
	// ActivityTasks are the attempts claimed for the worker at its request
	// (eager_activities); it runs and acknowledges them as polled ones.
	ActivityTasks []ActivityTask `json:"activity_tasks,omitempty"`
	// Closed is, for a turn that closed its workflow, the workflow as the
	// turn's transaction committed it — what GET /workflows/{id} answers
	// then. Never sent: the server hands it to its own waiters on the
	// result (nil when the answer is a receipt's replay).
	Closed *Workflow `json:"-"`
	// HistoryBytes is the size of the execution's history after the turn
	// (server side only: the history bound).
	HistoryBytes int64 `json:"-"`
}

// FailWorkflowTaskRequest is the body of POST /workflow-tasks/{token}/fail.
type FailWorkflowTaskRequest struct {
	// Error is what went wrong, shown as the workflow's last_task_error.
	Error Error `json:"error"`
}

// ---------------------------------------------------------------------------
// Activity tasks (attempts)

// PollActivityTaskRequest is the body of POST /activity-tasks/poll.
type PollActivityTaskRequest struct {
	// TaskQueues are the queues to take an attempt from.
	TaskQueues []string `json:"task_queues" validate:"required,min=1,max=16,dive,name"`
	// WorkerID is the polling worker's session id; the attempt is bound to it.
	WorkerID string `json:"worker_id" validate:"required,name"`
	// Wait bounds the long poll (default 30s, at most 60s; 0s answers at once).
	Wait *Duration `json:"wait,omitempty" swaggertype:"string" example:"30s"`
	// LockFor is the attempt's lock (default 30s, 1s … 10m); renew it with
	// heartbeats.
	LockFor Duration `json:"lock_for,omitempty" swaggertype:"string" example:"30s"`
}

// CancelInfo tells a worker whether an attempt's cancellation was requested.
type CancelInfo struct {
	// Requested tells whether the attempt's cancellation was requested.
	Requested bool `json:"requested"`
	// Reason is why cancellation was requested.
	Reason string `json:"reason,omitempty"`
}

// ActivityTask is a locked activity attempt.
type ActivityTask struct {
	// LockToken identifies the attempt's lock: heartbeat and acknowledge with it.
	LockToken string `json:"lock_token"`
	// Namespace is the workflow's namespace.
	Namespace string `json:"namespace"`
	// InstanceID is the workflow instance that scheduled the activity.
	InstanceID string `json:"instance_id"`
	// ExecutionID is the execution that scheduled the activity.
	ExecutionID int64 `json:"execution_id"`
	// RunID is that execution's run id (a UUID; absent for an attempt
	// scheduled before the server kept it): the SDK's
	// activity.GetInfo(ctx).WorkflowExecution.RunID.
	RunID string `json:"run_id,omitempty"`
	// ActivityID is the activity's id within the execution.
	ActivityID int64 `json:"activity_id"`
	// Attempt is the attempt's number, from 1.
	Attempt int32 `json:"attempt"`
	// ActivityType is the activity's registered name.
	ActivityType string `json:"activity_type"`
	// TaskQueue is the queue the attempt was taken from.
	TaskQueue string `json:"task_queue"`
	// WorkflowType is the type of the workflow that scheduled the activity.
	WorkflowType string `json:"workflow_type"`
	// WorkflowTaskQueue is the task queue of the workflow that scheduled
	// the activity.
	WorkflowTaskQueue string `json:"workflow_task_queue"`
	// Input is the activity's argument.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// Header is the header the workflow scheduled the activity with.
	Header Header `json:"header,omitempty" swaggertype:"object"`
	// HeartbeatDetails are the latest details a previous attempt heartbeated.
	HeartbeatDetails json.RawMessage `json:"heartbeat_details,omitempty" swaggertype:"object"`
	// ScheduledAt is when the attempt was scheduled.
	ScheduledAt time.Time `json:"scheduled_at"`
	// StartedAt is when the attempt was fetched.
	StartedAt time.Time `json:"started_at"`
	// LockedUntil is when the attempt's lock expires unless renewed.
	LockedUntil time.Time `json:"locked_until"`
	// DeliveryCount is how many times the attempt has been delivered.
	DeliveryCount int32 `json:"delivery_count"`
	// Options are the activity's timeouts and retry policy.
	Options ActivityOptions `json:"options"`
	// Cancel tells whether the attempt's cancellation was requested: then ack it at once.
	Cancel CancelInfo `json:"cancel"`
}

// ActivityHeartbeatRequest is the body of POST /activity-tasks/{token}/heartbeat.
type ActivityHeartbeatRequest struct {
	// Details are the attempt's progress, given to a later attempt.
	Details json.RawMessage `json:"details,omitempty" swaggertype:"object"`
	// ExtendFor extends the lock (0s … 10m; omitted or 0: 30s).
	ExtendFor Duration `json:"extend_for,omitempty" swaggertype:"string" example:"30s"`
}

// ActivityHeartbeatResponse is the answer of an attempt's heartbeat.
type ActivityHeartbeatResponse struct {
	// CancelRequested tells whether the attempt's cancellation was requested.
	CancelRequested bool `json:"cancel_requested"`
	// Reason is why cancellation was requested.
	Reason string `json:"reason,omitempty"`
	// LockedUntil is when the renewed lock expires.
	LockedUntil time.Time `json:"locked_until"`
}

// CompleteActivityTaskRequest is the body of POST /activity-tasks/{token}/complete.
type CompleteActivityTaskRequest struct {
	// Result is the activity's result, any JSON value.
	Result json.RawMessage `json:"result,omitempty" swaggertype:"object"`
	// EagerWorkflowTask, when set, asks the server to lock, in the same
	// transaction, the workflow turn this result makes due — if the
	// workflow's task queue is TaskQueue and no one holds the workflow —
	// for the worker that ran the attempt, and to return it in
	// workflow_task, as a workflow-task poll by that worker would have.
	EagerWorkflowTask *EagerWorkflowTask `json:"eager_workflow_task,omitempty"`
	// NextTurn, when set (with eager_workflow_task), is the workflow's next
	// turn that the worker already ran on this result with the workflow
	// state it holds (a speculative turn): the server applies it as the
	// ack of that turn in the result's transaction when the turn would
	// have had exactly this result as its one message, on the history the
	// worker replayed (next_event_id). Otherwise it records only the
	// result and the answer's next_turn is absent: the worker drops what
	// the speculative turn did and runs the real turn (workflow_task, or a
	// poll's).
	NextTurn *SpeculativeTurn `json:"next_turn,omitempty"`
}

// SpeculativeTurn is a turn run by the worker that ran an activity, on
// the activity's result, before the server made the turn due (see
// CompleteActivityTaskRequest.NextTurn).
type SpeculativeTurn struct {
	// InstanceID is the workflow the worker ran the turn of (the
	// attempt's): a turn of another one is not applied.
	InstanceID string `json:"instance_id" validate:"required,name"`
	// ExecutionID is the execution the worker ran the turn on.
	ExecutionID int64 `json:"execution_id" validate:"min=1"`
	// NextEventID is the id the execution's next event had when the worker
	// ran the turn: the history it replayed ends just before it.
	NextEventID int64 `json:"next_event_id" validate:"min=1"`
	// EventTime is the time the worker gave the result's event (the
	// workflow's clock in the turn); the history records it. A time before
	// the execution's last event, or ahead of the server's clock, is
	// refused (the turn is then not applied).
	EventTime time.Time `json:"event_time"`
	// Commands are the turn's decisions, as in a turn's ack.
	Commands []Command `json:"commands" validate:"max=10000,dive"`
	// ActivityCancels are the running activities whose cancellation the
	// turn requests, as in a turn's ack.
	ActivityCancels []ActivityCancel `json:"activity_cancels,omitempty" validate:"max=100000,dive"`
	// EagerActivities asks for the attempts the turn schedules, as in a
	// turn's ack.
	EagerActivities *EagerActivities `json:"eager_activities,omitempty"`
}

// CompleteActivityByIDRequest is the body of POST
// /workflows/{id}/activities/{activity_id}/complete: completes the held
// attempt of the activity (asynchronous completion by id).
type CompleteActivityByIDRequest struct {
	// ExecutionID is the workflow's execution (0: the current one).
	ExecutionID int64 `json:"execution_id,omitempty" validate:"min=0"`
	// RunID, when set, names the execution instead of ExecutionID: a run
	// id (a UUID) or an execution id in decimal.
	RunID string `json:"run_id,omitempty" validate:"max=64"`
	// Result is the activity's result, any JSON value.
	Result json.RawMessage `json:"result,omitempty" swaggertype:"object"`
}

// FailActivityByIDRequest is the body of POST
// /workflows/{id}/activities/{activity_id}/fail.
type FailActivityByIDRequest struct {
	// ExecutionID is the workflow's execution (0: the current one).
	ExecutionID int64 `json:"execution_id,omitempty" validate:"min=0"`
	// RunID, when set, names the execution instead of ExecutionID: a run
	// id (a UUID) or an execution id in decimal.
	RunID string `json:"run_id,omitempty" validate:"max=64"`
	Error Error  `json:"error"`
}

// HeartbeatActivityByIDRequest is the body of POST
// /workflows/{id}/activities/{activity_id}/heartbeat.
type HeartbeatActivityByIDRequest struct {
	// ExecutionID is the workflow's execution (0: the current one).
	ExecutionID int64 `json:"execution_id,omitempty" validate:"min=0"`
	// RunID, when set, names the execution instead of ExecutionID: a run
	// id (a UUID) or an execution id in decimal.
	RunID string `json:"run_id,omitempty" validate:"max=64"`
	// Details are the heartbeat details to record, any JSON value.
	Details json.RawMessage `json:"details,omitempty" swaggertype:"object"`
}

// EagerWorkflowTask asks for the turn an activity result makes due to be
// handed out in the result's answer (see CompleteActivityTaskRequest).
type EagerWorkflowTask struct {
	// TaskQueue is the workflow task queue the worker serves.
	TaskQueue string `json:"task_queue" validate:"required,name"`
	// LockFor is the turn's lock, as in a workflow-task poll (default 10s,
	// 1s … 10m).
	LockFor Duration `json:"lock_for,omitempty" swaggertype:"string" example:"10s"`
	// BuildID is the worker's build id, as in a workflow-task poll: the
	// turn is handed over only when the execution's build id allows it.
	BuildID string `json:"build_id,omitempty" validate:"max=256"`
}

// FailActivityTaskRequest is the body of POST /activity-tasks/{token}/fail.
type FailActivityTaskRequest struct {
	// Error is what went wrong; its type decides with the retry policy whether to retry.
	Error Error `json:"error"`
	// HeartbeatDetails are the attempt's latest heartbeat details (also
	// those recorded after its last renewal); when set, the next attempt
	// starts from them.
	HeartbeatDetails json.RawMessage `json:"heartbeat_details,omitempty" swaggertype:"object"`
}

// AbandonActivityTaskRequest is the body of POST /activity-tasks/{token}/abandon:
// the worker gives the attempt back unfinished (it is shutting down); it is
// delivered again after Delay.
type AbandonActivityTaskRequest struct {
	// Delay is how long until the attempt is delivered again (default 0).
	Delay Duration `json:"delay,omitempty" swaggertype:"string" validate:"gte=0"`
}

// ActivityAckResponse is the answer of an attempt's complete, fail or abandon.
type ActivityAckResponse struct {
	// Outcome is what the server did with the report: "delivered" (the
	// workflow will see it), "retry_scheduled" (a new attempt follows),
	// "stale" (the attempt had been cancelled or superseded; the report was
	// dropped), or "abandoned".
	Outcome string `json:"outcome"`
	// WorkflowTask is the turn locked for the worker at its request
	// (eager_workflow_task); it runs and acknowledges it as a polled one.
	WorkflowTask *WorkflowTask `json:"workflow_task,omitempty"`
	// NextTurn is the ack of the report's speculative turn (next_turn),
	// when the server applied it: the turn is done, as after
	// POST /workflow-tasks/{token}/complete. Absent: the turn was not
	// applied (the worker drops it).
	NextTurn *CompleteWorkflowTaskResponse `json:"next_turn,omitempty"`
	// InstanceID is the workflow of the applied next_turn (server side
	// only: the hand-off of a workflow it closed).
	InstanceID string `json:"-"`
}

// ---------------------------------------------------------------------------
// Workers and task queues

// WorkerHeartbeatRequest is the body of POST /workers/heartbeat.
type WorkerHeartbeatRequest struct {
	// WorkerID is the worker session's id.
	WorkerID string `json:"worker_id" validate:"required,name"`
	// Identity describes the worker process for people (as in Temporal).
	Identity string `json:"identity,omitempty" validate:"max=256"`
	// Host is the worker's host name.
	Host string `json:"host,omitempty" validate:"max=256"`
	// TaskQueues are the queues the worker serves.
	TaskQueues []string `json:"task_queues,omitempty" validate:"max=16,dive,name"`
	// HostTaskQueue is the worker's own queue (attempts that must run on its host).
	HostTaskQueue string `json:"host_task_queue,omitempty" validate:"omitempty,name"`
	// BuildID identifies the worker's build.
	BuildID string `json:"build_id,omitempty" validate:"max=256"`
	// Metadata are free-form labels of the worker.
	Metadata map[string]string `json:"metadata,omitempty" validate:"max=64"`
	// LeaseDuration is how long the session lives without another heartbeat.
	LeaseDuration Duration `json:"lease_duration" swaggertype:"string" example:"10s"`
	// BoundActivities lists the lock tokens of the attempts the worker
	// holds. When given (even empty), only those — and attempts fetched
	// within the last lease — are renewed; omitted, every attempt bound to
	// the worker id is.
	BoundActivities []string `json:"bound_activities,omitzero" validate:"max=10000"`
	// UnboundActivities lists tokens of bound_activities that the worker has
	// just acknowledged: they are not reported as lost.
	UnboundActivities []string `json:"unbound_activities,omitempty" validate:"max=10000"`
	// Wait, when set, holds the answer until an attempt bound to this
	// worker is flagged cancelled, or until Wait elapses (at most 60s and at
	// most half of LeaseDuration); the heartbeat is then renewed and
	// answered. A worker that keeps such a heartbeat open learns of a
	// cancellation as soon as it is decided instead of at its next renewal.
	Wait *Duration `json:"wait,omitempty" swaggertype:"string" example:"5s"`
	// KnownCancels lists held attempts whose cancellation the worker
	// already knows: a waiting heartbeat is answered at once only for a
	// cancellation outside this list.
	KnownCancels []string `json:"known_cancels,omitempty" validate:"max=10000"`
	// Shutdown ends the session now (a worker stopping gracefully): its
	// lease expires at once, so what waits in its host task queue fails
	// fast instead of after a lease.
	Shutdown bool `json:"shutdown,omitempty"`
}

// AttemptCancel is the cancel info of one attempt a worker holds.
type AttemptCancel struct {
	// LockToken is the attempt whose cancellation was requested.
	LockToken string `json:"lock_token"`
	// Reason is why cancellation was requested.
	Reason string `json:"reason"`
	// RequestedAt is when the cancellation was requested (set by the
	// cancel long-poll).
	RequestedAt time.Time `json:"requested_at,omitzero"`
}

// WorkerHeartbeatResponse is the answer of POST /workers/heartbeat.
type WorkerHeartbeatResponse struct {
	// State is the worker's state after the heartbeat (active).
	State string `json:"state"`
	// LeaseExpiresAt is when the session expires without another heartbeat.
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
	// Cancels are the held attempts whose cancellation was requested.
	Cancels []AttemptCancel `json:"cancels"`
	// Lost lists held tokens the server no longer knows as this worker's
	// (completed, expired, or taken over): the worker should stop them.
	Lost []string `json:"lost,omitempty"`
}

// Worker describes a worker session.
type Worker struct {
	// Namespace is the worker's namespace.
	Namespace string `json:"namespace"`
	// WorkerID is the worker session's id.
	WorkerID string `json:"worker_id"`
	// Identity describes the worker process for people.
	Identity string `json:"identity,omitempty"`
	// Host is the worker's host name.
	Host string `json:"host,omitempty"`
	// TaskQueues are the queues the worker serves.
	TaskQueues []string `json:"task_queues"`
	// HostTaskQueue is the worker's own queue.
	HostTaskQueue string `json:"host_task_queue,omitempty"`
	// BuildID identifies the worker's build.
	BuildID string `json:"build_id,omitempty"`
	// Metadata are free-form labels of the worker.
	Metadata map[string]string `json:"metadata,omitempty"`
	// State is active, inactive or cleaned_up (docs/liveness.md).
	State string `json:"state"`
	// LeaseDuration is the lease the worker asked for.
	LeaseDuration Duration `json:"lease_duration" swaggertype:"string"`
	// LeaseExpiresAt is when the session expires without another heartbeat.
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
	// LastHeartbeatAt is when the worker last heartbeated.
	LastHeartbeatAt time.Time `json:"last_heartbeat_at"`
	// StateChangedAt is when the worker entered its state.
	StateChangedAt time.Time `json:"state_changed_at"`
	// CreatedAt is when the session was created.
	CreatedAt time.Time `json:"created_at"`
	// BoundActivities are the attempts the worker holds.
	BoundActivities []BoundActivity `json:"bound_activities"`
}

// BoundActivity is an attempt bound to a worker.
type BoundActivity struct {
	// LockToken is the attempt's lock token.
	LockToken string `json:"lock_token"`
	// InstanceID is the workflow instance that scheduled the activity.
	InstanceID string `json:"instance_id"`
	// ExecutionID is the execution that scheduled the activity.
	ExecutionID int64 `json:"execution_id"`
	// ActivityID is the activity's id within the execution.
	ActivityID int64 `json:"activity_id"`
	// Attempt is the attempt's number, from 1.
	Attempt int32 `json:"attempt"`
	// ActivityType is the activity's registered name.
	ActivityType string `json:"activity_type"`
	// TaskQueue is the queue the attempt was taken from.
	TaskQueue string `json:"task_queue"`
	// LockedUntil is when the attempt's lock expires unless renewed.
	LockedUntil time.Time `json:"locked_until"`
	// CancelRequested tells whether the attempt's cancellation was requested.
	CancelRequested bool `json:"cancel_requested"`
	// CancelReason is why cancellation was requested.
	CancelReason string `json:"cancel_reason,omitempty"`
}

// ListWorkersResponse is the answer of GET /workers: one page of worker
// sessions, by worker_id.
type ListWorkersResponse struct {
	// Workers are this page's worker sessions.
	Workers []Worker `json:"workers"`
	// NextPageToken, when set, is the page_token of the next page.
	NextPageToken string `json:"next_page_token,omitempty"`
}

// TaskQueue describes a task queue: its backlog and who serves it.
type TaskQueue struct {
	// Name is the task queue's name.
	Name string `json:"name"`
	// Backlog counts attempts waiting (visible and not locked).
	Backlog int64 `json:"backlog"`
	// OldestBacklogAge is the age of the oldest waiting attempt.
	OldestBacklogAge Duration `json:"oldest_backlog_age" swaggertype:"string"`
	// Running counts locked attempts.
	Running int64 `json:"running"`
	// WorkflowBacklog counts workflow instances with a visible message.
	WorkflowBacklog int64 `json:"workflow_backlog"`
	// Pollers lists workers with a long poll open on this queue on this server.
	Pollers []string `json:"pollers"`
	// Workers lists the live (active) workers that serve this queue.
	Workers []string `json:"workers"`
	// IsHostQueue is true when the name is some worker's host task queue.
	IsHostQueue bool `json:"is_host_queue"`
	// Orphaned is true for a host queue whose worker is not active.
	Orphaned bool `json:"orphaned"`
	// Limits are the queue's rate limits (absent: none).
	Limits *TaskQueueLimits `json:"limits,omitempty"`
	// BacklogByPriority counts the visible work waiting, by kind
	// (workflow: turn messages, activity: attempts) and priority key.
	BacklogByPriority []PriorityBacklog `json:"backlog_by_priority,omitempty"`
	// ConcurrencyKeys are the concurrency keys of the queue's running
	// workflows, with their limits and counts (namespace-wide).
	ConcurrencyKeys []ConcurrencyKeyUsage `json:"concurrency_keys,omitempty"`
}

// PriorityBacklog is the visible work of one kind and priority waiting on
// a task queue.
type PriorityBacklog struct {
	// Kind is WorkKindWorkflow (messages of workflow turns) or
	// WorkKindActivity (attempts).
	Kind string `json:"kind"`
	// PriorityKey is the priority (1 … 5).
	PriorityKey int `json:"priority_key"`
	// Count is how many wait.
	Count int64 `json:"count"`
}

// TaskQueueLimits are the rate limits of a task queue (PUT
// /task-queues/{name}/limits): dispatches per second across all server
// replicas, with a burst of one second's worth (at least 1). 0: no limit.
type TaskQueueLimits struct {
	// WorkflowTasksPerSecond bounds the workflow turns dispatched.
	WorkflowTasksPerSecond float64 `json:"workflow_tasks_per_second,omitempty" validate:"gte=0,lte=1000000"`
	// ActivityTasksPerSecond bounds the activity attempts dispatched.
	ActivityTasksPerSecond float64 `json:"activity_tasks_per_second,omitempty" validate:"gte=0,lte=1000000"`
	// WorkflowTasksPerKeyPerSecond bounds the workflow turns dispatched of
	// each fairness key (the key of the workflow's priority): every key of
	// the queue gets this rate, with a burst of one second's worth
	// (Temporal's fairness key rate limit default). Turns of workflows
	// without a fairness key are bound by WorkflowTasksPerSecond alone.
	WorkflowTasksPerKeyPerSecond float64 `json:"workflow_tasks_per_key_per_second,omitempty" validate:"gte=0,lte=1000000"`
	// ActivityTasksPerKeyPerSecond bounds the activity attempts dispatched
	// of each fairness key (the key of the activity's priority, its
	// workflow's unless it has its own), as WorkflowTasksPerKeyPerSecond
	// does for turns.
	ActivityTasksPerKeyPerSecond float64 `json:"activity_tasks_per_key_per_second,omitempty" validate:"gte=0,lte=1000000"`
}
