package wf

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/names"
	"github.com/tetherhq/tether/sdk/internal/searchattr"
)

// ParentClosePolicy is what happens to a child workflow still running when
// its parent closes or is canceled: Temporal's enums.ParentClosePolicy, so
// that enums.PARENT_CLOSE_POLICY_ABANDON and the names below are one type.
type ParentClosePolicy = enums.ParentClosePolicy

// Parent close policies.
const (
	// ParentClosePolicyTerminate (the default, also for the zero value)
	// terminates the child when the parent closes or is canceled.
	ParentClosePolicyTerminate = enums.PARENT_CLOSE_POLICY_TERMINATE
	// ParentClosePolicyRequestCancel asks the child to cancel.
	ParentClosePolicyRequestCancel = enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL
	// ParentClosePolicyAbandon leaves the child running.
	ParentClosePolicyAbandon = enums.PARENT_CLOSE_POLICY_ABANDON
)

// apiParentClosePolicy is the wire value of p (unspecified: terminate).
func apiParentClosePolicy(p ParentClosePolicy) string {
	switch p {
	case ParentClosePolicyRequestCancel:
		return api.ParentClosePolicyRequestCancel
	case ParentClosePolicyAbandon:
		return api.ParentClosePolicyAbandon
	}
	return api.ParentClosePolicyTerminate
}

// ChildWorkflowOptions configure the child workflows a context starts
// (Temporal's workflow.ChildWorkflowOptions).
type ChildWorkflowOptions struct {
	// WorkflowID is the child's instance id. Empty: "<parent id>-<parent
	// execution>-child-<n>", n counting the children of the execution.
	WorkflowID string
	// TaskQueue is the child's task queue (empty: the parent's).
	TaskQueue string
	// WorkflowExecutionTimeout bounds the child's execution (0: none).
	WorkflowExecutionTimeout time.Duration
	// WorkflowRunTimeout bounds each run of the child (Temporal's
	// ChildWorkflowOptions.WorkflowRunTimeout; 0: none): a run that lasts
	// longer fails with a timeout, as for WorkflowExecutionTimeout. When
	// both are set the shorter one applies to each run.
	WorkflowRunTimeout time.Duration
	// WorkflowTaskTimeout is accepted for Temporal's code and not used: a
	// turn of the child is bounded by the lock its worker takes
	// (worker.Options.WorkflowLockDuration), as every turn is.
	WorkflowTaskTimeout time.Duration
	// RetryPolicy, when set, retries the child's failed executions on the
	// server (a failed execution with attempts left is followed by the
	// next one after the backoff); only the last failure reaches the
	// parent. Nil: a failed child is not retried.
	RetryPolicy *RetryPolicy
	// ParentClosePolicy: what happens to the child when the parent closes
	// or is canceled (zero: ParentClosePolicyTerminate).
	ParentClosePolicy ParentClosePolicy
	// WaitForCancellation: when the child's context is cancelled, its
	// future waits for the child to close (ChildWorkflowCanceled) instead
	// of resolving with ErrCanceled at once.
	WaitForCancellation bool
	// SearchAttributes are the child's search attributes (Temporal's
	// ChildWorkflowOptions.SearchAttributes): each registered in the
	// namespace, of its type (as client.StartWorkflowOptions'); a bad one
	// fails the parent's turn.
	SearchAttributes map[string]any
	// TypedSearchAttributes are search attributes set with Temporal's
	// typed keys (temporal.NewSearchAttributes(key.ValueSet(v), …)),
	// merged with SearchAttributes: a name in both fails the child's
	// start (its future), as two keys of one name do.
	TypedSearchAttributes searchattr.SearchAttributes
	// Memo is the child's memo (Temporal's ChildWorkflowOptions.Memo):
	// values by name, each encoded as JSON (at most 32 KiB in all), shown
	// by describe and in the child's GetInfo(ctx).Memo.
	Memo map[string]any
	// Priority is the child's priority (zero: the parent's).
	Priority Priority
	// Concurrency limits how many workflows of its key run at once, as
	// client.StartWorkflowOptions.Concurrency does (nil: no limit, whatever
	// the parent's): past the limit the child waits (ConcurrencyQueue; the
	// parent sees it started), or the oldest running workflow of the key is
	// asked to cancel (ConcurrencyCancelOldest), or the child is not started
	// (ConcurrencyCancelNewest: its future fails with a
	// ChildWorkflowExecutionError whose failure is LimitExceeded).
	Concurrency *Concurrency
	// CronSchedule makes the child a cron workflow (Temporal's
	// ChildWorkflowOptions.CronSchedule): standard cron syntax, in UTC
	// ("*/5 * * * *", "@hourly", "@every 90s"). Its first run starts at
	// the schedule's next time, and each run that completes or fails is
	// followed by the next (a new run, as continue-as-new makes, with the
	// same input; workflow.GetLastCompletionResult reads the last result).
	// The child never completes by itself: its future resolves when it is
	// canceled or terminated (or its parent closes it). A bad schedule
	// fails the parent's turn naming cron_schedule.
	CronSchedule string
}

