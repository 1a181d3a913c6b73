package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// ChildWorkflowOptions configure the child workflows a context starts
// (Temporal's workflow.ChildWorkflowOptions). RetryPolicy retries a failed
// child on the server; only the last failure reaches the parent.
//
// Fields (the type is defined in an internal package):
//
//   - WorkflowID string: WorkflowID is the child's instance id. Empty: "<parent
//     id>-<parent execution>-child-<n>", n counting the children of the
//     execution.
//   - TaskQueue string: TaskQueue is the child's task queue (empty: the
//     parent's).
//   - WorkflowExecutionTimeout time.Duration: WorkflowExecutionTimeout bounds
//     the child's execution (0: none).
//   - WorkflowRunTimeout time.Duration: WorkflowRunTimeout bounds each run of
//     the child (Temporal's ChildWorkflowOptions.WorkflowRunTimeout; 0: none):
//     a run that lasts longer fails with a timeout, as for
//     WorkflowExecutionTimeout. When both are set the shorter one applies to
//     each run.
//   - WorkflowTaskTimeout time.Duration: WorkflowTaskTimeout is accepted for
//     Temporal's code and not used: a turn of the child is bounded by the lock
//     its worker takes (worker.Options.WorkflowLockDuration), as every turn is.
//   - RetryPolicy *RetryPolicy: RetryPolicy, when set, retries the child's
//     failed executions on the server (a failed execution with attempts left is
//     followed by the next one after the backoff); only the last failure
//     reaches the parent. Nil: a failed child is not retried.
//   - ParentClosePolicy ParentClosePolicy: ParentClosePolicy: what happens to
//     the child when the parent closes or is canceled (zero:
//     ParentClosePolicyTerminate).
//   - WaitForCancellation bool: WaitForCancellation: when the child's context
//     is cancelled, its future waits for the child to close
//     (ChildWorkflowCanceled) instead of resolving with ErrCanceled at once.
//   - SearchAttributes map[string]any: SearchAttributes are the child's search
//     attributes (Temporal's ChildWorkflowOptions.SearchAttributes): each
//     registered in the namespace, of its type (as
//     client.StartWorkflowOptions'); a bad one fails the parent's turn.
//   - TypedSearchAttributes searchattr.SearchAttributes: TypedSearchAttributes
//     are search attributes set with Temporal's typed keys
//     (temporal.NewSearchAttributes(key.ValueSet(v), …)), merged with
//     SearchAttributes: a name in both fails the child's start (its future), as
//     two keys of one name do.
//   - Memo map[string]any: Memo is the child's memo (Temporal's
//     ChildWorkflowOptions.Memo): values by name, each encoded as JSON (at most
//     32 KiB in all), shown by describe and in the child's GetInfo(ctx).Memo.
//   - Priority Priority: Priority is the child's priority (zero: the parent's).
//   - Concurrency *Concurrency: Concurrency limits how many workflows of its
//     key run at once, as client.StartWorkflowOptions.Concurrency does (nil: no
//     limit, whatever the parent's): past the limit the child waits
//     (ConcurrencyQueue; the parent sees it started), or the oldest running
//     workflow of the key is asked to cancel (ConcurrencyCancelOldest), or the
//     child is not started (ConcurrencyCancelNewest: its future fails with a
//     ChildWorkflowExecutionError whose failure is LimitExceeded).
//   - CronSchedule string: CronSchedule makes the child a cron workflow
//     (Temporal's ChildWorkflowOptions.CronSchedule): standard cron syntax, in
//     UTC ("*/5 * * * *", "@hourly", "@every 90s"). Its first run starts at the
//     schedule's next time, and each run that completes or fails is followed by
//     the next (a new run, as continue-as-new makes, with the same input;
//     workflow.GetLastCompletionResult reads the last result). The child never
//     completes by itself: its future resolves when it is canceled or
//     terminated (or its parent closes it). A bad schedule fails the parent's
//     turn naming cron_schedule.
type ChildWorkflowOptions = wf.ChildWorkflowOptions

// Concurrency is a child's concurrency limit per key
// (ChildWorkflowOptions.Concurrency; client.Concurrency is the same type):
// at most Limit workflows started with Key run at once in the namespace.
//
// Fields (the type is defined in an internal package):
//
//   - Key string: Key names the group the limit counts (a customer, a tenant;
//     at most 128 bytes).
//   - Limit int: Limit is how many workflows of the key may run at once (1 …
//     10000).
//   - Strategy ConcurrencyStrategy: Strategy is what a start past the limit
//     does (ConcurrencyQueue when empty).
type Concurrency = wf.Concurrency

