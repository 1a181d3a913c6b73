package wf

import (
	"log/slog"
	"reflect"
	"strconv"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/searchattr"
)

// Context is the context of workflow code: it carries the workflow's state,
// its cancellation, activity options and values. It mirrors Temporal's
// workflow.Context, a clone of context.Context whose Done is a workflow
// Channel: wait for the cancellation with a Selector
// (sel.AddReceive(ctx.Done(), …)), never with a Go select.
type Context interface {
	// Deadline returns the time when work done for this context should be
	// cancelled; ok is false when there is none. Workflow contexts have no
	// deadline: it is always false (as in Temporal).
	Deadline() (deadline time.Time, ok bool)
	// Done returns a channel that is closed when the context is
	// cancelled: it is ready in a Selector from then on (its callback
	// gets more false), and ReceiveAsyncWithMoreFlag reports more false.
	// Successive calls return the same channel.
	Done() Channel
	// Err returns ErrCanceled once the context is cancelled, nil before.
	Err() error
	// Value returns the value associated with key, or nil.
	Value(key any) any

	impl() *wctx
}

// CancelFunc cancels a context made with WithCancel.
type CancelFunc func()

// scope is a node of the cancellation tree.
type scope struct {
	// done is the Done channel, made on the first call of Done and
	// closed with the scope.
	done     *Chan
	canceled bool
	children []*scope
}

func newScope(parent *scope) *scope {
	sc := &scope{}
	if parent != nil {
		if parent.canceled {
			sc.canceled = true
		} else {
			parent.children = append(parent.children, sc)
		}
	}
	return sc
}

// cancel cancels sc and its descendants; it reports whether sc changed.
func (sc *scope) cancel() bool {
	if sc.canceled {
		return false
	}
	sc.canceled = true
	if sc.done != nil {
		sc.done.closed = true
	}
	for _, ch := range sc.children {
		ch.cancel()
	}
	sc.children = nil
	return true
}

// wctx is the one implementation of Context: an immutable node.
type wctx struct {
	s      *state
	scope  *scope
	opts   *ActivityOptions
	parent *wctx
	key    any
	val    any
}

func (c *wctx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c *wctx) Done() Channel {
	if c.scope.done == nil {
		c.scope.done = &Chan{s: c.s, name: "context-done", closed: c.scope.canceled}
	}
	return c.scope.done
}

func (c *wctx) Err() error {
	if c.scope.canceled {
		return ErrCanceled
	}
	return nil
}

func (c *wctx) Value(key any) any {
	for x := c; x != nil; x = x.parent {
		if x.key != nil && x.key == key {
			return x.val
		}
	}
	return nil
}

func (c *wctx) impl() *wctx { return c }

func (c *wctx) derive() *wctx {
	return &wctx{s: c.s, scope: c.scope, opts: c.opts, parent: c}
}

// WithValue returns a child of parent carrying key → val. key must be
// comparable; use an unexported type, as with context.WithValue.
func WithValue(parent Context, key, val any) Context {
	if key == nil || !reflect.TypeOf(key).Comparable() {
		panic("workflow.WithValue: key must be non-nil and comparable")
	}
	c := parent.impl().derive()
	c.key, c.val = key, val
	return c
}

// WithCancel returns a child of parent with its own cancellation. Cancelling
// it resolves the pending timers and activities started under it with
// ErrCanceled; those activities are cancelled on the server (reason
// "context_canceled").
func WithCancel(parent Context) (Context, CancelFunc) {
	p := parent.impl()
	c := p.derive()
	c.scope = newScope(p.scope)
	return c, func() {
		if c.scope.cancel() {
			c.s.afterScopeCancel(cancelReasonContext)
		}
	}
}

