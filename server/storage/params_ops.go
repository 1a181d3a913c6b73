package storage

import (
	"encoding/json"
	"time"

	"github.com/tetherhq/tether/api"
)

// CompleteWorkflowTaskParams are the parameters of CompleteWorkflowTask.
type CompleteWorkflowTaskParams struct {
	// Namespace is the namespace.
	Namespace string
	// Token is the turn's lock token.
	Token TurnToken
	// Request is the turn's commands as the worker sent them.
	Request api.CompleteWorkflowTaskRequest
}

// FailWorkflowTaskParams are the parameters of FailWorkflowTask.
type FailWorkflowTaskParams struct {
	// Namespace is the namespace.
	Namespace string
	// Token is the turn's lock token.
	Token TurnToken
	// Error is why the turn failed.
	Error api.Error
}

// HeartbeatActivityTaskParams are the parameters of HeartbeatActivityTask.
type HeartbeatActivityTaskParams struct {
	// Namespace is the namespace.
	Namespace string
	// Token is the attempt's lock token.
	Token AttemptToken
	// Details are the heartbeat details (opaque JSON).
	Details json.RawMessage
	// ExtendFor is how long the lock is extended.
	ExtendFor time.Duration
}

// FailActivityTaskParams are the parameters of FailActivityTask.
type FailActivityTaskParams struct {
	// Namespace is the namespace.
	Namespace string
	// Token is the attempt's lock token.
	Token AttemptToken
	// Error is the attempt's failure.
	Error api.Error
	// Details are the last heartbeat details (opaque JSON).
	Details json.RawMessage
}

// AbandonActivityTaskParams are the parameters of AbandonActivityTask.
type AbandonActivityTaskParams struct {
	// Namespace is the namespace.
	Namespace string
	// Token is the attempt's lock token.
	Token AttemptToken
	// Delay is how long until the attempt is ready again.
	Delay time.Duration
}

// SignalWithStartWorkflowParams are the parameters of SignalWithStartWorkflow.
type SignalWithStartWorkflowParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// Request is the signal and the start as the client sent them.
	Request api.SignalWithStartRequest
}

// TerminateWorkflowParams are the parameters of TerminateWorkflow.
type TerminateWorkflowParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// ExecutionID is the execution (0: the current one).
	ExecutionID int64
	// Reason is why it is terminated.
	Reason string
	// Details are recorded with the termination (opaque JSON).
	Details json.RawMessage
}

// CancelWorkflowParams are the parameters of CancelWorkflow.
type CancelWorkflowParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// Reason is why the cancellation is requested.
	Reason string
}

// SignalWorkflowParams are the parameters of SignalWorkflow.
type SignalWorkflowParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// Name is the signal's name.
	Name string
	// Input is the signal's input (opaque JSON).
	Input json.RawMessage
	// Header is the signal's header, recorded in its SignalReceived event
	// (nil: none).
	Header api.Header
}

// DeleteWorkflowParams are the parameters of DeleteWorkflow.
type DeleteWorkflowParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// Force deletes a running instance too.
	Force bool
}
