package api

// This file holds the words of the wire that are values rather than fields:
// cancel reasons, timeout kinds, error types and problem types. The server,
// the SDK and the metrics use these constants; the SQL in db/queries, struct
// tags and swag annotations, which cannot, are compared with them by
// TestSQLUsesTheVocabulary and TestTagsAndAnnotationsUseTheVocabulary. Wire
// values never change.

// Cancel reasons: the reason of an activity's or an attempt's cancellation
// (ActivityCancelRequested and ActivityAttemptCancelRequested events, the
// cancel info handed to workers). A workflow may also give a reason of its
// own; these are the ones Tether and its SDK use.
const (
	// CancelReasonWorkflowCanceled: the workflow was canceled.
	CancelReasonWorkflowCanceled = "workflow_canceled"
	// CancelReasonWorkflowFailed: the workflow failed with the activity
	// outstanding.
	CancelReasonWorkflowFailed = "workflow_failed"
	// CancelReasonWorkflowCompleted: the workflow completed with the
	// activity outstanding.
	CancelReasonWorkflowCompleted = "workflow_completed"
	// CancelReasonContinuedAsNew: the execution continued as new with the
	// activity outstanding.
	CancelReasonContinuedAsNew = "continued_as_new"
	// CancelReasonInstanceDeleted: the workflow instance was deleted.
	CancelReasonInstanceDeleted = "instance_deleted"
	// CancelReasonStartToCloseTimeout: the attempt ran past its
	// StartToClose timeout.
	CancelReasonStartToCloseTimeout = "timeout:" + TimeoutStartToClose
	// CancelReasonHeartbeatTimeout: the attempt did not heartbeat within
	// its Heartbeat timeout.
	CancelReasonHeartbeatTimeout = "timeout:" + TimeoutHeartbeat
	// CancelReasonScheduleToCloseTimeout: the activity, retries included,
	// ran past its ScheduleToClose timeout.
	CancelReasonScheduleToCloseTimeout = "timeout:" + TimeoutScheduleToClose
	// CancelReasonWorkerLost: the lease of the worker holding the attempt
	// ran out.
	CancelReasonWorkerLost = "worker_lost"
	// CancelReasonSelectLoserTimeout: the activity lost a select to a timer.
	CancelReasonSelectLoserTimeout = "select_loser:timeout"
	// CancelReasonSelectLoserOther: the activity lost a select to anything
	// but a timer.
	CancelReasonSelectLoserOther = "select_loser:other"
	// CancelReasonContextCanceled: the workflow code canceled the
	// activity's context (SDK).
	CancelReasonContextCanceled = "context_canceled"
	// CancelReasonWorkflowTerminated: the workflow was terminated.
	CancelReasonWorkflowTerminated = "workflow_terminated"
	// CancelReasonParentClosed: the child workflow's parent closed, and its
	// parent close policy asks for the child's end.
	CancelReasonParentClosed = "parent_closed"
	// CancelReasonParentCanceled: the child workflow's parent was
	// canceled, and its parent close policy asks for the child's end.
	CancelReasonParentCanceled = "parent_canceled"
	// CancelReasonWorkflowReset: the run was replaced by a reset.
	CancelReasonWorkflowReset = "workflow_reset"
)

// CancelReasons returns every cancel reason Tether and its SDK use.
func CancelReasons() []string {
	return []string{
		CancelReasonWorkflowCanceled, CancelReasonWorkflowFailed, CancelReasonWorkflowCompleted,
		CancelReasonContinuedAsNew, CancelReasonInstanceDeleted, CancelReasonStartToCloseTimeout,
		CancelReasonHeartbeatTimeout, CancelReasonScheduleToCloseTimeout, CancelReasonWorkerLost,
		CancelReasonSelectLoserTimeout, CancelReasonSelectLoserOther, CancelReasonContextCanceled,
		CancelReasonWorkflowTerminated, CancelReasonParentClosed, CancelReasonParentCanceled,
		CancelReasonWorkflowReset,
	}
}

