package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tetherhq/tether/sdk/enums"
)

// WithStartWorkflowOperation is the start half of UpdateWithStartWorkflow
// (Temporal's client.WithStartWorkflowOperation): Get returns the run once
// the call has run.
type WithStartWorkflowOperation interface {
	// Get waits for UpdateWithStartWorkflow to have run and returns the
	// run it started or found, or why it could not.
	Get(ctx context.Context) (WorkflowRun, error)
}

// startOperation is a WithStartWorkflowOperation.
type startOperation struct {
	options  StartWorkflowOptions
	workflow any
	args     []any
	// used is set by the call that takes the operation.
	mu   sync.Mutex
	used bool
	done chan struct{}
	run  WorkflowRun
	err  error
}

// Get implements WithStartWorkflowOperation.
func (op *startOperation) Get(ctx context.Context) (WorkflowRun, error) {
	select {
	case <-op.done:
		return op.run, op.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// settle records the outcome.
func (op *startOperation) settle(run WorkflowRun, err error) {
	op.run, op.err = run, err
	close(op.done)
}

// NewWithStartWorkflowOperation returns the start of an
// UpdateWithStartWorkflow (Temporal's): options must set ID and
// WorkflowIDConflictPolicy (FAIL or USE_EXISTING).
func (c *TetherClient) NewWithStartWorkflowOperation(options StartWorkflowOptions, workflow any, args ...any) WithStartWorkflowOperation {
	return &startOperation{options: options, workflow: workflow, args: args, done: make(chan struct{})}
}

// UpdateWithStartWorkflowOptions are the arguments of
// UpdateWithStartWorkflow.
type UpdateWithStartWorkflowOptions struct {
	// StartWorkflowOperation is the workflow to start (from
	// NewWithStartWorkflowOperation).
	StartWorkflowOperation WithStartWorkflowOperation
	// UpdateOptions is the update to send; its WorkflowID is empty or the
	// start's ID.
	UpdateOptions UpdateWorkflowOptions
}

// UpdateWithStartWorkflow starts a workflow (or, with USE_EXISTING, finds
// the running one) and sends it an update (Temporal's). Unlike Temporal's,
// the start and the update are two requests, not one transaction: the
// start stands when the update is rejected or cannot be sent, as it does
// in Temporal when the update is rejected.
func (c *TetherClient) UpdateWithStartWorkflow(ctx context.Context, options UpdateWithStartWorkflowOptions) (WorkflowUpdateHandle, error) {
	op, ok := options.StartWorkflowOperation.(*startOperation)
	if !ok || op == nil {
		return nil, errors.New("tether: UpdateWithStartWorkflow: StartWorkflowOperation must come from NewWithStartWorkflowOperation")
	}
	op.mu.Lock()
	used := op.used
	op.used = true
	op.mu.Unlock()
	if used {
		return nil, errors.New("tether: UpdateWithStartWorkflow: the StartWorkflowOperation was already used")
	}
	start := op.options
	fail := func(err error) (WorkflowUpdateHandle, error) {
		op.settle(nil, err)
		return nil, err
	}
	if start.ID == "" {
		return fail(errors.New("tether: UpdateWithStartWorkflow: StartWorkflowOptions.ID is required"))
	}
	switch start.WorkflowIDConflictPolicy {
	case enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL, enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING:
	default:
		return fail(errors.New("tether: UpdateWithStartWorkflow: StartWorkflowOptions.WorkflowIDConflictPolicy must be FAIL or USE_EXISTING"))
	}
	upd := options.UpdateOptions
	if upd.WorkflowID != "" && upd.WorkflowID != start.ID {
		return fail(fmt.Errorf("tether: UpdateWithStartWorkflow: UpdateOptions.WorkflowID %q is not the start's ID %q", upd.WorkflowID, start.ID))
	}
	upd.WorkflowID = start.ID
	if upd.WaitForStage == WorkflowUpdateStageUnspecified || upd.UpdateName == "" {
		return fail(errors.New("tether: UpdateWithStartWorkflow: UpdateOptions.UpdateName and WaitForStage are required"))
	}
	start.WorkflowExecutionErrorWhenAlreadyStarted = true // the policy decides
	run, err := c.ExecuteWorkflow(ctx, start, op.workflow, op.args...)
	if err != nil {
		return fail(err)
	}
	op.settle(run, nil)
	return c.UpdateWorkflow(ctx, upd)
}