// NewDisconnectedContext returns a context with parent's values and activity
// options but not its cancellation: activities and timers started with it
// keep running after the workflow's cancellation was requested, which is
// what cleanup code needs. The CancelFunc cancels the new context alone.
// Temporal's workflow.NewDisconnectedContext.
func NewDisconnectedContext(parent Context) (Context, CancelFunc) {
	c := parent.impl().derive()
	c.scope = newScope(nil)
	return c, func() {
		if c.scope.cancel() {
			c.s.afterScopeCancel(cancelReasonContext)
		}
	}
}

// RetryPolicy is how the server retries a failed activity. Zero fields take
// the server's defaults (1s initial interval, coefficient 2, maximum
// interval 100 × initial, unlimited attempts).
type RetryPolicy struct {
	// InitialInterval is the wait before the first retry (0: the
	// server's default, 1s).
	InitialInterval time.Duration
	// BackoffCoefficient multiplies the wait after each retry (0: the
	// server's default, 2).
	BackoffCoefficient float64
	// MaximumInterval caps the wait between retries (0: 100 times
	// InitialInterval).
	MaximumInterval time.Duration
	// MaximumAttempts: 0 means unlimited, 1 means no retry.
	MaximumAttempts int32
	// NonRetryableErrorTypes fail the activity at once when the error's
	// type matches.
	NonRetryableErrorTypes []string
}

// ActivityOptions configure the activities a context schedules. Zero
// durations mean "no such timeout".
type ActivityOptions struct {
	// TaskQueue defaults to the workflow's task queue. Use a worker's host
	// task queue to pin an activity to that host.
	TaskQueue string
	// ScheduleToStartTimeout bounds how long an attempt waits for a
	// worker to take it.
	ScheduleToStartTimeout time.Duration
	// StartToCloseTimeout bounds one attempt's run (set it, or
	// ScheduleToCloseTimeout).
	StartToCloseTimeout time.Duration
	// ScheduleToCloseTimeout bounds the activity over all its attempts.
	ScheduleToCloseTimeout time.Duration
	// HeartbeatTimeout bounds the time between an attempt's heartbeats
	// (activity.RecordHeartbeat).
	HeartbeatTimeout time.Duration
	// RetryPolicy is how the server retries a failed attempt (nil: the
	// server's default policy).
	RetryPolicy *RetryPolicy
	// WaitForCancellation (Temporal's): when the activity is cancelled
	// (its context, a Select it lost, the workflow's cancellation), its
	// future stays pending until the activity has reacted: it resolves with
	// the activity's result if it completed anyway, its error if it failed
	// (never retried after the cancellation), or ErrCanceled if it returned
	// context.Canceled, was never started, or its worker was lost. False
	// (the default): the future resolves with ErrCanceled at once and the
	// activity's later outcome is dropped. Either way the cancellation
	// reaches the activity (its context.Context is cancelled).
	WaitForCancellation bool
	// Priority orders the activity's attempts among their task queue's
	// work (zero: the workflow's).
	Priority Priority
	// Concurrency limits how many attempts of activities with its key run
	// at once in the namespace, across every server replica (nil: no
	// limit): past the limit an attempt waits for a slot, first in first
	// out. Only ConcurrencyQueue (or an empty Strategy) applies to
	// activities; another strategy fails the workflow's turn naming
	// options.concurrency.strategy.
	Concurrency *Concurrency
}

// Priority is Temporal's temporal.Priority: where a task goes among the
// work of its task queue (docs/api.md, "Flow control").
type Priority struct {
	// PriorityKey is 1 (first) … 5 (last); 0 means the default, 3. Work of
	// a higher priority (a smaller key) is dispatched before any of a
	// lower.
	PriorityKey int
	// FairnessKey names whose work this is (a tenant, a customer): within
	// a priority, keys share the queue in weighted round robin.
	FairnessKey string
	// FairnessWeight is the key's share (0 means 1; at most 1000).
	FairnessWeight float32
}