type childOptionsKey struct{}

// WithChildOptions returns a context whose child workflows use opts.
func WithChildOptions(ctx Context, opts ChildWorkflowOptions) Context {
	return WithValue(ctx, childOptionsKey{}, opts)
}

// GetChildWorkflowOptions returns the child workflow options of ctx.
func GetChildWorkflowOptions(ctx Context) ChildWorkflowOptions {
	o, _ := ctx.Value(childOptionsKey{}).(ChildWorkflowOptions)
	return o
}

// WorkflowExecution identifies a workflow execution (Temporal's
// workflow.Execution): its instance id and its run id.
type WorkflowExecution struct {
	// ID is the instance id.
	ID string
	// RunID is the run id (a UUID; the execution number in decimal in a
	// history written before run ids).
	RunID string
}

// ChildWorkflowFuture is the future of a child workflow: Get waits for its
// result, GetChildWorkflowExecution for its start.
type ChildWorkflowFuture interface {
	Future
	// GetChildWorkflowExecution returns a future resolved with the
	// child's WorkflowExecution once it started, or with the error that
	// kept it from starting.
	GetChildWorkflowExecution() Future
	// SignalChildWorkflow sends the child the signal signalName with
	// data (Temporal's): SignalExternalWorkflow to the child's workflow
	// id.
	SignalChildWorkflow(ctx Context, signalName string, data any) Future
}

// ChildWorkflowExecutionError is the error of a child workflow that
// failed, was canceled or terminated; Err is the cause (ErrCanceled for a
// canceled child).
type ChildWorkflowExecutionError struct {
	// WorkflowID is the child's workflow id.
	WorkflowID string
	// WorkflowType is the child's workflow type.
	WorkflowType string
	// Failure is the child's recorded error (a failed child only).
	Failure *api.Error
	// Err is the cause.
	Err error
}

func (e *ChildWorkflowExecutionError) Error() string {
	return fmt.Sprintf("child workflow %s (%s): %v", e.WorkflowID, e.WorkflowType, e.Err)
}

// AnnotateError records the child workflow in the error's wire form
// (whose message is Error(), its cause recorded as its Cause too).
func (e *ChildWorkflowExecutionError) AnnotateError(a *api.Error) {
	a.ChildWorkflow = &api.ErrorChildWorkflow{WorkflowID: e.WorkflowID, WorkflowType: e.WorkflowType}
}

// Unwrap returns the cause.
func (e *ChildWorkflowExecutionError) Unwrap() error { return e.Err }

// ErrChildWorkflowTerminated is the cause of a terminated child's error.
var ErrChildWorkflowTerminated = errors.New("child workflow terminated")

// ChildWorkflowExecutionAlreadyStartedError is the error of a child whose
// workflow id a running instance held: the child was not started.
type ChildWorkflowExecutionAlreadyStartedError struct {
	// WorkflowID is the child's workflow id.
	WorkflowID string
}

func (e *ChildWorkflowExecutionAlreadyStartedError) Error() string {
	return fmt.Sprintf("child workflow %s: a running workflow has this id", e.WorkflowID)
}

type childFuture struct {
	*future
	started      *future
	id           int64
	workflowID   string
	workflowType string
	wait         bool
	cancelSent   bool
}

func (f *childFuture) GetChildWorkflowExecution() Future { return f.started }

// SignalChildWorkflow signals the child by its workflow id.
func (f *childFuture) SignalChildWorkflow(ctx Context, signalName string, data any) Future {
	return SignalExternalWorkflow(ctx, f.workflowID, "", signalName, data)
}