// KnownCancelReason reports whether r is one of CancelReasons.
func KnownCancelReason(r string) bool {
	switch r {
	case CancelReasonWorkflowCanceled, CancelReasonWorkflowFailed, CancelReasonWorkflowCompleted,
		CancelReasonContinuedAsNew, CancelReasonInstanceDeleted, CancelReasonStartToCloseTimeout,
		CancelReasonHeartbeatTimeout, CancelReasonScheduleToCloseTimeout, CancelReasonWorkerLost,
		CancelReasonSelectLoserTimeout, CancelReasonSelectLoserOther, CancelReasonContextCanceled,
		CancelReasonWorkflowTerminated, CancelReasonParentClosed, CancelReasonParentCanceled,
		CancelReasonWorkflowReset:
		return true
	}
	return false
}

// Timeout kinds: Error.TimeoutType of an error of type ErrorTypeTimeout.
const (
	// TimeoutScheduleToStart: the attempt waited in its queue longer than
	// its ScheduleToStart timeout.
	TimeoutScheduleToStart = "schedule_to_start"
	// TimeoutStartToClose: one attempt ran longer than its StartToClose
	// timeout.
	TimeoutStartToClose = "start_to_close"
	// TimeoutHeartbeat: a running attempt did not heartbeat within its
	// Heartbeat timeout.
	TimeoutHeartbeat = "heartbeat"
	// TimeoutScheduleToClose: the activity, retries included, took longer
	// than its ScheduleToClose timeout.
	TimeoutScheduleToClose = "schedule_to_close"
	// TimeoutExecution: the workflow ran past its execution_timeout.
	TimeoutExecution = "execution"
)

// TimeoutKinds returns every timeout kind.
func TimeoutKinds() []string {
	return []string{TimeoutScheduleToStart, TimeoutStartToClose, TimeoutHeartbeat, TimeoutScheduleToClose, TimeoutExecution}
}

// Error types Tether itself records in Error.Type.
const (
	// ErrorTypeTimeout: a timeout; Error.TimeoutType says which.
	ErrorTypeTimeout = "Timeout"
	// ErrorTypeWorkerLost: the worker holding the attempt, or the host of
	// its queue, was lost.
	ErrorTypeWorkerLost = "WorkerLost"
	// ErrorTypePoison: the attempt was delivered too many times without an
	// answer.
	ErrorTypePoison = "Poison"
	// ErrorTypeNondeterminism: the workflow code did not replay its
	// history.
	ErrorTypeNondeterminism = "Nondeterminism"
	// ErrorTypeUnknownQuery: the workflow has no query handler of the
	// name a query asked for.
	ErrorTypeUnknownQuery = "UnknownQuery"
	// ErrorTypeTerminated: the workflow was terminated (the instance's
	// error; its message is the reason).
	ErrorTypeTerminated = "Terminated"
	// ErrorTypeExternalWorkflowNotFound: a signal_external or
	// cancel_external found no running target (ExternalFailed).
	ErrorTypeExternalWorkflowNotFound = "ExternalWorkflowNotFound"
	// ErrorTypeCanceled: an activity attempt ended because it was
	// cancelled (the Go SDK reports an activity returning context.Canceled
	// after its cancellation with it); the error of ActivityCanceled.
	ErrorTypeCanceled = "Canceled"
	// ErrorTypeLimitExceeded: a bound of the server was reached (a signal
	// to a workflow holding as many pending messages as it may; a
	// workflow whose history reached its hard limit).
	ErrorTypeLimitExceeded = "LimitExceeded"
	// ErrorTypePayloadCodec: the SDK's data converter or payload codec
	// failed on a payload of the turn or the attempt (the Go SDK's
	// converter.PayloadCodecError).
	ErrorTypePayloadCodec = "PayloadCodecError"
)

// ProblemBase is the prefix of every problem type.
const ProblemBase = "https://tether.dev/problems/"

