package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
)

// TurnTaker is a worker waiting for a turn of a task queue (a long poll):
// the start of a workflow on that queue may hand it the workflow's first
// turn (StartWorkflowParams.Taker).
type TurnTaker struct {
	// WorkerID is the waiting worker's id.
	WorkerID string
	// BuildID is its build id ("" for none): the execution is pinned to
	// it, as by a fetch.
	BuildID string
	// LockFor is how long the turn is locked for it (at least a second).
	LockFor time.Duration
}

// ErrNoDatabase is the error of Ping when the provider has no database.
var ErrNoDatabase = errors.New("no database")

// Errors a caller can match with errors.Is.
var (
	// ErrNotFound: no such workflow instance, worker or task.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyRunning: a running instance already has that id.
	ErrAlreadyRunning = errors.New("workflow already running")
	// ErrNotRunning: the instance has finished; the request needs a running one.
	ErrNotRunning = errors.New("workflow not running")
	// ErrRunning: the instance is still running (delete without force).
	ErrRunning = errors.New("workflow still running")
	// ErrLockLost: the lock token is unknown, expired, or already acknowledged.
	ErrLockLost = errors.New("lock lost")
	// ErrDuplicateReport: another report of the same lock token (a
	// completion with a different result, a fail after a complete, a
	// different turn ack) was recorded first; this one was not. A retry of
	// the recorded report itself gets its first answer instead.
	ErrDuplicateReport = errors.New("duplicate report")
	// ErrWorkerGone: the worker session was cleaned up; register a new worker id.
	ErrWorkerGone = errors.New("worker cleaned up")
	// ErrSearchAttributeExists: the namespace has a search attribute of
	// that name already.
	ErrSearchAttributeExists = errors.New("search attribute exists")
	// ErrBadPageToken: a list page token that this server did not issue.
	ErrBadPageToken = errors.New("invalid page token")
	// ErrUnhandledSignals: a turn that would complete or fail the workflow
	// was refused because signals arrived while it ran; nothing was written,
	// the lock is released, and the next turn carries the signals.
	ErrUnhandledSignals = errors.New("signals arrived during the turn: the turn must run again with them")
)

// InvalidError is a request that is well formed but breaks a rule the store
// enforces (an activity id gap, a command after a terminal one). Field names
// the offending JSON field, as a path such as "commands[2].activity_id".
type InvalidError struct {
	// Field is the path of the offending field.
	Field string
	// Message says what is wrong with it.
	Message string
}