// ExecuteChildWorkflow starts a child workflow and returns its future
// (Temporal's workflow.ExecuteChildWorkflow). workflow is the workflow
// function (named by its function name, as RegisterWorkflow names it) or
// its registered name; args are its input, as for ExecuteActivity. The
// options come from WithChildOptions. Cancelling ctx asks the child to
// cancel.
func ExecuteChildWorkflow(ctx Context, workflow any, args ...any) ChildWorkflowFuture {
	c := ctx.impl()
	if o := c.s.outbound; o != nil {
		name, ok := workflow.(string)
		if !ok {
			name, _ = names.FuncName(workflow)
		}
		return o.ExecuteChildWorkflow(withCallee(ctx, name, workflow), name, args...)
	}
	return executeChildWorkflowDirect(ctx, workflow, args, nil)
}

// executeChildWorkflowDirect is ExecuteChildWorkflow past the
// interceptors, with the header of the child's start.
func executeChildWorkflowDirect(ctx Context, workflow any, args []any, header map[string]*common.Payload) ChildWorkflowFuture {
	c := ctx.impl()
	s := c.s
	f := &childFuture{future: &future{s: s, scope: c.scope}, started: &future{s: s}}
	fail := func(err error) ChildWorkflowFuture {
		f.started.settle(nil, err)
		f.settle(nil, err)
		return f
	}
	name, ok := workflow.(string)
	if !ok {
		var err error
		if name, err = names.FuncName(workflow); err != nil {
			return fail(fmt.Errorf("workflow.ExecuteChildWorkflow: %w", err))
		}
		sig, err := fnsig.Inspect(workflow, workflowContextType, "workflow")
		if err == nil {
			err = sig.CheckInput(args...)
		}
		if err != nil {
			return fail(fmt.Errorf("workflow.ExecuteChildWorkflow %s: %w", name, err))
		}
	}
	if name == "" {
		return fail(errors.New("workflow.ExecuteChildWorkflow: empty workflow name"))
	}
	f.workflowType = name
	raw, err := fnsig.EncodeArgs(args...)
	if err != nil {
		return fail(fmt.Errorf("workflow.ExecuteChildWorkflow %s: input: %w", name, err))
	}
	if c.scope.canceled {
		return fail(&ChildWorkflowExecutionError{WorkflowType: name, Err: ErrCanceled})
	}
	opts := GetChildWorkflowOptions(ctx)
	attrs, err := childAttributes(opts)
	if err != nil {
		return fail(fmt.Errorf("workflow.ExecuteChildWorkflow %s: %w", name, err))
	}
	hdr := s.outHeader(c, header)
	s.nextChildID++
	f.id = s.nextChildID
	f.wait = opts.WaitForCancellation
	f.workflowID = opts.WorkflowID
	if f.workflowID == "" {
		f.workflowID = fmt.Sprintf("%s-%d-child-%d", s.info.InstanceID, s.info.ExecutionID, f.id)
	}
	tq := opts.TaskQueue
	if tq == "" {
		tq = s.info.TaskQueue
	}
	timeout := opts.WorkflowExecutionTimeout
	if opts.WorkflowRunTimeout > 0 && (timeout <= 0 || opts.WorkflowRunTimeout < timeout) {
		timeout = opts.WorkflowRunTimeout
	}
	s.issue(api.Command{
		Type: api.CommandStartChildWorkflow, ChildID: f.id, WorkflowID: f.workflowID, WorkflowType: name,
		TaskQueue: tq, Input: raw, ExecutionTimeout: api.Duration(timeout),
		ParentClosePolicy: apiParentClosePolicy(opts.ParentClosePolicy), RetryPolicy: apiRetryPolicy(opts.RetryPolicy),
		SearchAttributes: encodeAttributes(attrs), Memo: encodeAttributes(opts.Memo), Header: hdr, Priority: APIPriority(opts.Priority),
		Concurrency:  APIConcurrency(opts.Concurrency),
		CronSchedule: opts.CronSchedule,
	})
	if s.children == nil {
		s.children = map[int64]*childFuture{}
	}
	s.children[f.id] = f
	return f
}

