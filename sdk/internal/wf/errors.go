package wf

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/names"
)

// ErrCanceled reports a cancellation: of the workflow (its context was
// cancelled), or of one activity (it lost a Select, or the workflow was
// cancelled while it was pending). Match it with errors.Is.
var ErrCanceled = errors.New("canceled")

// ErrHistoryMismatch is returned by Executor.Turn when an executor that has
// already run turns is handed a history that is not the one it expects; the
// caller should discard it and replay with a fresh executor.
var ErrHistoryMismatch = errors.New("workflow: history does not continue the cached state")

// ActivityError is the error of an activity future whose activity failed or
// was cancelled. It unwraps to the cause: a *TimeoutError, *WorkerLostError,
// *PanicError, *ApplicationError, or ErrCanceled.
type ActivityError struct {
	// ActivityID is the activity's id within the execution.
	ActivityID int64
	// ActivityType is the activity's registered name.
	ActivityType string
	// Failure is the error recorded in history (nil for a cancellation
	// decided by the workflow).
	Failure *api.Error
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *ActivityError) Error() string {
	return fmt.Sprintf("activity %s (id %d): %v", e.ActivityType, e.ActivityID, e.Err)
}

// Unwrap returns the cause.
func (e *ActivityError) Unwrap() error { return e.Err }

// AnnotateError records the activity in the error's wire form (whose
// message is Error(), its cause recorded as its Cause too).
func (e *ActivityError) AnnotateError(a *api.Error) {
	a.Activity = &api.ErrorActivity{ActivityType: e.ActivityType, ActivityID: e.ActivityID}
}

// TimeoutError is an activity that timed out (error type "Timeout").
type TimeoutError struct {
	// TimeoutType is schedule_to_start, start_to_close, heartbeat or
	// schedule_to_close.
	TimeoutType string
	// Failure is the error recorded in history.
	Failure *api.Error
}

// Error implements error.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timeout (%s): %s", e.TimeoutType, e.Failure.Message)
}

// ErrorType returns "Timeout".
func (e *TimeoutError) ErrorType() string { return api.ErrorTypeTimeout }

// WorkerLostError is an activity whose worker died holding it (error type
// "WorkerLost"): typically its host task queue lost its only worker.
type WorkerLostError struct {
	// Failure is the error recorded in history.
	Failure *api.Error
}

// Error implements error.
func (e *WorkerLostError) Error() string { return "worker lost: " + e.Failure.Message }

// ErrorType returns "WorkerLost".
func (e *WorkerLostError) ErrorType() string { return api.ErrorTypeWorkerLost }

// PanicError is a panic, of an activity (reported by its worker) or of
// workflow code.
type PanicError struct {
	// Value is the panic value, formatted.
	Value string
	// Stack is the panicking goroutine's stack.
	Stack string
	// Failure is the error as history recorded it, when it did.
	Failure *api.Error
}

// Error implements error.
func (e *PanicError) Error() string { return "panic: " + e.Value }

// ErrorType returns "Panic".
func (e *PanicError) ErrorType() string { return "Panic" }

// ApplicationError is an error with a type of its own: returned by an
// activity (the cause of an ActivityError) or by workflow code (it fails the
// workflow with that type). Create one with NewError.
type ApplicationError struct {
	// Type classifies the error (retry policies match it).
	Type string
	// Message is the error's message.
	Message string
	// NonRetryable is true when the activity asked for no retry.
	NonRetryable bool
	// Details is the JSON the failing code attached.
	Details json.RawMessage
	// Failure is the error recorded in history.
	Failure *api.Error
	// Cause is the error this one wraps (nil: none): the recorded
	// failure's cause, rebuilt.
	Cause error
}

// NewError returns an *ApplicationError of type typ; details (nil for
// none) are encoded as JSON.
func NewError(typ, message string, details any) *ApplicationError {
	e := &ApplicationError{Type: typ, Message: message}
	if details != nil {
		e.Details, _ = json.Marshal(details)
	}
	return e
}

// Error implements error: the type, the message, and the cause's when
// the message does not already end with it.
func (e *ApplicationError) Error() string {
	msg := e.Message
	if e.Type != "" {
		msg = e.Type + ": " + msg
	}
	return withCause(msg, e.Message, e.Cause)
}

// Unwrap returns the cause.
func (e *ApplicationError) Unwrap() error { return e.Cause }

// withCause appends cause's text to msg, unless own (the message of the
// error msg describes) already ends with it: a recorded message often
// includes its cause's.
func withCause(msg, own string, cause error) string {
	if cause == nil {
		return msg
	}
	c := cause.Error()
	if strings.HasSuffix(own, c) {
		return msg
	}
	var m Messager
	if errors.As(cause, &m) && strings.HasSuffix(own, m.ErrorMessage()) {
		return msg
	}
	return msg + ": " + c
}

// Messager is implemented by errors whose recorded message differs from
// their Error() (errconv.Messager).
type Messager interface{ ErrorMessage() string }

// ErrorType returns e.Type.
func (e *ApplicationError) ErrorType() string { return e.Type }

// ErrorMessage returns the message without the type.
func (e *ApplicationError) ErrorMessage() string { return e.Message }

