// Package actenv carries the per-attempt environment of a running activity
// in its context.Context, between package worker (which sets it) and package
// activity (which reads it).
package actenv

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"
)

// Info describes the running attempt; package activity exports it as
// activity.Info. It has the fields of Temporal's activity.Info
// (TaskToken, WorkflowType, WorkflowNamespace, WorkflowExecution,
// ActivityID, ActivityType, TaskQueue, HeartbeatTimeout,
// ScheduleToCloseTimeout, StartToCloseTimeout, ScheduledTime,
// StartedTime, Deadline, Attempt, IsLocalActivity) and Tether's names of
// the same facts (Namespace, InstanceID, ExecutionID, ScheduledAt,
// StartedAt).
type Info struct {
	// TaskToken identifies the attempt (its lock token) for
	// client.CompleteActivity and client.RecordActivityHeartbeat, when the
	// activity returns ErrResultPending (Temporal's TaskToken).
	TaskToken []byte
	// WorkflowType is the type of the workflow that scheduled the activity
	// (nil outside a workflow, as in the testsuite's activity environment
	// when none is set).
	WorkflowType *WorkflowType
	// WorkflowNamespace is the workflow's namespace (Namespace).
	WorkflowNamespace string
	// WorkflowExecution is the workflow execution that scheduled the
	// activity: ID the instance id, RunID its run id.
	WorkflowExecution WorkflowExecution
	// ActivityID is the activity's id within its execution, in decimal
	// (the id client.CompleteActivityByID takes).
	ActivityID string
	// ActivityType is the activity's type: its registered name.
	ActivityType ActivityType
	// TaskQueue is the queue the attempt was taken from.
	TaskQueue string
	// HeartbeatTimeout is the activity's heartbeat timeout (0: none).
	HeartbeatTimeout time.Duration
	// ScheduleToCloseTimeout is the activity's schedule-to-close timeout
	// (0: none).
	ScheduleToCloseTimeout time.Duration
	// StartToCloseTimeout is the activity's start-to-close timeout (0:
	// none).
	StartToCloseTimeout time.Duration
	// ScheduledTime is when the activity was scheduled (ScheduledAt).
	ScheduledTime time.Time
	// StartedTime is when this attempt started (StartedAt).
	StartedTime time.Time
	// Deadline is when the attempt times out (zero when it has no
	// start-to-close or schedule-to-close timeout).
	Deadline time.Time
	// Attempt counts from 1.
	Attempt int32
	// IsLocalActivity is true in a local activity.
	IsLocalActivity bool

	// Namespace is the workflow's namespace (Tether's name).
	Namespace string
	// InstanceID is the workflow instance's id (WorkflowExecution.ID).
	InstanceID string
	// ExecutionID is the number of the workflow execution (run) the
	// activity belongs to.
	ExecutionID int64
	// HostTaskQueue is the task queue only this worker serves (empty when the
	// worker has none).
	HostTaskQueue string
	// HeartbeatDetails are the details of the last heartbeat of an earlier
	// attempt, to resume from.
	HeartbeatDetails json.RawMessage
	// ScheduledAt is when the activity was scheduled (ScheduledTime).
	ScheduledAt time.Time
	// StartedAt is when this attempt started (StartedTime).
	StartedAt time.Time
	// WorkerID is the worker running the attempt.
	WorkerID string
}

// WorkflowType is the type of a workflow: its registered name (Temporal's
// activity.WorkflowType).
type WorkflowType struct {
	// Name is the registered name.
	Name string
}

// ActivityType is the type of an activity: its registered name
// (Temporal's activity.Type).
type ActivityType struct {
	// Name is the registered name.
	Name string
}

// WorkflowExecution identifies a workflow execution (Temporal's
// workflow.Execution; the same fields as workflow.Execution, so one
// converts to the other).
type WorkflowExecution struct {
	// ID is the workflow id.
	ID string
	// RunID is the run id.
	RunID string
}

// Attempt are the facts an Info is made of, with Temporal's fields derived
// from Tether's by NewInfo.
type Attempt struct {
	// Namespace is the workflow's namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// RunID is the execution's run id.
	RunID string
	// ExecutionID is the execution's number.
	ExecutionID int64
	// ActivityID is the activity's id within the execution.
	ActivityID int64
	// Attempt counts from 1.
	Attempt int32
	// ActivityType is the activity's registered name.
	ActivityType string
	// TaskQueue is the queue the attempt was taken from.
	TaskQueue string
	// WorkflowType is the workflow's registered name ("" for none).
	WorkflowType string
	// HostTaskQueue is the worker's host task queue.
	HostTaskQueue string
	// WorkerID is the worker running the attempt.
	WorkerID string
	// HeartbeatDetails are the last details of an earlier attempt.
	HeartbeatDetails json.RawMessage
	// ScheduledAt is when the activity was scheduled.
	ScheduledAt time.Time
	// StartedAt is when the attempt started.
	StartedAt time.Time
	// Deadline is when the attempt times out.
	Deadline time.Time
	// TaskToken identifies the attempt.
	TaskToken []byte
	// HeartbeatTimeout is the activity's heartbeat timeout.
	HeartbeatTimeout time.Duration
	// StartToClose is the activity's start-to-close timeout.
	StartToClose time.Duration
	// ScheduleToClose is the activity's schedule-to-close timeout.
	ScheduleToClose time.Duration
	// Local is true for a local activity.
	Local bool
}

// NewInfo builds the Info of an attempt.
func NewInfo(a Attempt) Info {
	info := Info{
		TaskToken: a.TaskToken, WorkflowNamespace: a.Namespace,
		WorkflowExecution: WorkflowExecution{ID: a.InstanceID, RunID: a.RunID},
		ActivityID:        strconv.FormatInt(a.ActivityID, 10), ActivityType: ActivityType{Name: a.ActivityType},
		TaskQueue: a.TaskQueue, HeartbeatTimeout: a.HeartbeatTimeout, ScheduleToCloseTimeout: a.ScheduleToClose,
		StartToCloseTimeout: a.StartToClose, ScheduledTime: a.ScheduledAt, StartedTime: a.StartedAt,
		Deadline: a.Deadline, Attempt: a.Attempt, IsLocalActivity: a.Local,
		Namespace: a.Namespace, InstanceID: a.InstanceID, ExecutionID: a.ExecutionID,
		HostTaskQueue: a.HostTaskQueue, HeartbeatDetails: a.HeartbeatDetails,
		ScheduledAt: a.ScheduledAt, StartedAt: a.StartedAt, WorkerID: a.WorkerID,
	}
	if a.WorkflowType != "" {
		info.WorkflowType = &WorkflowType{Name: a.WorkflowType}
	}
	return info
}

// Env is what an activity can learn about its attempt.
type Env struct {
	Info
	// Heartbeat records details to send with the next lock renewal.
	Heartbeat func(details json.RawMessage)
	// Logger is the attempt's logger (activity.GetLogger).
	Logger *slog.Logger
	// Client is the worker's client (activity.GetClient; a client.Client,
	// nil for a local activity).
	Client any
}

type key struct{}

// With returns ctx carrying env.
func With(ctx context.Context, env *Env) context.Context {
	return context.WithValue(ctx, key{}, env)
}

// From returns the env of ctx, or nil outside an activity.
func From(ctx context.Context) *Env {
	e, _ := ctx.Value(key{}).(*Env)
	return e
}
