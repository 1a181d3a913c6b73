// Package activity is the API available to activity functions: the
// attempt's info, heartbeats, cancellation, and errors with a type of their
// own.
//
// An activity function has one of the shapes
//
//	func(ctx context.Context) error
//	func(ctx context.Context, in In) error
//	func(ctx context.Context) (Out, error)
//	func(ctx context.Context, in In) (Out, error)
//
// It runs in an ordinary goroutine of the worker and may do anything: I/O,
// randomness, blocking. It must watch ctx: ctx is cancelled when the
// attempt's cancellation is requested (context.Cause(ctx) is then a
// *CanceledError with the reason), when the attempt's lock is lost, or when
// the worker stops. An activity that ignores its ctx for longer than the
// worker's cancel grace period is abandoned: the worker acknowledges the
// attempt and leaves the goroutine running; whatever it returns later is
// reported anyway and dropped by the server as stale.
//
// # Errors
//
// A returned error fails the attempt; the server retries it per the
// activity's RetryPolicy. The error's type, which NonRetryableErrorTypes
// matches, is the Type of an *Error (see NewError), or else the Go type name
// of the error without package (see package sdk's docs/sdk.md). Return
// NewNonRetryableError to stop retries at once. A panic fails the attempt
// with type "Panic" and the stack.
package activity

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/actenv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/log"
)

// Info describes the running attempt, with Temporal's field names and
// shapes (activity.Info) and Tether's.
//
// Fields (the type is defined in an internal package):
//
//   - Namespace string: Namespace is the workflow's namespace;
//     WorkflowNamespace is Temporal's name of it.
//   - WorkflowNamespace string: WorkflowNamespace is Namespace.
//   - InstanceID string: InstanceID is the workflow instance's id.
//   - ExecutionID int64: ExecutionID is the workflow execution (run) the
//     activity belongs to.
//   - WorkflowExecution WorkflowExecution: WorkflowExecution is the workflow id
//     and run id (Temporal's).
//   - WorkflowType *WorkflowType: WorkflowType is the type of the workflow that
//     scheduled the activity.
//   - ActivityID string: ActivityID is the activity's id within its execution,
//     in decimal.
//   - ActivityType ActivityType: ActivityType is the activity's registered
//     name.
//   - Attempt int32: Attempt counts from 1.
//   - TaskQueue string: TaskQueue is the queue the attempt was taken from.
//   - HostTaskQueue string: HostTaskQueue is the task queue only this worker
//     serves (empty when the worker has none).
//   - HeartbeatDetails json.RawMessage: HeartbeatDetails are the details of the
//     last heartbeat of an earlier attempt, to resume from (see
//     GetHeartbeatDetails).
//   - ScheduledTime time.Time: ScheduledTime is when the activity was
//     scheduled; ScheduledAt is Tether's name of it.
//   - ScheduledAt time.Time: ScheduledAt is ScheduledTime.
//   - StartedTime time.Time: StartedTime is when this attempt started;
//     StartedAt is Tether's name of it.
//   - StartedAt time.Time: StartedAt is StartedTime.
//   - Deadline time.Time: Deadline is when the attempt times out (zero when it
//     has no start-to-close or schedule-to-close timeout).
//   - TaskToken []byte: TaskToken identifies the attempt for
//     client.CompleteActivity and client.RecordActivityHeartbeat, when the
//     activity returns ErrResultPending.
//   - WorkerID string: WorkerID is the worker running the attempt.
//   - IsLocalActivity bool: IsLocalActivity is true in a local activity.
//   - HeartbeatTimeout time.Duration: HeartbeatTimeout is the activity's
//     heartbeat timeout (0: none).
//   - StartToCloseTimeout time.Duration: StartToCloseTimeout is the activity's
//     start-to-close timeout (0: none).
//   - ScheduleToCloseTimeout time.Duration: ScheduleToCloseTimeout is the
//     activity's schedule-to-close timeout (0: none).
type Info = actenv.ActivityInfo

// Type is the type of an activity (Temporal's activity.Type):
// Info.ActivityType.
type Type = ActivityType

