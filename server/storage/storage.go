// Package storage is the seam between Tether's server and its durable
// state: the interfaces a provider implements, by concern, and the typed
// values and errors that cross them.
//
// The server (server.Server, its handlers, server.App and the background
// services) holds a Provider, never a concrete store. The one
// implementation is the PostgreSQL provider of server/store (pgx and sqlc);
// storagetest is the conformance suite any provider must pass.
//
// Each method is one atomic operation (one transaction in the PostgreSQL
// provider). Payloads — workflow inputs, activity results, heartbeat
// details — are opaque JSON (json.RawMessage) carried through unread;
// everything else crosses the seam as a typed value of package api or of
// this package. How a provider batches work internally (the PostgreSQL
// provider expands jsonb batches with jsonb_to_recordset and coalesces
// concurrent acknowledgements) stays inside it.
package storage

import (
	"context"
	"time"

	"github.com/tetherhq/tether/api"
)

// Provider is everything the server needs of durable state.
//
// Its methods are grouped by concern, one interface each; a service that
// needs one concern takes that interface. Every method but Settings is
// (ctx, parameters) (result, error), most with one parameters struct: a
// new need is a field of it, not a new method — variants of an operation
// (an acknowledgement's kind, a list's count, a pause of a schedule) are
// fields too. TestProviderSize bounds the number of methods.
type Provider interface {
	Workflows
	Visibility
	Turns
	Attempts
	Talk
	Workers
	Namespaces
	Keys
	Admin
	Schedules
	Batches
}

// Schedules are the server-side schedules (docs/api.md, "Schedules"):
// the REST operations and the scheduler service's claim (FireDueSchedule).
// Errors: ErrNotFound, ErrScheduleExists, *InvalidError (a bad spec or
// policy, naming the field), ErrBadPageToken.
type Schedules interface {
	// CreateSchedule stores a new schedule, its next slot computed from
	// now (ErrScheduleExists when the id is taken).
	CreateSchedule(ctx context.Context, p *CreateScheduleParams) error
	// DescribeSchedule returns a schedule with its next slots, recent
	// actions and running workflows.
	DescribeSchedule(ctx context.Context, p *ScheduleRef) (api.Schedule, error)
	// ListSchedules pages through a namespace's schedules by id.
	ListSchedules(ctx context.Context, f *ScheduleFilter) (api.ListSchedulesResponse, error)
	// UpdateSchedule replaces a schedule's spec, action and policies
	// (p.Request: its id, counters and recent actions stay), or pauses or
	// unpauses it with a note (p.Pause); the next slot is computed from
	// now (the slots of a pause are not caught up).
	UpdateSchedule(ctx context.Context, p *UpdateScheduleParams) error
	// TriggerSchedule fires the action now, with p.Overlap ("": the
	// schedule's policy); with p.Backfill it fires every slot of the
	// spec in the range instead, with the backfill's overlap policy, in
	// one transaction (at most MaxBackfillSlots; a slot that fired
	// already is skipped).
	TriggerSchedule(ctx context.Context, p *TriggerScheduleParams) (ScheduleTrigger, error)
	// DeleteSchedule deletes a schedule and its actions (its workflows
	// stay).
	DeleteSchedule(ctx context.Context, p *ScheduleRef) error
	// FireDueSchedule claims one due schedule that no other transaction
	// holds (or one whose buffered slot may start) and, in the claim's
	// transaction, starts the workflows of its due slots, records the
	// actions and advances its next slot. When no schedule was due
	// (Fired false) the answer says when the next one is.
	FireDueSchedule(ctx context.Context) (ScheduleFiring, error)
}

