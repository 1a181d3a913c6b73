package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// ChildWorkflowOptions configure the child workflows a context starts
// (Temporal's workflow.ChildWorkflowOptions). RetryPolicy retries a failed
// child on the server; only the last failure reaches the parent.
type ChildWorkflowOptions = wf.ChildWorkflowOptions

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
type Execution = wf.WorkflowExecution

// ChildWorkflowExecutionError is the error of a child workflow that
// failed, was canceled or terminated (Temporal's
// temporal.ChildWorkflowExecutionError); errors.As reaches the cause.
type ChildWorkflowExecutionError = wf.ChildWorkflowExecutionError

// ChildWorkflowExecutionAlreadyStartedError is the error of a child whose
// workflow id a running workflow held.
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