// WorkflowExecution names a workflow execution (Temporal's
// activity.WorkflowExecution).
//
// Fields (the type is defined in an internal package):
//
//   - ID string: ID is the workflow id.
//   - RunID string: RunID is the run id of the execution.
type WorkflowExecution = actenv.WorkflowExecution

// ActivityType names an activity type.
//
// Fields (the type is defined in an internal package):
//
//   - Name string: Name is the registered name.
type ActivityType = actenv.ActivityType

// WorkflowType names a workflow type.
//
// Fields (the type is defined in an internal package):
//
//   - Name string: Name is the registered name.
type WorkflowType = actenv.WorkflowType

// GetInfo returns the attempt's info. Outside an activity it returns the
// zero Info.
func GetInfo(ctx context.Context) Info { return wf.ActivityOutbound(ctx).GetInfo(ctx) }

// GetLogger returns the attempt's logger (Temporal's activity.GetLogger):
// the worker's logger with the workflow instance, execution (run),
// activity id, type and attempt attached, as a log.Logger that also has
// With (log.WithLogger). log.ToSlog returns it as a *slog.Logger. Outside
// an activity it writes to slog.Default().
func GetLogger(ctx context.Context) log.Logger { return wf.ActivityOutbound(ctx).GetLogger(ctx) }

// GetMetricsHandler returns the attempt's metrics handler (Temporal's
// activity.GetMetricsHandler): the client's MetricsHandler tagged with the
// task queue, the workflow and activity types;
// client.MetricsNopHandler without one, or outside an activity.
func GetMetricsHandler(ctx context.Context) client.MetricsHandler {
	if e := actenv.From(ctx); e != nil && e.Metrics != nil {
		return e.Metrics
	}
	return client.MetricsNopHandler
}

// IsActivity reports whether ctx is the context of a running activity.
func IsActivity(ctx context.Context) bool { return actenv.From(ctx) != nil }

// HeartbeatDetails decodes the details of the previous attempt's last
// heartbeat into ptr; ok is false when there are none.
func HeartbeatDetails(ctx context.Context, ptr any) (ok bool, err error) {
	e := actenv.From(ctx)
	if e == nil || len(e.HeartbeatDetails) == 0 {
		return false, nil
	}
	return true, fnsig.Decode(e.HeartbeatDetails, ptr)
}

// HasHeartbeatDetails reports whether the previous attempt recorded
// heartbeat details (Temporal's activity.HasHeartbeatDetails).
func HasHeartbeatDetails(ctx context.Context) bool {
	return wf.ActivityOutbound(ctx).HasHeartbeatDetails(ctx)
}

// GetHeartbeatDetails decodes the previous attempt's last heartbeat details
// into d, one pointer per value RecordHeartbeat was given (Temporal's
// activity.GetHeartbeatDetails). It returns temporal.ErrNoData when there
// are none.
func GetHeartbeatDetails(ctx context.Context, d ...any) error {
	return wf.ActivityOutbound(ctx).GetHeartbeatDetails(ctx, d...)
}

// GetClient returns the client of the worker running the activity
// (Temporal's activity.GetClient), to start or signal workflows from an
// activity. Outside an activity, or in a local activity, it returns nil.
func GetClient(ctx context.Context) client.Client {
	e := actenv.From(ctx)
	if e == nil {
		return nil
	}
	c, _ := e.Client.(client.Client)
	return c
}

// RecordHeartbeat records progress details (JSON-encoded: none or nil for
// none, one value as itself, several as a JSON array). The worker sends the
// latest details with the attempt's next lock renewal and the server hands
// them to the next attempt if this one fails (GetHeartbeatDetails,
// HeartbeatDetails). Outside an activity it does nothing.
func RecordHeartbeat(ctx context.Context, details ...any) error {
	o := wf.ActivityOutbound(ctx)
	if wf.IsActivityRoot(o) {
		// Without interceptors the encoding error is returned.
		return wf.RecordActivityHeartbeat(ctx, details...)
	}
	o.RecordHeartbeat(ctx, details...)
	return nil
}