// Talk is reading and changing a running workflow from outside: queries
// (answered by a worker, never written to history) and updates (recorded
// and applied in a turn).
type Talk interface {
	// InsertQuery records a query of an execution of an instance (running
	// or closed; p.ExecutionID 0: the current one) and wakes the query
	// pollers of its task queue; it returns the query's id. ErrNotFound:
	// no such instance or execution.
	InsertQuery(ctx context.Context, p *InsertQueryParams) (queryID string, err error)
	// ClaimQuery hands the next unanswered query of taskQueue to workerID
	// (nil when there is none).
	ClaimQuery(ctx context.Context, p *ClaimQueryParams) (*api.QueryTask, error)
	// AnswerQuery records a query's answer and wakes its asker; found is
	// false for an unknown query.
	AnswerQuery(ctx context.Context, p *AnswerQueryParams) (found bool, err error)
	// GetQueryAnswer reads a query's answer (Answered false while none);
	// with p.Delete it removes the query instead, once its asker is done
	// with it.
	GetQueryAnswer(ctx context.Context, p *GetQueryAnswerParams) (QueryAnswer, error)
	// RequestUpdate admits an update to a running instance, recorded and
	// enqueued in one transaction; a known update id is left alone.
	RequestUpdate(ctx context.Context, p *RequestUpdateParams) error
	// GetUpdate reads an update's stage and outcome.
	GetUpdate(ctx context.Context, p *GetUpdateParams) (UpdateState, error)
}

// Turns are workflow tasks: a turn locks an instance with its pending
// messages, and its acknowledgement writes the turn's commands.
type Turns interface {
	// FetchWorkflowTasks locks up to p.Max due turns (1 …
	// api.MaxWorkflowTasksPerPoll) of distinct instances of p.TaskQueue
	// for p.WorkerID, each for p.LockFor; only turns of executions whose
	// build id allows p.BuildID (docs/architecture.md, "Build ids").
	// Empty when none is due.
	FetchWorkflowTasks(ctx context.Context, p *FetchWorkflowTasksParams) ([]*api.WorkflowTask, error)
	// AckWorkflowTask ends the turn of p.Token as p.Kind says: AckComplete
	// writes its commands (ErrLockLost, ErrDuplicateReport,
	// ErrUnhandledSignals, *InvalidError); AckFail gives it back for
	// redelivery after a backoff, recording the error (ErrLockLost);
	// AckRelease gives back a turn that was locked and never delivered
	// (a start's first turn no poll took) at once, if the token still
	// holds it, and tells the queue's pollers.
	AckWorkflowTask(ctx context.Context, p *AckWorkflowTaskParams) (api.CompleteWorkflowTaskResponse, error)
	// NextWake is when the next turn (p.Kind WorkflowTasks) or attempt
	// (ActivityTasks) of p.TaskQueues becomes due: a timer, a backoff;
	// Wake.Scheduled is false when nothing is.
	NextWake(ctx context.Context, p *NextWakeParams) (Wake, error)
}

// Attempts are activity attempts: fetched by workers, heartbeated,
// completed, failed (retry or fail) or abandoned.
type Attempts interface {
	// FetchActivityTasks locks up to p.Max (at least 1) ready attempts of
	// p.TaskQueues for p.WorkerID, each for p.LockFor; empty when none is
	// ready.
	FetchActivityTasks(ctx context.Context, p *FetchActivityTasksParams) ([]api.ActivityTask, error)
	// HeartbeatActivityTask records details and extends the attempt's lock.
	HeartbeatActivityTask(ctx context.Context, p *HeartbeatActivityTaskParams) (api.ActivityHeartbeatResponse, error)
	// AckActivityTask ends the attempt of p.Token as p.Kind says:
	// AckComplete with p.Result (with p.Eager it may also lock the
	// workflow turn the result makes due: eager workflow task); AckFail
	// with p.Error, a retry or the activity's failure; AckAbandon gives
	// it back, ready again after p.Delay; AckPending leaves it held, to
	// be completed later from any process (activity.ErrResultPending).
	// ErrLockLost when the token holds nothing, ErrDuplicateReport for a
	// second, different report.
	AckActivityTask(ctx context.Context, p *AckActivityTaskParams) (api.ActivityAckResponse, error)
	// ActivityToken returns the lock token of the held attempt of an
	// activity by workflow id, execution (0: current) and activity id.
	// ErrNotFound when no attempt of it is held.
	ActivityToken(ctx context.Context, p *ActivityTokenParams) (AttemptToken, error)
}