// Error is "field: message".
func (e *InvalidError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

// Errors of namespaces and keys.
var (
	// ErrNamespaceExists: a namespace of that name exists already.
	ErrNamespaceExists = errors.New("namespace exists")
	// ErrNexusEndpointExists: a Nexus endpoint of that name exists already.
	ErrNexusEndpointExists = errors.New("nexus endpoint exists")
	// ErrNamespaceNotEmpty: the namespace still holds workflow instances.
	ErrNamespaceNotEmpty = errors.New("namespace not empty")
)

// KeyRecord is a stored API key as the server checks it.
type KeyRecord struct {
	// ID is the key's public id.
	ID string
	// Namespace the key is valid in; api.AllNamespaces for every one.
	Namespace string
	// Role is api.RoleWorker, api.RoleClient, api.RoleReader or
	// api.RoleAdmin.
	Role string
	// SecretHash is the SHA-256 of the key's secret.
	SecretHash [32]byte
	// Revoked keys authenticate nobody.
	Revoked bool
	// Owner is the key as the owner of worker sessions ("key:<id>").
	Owner string
}

// SweepResult counts what one sweeper pass did.
type SweepResult struct {
	// LocksExpired counts expired turn and attempt locks released.
	LocksExpired int
	// Poisoned counts turns failed for being delivered too often.
	Poisoned int
	// Timeouts counts activity timeouts by kind (api.Timeout*).
	Timeouts map[string]int
	// WorkersExpired are the workers that lost their lease.
	WorkersExpired []ExpiredWorker
	// Rescheduled counts attempts taken from lost workers and retried.
	Rescheduled int
	// RescheduleFailed counts attempts of lost workers that could not be.
	RescheduleFailed int
	// WorkersCleanedUp are the ids of workers cleaned up.
	WorkersCleanedUp []string
	// CancelledDropped counts long-cancelled attempts removed.
	CancelledDropped int64
	// ExecutionTimeouts counts workflows failed by their execution timeout.
	ExecutionTimeouts int
	// Analyzed are the tables whose statistics the pass refreshed.
	Analyzed []string
	// Purged counts the closed instances a retention pass deleted.
	Purged int
}

// ExpiredWorker is a worker that lost its lease in a sweep.
type ExpiredWorker struct {
	// Namespace is the worker's namespace.
	Namespace string
	// WorkerID is the worker's id.
	WorkerID string
	// Attempts is how many running attempts were taken from it.
	Attempts int
	// HostQueueFailed is how many attempts waiting in its host queue failed
	// with WorkerLost.
	HostQueueFailed int
	// DetectionDelay is how long after the lease deadline the sweep saw it.
	DetectionDelay time.Duration
}

// SweepParams tune one sweeper pass.
type SweepParams struct {
	// HoldExpiry skips the steps that expire what workers renew — worker
	// leases, attempt locks, StartToClose and Heartbeat timeouts — for the
	// pass. The sweeper holds them for a grace period after it could not
	// run (server start, database unreachable), so that the workers that
	// kept running through an outage renew and report first instead of
	// losing their attempts to deadlines that passed while nobody could
	// renew anything.
	HoldExpiry bool
	// Purge, when set, runs a pass of the retention job instead: closed
	// instances past their namespace's retention are deleted.
	Purge *PurgeParams
}

// HeartbeatResult is a worker heartbeat's answer plus what the server
// layer needs for metrics and logs.
type HeartbeatResult struct {
	api.WorkerHeartbeatResponse
	// PrevState is the state before the heartbeat ("" for a new worker);
	// PrevState inactive means the worker was resurrected.
	PrevState string `json:"-"`
}

// ListWorkflowsParams are the parameters of Visibility.ListWorkflows.
type ListWorkflowsParams struct {
	// Namespace is the instances' namespace.
	Namespace string
	// Filter selects the instances and the page.
	Filter ListFilter
	// CountOnly counts the instances Filter selects (its page fields
	// ignored) instead of listing a page of them.
	CountOnly bool
}

// WorkflowList is the answer of Visibility.ListWorkflows: a page, or with
// CountOnly a count.
type WorkflowList struct {
	api.ListWorkflowsResponse
	// Count is how many instances the filter selects (CountOnly).
	Count int64
}

// ListFilter selects workflows for ListWorkflows.
type ListFilter struct {
	// Status selects instances of that status ("": any).
	Status string
	// WorkflowType selects instances of that type ("": any).
	WorkflowType string
	// Limit defaults to 100 and is capped at 1000.
	Limit int32
	// PageToken continues a previous page ("": the first).
	PageToken string
	// Query is a list query (docs/api.md, "Visibility"; "": none). A
	// query that does not parse, or names an unknown attribute, is an
	// InvalidError naming "query" and the position.
	Query string
}

// Outcomes of an attempt's acknowledgement (api.ActivityAckResponse).
const (
	// OutcomeDelivered: the result or failure reached the workflow.
	OutcomeDelivered = "delivered"
	// OutcomeRetryScheduled: the failure scheduled another attempt.
	OutcomeRetryScheduled = "retry_scheduled"
	// OutcomeStale: the report came too late (the attempt was cancelled,
	// timed out or its execution is over) and was dropped.
	OutcomeStale = "stale"
	// OutcomeAbandoned: the attempt was given back.
	OutcomeAbandoned = "abandoned"
)

// QueryAnswer is a query's answer once a worker gave it.
type QueryAnswer struct {
	// Answered is false while no worker has answered.
	Answered bool
	Result   json.RawMessage
	Error    *api.Error
}

// UpdateState is where an update stands.
type UpdateState struct {
	Stage  string
	Result json.RawMessage
	Error  *api.Error
	// InstanceStatus is the status of the update's instance.
	InstanceStatus string
}

// QueueBacklog is the work waiting in one task queue (the PostgreSQL
// store's TaskQueueBacklog, for the backlog gauges).
type QueueBacklog struct {
	// Namespace and TaskQueue name the queue.
	Namespace, TaskQueue string
	// Kind is "workflow" (workflows with a turn due) or "activity"
	// (attempts due that nobody holds).
	Kind string
	// Backlog is how many wait.
	Backlog int64
	// OldestAge is how long the oldest has been due.
	OldestAge time.Duration
}

// ListWorkersParams are the parameters of Workers.ListWorkers.
type ListWorkersParams struct {
	// Namespace is the workers' namespace.
	Namespace string
	// State selects workers of that state ("": any).
	State string
	// PageToken continues a previous page ("": the first).
	PageToken string
	// PageSize is how many workers at most.
	PageSize int32
	// CountByState counts the workers of every namespace by state
	// instead (the other fields unused).
	CountByState bool
}

// WorkerList is the answer of Workers.ListWorkers.
type WorkerList struct {
	// Workers are the page's workers.
	Workers []api.Worker
	// NextPageToken continues after them ("": the last page).
	NextPageToken string
	// ByState counts the workers by state (CountByState).
	ByState map[string]int64
}

// GetWorkerParams are the parameters of Workers.GetWorker.
type GetWorkerParams struct {
	// Namespace is the worker's namespace.
	Namespace string
	// WorkerID is the worker's id.
	WorkerID string
	// OwnerOnly reads only the session's owner (WorkerInfo.Owner).
	OwnerOnly bool
}

// WorkerInfo is the answer of Workers.GetWorker.
type WorkerInfo struct {
	api.Worker
	// Owner is the principal that created the session ("": nobody in
	// particular).
	Owner string `json:"-"`
}

// ListAPIKeysParams are the parameters of Admin.ListAPIKeys.
type ListAPIKeysParams struct {
	// Namespace is the keys' namespace.
	Namespace string
	// WithGlobal lists the keys valid in every namespace too.
	WithGlobal bool
	// CountValid counts the keys of every namespace that are not revoked
	// instead (APIKeyList.Valid).
	CountValid bool
}

// APIKeyList is the answer of Admin.ListAPIKeys.
type APIKeyList struct {
	// Keys are the keys, newest first (at most 1000).
	Keys []api.APIKey
	// Valid counts the keys not revoked (CountValid).
	Valid int64
}

// GetQueryAnswerParams are the parameters of Talk.GetQueryAnswer.
type GetQueryAnswerParams struct {
	// Namespace is the query's namespace.
	Namespace string
	// QueryID is the query's id.
	QueryID string
	// Delete removes the query instead of reading its answer.
	Delete bool
}

// PurgeParams are the bounds of a pass of the retention job
// (SweepParams.Purge).
type PurgeParams struct {
	// Batch is how many closed instances one transaction deletes.
	Batch int32
	// MaxBatches is how many batches at most per namespace.
	MaxBatches int
}

// ChangeSearchAttributeParams are the parameters of
// Visibility.ChangeSearchAttribute.
type ChangeSearchAttributeParams struct {
	// Namespace is the attribute's namespace.
	Namespace string
	// Name is the attribute's name.
	Name string
	// Type is the type of an attribute registered (one of
	// api.SearchAttributeTypes).
	Type string
	// Delete unregisters the attribute instead.
	Delete bool
}

// ListNamespacesParams are the parameters of Admin.ListNamespaces.
type ListNamespacesParams struct {
	// Name selects that namespace alone ("": every one).
	Name string
}

// NexusEndpointsParams are the parameters of Namespaces.NexusEndpoints.
type NexusEndpointsParams struct {
	// Create stores this endpoint (ErrNexusEndpointExists when its name is
	// taken) and answers it.
	Create *api.CreateNexusEndpointRequest
	// Name selects that endpoint alone ("": every one; ErrNotFound when
	// there is none).
	Name string
	// Delete deletes the endpoint Name names (ErrNotFound) and answers
	// nothing.
	Delete bool
}

// ClaimQueryParams are the parameters of Talk.ClaimQuery.
type ClaimQueryParams struct {
	// Namespace is the task queue's namespace.
	Namespace string
	// TaskQueue is the queue whose queries are claimed.
	TaskQueue string
	// WorkerID is the worker that answers.
	WorkerID string
}

// TaskQueueRef names a task queue (Workers.DescribeTaskQueue).
type TaskQueueRef struct {
	// Namespace and Name name the queue.
	Namespace, Name string
}

// SetTaskQueueLimitsParams are the parameters of
// Workers.SetTaskQueueLimits.
type SetTaskQueueLimitsParams struct {
	// Namespace and Name name the queue.
	Namespace, Name string
	// Limits are the rates (0: no limit).
	Limits api.TaskQueueLimits
}

// WorkflowRef names a workflow instance (Visibility.DescribeWorkflow).
type WorkflowRef struct {
	// Namespace is the instance's namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
}

// ExecutionOfRunIDParams are the parameters of Visibility.ExecutionOfRunID.
type ExecutionOfRunIDParams struct {
	// Namespace is the instance's namespace.
	Namespace string
	// InstanceID is the workflow id.
	InstanceID string
	// RunID is the run looked for.
	RunID uuid.UUID
}

// UpdateNamespaceParams are the parameters of Namespaces.UpdateNamespace.
type UpdateNamespaceParams struct {
	// Name is the namespace's name.
	Name string
	// Request is the settings to change.
	Request api.UpdateNamespaceRequest
}

// CreateAPIKeyParams are the parameters of Keys.CreateAPIKey.
type CreateAPIKeyParams struct {
	// Namespace is where the key is valid (api.AllNamespaces: every one).
	Namespace string
	// Role is the key's role (api.Role*).
	Role string
	// Name describes the key.
	Name string
}

// RevokeAPIKeyParams are the parameters of Keys.RevokeAPIKey.
type RevokeAPIKeyParams struct {
	// Namespace is the key's namespace.
	Namespace string
	// ID is the key's id.
	ID string
	// WithGlobal lets a key valid in every namespace be revoked too.
	WithGlobal bool
}