// Cancellation reasons that the worker itself gives.
const (
	// ReasonLockLost: the server no longer knows the attempt as this
	// worker's (lock expired or taken over).
	ReasonLockLost = "lock_lost"
	// ReasonWorkerStopping: the worker stopped and its stop timeout ran out.
	ReasonWorkerStopping = "worker_stopping"
	// ReasonWorkerLost: the worker's session lease ran out — the worker
	// could not reach the server for longer than its lease (network
	// partition, process paused) — so the server reschedules the attempt
	// elsewhere. The worker cancels its running activities itself when its
	// lease runs out locally, before the server acts; the server gives the
	// same reason for the attempts of a worker it declared lost.
	ReasonWorkerLost = api.CancelReasonWorkerLost
)

// ErrResultPending is returned by an activity to leave its attempt pending:
// the worker neither reports nor abandons it, and the attempt stays held
// until client.CompleteActivity (with GetInfo(ctx).TaskToken) or
// client.CompleteActivityByID completes or fails it from any process, or
// its timeouts end it. Temporal's activity.ErrResultPending.
var ErrResultPending = errors.New("not error: do not autocomplete, using Client.CompleteActivity() to complete")

// ErrCanceled is matched (errors.Is) by every *CanceledError.
var ErrCanceled = errors.New("activity canceled")

// CanceledError is the cause (context.Cause) of a cancelled activity
// context. Reason is the server's reason ("select_loser:timeout",
// "workflow_canceled", "timeout:start_to_close", "worker_lost", …) or one of
// the worker's own (ReasonLockLost, ReasonWorkerStopping).
type CanceledError struct {
	Reason string
}

// Error implements error.
func (e *CanceledError) Error() string { return "activity canceled: " + e.Reason }

// Is matches ErrCanceled and context.Canceled.
func (e *CanceledError) Is(target error) bool {
	return target == ErrCanceled || target == context.Canceled
}

// ErrorType returns "Canceled".
func (e *CanceledError) ErrorType() string { return "Canceled" }

// Error is an activity error with an explicit type, details, and whether a
// retry may help.
type Error struct {
	// Type classifies the error; a RetryPolicy's NonRetryableErrorTypes
	// matches it.
	Type    string
	Message string
	// NonRetryable stops server-side retries at once.
	NonRetryable bool
	// Details is any JSON-encodable value.
	Details any
	// Cause is an optional underlying error (not sent to the server beyond
	// its part of Message).
	Cause error
}

// NewError returns a retryable *Error.
func NewError(typ, message string, details any) *Error {
	return &Error{Type: typ, Message: message, Details: details}
}

// NewNonRetryableError returns an *Error that fails the activity without
// retry.
func NewNonRetryableError(typ, message string, details any) *Error {
	return &Error{Type: typ, Message: message, Details: details, NonRetryable: true}
}

// Error implements error.
func (e *Error) Error() string {
	msg := e.Message
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	if e.Type != "" {
		return e.Type + ": " + msg
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// ErrorMessage returns the message without the type.
func (e *Error) ErrorMessage() string {
	if e.Cause != nil {
		return e.Message + ": " + e.Cause.Error()
	}
	return e.Message
}

// ErrorType returns e.Type.
func (e *Error) ErrorType() string { return e.Type }

// Retryable reports !e.NonRetryable.
func (e *Error) Retryable() bool { return !e.NonRetryable }

// ErrorDetails returns the encoded details.
func (e *Error) ErrorDetails() json.RawMessage {
	if e.Details == nil {
		return nil
	}
	raw, err := json.Marshal(e.Details)
	if err != nil {
		return nil
	}
	return raw
}

// RegisterOptions are the options of worker.RegisterActivityWithOptions
// (Temporal's activity.RegisterOptions).
type RegisterOptions struct {
	// Name is the activity's registered name; for a struct, the prefix of
	// its methods' names.
	Name string
	// SkipInvalidStructFunctions skips a struct's exported methods that do
	// not have an activity's signature instead of failing the registration.
	SkipInvalidStructFunctions bool
	// DisableAlreadyRegisteredCheck lets the registration replace an
	// earlier activity of the same name instead of failing.
	DisableAlreadyRegisteredCheck bool
}