// childAttributes merges opts' SearchAttributes and TypedSearchAttributes.
func childAttributes(opts ChildWorkflowOptions) (map[string]any, error) {
	typed, err := opts.TypedSearchAttributes.Map()
	if err != nil {
		return nil, fmt.Errorf("TypedSearchAttributes: %w", err)
	}
	if len(typed) == 0 {
		return opts.SearchAttributes, nil
	}
	out := make(map[string]any, len(typed)+len(opts.SearchAttributes))
	for k, v := range opts.SearchAttributes {
		out[k] = v
	}
	for k, v := range typed {
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("search attribute %s is in both SearchAttributes and TypedSearchAttributes", k)
		}
		out[k] = v
	}
	return out, nil
}

// isChildMessage reports whether kind is a message about a child.
func isChildMessage(kind string) bool {
	switch kind {
	case api.EventChildWorkflowStarted, api.EventStartChildWorkflowFailed, api.EventChildWorkflowCompleted,
		api.EventChildWorkflowFailed, api.EventChildWorkflowCanceled, api.EventChildWorkflowTerminated:
		return true
	}
	return false
}

// applyChild feeds a message about a child to its future.
func (s *state) applyChild(ev *api.Event) {
	s.tick(ev)
	f := s.children[ev.ChildID]
	if f == nil {
		return
	}
	closed := func(err error) {
		delete(s.children, ev.ChildID)
		f.settle(ev.Result, err)
	}
	chErr := func(failure *api.Error, cause error) error {
		return &ChildWorkflowExecutionError{WorkflowID: f.workflowID, WorkflowType: f.workflowType, Failure: failure, Err: cause}
	}
	switch ev.Kind {
	case api.EventChildWorkflowStarted:
		if !f.started.done {
			f.started.done = true
			f.started.value = WorkflowExecution{ID: ev.ChildWorkflowID, RunID: OrRunID(ev.ChildRunID, ev.ChildExecutionID)}
		}
	case api.EventStartChildWorkflowFailed:
		var err error = &ChildWorkflowExecutionAlreadyStartedError{WorkflowID: ev.ChildWorkflowID}
		if ev.Error != nil {
			// Refused for another reason than its id (its concurrency
			// key's limit).
			err = chErr(ev.Error, causeOr(ev.Error, "child workflow not started"))
		}
		f.started.settle(nil, err)
		closed(err)
	case api.EventChildWorkflowCompleted:
		closed(nil)
	case api.EventChildWorkflowFailed:
		closed(chErr(ev.Error, causeOr(ev.Error, "child workflow failed")))
	case api.EventChildWorkflowCanceled:
		closed(chErr(nil, ErrCanceled))
	case api.EventChildWorkflowTerminated:
		closed(chErr(nil, ErrChildWorkflowTerminated))
	}
}

// cancelChildren handles the children of cancelled scopes: the ones
// cancelled by workflow code are asked to cancel (a cancel of the whole
// workflow leaves them to their parent close policy, which the server
// applies); a future not waiting for the cancellation resolves with
// ErrCanceled at once.
func (s *state) cancelChildren(reason string) {
	for _, id := range sortedKeys(s.children) {
		f := s.children[id]
		if !f.scope.canceled || f.cancelSent {
			continue
		}
		f.cancelSent = true
		if reason != cancelReasonWorkflow && !s.stopped() && !s.unwinding {
			s.issue(api.Command{Type: api.CommandRequestCancelChildWorkflow, ChildID: id, WorkflowID: f.workflowID})
		}
		if !f.wait {
			f.settle(nil, &ChildWorkflowExecutionError{WorkflowID: f.workflowID, WorkflowType: f.workflowType, Err: ErrCanceled})
		}
	}
}

// checkChildrenIssued: every child started or cancelled in history must
// have been by the code.
func (s *state) checkChildrenIssued() {
	for _, id := range sortedKeys(s.hist.children) {
		if id > s.nextChildID {
			s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has child workflow %d (%s) that the code did not start", id, s.hist.children[id])}
			return
		}
	}
	for _, id := range sortedKeys(s.hist.childCancel) {
		if !slices.Contains(s.canceledChildren, id) {
			s.fatal = &NondeterminismError{Message: fmt.Sprintf("history has child workflow %d cancelled, the code did not cancel it", id)}
			return
		}
	}
}