// Problem types: the "type" member of problem documents (Problem.Type).
// Clients match on them; they are stable.
const (
	// ProblemValidation (400): fields of the request are invalid; see
	// Problem.Errors.
	ProblemValidation = ProblemBase + "validation"
	// ProblemNotFound (404): no such workflow, worker or task.
	ProblemNotFound = ProblemBase + "not-found"
	// ProblemNoRoute (404): no such route.
	ProblemNoRoute = ProblemBase + "no-such-route"
	// ProblemMethodNotAllowed (405): the route has no such method.
	ProblemMethodNotAllowed = ProblemBase + "method-not-allowed"
	// ProblemBodyTooLarge (413): the request body exceeds the limit.
	ProblemBodyTooLarge = ProblemBase + "body-too-large"
	// ProblemAlreadyRunning (409): a running instance has the instance_id.
	ProblemAlreadyRunning = ProblemBase + "already-running"
	// ProblemNotRunning (409): the workflow has finished.
	ProblemNotRunning = ProblemBase + "not-running"
	// ProblemRunning (409): the workflow is still running.
	ProblemRunning = ProblemBase + "running"
	// ProblemLockLost (409): the lock token is unknown, expired or already
	// acknowledged.
	ProblemLockLost = ProblemBase + "lock-lost"
	// ProblemDuplicateReport (409): another report of the same lock token
	// (a completion with a different result, a fail after a complete, a
	// different turn ack) was recorded first; this one was not. A retry of
	// the recorded report gets its first answer (200) instead.
	ProblemDuplicateReport = ProblemBase + "duplicate-report"
	// ProblemUnhandledSignals (409): the turn would end the workflow but
	// signals arrived while it ran; it was not applied and runs again with
	// them.
	ProblemUnhandledSignals = ProblemBase + "unhandled-signals"
	// ProblemWorkerGone (410): the worker session was cleaned up.
	ProblemWorkerGone = ProblemBase + "worker-gone"
	// ProblemRateLimited (429): too many requests; see Retry-After.
	ProblemRateLimited = ProblemBase + "rate-limited"
	// ProblemClientClosed (499, logged only): the client went away.
	ProblemClientClosed = ProblemBase + "client-closed-request"
	// ProblemUnavailable (503): the server cannot serve now.
	ProblemUnavailable = ProblemBase + "unavailable"
	// ProblemDatabaseUnavailable (503, with Retry-After): PostgreSQL is
	// unreachable or refuses connections; the problem's reason names the
	// class of the database's error.
	ProblemDatabaseUnavailable = ProblemBase + "database-unavailable"
	// ProblemQueryFailed (422): the workflow's query handler returned an
	// error (the problem's detail carries its message).
	ProblemQueryFailed = ProblemBase + "query-failed"
	// ProblemQueryTimeout (504): no worker answered the query in time.
	ProblemQueryTimeout = ProblemBase + "query-timeout"
	// ProblemAlreadyExists (409): a resource with that id exists (a
	// schedule).
	ProblemAlreadyExists = ProblemBase + "already-exists"
	// ProblemInternal (500): the server failed.
	ProblemInternal = ProblemBase + "internal"
	// ProblemHTTP: any other HTTP error.
	ProblemHTTP = ProblemBase + "http"
	// ProblemSearchAttributeExists: the namespace has a search attribute
	// of that name already (409).
	ProblemSearchAttributeExists = ProblemBase + "search-attribute-exists"
	// ProblemLimitExceeded (409): the request would take a workflow or a
	// namespace past one of the server's bounds (Problem.Limit names it:
	// its flag; docs/security.md lists them).
	ProblemLimitExceeded = ProblemBase + "limit-exceeded"
	// ProblemConcurrencyLimit (409): a start with the cancel_newest
	// strategy found its concurrency key's slots all taken (Problem.Limit
	// names the key).
	ProblemConcurrencyLimit = ProblemBase + "concurrency-limit"
)

// ProblemTypes returns every problem type.
func ProblemTypes() []string {
	return []string{
		ProblemValidation, ProblemNotFound, ProblemNoRoute, ProblemMethodNotAllowed, ProblemBodyTooLarge,
		ProblemAlreadyRunning, ProblemNotRunning, ProblemRunning, ProblemLockLost, ProblemUnhandledSignals,
		ProblemWorkerGone, ProblemRateLimited, ProblemClientClosed, ProblemUnavailable, ProblemDatabaseUnavailable,
		ProblemQueryFailed, ProblemQueryTimeout, ProblemAlreadyExists, ProblemInternal, ProblemHTTP, ProblemSearchAttributeExists,
		ProblemLimitExceeded,
		ProblemDuplicateReport,
		ProblemConcurrencyLimit,
	}
}

