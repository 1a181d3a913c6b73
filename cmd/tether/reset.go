package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/enums"
)

// resetTypes are the values of `workflow reset --type` and the reset types
// they name.
var resetTypes = map[string]string{
	"first": api.ResetFirstTurn, "last": api.ResetLastTurn, "event": api.ResetEvent, "build-id": api.ResetBuildID,
	api.ResetFirstTurn: api.ResetFirstTurn, api.ResetLastTurn: api.ResetLastTurn, api.ResetBuildID: api.ResetBuildID,
}

func (c *cli) workflowReset() *cobra.Command {
	var id, runID, typ, buildID, reason, requestID string
	var eventID int64
	var exclude []string
	cmd := &cobra.Command{
		Use:   "reset [ID] [--workflow-id ID] --type first|last|event|build-id [--event-id N] [--build-id B] [--run-id R] [--reason TEXT] [--reapply-exclude signal]",
		Short: "go back to a turn of a workflow in a new run (after a bad deploy)",
		Long: `Reset a workflow: a new run of the same workflow id gets the history before
one turn of a run (default: the current one) and runs that turn again on the
workers there are now, as Temporal's reset does. --type first goes back to
the first turn, last to the last recorded one, event to the turn that
--event-id ends (the last event of a turn, as tether workflow show lists
them), build-id to the first turn run by --build-id. Activities and timers
outstanding at that point are scheduled again; the signals received after
it are re-applied unless --reapply-exclude signal. The current run ends with
a WorkflowReset event naming the new run (a running one is closed first).
A point that is not the end of a turn, a build id no turn ran on, or a child
whose parent runs is refused (exit 2 names the field). Prints the new run.`,
		Example: `  tether workflow reset order-42 --type last --reason "fixed in v2"
  tether workflow reset --workflow-id order-42 --type first --reapply-exclude signal
  tether workflow reset order-42 --type event --event-id 7
  tether workflow reset order-42 --type build-id --build-id v1.4.2`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if id != "" && id != args[0] {
					return usageErrorf("the workflow id is %q or %q: give one", args[0], id)
				}
				id = args[0]
			}
			if id == "" {
				return usageErrorf("the workflow id is required (ID or --workflow-id)")
			}
			if typ == "" && eventID != 0 {
				typ = "event"
			}
			rt, ok := resetTypes[typ]
			if !ok {
				return usageErrorf("--type must be first, last, event or build-id, not %q", typ)
			}
			req := &client.ResetWorkflowExecutionRequest{
				WorkflowExecution: &common.WorkflowExecution{WorkflowId: id, RunId: runID},
				Reason:            reason, WorkflowTaskFinishEventId: eventID, RequestId: requestID,
				ResetType: rt, BuildID: buildID,
			}
			for _, x := range exclude {
				switch x {
				case "signal":
					req.ResetReapplyExcludeTypes = append(req.ResetReapplyExcludeTypes, enums.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL)
				case "update":
					req.ResetReapplyExcludeTypes = append(req.ResetReapplyExcludeTypes, enums.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE)
				default:
					return usageErrorf("--reapply-exclude must be signal or update, not %q", x)
				}
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			resp, err := cl.ResetWorkflowExecution(cmd.Context(), req)
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(map[string]any{"workflow_id": id, "run_id": resp.RunId, "execution_id": resp.ExecutionID})
			}
			fmt.Fprintf(c.stdout, "reset %s: new run %s (execution %d)\n", id, resp.RunId, resp.ExecutionID)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&id, "workflow-id", "", "the workflow to reset (or ID)")
	f.StringVar(&runID, "run-id", "", "the run to reset: a run id or an execution id (default: the current run)")
	f.StringVar(&typ, "type", "", "where to go back to: first, last, event (with --event-id) or build-id (with --build-id)")
	f.Int64Var(&eventID, "event-id", 0, "the last event of the turn to go back to (--type event)")
	f.StringVar(&buildID, "build-id", "", "go back to the first turn run by this build id (--type build-id)")
	f.StringVar(&reason, "reason", "", "why (recorded in the WorkflowReset event and the new run's reset_from)")
	f.StringVar(&requestID, "request-id", "", "an id recorded with the reset")
	f.StringSliceVar(&exclude, "reapply-exclude", nil, "what not to re-apply to the new run: signal (updates are never re-applied)")
	return cmd
}