// APIPriority is p on the wire (nil for the zero Priority: the default,
// or what the workflow's is).
func APIPriority(p Priority) *api.Priority {
	if p == (Priority{}) {
		return nil
	}
	return &api.Priority{PriorityKey: p.PriorityKey, FairnessKey: p.FairnessKey, FairnessWeight: p.FairnessWeight}
}

func (o *ActivityOptions) toAPI() *api.ActivityOptions {
	if o == nil {
		return nil
	}
	a := &api.ActivityOptions{
		ScheduleToStartTimeout: api.Duration(o.ScheduleToStartTimeout),
		StartToCloseTimeout:    api.Duration(o.StartToCloseTimeout),
		ScheduleToCloseTimeout: api.Duration(o.ScheduleToCloseTimeout),
		HeartbeatTimeout:       api.Duration(o.HeartbeatTimeout),
		WaitForCancellation:    o.WaitForCancellation,
	}
	a.RetryPolicy = apiRetryPolicy(o.RetryPolicy)
	a.Priority = APIPriority(o.Priority)
	a.Concurrency = APIConcurrency(o.Concurrency)
	return a
}

// apiRetryPolicy is p on the wire (nil: nil).
func apiRetryPolicy(p *RetryPolicy) *api.RetryPolicy {
	if p == nil {
		return nil
	}
	return &api.RetryPolicy{
		InitialInterval:        api.Duration(p.InitialInterval),
		BackoffCoefficient:     p.BackoffCoefficient,
		MaximumInterval:        api.Duration(p.MaximumInterval),
		MaximumAttempts:        p.MaximumAttempts,
		NonRetryableErrorTypes: p.NonRetryableErrorTypes,
	}
}

// WithActivityOptions returns a child of ctx whose activities use opts.
func WithActivityOptions(ctx Context, opts ActivityOptions) Context {
	c := ctx.impl().derive()
	o := opts
	c.opts = &o
	return c
}

// GetActivityOptions returns the activity options of ctx.
func GetActivityOptions(ctx Context) ActivityOptions {
	if o := ctx.impl().opts; o != nil {
		return *o
	}
	return ActivityOptions{}
}

// Info describes the running workflow execution: Temporal's workflow.Info
// (WorkflowExecution, WorkflowType, TaskQueueName, Attempt, Namespace,
// WorkflowStartTime, ParentWorkflowExecution, ContinuedExecutionRunID and
// the methods GetContinueAsNewSuggested, GetCurrentHistoryLength), and
// Tether's own names of the same facts (InstanceID, ExecutionID, TaskQueue,
// StartedAt, ContinuedFromExecutionID).
type Info struct {
	// WorkflowExecution is the execution: ID the instance id, RunID the
	// run id (see RunID).
	WorkflowExecution WorkflowExecution
	// WorkflowType is the workflow's registered name.
	WorkflowType WorkflowType
	// TaskQueueName is the workflow's task queue.
	TaskQueueName string
	// Attempt is the turn's attempt: 1, or more when earlier tries of the
	// current turn failed (a panic, a nondeterminism error). Tether does
	// not retry whole workflows, so it is not Temporal's run attempt.
	Attempt int32
	// Namespace is the workflow's namespace.
	Namespace string
	// WorkflowStartTime is the timestamp of the execution's
	// WorkflowStarted event.
	WorkflowStartTime time.Time
	// ParentWorkflowExecution is the parent execution of a child
	// workflow, nil for a workflow started by a client.
	ParentWorkflowExecution *WorkflowExecution
	// ContinuedExecutionRunID is the run id of the execution this one
	// continues (it returned NewContinueAsNewError), "" when it was started
	// otherwise.
	ContinuedExecutionRunID string
	// Memo is the workflow's memo: the one it started with (given at
	// start, or carried over by continue-as-new), with its own UpsertMemo
	// calls merged in; nil when empty. Each field is a JSON payload
	// (converter.GetDefaultDataConverter().FromPayload reads it).
	Memo *common.Memo
	// SearchAttributes are the workflow's search attributes, as Memo is
	// its memo (UpsertSearchAttributes and UpsertTypedSearchAttributes
	// merged in); nil when it has none.
	SearchAttributes *common.SearchAttributes
	// TypedSearchAttributes are SearchAttributes read with typed keys
	// (the same as GetTypedSearchAttributes).
	TypedSearchAttributes searchattr.SearchAttributes

	// InstanceID is WorkflowExecution.ID (Tether's name).
	InstanceID string
	// ExecutionID is the run's number: 1, then one more for each
	// continue-as-new or restart of the id.
	ExecutionID int64
	// TaskQueue is TaskQueueName (Tether's name).
	TaskQueue string
	// StartedAt is WorkflowStartTime (Tether's name).
	StartedAt time.Time
	// ContinuedFromExecutionID is the number of the execution this one
	// continues, 0 when it was started otherwise.
	ContinuedFromExecutionID int64

	historyLength int
}