// EventKinds returns every history event kind (Event.Kind).
func EventKinds() []string {
	return []string{
		EventWorkflowStarted, EventActivityScheduled, EventActivityCompleted, EventActivityFailed,
		EventActivityCancelRequested, EventActivityCanceled, EventActivityAttemptCancelRequested, EventTimerCreated, EventTimerFired,
		EventTimerCanceled, EventMarkerRecorded,
		EventSignalReceived, EventCancelRequested, EventContinuedAsNew, EventWorkflowCompleted,
		EventWorkflowFailed, EventWorkflowCanceled, EventWorkflowUpdateAccepted, EventWorkflowUpdateCompleted, EventWorkflowTerminated,
		EventExternalSignalInitiated, EventExternalCancelInitiated, EventExternalCompleted, EventExternalFailed,
		EventChildWorkflowInitiated, EventChildWorkflowStarted, EventStartChildWorkflowFailed,
		EventChildWorkflowCompleted, EventChildWorkflowFailed, EventChildWorkflowCanceled,
		EventChildWorkflowTerminated, EventChildWorkflowCancelRequested, EventUpsertWorkflowSearchAttributes,
		EventWorkflowReset,
		EventUpsertWorkflowMemo,
	}
}

// WorkerStates returns every worker state.
func WorkerStates() []string {
	return []string{WorkerActive, WorkerInactive, WorkerCleanedUp}
}

// Statuses returns every workflow instance status.
func Statuses() []string {
	return []string{StatusRunning, StatusCompleted, StatusFailed, StatusCanceled, StatusTerminated}
}

// CommandTypes returns every command type (Command.Type).
func CommandTypes() []string {
	return []string{
		CommandScheduleActivity, CommandStartTimer, CommandCancelTimer, CommandRecordMarker, CommandCompleteWorkflow,
		CommandFailWorkflow, CommandCancelWorkflow, CommandContinueAsNew, CommandCompleteUpdate, CommandRejectUpdate,
		CommandSignalExternal, CommandCancelExternal,
		CommandStartChildWorkflow, CommandRequestCancelChildWorkflow, CommandUpsertSearchAttributes, CommandUpsertMemo,
	}
}

// ParentClosePolicies returns every parent close policy.
func ParentClosePolicies() []string {
	return []string{ParentClosePolicyTerminate, ParentClosePolicyRequestCancel, ParentClosePolicyAbandon}
}

// Kinds of work on a task queue (PriorityBacklog.Kind).
const (
	// WorkKindWorkflow is workflow turns (their messages).
	WorkKindWorkflow = "workflow"
	// WorkKindActivity is activity attempts.
	WorkKindActivity = "activity"
)

// WorkKinds returns every kind of work on a task queue.
func WorkKinds() []string { return []string{WorkKindWorkflow, WorkKindActivity} }

// Strategies of a concurrency limit (Concurrency.Strategy): what a start
// past its key's limit does.
const (
	// ConcurrencyQueue: the workflow waits for a slot (first in, first out).
	ConcurrencyQueue = "queue"
	// ConcurrencyCancelNewest: the start is refused.
	ConcurrencyCancelNewest = "cancel_newest"
	// ConcurrencyCancelOldest: the oldest running workflow of the key is
	// asked to cancel; the new one runs when it has closed.
	ConcurrencyCancelOldest = "cancel_oldest"
)

// ConcurrencyStrategies returns every concurrency strategy.
func ConcurrencyStrategies() []string {
	return []string{ConcurrencyQueue, ConcurrencyCancelNewest, ConcurrencyCancelOldest}
}

// States of a workflow under a concurrency limit (WorkflowConcurrency.State).
const (
	// ConcurrencyRunning: the workflow holds one of its key's slots.
	ConcurrencyRunning = "running"
	// ConcurrencyWaiting: the workflow waits for a slot of its key.
	ConcurrencyWaiting = "waiting"
)

// ConcurrencyStates returns every state of a workflow under a concurrency
// limit.
func ConcurrencyStates() []string { return []string{ConcurrencyRunning, ConcurrencyWaiting} }
