package worker

import (
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// ReplayWorkflowHistory replays a recorded history (client.History) through
// workflowFn without a server, as a worker would rebuild its state, and
// returns a *workflow.NondeterminismError when the code disagrees with the
// history (a change that would break running instances), or another error
// when the history cannot be replayed. It mirrors Temporal's
// WorkflowReplayer.ReplayWorkflowHistory. Activities named by function are
// named by their Go name; opts (WithName) name the workflow.
func ReplayWorkflowHistory(workflowFn any, history []api.Event, opts ...RegisterOption) error {
	var r registration
	for _, o := range opts {
		o(&r)
	}
	def, err := wf.NewDefinition(workflowFn, r.name)
	if err != nil {
		return fmt.Errorf("worker: replay: %w", err)
	}
	exec := wf.NewExecutor(def, wf.ExecutorOptions{})
	defer exec.Close()
	if _, err := exec.Turn(history, nil); err != nil {
		return fmt.Errorf("worker: replay: %w", err)
	}
	return nil
}
