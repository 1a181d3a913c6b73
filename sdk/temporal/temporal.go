// Package temporal is Temporal's go.temporal.io/sdk/temporal on Tether:
// the retry policy, the error types and constructors that activities,
// workflows and clients share, and typed search attributes.
//
// The error types are the ones the rest of the SDK produces, so errors.As
// works across packages: an activity that returns NewApplicationError
// reaches the workflow as an *ActivityError wrapping an *ApplicationError
// with its type, message and details; a client's WorkflowRun.Get of a
// failed workflow returns a *WorkflowExecutionError wrapping the cause.
package temporal

import (
	"errors"

	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/internal/searchattr"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// RetryPolicy is how failed activities are retried (workflow.RetryPolicy).
//
// Fields (the type is defined in an internal package):
//
//   - InitialInterval time.Duration: InitialInterval is the wait before the
//     first retry (0: the server's default, 1s).
//   - BackoffCoefficient float64: BackoffCoefficient multiplies the wait after
//     each retry (0: the server's default, 2).
//   - MaximumInterval time.Duration: MaximumInterval caps the wait between
//     retries (0: 100 times InitialInterval).
//   - MaximumAttempts int32: MaximumAttempts: 0 means unlimited, 1 means no
//     retry.
//   - NonRetryableErrorTypes []string: NonRetryableErrorTypes fail the activity
//     at once when the error's type matches.
type RetryPolicy = wf.RetryPolicy

// Priority is a task's priority and fairness key with its weight
// (Temporal's temporal.Priority), set on client.StartWorkflowOptions,
// workflow.ActivityOptions and workflow.ChildWorkflowOptions.
//
// Fields (the type is defined in an internal package):
//
//   - PriorityKey int: PriorityKey is 1 (first) … 5 (last); 0 means the
//     default, 3. Work of a higher priority (a smaller key) is dispatched
//     before any of a lower.
//   - FairnessKey string: FairnessKey names whose work this is (a tenant, a
//     customer): within a priority, keys share the queue in weighted round
//     robin.
//   - FairnessWeight float32: FairnessWeight is the key's share (0 means 1; at
//     most 1000).
type Priority = wf.Priority

// ApplicationError is an error with a type of its own, returned by an
// activity or a workflow. Read it with Type, Message, NonRetryable,
// HasDetails and Details.
type ApplicationError = wf.TemporalApplicationError

// ApplicationErrorOptions configure NewApplicationErrorWithOptions.
//
// Fields (the type is defined in an internal package):
//
//   - NonRetryable bool: NonRetryable stops the retries of the failing activity
//     at once.
//   - Cause error: Cause is the underlying error; its message is recorded after
//     the error's own.
//   - Details []any: Details are JSON-encodable values recorded with the error.
//   - NextRetryDelay time.Duration: NextRetryDelay asks for this delay before
//     the next attempt. Tether's server schedules retries by the retry policy
//     alone, so it is kept on the error but does not change the delay.
//   - Category ApplicationErrorCategory: Category classifies the error
//     (ApplicationErrorCategoryBenign).
type ApplicationErrorOptions = wf.ApplicationErrorOptions

// ApplicationErrorCategory classifies an application error.
type ApplicationErrorCategory = wf.ApplicationErrorCategory

// Application error categories.
const (
	// ApplicationErrorCategoryUnspecified is the default.
	ApplicationErrorCategoryUnspecified = wf.ApplicationErrorCategoryUnspecified
	// ApplicationErrorCategoryBenign marks an expected error.
	ApplicationErrorCategoryBenign = wf.ApplicationErrorCategoryBenign
)

// CanceledError is a cancellation with optional details. It matches
// workflow.ErrCanceled with errors.Is.
type CanceledError = wf.TemporalCanceledError

// TimeoutError is a timeout, with its TimeoutType and the last heartbeat's
// details.
type TimeoutError = wf.TemporalTimeoutError

// PanicError is a panic of an activity or of workflow code; StackTrace
// returns its stack.
//
// Fields (the type is defined in an internal package):
//
//   - Value string: Value is the panic value, formatted.
//   - Stack string: Stack is the panicking goroutine's stack.
//   - Failure *api.Error: Failure is the error as history recorded it, when it
//     did.
type PanicError = wf.PanicError

// ActivityError is the error of an activity as the workflow sees it; it
// unwraps to the cause (an *ApplicationError, *TimeoutError, *PanicError,
// *CanceledError, …).
//
// Fields (the type is defined in an internal package):
//
//   - ActivityID int64: ActivityID is the activity's id within the execution.
//   - ActivityType string: ActivityType is the activity's registered name.
//   - Failure *api.Error: Failure is the error recorded in history (nil for a
//     cancellation decided by the workflow).
//   - Err error: Err is the cause.
type ActivityError = wf.ActivityError

// ChildWorkflowExecutionError is the error of a child workflow as its
// parent sees it; it unwraps to the cause.
//
// Fields (the type is defined in an internal package):
//
//   - WorkflowID string: WorkflowID is the child's workflow id.
//   - WorkflowType string: WorkflowType is the child's workflow type.
//   - Failure *api.Error: Failure is the child's recorded error (a failed child
//     only).
//   - Err error: Err is the cause.
type ChildWorkflowExecutionError = wf.ChildWorkflowExecutionError

// WorkflowExecutionError is the error of a workflow as a client sees it
// (WorkflowRun.Get); it unwraps to the cause.
//
// Fields (the type is defined in an internal package):
//
//   - InstanceID string: InstanceID is the workflow id.
//   - RunID string: RunID is the run id of the execution ("" when unknown).
//   - WorkflowType string: WorkflowType is the workflow's type ("" when
//     unknown).
//   - Failure *api.Error: Failure is the recorded error (nil for a cancellation
//     or a termination without one).
//   - Cause error: Cause is the cause in Temporal's shape.
//   - Sentinel error: Sentinel is a sentinel error the execution error also
//     matches (client.ErrWorkflowCanceled, …; nil for none).
type WorkflowExecutionError = wf.WorkflowExecutionError

// NexusOperationError is the error of a Nexus operation that failed, was
// canceled or timed out (Temporal's NexusOperationError): Endpoint,
// Service, Operation, OperationToken, and the handler's error as its Cause
// (errors.As finds an *ApplicationError, a *CanceledError, a
// *TimeoutError there).
//
// Fields (the type is defined in an internal package):
//
//   - Message string: Message says what happened.
//   - Endpoint string: Endpoint is the endpoint's name.
//   - Service string: Service is the service's name.
//   - Operation string: Operation is the operation's name.
//   - OperationToken string: OperationToken is the token of an asynchronous
//     operation ("" when it did not start).
//   - OperationID string: OperationID is OperationToken (Temporal's deprecated
//     name).
//   - Failure *api.Error: Failure is the cause's wire form.
//   - Cause error: Cause is the handler's error.
type NexusOperationError = wf.NexusOperationError

// ErrNoData is returned by Details of an error without details.
var ErrNoData = wf.ErrNoData

// NewApplicationError returns a retryable application error of type
// errType carrying details.
func NewApplicationError(message, errType string, details ...any) error {
	return wf.NewTemporalApplicationError(message, errType, ApplicationErrorOptions{Details: details})
}

// NewApplicationErrorWithCause returns a retryable application error of
// type errType with a cause.
func NewApplicationErrorWithCause(message, errType string, cause error, details ...any) error {
	return wf.NewTemporalApplicationError(message, errType, ApplicationErrorOptions{Cause: cause, Details: details})
}

// NewApplicationErrorWithOptions returns an application error of type
// errType configured by options.
func NewApplicationErrorWithOptions(message, errType string, options ApplicationErrorOptions) error {
	return wf.NewTemporalApplicationError(message, errType, options)
}

// NewNonRetryableApplicationError returns an application error that stops
// the activity's retries at once, whatever its retry policy.
func NewNonRetryableApplicationError(message, errType string, cause error, details ...any) error {
	return wf.NewTemporalApplicationError(message, errType, ApplicationErrorOptions{NonRetryable: true, Cause: cause, Details: details})
}

// NewCanceledError returns a cancellation carrying details. It matches
// workflow.ErrCanceled: a workflow whose cancellation was requested ends
// canceled when it returns it.
func NewCanceledError(details ...any) error { return wf.NewTemporalCanceledError(details...) }

// NewTimeoutError returns a timeout of timeoutType whose last error was
// lastErr.
func NewTimeoutError(timeoutType enums.TimeoutType, lastErr error, details ...any) error {
	return wf.NewTemporalTimeoutError("", timeoutType, lastErr, details...)
}

// NewHeartbeatTimeoutError returns a heartbeat timeout carrying the last
// heartbeat's details.
func NewHeartbeatTimeoutError(details ...any) error {
	return wf.NewTemporalTimeoutError("heartbeat timeout", enums.TIMEOUT_TYPE_HEARTBEAT, nil, details...)
}

// IsApplicationError reports whether err is or wraps an *ApplicationError.
func IsApplicationError(err error) bool {
	var e *ApplicationError
	return errors.As(err, &e)
}

// IsCanceledError reports whether err is or wraps a cancellation: a
// *CanceledError, workflow.ErrCanceled, or a cancelled activity's or child's
// error.
func IsCanceledError(err error) bool {
	var e *CanceledError
	return errors.As(err, &e) || errors.Is(err, wf.ErrCanceled)
}

// IsTimeoutError reports whether err is or wraps a *TimeoutError.
func IsTimeoutError(err error) bool {
	var e *TimeoutError
	return errors.As(err, &e)
}

// IsPanicError reports whether err is or wraps a *PanicError.
func IsPanicError(err error) bool {
	var e *PanicError
	return errors.As(err, &e)
}

// IsTerminatedError reports whether err is the error of a terminated
// workflow or child.
func IsTerminatedError(err error) bool {
	return errors.Is(err, wf.ErrTerminated) || errors.Is(err, wf.ErrChildWorkflowTerminated)
}

// IsWorkflowExecutionAlreadyStartedError reports whether err says that a
// running workflow already has the id a start asked for (a client's
// ErrAlreadyRunning, or a child's *ChildWorkflowExecutionAlreadyStartedError).
func IsWorkflowExecutionAlreadyStartedError(err error) bool {
	var c *wf.ChildWorkflowExecutionAlreadyStartedError
	if errors.As(err, &c) {
		return true
	}
	var a interface{ AlreadyStarted() bool }
	return errors.As(err, &a) && a.AlreadyStarted()
}

// SearchAttributeKey is a typed search attribute key.
type SearchAttributeKey = searchattr.Key

// SearchAttributeUpdate sets or unsets one attribute.
type SearchAttributeUpdate = searchattr.Update

// SearchAttributes is an immutable set of typed search attribute values.
type SearchAttributes = searchattr.SearchAttributes

// SearchAttributeKeyString is the key of a text attribute.
type SearchAttributeKeyString = searchattr.KeyString

// SearchAttributeKeyKeyword is the key of a keyword attribute.
type SearchAttributeKeyKeyword = searchattr.KeyKeyword

// SearchAttributeKeyInt64 is the key of an int attribute.
type SearchAttributeKeyInt64 = searchattr.KeyInt64

// SearchAttributeKeyFloat64 is the key of a double attribute.
type SearchAttributeKeyFloat64 = searchattr.KeyFloat64

// SearchAttributeKeyBool is the key of a bool attribute.
type SearchAttributeKeyBool = searchattr.KeyBool

// SearchAttributeKeyTime is the key of a datetime attribute.
type SearchAttributeKeyTime = searchattr.KeyTime

// SearchAttributeKeyKeywordList is the key of a keyword list attribute.
type SearchAttributeKeyKeywordList = searchattr.KeyKeywordList

// NewSearchAttributeKeyString returns the key of the text attribute name.
func NewSearchAttributeKeyString(name string) SearchAttributeKeyString {
	return searchattr.NewKeyString(name)
}

// NewSearchAttributeKeyKeyword returns the key of the keyword attribute
// name.
func NewSearchAttributeKeyKeyword(name string) SearchAttributeKeyKeyword {
	return searchattr.NewKeyKeyword(name)
}

// NewSearchAttributeKeyInt64 returns the key of the int attribute name.
func NewSearchAttributeKeyInt64(name string) SearchAttributeKeyInt64 {
	return searchattr.NewKeyInt64(name)
}

// NewSearchAttributeKeyFloat64 returns the key of the double attribute
// name.
func NewSearchAttributeKeyFloat64(name string) SearchAttributeKeyFloat64 {
	return searchattr.NewKeyFloat64(name)
}

// NewSearchAttributeKeyBool returns the key of the bool attribute name.
func NewSearchAttributeKeyBool(name string) SearchAttributeKeyBool {
	return searchattr.NewKeyBool(name)
}

// NewSearchAttributeKeyTime returns the key of the datetime attribute name.
func NewSearchAttributeKeyTime(name string) SearchAttributeKeyTime {
	return searchattr.NewKeyTime(name)
}

// NewSearchAttributeKeyKeywordList returns the key of the keyword list
// attribute name.
func NewSearchAttributeKeyKeywordList(name string) SearchAttributeKeyKeywordList {
	return searchattr.NewKeyKeywordList(name)
}

// NewSearchAttributes returns the attributes the updates set.
func NewSearchAttributes(attributes ...SearchAttributeUpdate) SearchAttributes {
	return searchattr.New(attributes...)
}