// Retryable reports !e.NonRetryable.
func (e *ApplicationError) Retryable() bool { return !e.NonRetryable }

// ErrorDetails returns e.Details.
func (e *ApplicationError) ErrorDetails() json.RawMessage { return e.Details }

// DetailsInto decodes the error's details into ptr.
func (e *ApplicationError) DetailsInto(ptr any) error {
	if len(e.Details) == 0 {
		return errors.New("no details")
	}
	return json.Unmarshal(e.Details, ptr)
}

// NondeterminismError means that the workflow code, replayed against its
// history, issued a different sequence of commands than the one recorded: the
// code was changed incompatibly, or it is not deterministic. The worker fails
// the turn with error type "Nondeterminism"; the instance is not changed.
type NondeterminismError struct {
	// Message says how the code and the history differ.
	Message string
}

// Error implements error.
func (e *NondeterminismError) Error() string { return "nondeterminism: " + e.Message }

// ErrorType returns "Nondeterminism".
func (e *NondeterminismError) ErrorType() string { return api.ErrorTypeNondeterminism }

// ContinueAsNewError is returned by a workflow function to end the execution
// and start the next one of the same instance with a fresh history.
type ContinueAsNewError struct {
	// WorkflowType of the next execution; empty keeps the current one.
	WorkflowType string
	// Input of the next execution.
	Input json.RawMessage
	// Header is the header the next execution starts with (the
	// interceptors' and propagators').
	Header api.Header
}

// Error implements error.
func (e *ContinueAsNewError) Error() string { return "continue as new" }

// NewContinueAsNewError returns the error that, returned by the workflow
// function, continues the instance as a new execution of wfn — a workflow
// function or its registered name — with args (Temporal's signature).
// Passing the running workflow's own function (or its name) continues the
// same workflow type, whatever name it was registered under. The arguments
// are checked against a function's signature; an error that is not a
// *ContinueAsNewError, returned by the workflow, fails it.
func newContinueAsNewErrorDirect(ctx Context, wfn any, args ...any) error {
	s := ctx.impl().s
	name, ok := wfn.(string)
	if !ok {
		var err error
		if name, err = names.FuncName(wfn); err != nil {
			return fmt.Errorf("workflow.NewContinueAsNewError: %w", err)
		}
		sig, err := fnsig.Inspect(wfn, workflowContextType, "workflow")
		if err == nil {
			err = sig.CheckInput(args...)
		}
		if err != nil {
			return fmt.Errorf("workflow.NewContinueAsNewError %s: %w", name, err)
		}
		if s.def.fn != 0 && reflect.ValueOf(wfn).Pointer() == s.def.fn {
			name = s.def.name
		}
	}
	if name == "" {
		return errors.New("workflow.NewContinueAsNewError: empty workflow name")
	}
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		return fmt.Errorf("workflow.NewContinueAsNewError %s: input: %w", name, err)
	}
	e := &ContinueAsNewError{Input: raw}
	if name != s.def.name {
		e.WorkflowType = name
	}
	return e
}

// activityFailure maps a recorded failure to the error of a future.
func activityFailure(id int64, typ string, e *api.Error) error {
	if e == nil {
		e = &api.Error{Message: "activity failed"}
	}
	return &ActivityError{ActivityID: id, ActivityType: typ, Failure: e, Err: failureLeaf(e)}
}

// DecodeFailure rebuilds the error a recorded failure is, as workflow code
// sees it, with its chain (api.Error.Cause): an *ActivityError or a
// *ChildWorkflowExecutionError for an activity's or a child's failure
// that a workflow returned, and below them (and otherwise) a
// *TimeoutError, *WorkerLostError, *PanicError, ErrCanceled or
// *ApplicationError. nil for nil.
func DecodeFailure(e *api.Error) error {
	if e == nil {
		return nil
	}
	switch {
	case e.Activity != nil:
		return &ActivityError{ActivityID: e.Activity.ActivityID, ActivityType: e.Activity.ActivityType, Failure: e,
			Err: causeOr(e.Cause, "activity failed")}
	case e.ChildWorkflow != nil:
		return &ChildWorkflowExecutionError{WorkflowID: e.ChildWorkflow.WorkflowID, WorkflowType: e.ChildWorkflow.WorkflowType,
			Failure: e, Err: causeOr(e.Cause, "child workflow failed")}
	}
	return failureLeaf(e)
}

// causeOr is the decoded cause, or an error saying what failed.
func causeOr(c *api.Error, what string) error {
	if c == nil {
		return errors.New(what)
	}
	return DecodeFailure(c)
}

// failureLeaf is the error a recorded failure is, by its type.
func failureLeaf(e *api.Error) error {
	switch e.Type {
	case api.ErrorTypeTimeout:
		return &TimeoutError{TimeoutType: e.TimeoutType, Failure: e}
	case api.ErrorTypeWorkerLost:
		return &WorkerLostError{Failure: e}
	case "Panic":
		return &PanicError{Value: e.Message, Stack: e.Stack, Failure: e}
	case "Canceled":
		return ErrCanceled
	}
	return &ApplicationError{Type: e.Type, Message: e.Message, NonRetryable: e.Retryable != nil && !*e.Retryable,
		Details: e.Details, Failure: e, Cause: DecodeFailure(e.Cause)}
}
