package worker

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/workflow"
)

// WorkflowReplayer replays recorded histories (client.History) through
// workflow code without a server, as a worker rebuilds a workflow's state:
// run it in a test against production histories before deploying a change,
// and a *workflow.NondeterminismError tells you that the change would break
// running instances. It mirrors Temporal's worker.WorkflowReplayer.
// Register the workflows, and the activities that were registered under
// another name than their Go name, as on the worker.
type WorkflowReplayer struct {
	reg *registry
}

// NewWorkflowReplayer returns an empty replayer.
func NewWorkflowReplayer() *WorkflowReplayer { return &WorkflowReplayer{reg: newRegistry()} }

// RegisterWorkflow registers a workflow as Worker.RegisterWorkflow does.
func (r *WorkflowReplayer) RegisterWorkflow(fn any, opts ...RegisterOption) error {
	return r.reg.registerWorkflow(fn, opts)
}

// RegisterWorkflowWithOptions is RegisterWorkflow with Temporal's options.
func (r *WorkflowReplayer) RegisterWorkflowWithOptions(fn any, opts workflow.RegisterOptions) error {
	return r.reg.registerWorkflow(fn, workflowOptions(opts))
}

// RegisterActivityWithOptions names an activity function as the worker
// does, so that the code's ExecuteActivity(ctx, fn) matches the history's
// activity type. Activities registered under their Go name need nothing.
func (r *WorkflowReplayer) RegisterActivityWithOptions(fn any, opts activity.RegisterOptions) error {
	return r.reg.addActivity(fn, opts.Name, opts.DisableAlreadyRegisteredCheck)
}

// ReplayWorkflowHistory replays history (its first event is the
// WorkflowStarted that names the workflow type) and returns an error when
// the code disagrees with it (*workflow.NondeterminismError) or the history
// cannot be replayed. logger (nil: slog.Default()) gets the workflow's
// logs, which are silent while replaying.
func (r *WorkflowReplayer) ReplayWorkflowHistory(logger *slog.Logger, history []api.Event) error {
	if len(history) == 0 || history[0].Kind != api.EventWorkflowStarted {
		return errors.New("worker: replay: the history does not start with WorkflowStarted")
	}
	def := r.reg.workflow(history[0].WorkflowType)
	if def == nil {
		return fmt.Errorf("worker: replay: workflow type %q is not registered", history[0].WorkflowType)
	}
	exec := wf.NewExecutor(def, wf.ExecutorOptions{Logger: logger, ActivityName: r.reg.activityName})
	defer exec.Close()
	if _, err := exec.Turn(history, nil); err != nil {
		return fmt.Errorf("worker: replay: %w", err)
	}
	return nil
}
