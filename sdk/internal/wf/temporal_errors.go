package wf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// This file holds the error types of Temporal's temporal package in
// Temporal's shapes (package sdk/temporal aliases them), and the bridges
// from Tether's own error types to them, so that errors.As(err,
// &*temporal.ApplicationError) matches an activity's or a child's failure
// as Temporal code expects.

// ErrNoData is returned by Details of an error that carries none
// (Temporal's temporal.ErrNoData).
var ErrNoData = errors.New("no data available")

// ApplicationErrorCategory classifies an application error for
// observability (Temporal's temporal.ApplicationErrorCategory).
type ApplicationErrorCategory int

const (
	// ApplicationErrorCategoryUnspecified is the default category.
	ApplicationErrorCategoryUnspecified ApplicationErrorCategory = iota
	// ApplicationErrorCategoryBenign marks an expected error: Temporal logs
	// it at debug level; Tether's worker logs it like any other.
	ApplicationErrorCategoryBenign
)

// ApplicationErrorOptions configure NewTemporalApplicationError
// (Temporal's temporal.ApplicationErrorOptions).
type ApplicationErrorOptions struct {
	// NonRetryable stops the retries of the failing activity at once.
	NonRetryable bool
	// Cause is the underlying error; its message is recorded after the
	// error's own.
	Cause error
	// Details are JSON-encodable values recorded with the error.
	Details []any
	// NextRetryDelay asks for this delay before the next attempt.
	// Tether's server schedules retries by the retry policy alone, so it is
	// kept on the error but does not change the delay.
	NextRetryDelay time.Duration
	// Category classifies the error (ApplicationErrorCategoryBenign).
	Category ApplicationErrorCategory
}

// TemporalApplicationError is Temporal's *temporal.ApplicationError: an
// error with a type of its own, raised by an activity or a workflow. Its
// accessors are methods, as in Temporal.
type TemporalApplicationError struct {
	msg            string
	errType        string
	nonRetryable   bool
	cause          error
	details        json.RawMessage
	nextRetryDelay time.Duration
	category       ApplicationErrorCategory
	failure        *api.Error
}

// NewTemporalApplicationError returns an application error with options.
func NewTemporalApplicationError(msg, errType string, opts ApplicationErrorOptions) *TemporalApplicationError {
	return &TemporalApplicationError{msg: msg, errType: errType, nonRetryable: opts.NonRetryable,
		cause: opts.Cause, details: encodeDetails(opts.Details), nextRetryDelay: opts.NextRetryDelay,
		category: opts.Category}
}

// applicationFromFailure returns the application error a recorded failure
// is.
func applicationFromFailure(e *api.Error) *TemporalApplicationError {
	return &TemporalApplicationError{msg: e.Message, errType: e.Type,
		nonRetryable: e.Retryable != nil && !*e.Retryable, details: e.Details, failure: e, cause: FailureError(e.Cause)}
}

// Error implements error, as Temporal writes it: "message (type: T,
// retryable: true): cause".
func (e *TemporalApplicationError) Error() string {
	msg := e.msg
	if e.errType != "" {
		msg = fmt.Sprintf("%s (type: %s, retryable: %v)", msg, e.errType, !e.nonRetryable)
	}
	return withCause(msg, e.msg, e.cause)
}

// Message returns the message without the type and the cause.
func (e *TemporalApplicationError) Message() string { return e.msg }

// Type returns the error's type.
func (e *TemporalApplicationError) Type() string { return e.errType }

// NonRetryable reports whether the error stops retries.
func (e *TemporalApplicationError) NonRetryable() bool { return e.nonRetryable }

// HasDetails reports whether the error carries details.
func (e *TemporalApplicationError) HasDetails() bool { return hasDetails(e.details) }

// Details decodes the error's details into d: one pointer takes the one
// detail, several take one detail each, in order. ErrNoData when there are
// none.
func (e *TemporalApplicationError) Details(d ...any) error { return decodeDetails(e.details, d) }

// NextRetryDelay returns ApplicationErrorOptions.NextRetryDelay.
func (e *TemporalApplicationError) NextRetryDelay() time.Duration { return e.nextRetryDelay }

// Category returns the error's category.
func (e *TemporalApplicationError) Category() ApplicationErrorCategory { return e.category }