// WorkflowType is the type of a workflow: its registered name (Temporal's
// workflow.Type).
type WorkflowType struct {
	// Name is the registered name.
	Name string
}

// continueAsNewSuggestedLength is the history length from which
// GetContinueAsNewSuggested is true (the default of Temporal's server).
const continueAsNewSuggestedLength = 4096

// GetCurrentHistoryLength returns the number of events in the execution's
// history as of the current turn: those recorded before it and the turn's
// messages (on replay, as of the turn being replayed).
func (i *Info) GetCurrentHistoryLength() int { return i.historyLength }

// GetContinueAsNewSuggested reports whether the history has grown long
// enough that the workflow should continue as new: from 4096 events on
// (Temporal's server suggests it from the same count).
func (i *Info) GetContinueAsNewSuggested() bool {
	return i.historyLength >= continueAsNewSuggestedLength
}

// RunID is the run id of execution number executionID: its number in
// decimal. It is the one place that makes run ids (of the execution, its
// parent, the execution it continues).
func RunID(executionID int64) string {
	if executionID == 0 {
		return ""
	}
	return strconv.FormatInt(executionID, 10)
}

// OrRunID is runID, or the execution number in decimal where the server's
// answer or event carries no run id (a server or history before run ids).
func OrRunID(runID string, executionID int64) string {
	if runID != "" {
		return runID
	}
	return RunID(executionID)
}

// GetInfo returns the execution's info (a copy: changing it changes
// nothing).
func getInfoDirect(ctx Context) *Info {
	s := ctx.impl().s
	info := s.info
	if info.ParentWorkflowExecution != nil {
		p := *info.ParentWorkflowExecution
		info.ParentWorkflowExecution = &p
	}
	info.Attempt = max(s.attempt, 1)
	info.historyLength = s.historyLength
	if len(s.memo) > 0 {
		info.Memo = &common.Memo{Fields: payloads(s.memo)}
	}
	if len(s.searchAttrs) > 0 {
		info.SearchAttributes = &common.SearchAttributes{IndexedFields: payloads(s.searchAttrs)}
	}
	info.TypedSearchAttributes = searchattr.FromJSON(s.searchAttrs)
	return &info
}

// Now returns the workflow's time: the timestamp of the last event
// processed. It is the same on every replay; use it instead of time.Now.
func nowDirect(ctx Context) time.Time { return ctx.impl().s.now }

// IsReplaying reports whether the code is re-running against recorded
// history (as opposed to reacting to new events).
func isReplayingDirect(ctx Context) bool { return ctx.impl().s.replaying }

// IsCancelRequested reports whether the workflow's cancellation was
// requested, and with which reason.
func IsCancelRequested(ctx Context) (bool, string) {
	s := ctx.impl().s
	return s.cancelRequested, s.cancelReason
}

// GetLogger returns the workflow's logger: it carries the instance and
// execution ids and drops every record while the code is replaying, so that
// each line is logged once.
func GetLogger(ctx Context) *slog.Logger { return ctx.impl().s.logger }
