package storage

import (
	"encoding/json"
	"time"

	"github.com/tetherhq/tether/api"
)

// FetchWorkflowTasksParams are the parameters of Turns.FetchWorkflowTasks.
type FetchWorkflowTasksParams struct {
	// Namespace is the task queue's namespace.
	Namespace string
	// TaskQueue is the queue whose turns are fetched.
	TaskQueue string
	// WorkerID is the worker that takes the turns.
	WorkerID string
	// BuildID is the worker's build id ("" for none).
	BuildID string
	// LockFor is how long each turn stays locked.
	LockFor time.Duration
	// Max is how many turns at most (0: one).
	Max int
}

// FetchActivityTasksParams are the parameters of
// Attempts.FetchActivityTasks.
type FetchActivityTasksParams struct {
	// Namespace is the task queues' namespace.
	Namespace string
	// TaskQueues are the queues polled, the first with work first.
	TaskQueues []string
	// WorkerID is the worker the attempts are bound to.
	WorkerID string
	// LockFor is how long each attempt stays locked.
	LockFor time.Duration
	// Max is how many attempts at most (0: one).
	Max int32
}

// CompleteActivityTaskParams are the parameters of
// Attempts.CompleteActivityTask.
type CompleteActivityTaskParams struct {
	// Namespace is the attempt's namespace.
	Namespace string
	// Token is the attempt's lock token.
	Token AttemptToken
	// Result is the activity's result (opaque JSON).
	Result json.RawMessage
	// Eager, when set, asks for the workflow turn the result makes due
	// (eager workflow task).
	Eager *api.EagerWorkflowTask
	// Turn, when set (with Eager), is the speculative next turn the worker
	// ran on the result: applied as that turn's ack in the result's
	// transaction when it still fits, answered in NextTurn.
	Turn *api.SpeculativeTurn
}

// WorkerHeartbeatParams are the parameters of Workers.WorkerHeartbeat.
type WorkerHeartbeatParams struct {
	// Namespace is the worker's namespace.
	Namespace string
	// Owner is the principal that sends the heartbeat ("": nobody in
	// particular): a new session is created with it, and a session with
	// an owner is renewed by the same one only.
	Owner string
	// Request is the heartbeat as the worker sent it.
	Request api.WorkerHeartbeatRequest
}

// StartWorkflowParams are the parameters of Workflows.StartWorkflow.
type StartWorkflowParams struct {
	// Namespace is the workflow's namespace.
	Namespace string
	// Request is the start as the client sent it.
	Request api.StartWorkflowRequest
	// Taker, when set, is a poll waiting on this server that the
	// workflow's first turn is handed to.
	Taker *TurnTaker
}

// StartWorkflowResult is the answer of Workflows.StartWorkflow.
type StartWorkflowResult struct {
	api.StartWorkflowResponse
	// Turn is the turn locked for StartWorkflowParams.Taker (nil: none).
	Turn *api.WorkflowTask
}

// HistoryParams are the parameters of Visibility.History.
type HistoryParams struct {
	// Namespace is the instance's namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// ExecutionID is the execution (0: the current one).
	ExecutionID int64
	// PageToken continues from an earlier page ("": from the start).
	PageToken string
	// PageSize is how many events at most (0: all of them).
	PageSize int32
}
