package store

// Methods not yet implemented. Each is replaced by its real implementation
// in the file of its family (workflows.go, turns.go, activities.go, workers.go).

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/tetherhq/tether/api"
)

var errTODO = errors.New("store: not implemented yet")

// ListFilter selects workflows for ListWorkflows.
type ListFilter struct {
	Status       string
	WorkflowType string
	Limit        int32
	PageToken    string
}

// StartWorkflow creates a workflow instance and its start message.
// A running instance with the same id → ErrAlreadyRunning.
func (s *Store) StartWorkflow(ctx context.Context, ns string, req api.StartWorkflowRequest) (api.StartWorkflowResponse, error) {
	return api.StartWorkflowResponse{}, errTODO
}

// DescribeWorkflow returns one instance (ErrNotFound).
func (s *Store) DescribeWorkflow(ctx context.Context, ns, instanceID string) (api.Workflow, error) {
	return api.Workflow{}, errTODO
}

// ListWorkflows pages through instances, newest first.
func (s *Store) ListWorkflows(ctx context.Context, ns string, f ListFilter) (api.ListWorkflowsResponse, error) {
	return api.ListWorkflowsResponse{}, errTODO
}

// History returns an execution's events (executionID 0 = current).
func (s *Store) History(ctx context.Context, ns, instanceID string, executionID int64) (api.HistoryResponse, error) {
	return api.HistoryResponse{}, errTODO
}

// CancelWorkflow requests cancellation; changed is false when the instance
// is finished or a cancel was already requested (first reason wins).
func (s *Store) CancelWorkflow(ctx context.Context, ns, instanceID, reason string) (changed bool, err error) {
	return false, errTODO
}

// SignalWorkflow sends a signal (ErrNotFound, ErrNotRunning).
func (s *Store) SignalWorkflow(ctx context.Context, ns, instanceID, name string, input json.RawMessage) error {
	return errTODO
}

// DeleteWorkflow deletes an instance with its history and messages. A
// running instance needs force (else ErrRunning); its outstanding activities
// are flagged cancelled with reason instance_deleted.
func (s *Store) DeleteWorkflow(ctx context.Context, ns, instanceID string, force bool) error {
	return errTODO
}

// FetchWorkflowTask locks one instance of the queue with visible messages
// and returns the turn, or nil when there is none.
func (s *Store) FetchWorkflowTask(ctx context.Context, ns, taskQueue, workerID string, lockFor time.Duration) (*api.WorkflowTask, error) {
	return nil, errTODO
}

// CompleteWorkflowTask acknowledges a turn in one transaction
// (ErrLockLost, *InvalidError).
func (s *Store) CompleteWorkflowTask(ctx context.Context, ns, token string, req api.CompleteWorkflowTaskRequest) (api.CompleteWorkflowTaskResponse, error) {
	return api.CompleteWorkflowTaskResponse{}, errTODO
}

// FailWorkflowTask gives a turn back; it is retried after a backoff.
func (s *Store) FailWorkflowTask(ctx context.Context, ns, token string, e api.Error) error {
	return errTODO
}

// FetchActivityTask locks one visible attempt of the queues (binding it to
// workerID), or returns nil.
func (s *Store) FetchActivityTask(ctx context.Context, ns string, taskQueues []string, workerID string, lockFor time.Duration) (*api.ActivityTask, error) {
	return nil, errTODO
}

// HeartbeatActivityTask extends an attempt's lock (also when cancelled) and
// records details.
func (s *Store) HeartbeatActivityTask(ctx context.Context, ns, token string, details json.RawMessage, extendFor time.Duration) (api.ActivityHeartbeatResponse, error) {
	return api.ActivityHeartbeatResponse{}, errTODO
}

// CompleteActivityTask acknowledges an attempt with its result.
func (s *Store) CompleteActivityTask(ctx context.Context, ns, token string, result json.RawMessage) (api.ActivityAckResponse, error) {
	return api.ActivityAckResponse{}, errTODO
}

// FailActivityTask acknowledges an attempt with an error; the retry policy
// decides between a new attempt and a failure delivered to the workflow.
func (s *Store) FailActivityTask(ctx context.Context, ns, token string, e api.Error) (api.ActivityAckResponse, error) {
	return api.ActivityAckResponse{}, errTODO
}

// AbandonActivityTask gives an attempt back to the queue after delay.
func (s *Store) AbandonActivityTask(ctx context.Context, ns, token string, delay time.Duration) (api.ActivityAckResponse, error) {
	return api.ActivityAckResponse{}, errTODO
}

// WorkerHeartbeat creates or renews a worker session and renews every
// attempt it holds (ErrWorkerGone).
func (s *Store) WorkerHeartbeat(ctx context.Context, ns string, req api.WorkerHeartbeatRequest) (api.WorkerHeartbeatResponse, error) {
	return api.WorkerHeartbeatResponse{}, errTODO
}

// ListWorkers lists worker sessions, optionally of one state.
func (s *Store) ListWorkers(ctx context.Context, ns, state string) ([]api.Worker, error) {
	return nil, errTODO
}

// GetWorker returns one worker session (ErrNotFound).
func (s *Store) GetWorker(ctx context.Context, ns, workerID string) (api.Worker, error) {
	return api.Worker{}, errTODO
}

// DescribeTaskQueue returns a queue's backlog and live workers.
func (s *Store) DescribeTaskQueue(ctx context.Context, ns, name string) (api.TaskQueue, error) {
	return api.TaskQueue{}, errTODO
}

// NextWorkflowWake returns the earliest future visible_at of a message on
// the workflow task queue (ok false when there is none).
func (s *Store) NextWorkflowWake(ctx context.Context, ns, taskQueue string) (t time.Time, ok bool, err error) {
	return time.Time{}, false, errTODO
}

// NextActivityWake returns the earliest future visible_at of an attempt on
// the queues (ok false when there is none).
func (s *Store) NextActivityWake(ctx context.Context, ns string, taskQueues []string) (t time.Time, ok bool, err error) {
	return time.Time{}, false, errTODO
}

// SweepResult counts what one sweeper pass did.
type SweepResult struct {
	LocksExpired      int
	Poisoned          int
	Timeouts          map[string]int
	WorkersExpired    int
	WorkersCleanedUp  int
	CancelledDropped  int
	ExecutionTimeouts int
}

// Sweep runs one pass of the sweeper: lock expiries, poison, the four
// activity timeouts, worker lease expiry and cleanup. Safe to run from
// several replicas at once.
func (s *Store) Sweep(ctx context.Context) (SweepResult, error) {
	return SweepResult{}, errTODO
}