// Workers are worker sessions: leases renewed by heartbeats, the attempts
// bound to them, and their cancel requests.
type Workers interface {
	// WorkerHeartbeat registers or renews a worker session by p.Owner
	// (ErrWorkerGone for a cleaned-up one, or one of another owner); its
	// answer lists the cancel requests of the attempts the worker holds.
	WorkerHeartbeat(ctx context.Context, p *WorkerHeartbeatParams) (HeartbeatResult, error)
	// ListWorkers pages through the workers of p.Namespace, of p.State if
	// not ""; with p.CountByState it counts the workers of every
	// namespace by state instead.
	ListWorkers(ctx context.Context, p *ListWorkersParams) (WorkerList, error)
	// GetWorker describes one worker with its owner, the principal that
	// created the session; with p.OwnerOnly, only its owner
	// (ErrNotFound).
	GetWorker(ctx context.Context, p *GetWorkerParams) (WorkerInfo, error)
	// DescribeTaskQueue describes a task queue's backlog and pollers.
	DescribeTaskQueue(ctx context.Context, p *TaskQueueRef) (api.TaskQueue, error)
	// SetTaskQueueLimits sets (or, for a rate of 0, removes) the rate
	// limits of a task queue's turns and attempts.
	SetTaskQueueLimits(ctx context.Context, p *SetTaskQueueLimitsParams) error
}

// Workflows are the client's commands on workflow instances.
type Workflows interface {
	// StartWorkflow starts an instance (ErrAlreadyRunning); with
	// p.Signal it signals the instance, starting it first when it is not
	// running, in one operation. With p.Taker
	// it also locks the workflow's first turn for that poll in the same
	// operation and returns it in Turn: no turn for a start with a cron
	// schedule, or when the instance could not be locked. A start of a
	// running id may hand over that instance's due turn, with
	// ErrAlreadyRunning. The caller delivers the turn or releases it
	// (AckWorkflowTask with AckRelease, which also unpins an execution
	// whose first turn it was from the taker's build id).
	StartWorkflow(ctx context.Context, p *StartWorkflowParams) (StartWorkflowResult, error)
	// TerminateWorkflow closes the current (or the given) execution at
	// once with WorkflowTerminated, flags its outstanding attempts
	// cancelled (workflow_terminated) and deletes its pending messages.
	// ErrNotFound, ErrNotRunning.
	TerminateWorkflow(ctx context.Context, p *TerminateWorkflowParams) error
	// CancelWorkflow requests the cancellation of a running instance;
	// changed is false when it was requested already.
	CancelWorkflow(ctx context.Context, p *CancelWorkflowParams) (changed bool, err error)
	// SignalWorkflow sends a signal to a running instance (ErrNotRunning).
	SignalWorkflow(ctx context.Context, p *SignalWorkflowParams) error
	// DeleteWorkflow deletes an instance and its history (ErrRunning
	// unless force).
	DeleteWorkflow(ctx context.Context, p *DeleteWorkflowParams) error
	// ResetWorkflow replaces a run by a new one that replays its history
	// up to a turn and runs that turn again, in one operation
	// (docs/api.md, "Reset"): ErrNotFound, or an InvalidError naming the
	// field of a reset point, run or build id it cannot use.
	ResetWorkflow(ctx context.Context, p ResetParams) (api.ResetWorkflowResponse, error)
}

// Visibility reads workflow instances and their histories.
type Visibility interface {
	// DescribeWorkflow describes an instance (ErrNotFound).
	DescribeWorkflow(ctx context.Context, p *WorkflowRef) (api.Workflow, error)
	// ListWorkflows pages through the instances of p.Namespace that
	// p.Filter selects, or with p.CountOnly counts them (ErrListTimeout,
	// an InvalidError naming "query").
	ListWorkflows(ctx context.Context, p *ListWorkflowsParams) (WorkflowList, error)
	// ChangeSearchAttribute registers a search attribute of p.Type
	// (ErrSearchAttributeExists; an InvalidError naming "name" past
	// api.MaxSearchAttributesPerNamespace) or, with p.Delete,
	// unregisters it (ErrNotFound).
	ChangeSearchAttribute(ctx context.Context, p *ChangeSearchAttributeParams) (api.SearchAttribute, error)
	// ListSearchAttributes lists the search attributes of ns, by name.
	ListSearchAttributes(ctx context.Context, ns string) ([]api.SearchAttribute, error)
	// History returns an execution's events (p.ExecutionID 0: the
	// current): all of them when p.PageSize is 0, else one page
	// (ErrBadPageToken for a token it did not issue).
	History(ctx context.Context, p *HistoryParams) (api.HistoryResponse, error)
	// ExecutionOfRunID returns the execution of p.InstanceID whose run id
	// is p.RunID (the current one or a past one); ErrNotFound when none
	// has.
	ExecutionOfRunID(ctx context.Context, p *ExecutionOfRunIDParams) (int64, error)
}

