// Package actenv carries the per-attempt environment of a running activity
// in its context.Context, between package worker (which sets it) and package
// activity (which reads it).
package actenv

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/tetherhq/tether/sdk/internal/metrics"
)

// Info describes the running attempt; package activity exports it as
// activity.Info.
type Info struct {
	// Namespace is the workflow's namespace.
	Namespace string
	// InstanceID is the workflow instance's id.
	InstanceID string
	// ExecutionID is the workflow execution (run) the activity belongs to.
	ExecutionID int64
	// ActivityID is the activity's id within its execution.
	ActivityID int64
	// Attempt counts from 1.
	Attempt int32
	// ActivityType is the activity's registered name.
	ActivityType string
	// TaskQueue is the queue the attempt was taken from.
	TaskQueue string
	// HostTaskQueue is the task queue only this worker serves (empty when the
	// worker has none).
	HostTaskQueue string
	// WorkflowType is the type of the workflow that scheduled the activity.
	WorkflowType string
	// HeartbeatDetails are the details of the last heartbeat of an earlier
	// attempt, to resume from.
	HeartbeatDetails json.RawMessage
	// ScheduledAt is when the activity was scheduled.
	ScheduledAt time.Time
	// StartedAt is when this attempt started.
	StartedAt time.Time
	// Deadline is when the attempt times out (zero when it has no
	// start-to-close or schedule-to-close timeout).
	Deadline time.Time
	// TaskToken identifies the attempt (its lock token) for
	// client.CompleteActivity and client.RecordActivityHeartbeat, when the
	// activity returns ErrResultPending (Temporal's TaskToken).
	TaskToken []byte
	// WorkerID is the worker running the attempt.
	WorkerID string
	// Local is true in a local activity.
	Local bool
	// RunID is the workflow execution's run id when known (a local
	// activity); else activity.GetInfo gives the execution number.
	RunID string
	// HeartbeatTimeout is the activity's heartbeat timeout (0: none).
	HeartbeatTimeout time.Duration
	// StartToCloseTimeout is the activity's start-to-close timeout (0:
	// none).
	StartToCloseTimeout time.Duration
	// ScheduleToCloseTimeout is the activity's schedule-to-close timeout
	// (0: none).
	ScheduleToCloseTimeout time.Duration
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
	// Metrics is the attempt's metrics handler (activity.GetMetricsHandler;
	// nil: none).
	Metrics metrics.Handler
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