// Unwrap returns the cause.
func (e *TemporalApplicationError) Unwrap() error { return e.cause }

// Failure returns the recorded failure the error was read from (nil for
// an error created in this process).
func (e *TemporalApplicationError) Failure() *api.Error { return e.failure }

// ErrorType returns the type (the type recorded with the failure).
func (e *TemporalApplicationError) ErrorType() string { return e.errType }

// ErrorMessage returns the recorded message: the message without the
// cause (recorded as the failure's cause).
func (e *TemporalApplicationError) ErrorMessage() string { return e.msg }

// Retryable reports !NonRetryable().
func (e *TemporalApplicationError) Retryable() bool { return !e.nonRetryable }

// ErrorDetails returns the encoded details.
func (e *TemporalApplicationError) ErrorDetails() json.RawMessage { return e.details }

// TemporalCanceledError is Temporal's *temporal.CanceledError: a
// cancellation, with optional details. It matches ErrCanceled (errors.Is),
// so a workflow whose cancellation was requested ends canceled when it
// returns one.
type TemporalCanceledError struct {
	details json.RawMessage
}

// NewTemporalCanceledError returns a cancellation carrying details.
func NewTemporalCanceledError(details ...any) *TemporalCanceledError {
	return &TemporalCanceledError{details: encodeDetails(details)}
}

// Error implements error.
func (e *TemporalCanceledError) Error() string { return "canceled" }

// Is matches ErrCanceled.
func (e *TemporalCanceledError) Is(target error) bool { return target == ErrCanceled }

// HasDetails reports whether the cancellation carries details.
func (e *TemporalCanceledError) HasDetails() bool { return hasDetails(e.details) }

// Details decodes the details as TemporalApplicationError.Details does.
func (e *TemporalCanceledError) Details(d ...any) error { return decodeDetails(e.details, d) }

// ErrorType returns "Canceled".
func (e *TemporalCanceledError) ErrorType() string { return "Canceled" }

// ErrorDetails returns the encoded details.
func (e *TemporalCanceledError) ErrorDetails() json.RawMessage { return e.details }

// TemporalTimeoutError is Temporal's *temporal.TimeoutError: a timeout of
// an activity (or a workflow), with the kind of timeout and the last
// heartbeat's details.
type TemporalTimeoutError struct {
	msg         string
	timeoutType enums.TimeoutType
	cause       error
	details     json.RawMessage
	failure     *api.Error
}

// NewTemporalTimeoutError returns a timeout of timeoutType whose last
// error was cause, with heartbeat details.
func NewTemporalTimeoutError(msg string, timeoutType enums.TimeoutType, cause error, details ...any) *TemporalTimeoutError {
	return &TemporalTimeoutError{msg: msg, timeoutType: timeoutType, cause: cause, details: encodeDetails(details)}
}

