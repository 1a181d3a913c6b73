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

// AckKind is how an acknowledgement ends a turn or an attempt
// (AckWorkflowTaskParams.Kind, AckActivityTaskParams.Kind).
type AckKind string

// The kinds of acknowledgement.
const (
	// AckComplete: the turn's commands, the attempt's result.
	AckComplete AckKind = "complete"
	// AckFail: the turn failed (redelivered after a backoff); the
	// attempt failed (retried, or the activity fails).
	AckFail AckKind = "fail"
	// AckRelease: a turn locked and never delivered is given back at
	// once (turns only).
	AckRelease AckKind = "release"
	// AckAbandon: the attempt is given back unfinished, ready again
	// after a delay (attempts only).
	AckAbandon AckKind = "abandon"
	// AckPending: the attempt stays held, to be completed later from any
	// process (attempts only).
	AckPending AckKind = "pending"
)

// AckWorkflowTaskParams are the parameters of Turns.AckWorkflowTask.
type AckWorkflowTaskParams struct {
	// Namespace is the turn's namespace.
	Namespace string
	// Token is the turn's lock token.
	Token TurnToken
	// Kind is AckComplete, AckFail or AckRelease.
	Kind AckKind
	// Request is the turn's commands as the worker sent them
	// (AckComplete).
	Request api.CompleteWorkflowTaskRequest
	// Error is why the turn failed (AckFail).
	Error api.Error
}

// AckActivityTaskParams are the parameters of Attempts.AckActivityTask.
type AckActivityTaskParams struct {
	// Namespace is the attempt's namespace.
	Namespace string
	// Token is the attempt's lock token.
	Token AttemptToken
	// Kind is AckComplete, AckFail, AckAbandon or AckPending.
	Kind AckKind
	// Result is the activity's result, opaque JSON (AckComplete).
	Result json.RawMessage
	// Eager, when set, asks for the workflow turn the result makes due
	// (eager workflow task; AckComplete).
	Eager *api.EagerWorkflowTask
	// Error is the attempt's failure (AckFail).
	Error api.Error
	// Details are the attempt's last heartbeat details, opaque JSON: the
	// next attempt starts from them (AckFail; nil: those of its last
	// renewal).
	Details json.RawMessage
	// Delay is how long until the attempt is ready again (AckAbandon).
	Delay time.Duration
}

// TaskKind names the work of a task queue: turns or attempts.
type TaskKind string

// The kinds of task.
const (
	// WorkflowTasks are turns of workflows.
	WorkflowTasks TaskKind = "workflow"
	// ActivityTasks are attempts of activities.
	ActivityTasks TaskKind = "activity"
)

// NextWakeParams are the parameters of Turns.NextWake.
type NextWakeParams struct {
	// Namespace is the task queues' namespace.
	Namespace string
	// Kind is WorkflowTasks or ActivityTasks.
	Kind TaskKind
	// TaskQueues are the queues looked at (one for WorkflowTasks).
	TaskQueues []string
}

// Wake is when the next piece of work becomes due.
type Wake struct {
	// At is when (zero when nothing is scheduled).
	At time.Time
	// Scheduled is false when nothing is scheduled.
	Scheduled bool
}

// ScheduleFiring is the answer of Schedules.FireDueSchedule.
type ScheduleFiring struct {
	// Fired: a due schedule was claimed and fired; call again.
	Fired bool
	// Next is, when nothing fired, the earliest time a schedule is due
	// (far in the future when none).
	Next time.Time
	// Buffered is, when nothing fired, whether a buffered slot waits for
	// a workflow to close.
	Buffered bool
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
	// Signal, when set, makes the start a signal-with-start: the
	// instance Request.InstanceID is signalled, and started first when
	// it is not running (Request's cron schedule and delay unused, no
	// Taker).
	Signal *StartSignal
}

// StartSignal is the signal of a signal-with-start
// (StartWorkflowParams.Signal).
type StartSignal struct {
	// Name is the signal's name.
	Name string
	// Input is the signal's input (opaque JSON).
	Input json.RawMessage
	// Header is the signal's header (nil: none).
	Header api.Header
}

// StartWorkflowResult is the answer of Workflows.StartWorkflow.
type StartWorkflowResult struct {
	api.StartWorkflowResponse
	// Turn is the turn locked for StartWorkflowParams.Taker (nil: none).
	Turn *api.WorkflowTask
	// Started is false when a signal-with-start signalled an execution
	// that was running (true for every start that succeeded otherwise).
	Started bool
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