// Namespaces are the namespaces and their settings.
type Namespaces interface {
	// CreateNamespace creates a namespace with every setting of req
	// (ErrNamespaceExists).
	CreateNamespace(ctx context.Context, req api.CreateNamespaceRequest) (api.Namespace, error)
	// ListNamespaces lists every namespace, by name; with p.Name only
	// that one (ErrNotFound).
	ListNamespaces(ctx context.Context, p *ListNamespacesParams) ([]api.Namespace, error)
	// UpdateNamespace changes a namespace's settings (ErrNotFound).
	UpdateNamespace(ctx context.Context, p *UpdateNamespaceParams) (api.Namespace, error)
	// DeleteNamespace deletes an empty namespace (ErrNotFound,
	// ErrNamespaceNotEmpty).
	DeleteNamespace(ctx context.Context, name string) error
	// NexusEndpoints creates (p.Create: ErrNexusEndpointExists), deletes
	// (p.Delete: ErrNotFound) or reads the Nexus endpoints: the one p.Name
	// names (ErrNotFound), or every one by name.
	NexusEndpoints(ctx context.Context, p *NexusEndpointsParams) ([]api.NexusEndpoint, error)
}

// Keys are the API keys the server authenticates callers by.
type Keys interface {
	// CreateAPIKey creates an API key; the answer holds its secret, once.
	CreateAPIKey(ctx context.Context, p *CreateAPIKeyParams) (api.CreateAPIKeyResponse, error)
	// LookupAPIKey finds a key by id (ErrNotFound).
	LookupAPIKey(ctx context.Context, id string) (KeyRecord, error)
	// ListAPIKeys lists the keys of p.Namespace (and the global ones
	// with p.WithGlobal); with p.CountValid it counts the keys of every
	// namespace that are not revoked instead.
	ListAPIKeys(ctx context.Context, p *ListAPIKeysParams) (APIKeyList, error)
	// RevokeAPIKey revokes a key of p.Namespace (and with p.WithGlobal
	// one valid in every namespace); ErrNotFound.
	RevokeAPIKey(ctx context.Context, p *RevokeAPIKeyParams) error
}

// Admin is what the background services need: the sweep, retention, the
// health of the database and the provider's settings.
type Admin interface {
	// Sweep runs one pass of the sweeper; with p.Purge, one pass of the
	// retention job instead (SweepResult.Purged).
	Sweep(ctx context.Context, p *SweepParams) (SweepResult, error)
	// Ping reports whether the database answers (ErrNoDatabase when the
	// provider has none).
	Ping(ctx context.Context) error
	// Settings are the provider's bounds and its outage grace.
	Settings() Settings
}

// Settings are what a provider was configured with that the server needs
// to know.
type Settings struct {
	// MinLease and MaxLease are the shortest and longest lease_duration
	// a worker heartbeat may ask for.
	MinLease, MaxLease time.Duration
	// Grace is the outage grace: within it the sweeper holds expiry and
	// turn fetches leave expired turns to their workers.
	Grace Grace
}

// Grace is an outage grace: for a while after the server starts, and after
// the database was unreachable, what workers hold is not taken from them
// for a deadline that passed while nobody could renew or report. Its
// methods are safe for concurrent use.
type Grace interface {
	// Restart starts the grace again from now.
	Restart()
	// Active reports whether now is within the grace.
	Active() bool
}
