package actenv

import (
	"encoding/json"
	"strconv"
	"time"
)

// ActivityInfo describes the running attempt, with Temporal's field names and
// shapes (activity.Info) and Tether's.
type ActivityInfo struct {
	// Namespace is the workflow's namespace; WorkflowNamespace is
	// Temporal's name of it.
	Namespace string
	// WorkflowNamespace is Namespace.
	WorkflowNamespace string
	// InstanceID is the workflow instance's id.
	InstanceID string
	// ExecutionID is the workflow execution (run) the activity belongs to.
	ExecutionID int64
	// WorkflowExecution is the workflow id and run id (Temporal's).
	WorkflowExecution WorkflowExecution
	// WorkflowType is the type of the workflow that scheduled the activity.
	WorkflowType *WorkflowType
	// ActivityID is the activity's id within its execution, in decimal.
	ActivityID string
	// ActivityType is the activity's registered name.
	ActivityType ActivityType
	// Attempt counts from 1.
	Attempt int32
	// TaskQueue is the queue the attempt was taken from.
	TaskQueue string
	// HostTaskQueue is the task queue only this worker serves (empty when
	// the worker has none).
	HostTaskQueue string
	// HeartbeatDetails are the details of the last heartbeat of an earlier
	// attempt, to resume from (see GetHeartbeatDetails).
	HeartbeatDetails json.RawMessage
	// ScheduledTime is when the activity was scheduled; ScheduledAt is
	// Tether's name of it.
	ScheduledTime time.Time
	// ScheduledAt is ScheduledTime.
	ScheduledAt time.Time
	// StartedTime is when this attempt started; StartedAt is Tether's name
	// of it.
	StartedTime time.Time
	// StartedAt is StartedTime.
	StartedAt time.Time
	// Deadline is when the attempt times out (zero when it has no
	// start-to-close or schedule-to-close timeout).
	Deadline time.Time
	// TaskToken identifies the attempt for client.CompleteActivity and
	// client.RecordActivityHeartbeat, when the activity returns
	// ErrResultPending.
	TaskToken []byte
	// WorkerID is the worker running the attempt.
	WorkerID string
	// IsLocalActivity is true in a local activity.
	IsLocalActivity bool
	// HeartbeatTimeout is the activity's heartbeat timeout (0: none).
	HeartbeatTimeout time.Duration
	// StartToCloseTimeout is the activity's start-to-close timeout (0:
	// none).
	StartToCloseTimeout time.Duration
	// ScheduleToCloseTimeout is the activity's schedule-to-close timeout
	// (0: none).
	ScheduleToCloseTimeout time.Duration
}

// WorkflowExecution names a workflow execution (Temporal's
// activity.WorkflowExecution).
type WorkflowExecution struct {
	// ID is the workflow id.
	ID string
	// RunID is the run id of the execution.
	RunID string
}

// ActivityType names an activity type.
type ActivityType struct {
	// Name is the registered name.
	Name string
}

// WorkflowType names a workflow type.
type WorkflowType struct {
	// Name is the registered name.
	Name string
}

// Public returns the attempt's info as package activity shows it
// (activity.GetInfo); the zero ActivityInfo for a nil e.
func (e *Env) Public() ActivityInfo {
	if e == nil {
		return ActivityInfo{}
	}
	i := e.Info
	runID := i.RunID
	if runID == "" && i.ExecutionID > 0 {
		runID = strconv.FormatInt(i.ExecutionID, 10)
	}
	return ActivityInfo{
		Namespace: i.Namespace, WorkflowNamespace: i.Namespace,
		InstanceID: i.InstanceID, ExecutionID: i.ExecutionID,
		WorkflowExecution: WorkflowExecution{ID: i.InstanceID, RunID: runID},
		WorkflowType:      &WorkflowType{Name: i.WorkflowType},
		ActivityID:        strconv.FormatInt(i.ActivityID, 10),
		ActivityType:      ActivityType{Name: i.ActivityType},
		Attempt:           i.Attempt, TaskQueue: i.TaskQueue, HostTaskQueue: i.HostTaskQueue,
		HeartbeatDetails: i.HeartbeatDetails, ScheduledTime: i.ScheduledAt, ScheduledAt: i.ScheduledAt,
		StartedTime: i.StartedAt, StartedAt: i.StartedAt,
		Deadline: i.Deadline, TaskToken: i.TaskToken, WorkerID: i.WorkerID, IsLocalActivity: i.Local,
		HeartbeatTimeout: i.HeartbeatTimeout, StartToCloseTimeout: i.StartToCloseTimeout,
		ScheduleToCloseTimeout: i.ScheduleToCloseTimeout,
	}
}