// Error implements error.
func (e *TemporalTimeoutError) Error() string {
	msg := e.msg
	if msg == "" {
		msg = "timeout"
	}
	msg = fmt.Sprintf("%s (type: %s)", msg, timeoutName(e.timeoutType))
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

// Message returns the message.
func (e *TemporalTimeoutError) Message() string { return e.msg }

// TimeoutType returns the kind of timeout.
func (e *TemporalTimeoutError) TimeoutType() enums.TimeoutType { return e.timeoutType }

// HasLastHeartbeatDetails reports whether the timed-out activity had
// recorded heartbeat details.
func (e *TemporalTimeoutError) HasLastHeartbeatDetails() bool { return hasDetails(e.details) }

// LastHeartbeatDetails decodes the last heartbeat's details into d.
func (e *TemporalTimeoutError) LastHeartbeatDetails(d ...any) error {
	return decodeDetails(e.details, d)
}

// Unwrap returns the last error before the timeout.
func (e *TemporalTimeoutError) Unwrap() error { return e.cause }

// ErrorType returns "Timeout".
func (e *TemporalTimeoutError) ErrorType() string { return api.ErrorTypeTimeout }

// ErrorMessage returns the message.
func (e *TemporalTimeoutError) ErrorMessage() string { return e.Error() }

// ErrorDetails returns the encoded heartbeat details.
func (e *TemporalTimeoutError) ErrorDetails() json.RawMessage { return e.details }

// timeoutKinds maps Tether's timeout kinds to Temporal's.
var timeoutKinds = map[string]enums.TimeoutType{
	TimeoutScheduleToStart: enums.TIMEOUT_TYPE_SCHEDULE_TO_START,
	TimeoutStartToClose:    enums.TIMEOUT_TYPE_START_TO_CLOSE,
	TimeoutHeartbeat:       enums.TIMEOUT_TYPE_HEARTBEAT,
	TimeoutScheduleToClose: enums.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE,
}

// timeoutName returns Tether's name of a timeout kind.
func timeoutName(t enums.TimeoutType) string {
	for k, v := range timeoutKinds {
		if v == t {
			return k
		}
	}
	return t.String()
}

// timeoutFromFailure returns the timeout error a recorded failure is.
func timeoutFromFailure(e *api.Error) *TemporalTimeoutError {
	return &TemporalTimeoutError{msg: e.Message, timeoutType: timeoutKinds[e.TimeoutType], details: e.Details, failure: e,
		cause: FailureError(e.Cause)}
}

// WorkflowExecutionError is Temporal's *temporal.WorkflowExecutionError:
// what a client's WorkflowRun.Get returns for a workflow that failed,
// timed out, was canceled or terminated. It unwraps to the cause in
// Temporal's shape (*TemporalApplicationError, *TemporalCanceledError,
// *TemporalTimeoutError, or ErrTerminated) and to the recorded failure
// (*api.Error), and matches the client's sentinel (Sentinel) with
// errors.Is.
type WorkflowExecutionError struct {
	// InstanceID is the workflow id.
	InstanceID string
	// RunID is the run id of the execution ("" when unknown).
	RunID string
	// WorkflowType is the workflow's type ("" when unknown).
	WorkflowType string
	// Failure is the recorded error (nil for a cancellation or a
	// termination without one).
	Failure *api.Error
	// Cause is the cause in Temporal's shape.
	Cause error
	// Sentinel is a sentinel error the execution error also matches
	// (client.ErrWorkflowCanceled, …; nil for none).
	Sentinel error
}

// Error implements error.
func (e *WorkflowExecutionError) Error() string {
	switch {
	case e.Sentinel != nil && e.Failure != nil:
		return fmt.Sprintf("workflow %s: %v: %s", e.InstanceID, e.Sentinel, e.Failure.Message)
	case e.Sentinel != nil:
		return fmt.Sprintf("workflow %s: %v", e.InstanceID, e.Sentinel)
	case e.Failure != nil:
		return fmt.Sprintf("workflow %s failed: %s", e.InstanceID, e.Failure.Error())
	case e.Cause != nil:
		return fmt.Sprintf("workflow %s: %v", e.InstanceID, e.Cause)
	}
	return fmt.Sprintf("workflow %s failed", e.InstanceID)
}

// Unwrap returns the cause, as Temporal's does (errors.Unwrap reaches it).
func (e *WorkflowExecutionError) Unwrap() error { return e.Cause }

// Is matches the sentinel and the recorded failure, beside the cause that
// Unwrap gives.
func (e *WorkflowExecutionError) Is(target error) bool {
	return e.Sentinel != nil && errors.Is(e.Sentinel, target) ||
		e.Failure != nil && errors.Is(e.Failure, target)
}

// As reaches the sentinel and the recorded failure (*api.Error), beside the
// cause that Unwrap gives.
func (e *WorkflowExecutionError) As(target any) bool {
	return e.Sentinel != nil && errors.As(e.Sentinel, target) ||
		e.Failure != nil && errors.As(e.Failure, target)
}

// ErrTerminated is the cause of a terminated workflow's
// WorkflowExecutionError (Temporal's *temporal.TerminatedError).
var ErrTerminated = errors.New("terminated")

// FailureError returns the error in Temporal's shape that a recorded
// failure is: a *TemporalTimeoutError for a timeout, a
// *TemporalCanceledError for a cancellation, a *PanicError for a panic,
// and a *TemporalApplicationError otherwise.
func FailureError(e *api.Error) error {
	if e == nil {
		return nil
	}
	// An activity's or a child's failure that the workflow returned: the
	// wrapper, then its cause in Temporal's shape.
	switch {
	case e.Activity != nil:
		return &ActivityError{ActivityID: e.Activity.ActivityID, ActivityType: e.Activity.ActivityType, Failure: e,
			Err: failureErrorOr(e.Cause, "activity failed")}
	case e.ChildWorkflow != nil:
		return &ChildWorkflowExecutionError{WorkflowID: e.ChildWorkflow.WorkflowID, WorkflowType: e.ChildWorkflow.WorkflowType,
			Failure: e, Err: failureErrorOr(e.Cause, "child workflow failed")}
	}
	switch e.Type {
	case api.ErrorTypeTimeout:
		return timeoutFromFailure(e)
	case "Canceled":
		return &TemporalCanceledError{details: e.Details}
	case "Panic":
		return &PanicError{Value: e.Message, Stack: e.Stack, Failure: e}
	}
	return applicationFromFailure(e)
}

// failureErrorOr is FailureError(c), or an error saying what failed.
func failureErrorOr(c *api.Error, what string) error {
	if c == nil {
		return errors.New(what)
	}
	return FailureError(c)
}

// StackTrace returns the panicking goroutine's stack (Temporal's
// PanicError.StackTrace).
func (e *PanicError) StackTrace() string { return e.Stack }

// As lets errors.As find Temporal's *temporal.ApplicationError in an
// *ApplicationError.
func (e *ApplicationError) As(target any) bool {
	t, ok := target.(**TemporalApplicationError)
	if !ok {
		return false
	}
	f := e.Failure
	if f == nil {
		f = &api.Error{Type: e.Type, Message: e.Message, Details: e.Details}
		if e.NonRetryable {
			no := false
			f.Retryable = &no
		}
	}
	a := applicationFromFailure(f)
	if e.Failure == nil {
		a.cause = e.Cause
	}
	*t = a
	return true
}

// As lets errors.As find Temporal's *temporal.TimeoutError in a
// *TimeoutError.
func (e *TimeoutError) As(target any) bool {
	t, ok := target.(**TemporalTimeoutError)
	if !ok {
		return false
	}
	f := e.Failure
	if f == nil {
		f = &api.Error{Type: api.ErrorTypeTimeout, TimeoutType: e.TimeoutType}
	}
	*t = timeoutFromFailure(f)
	return true
}

// As lets errors.As find Temporal's *temporal.CanceledError in the error of
// a cancelled activity.
func (e *ActivityError) As(target any) bool { return canceledAs(e.Err, e.Failure, target) }

// As lets errors.As find Temporal's *temporal.CanceledError in the error of
// a cancelled child workflow.
func (e *ChildWorkflowExecutionError) As(target any) bool { return canceledAs(e.Err, nil, target) }

// canceledAs fills a **TemporalCanceledError target when cause is a bare
// ErrCanceled.
func canceledAs(cause error, failure *api.Error, target any) bool {
	t, ok := target.(**TemporalCanceledError)
	if !ok || cause != ErrCanceled {
		return false
	}
	c := &TemporalCanceledError{}
	if failure != nil {
		c.details = failure.Details
	}
	*t = c
	return true
}

// encodeDetails encodes details: none as nil, one as itself, several as a
// JSON array. A value that cannot be encoded is recorded as its %v string.
func encodeDetails(details []any) json.RawMessage {
	raw, err := fnsig.EncodeArgs(details...)
	if err != nil {
		raw, _ = json.Marshal(fmt.Sprint(details...))
	}
	return raw
}

// DecodeDetails decodes details encoded as one JSON value (one detail) or
// a JSON array (several) into d, one pointer per detail; ErrNoData when
// raw holds none.
func DecodeDetails(raw json.RawMessage, d ...any) error { return decodeDetails(raw, d) }

// hasDetails reports whether raw holds a value.
func hasDetails(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// decodeDetails decodes raw into d: one pointer takes raw itself, several
// the elements of a JSON array.
func decodeDetails(raw json.RawMessage, d []any) error {
	if !hasDetails(raw) {
		return ErrNoData
	}
	if len(d) == 0 {
		return nil
	}
	if len(d) == 1 {
		return fnsig.Decode(raw, d[0])
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("decode %d details: want a JSON array: %w", len(d), err)
	}
	for i, p := range d {
		if i >= len(parts) {
			break
		}
		if err := fnsig.Decode(parts[i], p); err != nil {
			return fmt.Errorf("decode detail %d: %w", i+1, err)
		}
	}
	return nil
}
