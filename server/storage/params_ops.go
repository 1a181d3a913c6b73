package storage

import (
	"encoding/json"
	"time"

	"github.com/tetherhq/tether/api"
)

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

// ActivityTokenParams are the parameters of ActivityToken.
type ActivityTokenParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// ExecutionID is the execution (0: the current one).
	ExecutionID int64
	// ActivityID is the activity's id in its execution.
	ActivityID int64
}

// InsertQueryParams are the parameters of InsertQuery.
type InsertQueryParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// ExecutionID is the execution (0: the current one).
	ExecutionID int64
	// Name is the query's name.
	Name string
	// Input is the query's input (opaque JSON).
	Input json.RawMessage
	// Header is the query's header (nil: none).
	Header api.Header
}

// AnswerQueryParams are the parameters of AnswerQuery.
type AnswerQueryParams struct {
	// Namespace is the namespace.
	Namespace string
	// QueryID is the query answered.
	QueryID string
	// Result is the answer (opaque JSON).
	Result json.RawMessage
	// Error is the query's failure (nil: none).
	Error *api.Error
}

// RequestUpdateParams are the parameters of RequestUpdate.
type RequestUpdateParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// UpdateID is the update's id, unique in the instance.
	UpdateID string
	// Name is the update's name.
	Name string
	// Input is the update's input (opaque JSON).
	Input json.RawMessage
	// Header is the update's header (nil: none).
	Header api.Header
}

// GetUpdateParams are the parameters of GetUpdate.
type GetUpdateParams struct {
	// Namespace is the namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// UpdateID is the update's id.
	UpdateID string
}