// ConcurrencyStrategy is what a child's start past its key's limit does.
type ConcurrencyStrategy = wf.ConcurrencyStrategy

// Concurrency strategies of a child (as client.ConcurrencyQueue, …).
const (
	// ConcurrencyQueue: the child is created and waits for a slot.
	ConcurrencyQueue = wf.ConcurrencyQueue
	// ConcurrencyCancelNewest: the child is not started; its future fails
	// with a ChildWorkflowExecutionError whose failure is LimitExceeded.
	ConcurrencyCancelNewest = wf.ConcurrencyCancelNewest
	// ConcurrencyCancelOldest: the oldest running workflow of the key is
	// asked to cancel; the child waits and runs when it has closed.
	ConcurrencyCancelOldest = wf.ConcurrencyCancelOldest
)

// ParentClosePolicy is what happens to a running child workflow when its
// parent closes or is canceled.
type ParentClosePolicy = wf.ParentClosePolicy

// Parent close policies (Temporal's enums.PARENT_CLOSE_POLICY_*).
const (
	// ParentClosePolicyTerminate (the default) terminates the child.
	ParentClosePolicyTerminate = wf.ParentClosePolicyTerminate
	// ParentClosePolicyRequestCancel asks the child to cancel.
	ParentClosePolicyRequestCancel = wf.ParentClosePolicyRequestCancel
	// ParentClosePolicyAbandon leaves the child running.
	ParentClosePolicyAbandon = wf.ParentClosePolicyAbandon
)

// ChildWorkflowFuture is the future of a child workflow: Get waits for its
// result, GetChildWorkflowExecution for its start.
type ChildWorkflowFuture = wf.ChildWorkflowFuture

// Execution identifies a workflow execution (Temporal's
// workflow.Execution): ID is the instance id, RunID the execution id.
//
// Fields (the type is defined in an internal package):
//
//   - ID string: ID is the instance id.
//   - RunID string: RunID is the run id (a UUID; the execution number in
//     decimal in a history written before run ids).
type Execution = wf.WorkflowExecution

// ChildWorkflowExecutionError is the error of a child workflow that
// failed, was canceled or terminated (Temporal's
// temporal.ChildWorkflowExecutionError); errors.As reaches the cause.
//
// Fields (the type is defined in an internal package):
//
//   - WorkflowID string: WorkflowID is the child's workflow id.
//   - WorkflowType string: WorkflowType is the child's workflow type.
//   - Failure *api.Error: Failure is the child's recorded error (a failed child
//     only).
//   - Err error: Err is the cause.
type ChildWorkflowExecutionError = wf.ChildWorkflowExecutionError

// ChildWorkflowExecutionAlreadyStartedError is the error of a child whose
// workflow id a running workflow held.
//
// Fields (the type is defined in an internal package):
//
//   - WorkflowID string: WorkflowID is the child's workflow id.
type ChildWorkflowExecutionAlreadyStartedError = wf.ChildWorkflowExecutionAlreadyStartedError

// ErrChildWorkflowTerminated is the cause of a terminated child's error.
var ErrChildWorkflowTerminated = wf.ErrChildWorkflowTerminated

// WithChildOptions returns a context whose child workflows use opts
// (Temporal's workflow.WithChildOptions).
func WithChildOptions(ctx Context, opts ChildWorkflowOptions) Context {
	return wf.WithChildOptions(ctx, opts)
}

// GetChildWorkflowOptions returns the child workflow options of ctx.
func GetChildWorkflowOptions(ctx Context) ChildWorkflowOptions {
	return wf.GetChildWorkflowOptions(ctx)
}

// ExecuteChildWorkflow starts a child workflow and returns its future
// (Temporal's workflow.ExecuteChildWorkflow). childWorkflow is the
// workflow function or its registered name; args are its input.
// Cancelling ctx asks the child to cancel; cancelling the whole workflow
// leaves the child to its ParentClosePolicy.
func ExecuteChildWorkflow(ctx Context, childWorkflow any, args ...any) ChildWorkflowFuture {
	return wf.ExecuteChildWorkflow(ctx, childWorkflow, args...)
}
