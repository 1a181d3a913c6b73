package wf

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

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

// Error implements error.
func (e *ApplicationError) Error() string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

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
	var cause error
	switch e.Type {
	case api.ErrorTypeTimeout:
		cause = &TimeoutError{TimeoutType: e.TimeoutType, Failure: e}
	case api.ErrorTypeWorkerLost:
		cause = &WorkerLostError{Failure: e}
	case "Panic":
		cause = &PanicError{Value: e.Message, Stack: e.Stack, Failure: e}
	case "Canceled":
		cause = ErrCanceled
	default:
		cause = &ApplicationError{Type: e.Type, Message: e.Message, NonRetryable: e.Retryable != nil && !*e.Retryable, Details: e.Details, Failure: e}
	}
	return &ActivityError{ActivityID: id, ActivityType: typ, Failure: e, Err: cause}
}
