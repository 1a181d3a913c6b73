package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// jsonArgs checks the values of a repeatable JSON flag and returns them as
// the arguments of an SDK call: each one is recorded as is, several become
// a JSON array (as the SDK encodes several arguments).
func jsonArgs(name string, values []string) ([]any, error) {
	out := make([]any, 0, len(values))
	for _, v := range values {
		raw, err := jsonFlag(name, v)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			return nil, usageErrorf("--%s must not be empty (a JSON null is 'null')", name)
		}
		out = append(out, raw)
	}
	return out, nil
}

// rawJSON is the JSON text of a decoded value ("null" when none).
func rawJSON(raw json.RawMessage) string {
	if s := jsonText(raw); s != "" {
		return s
	}
	return "null"
}

// withTimeout derives a context bounded by timeout (none when zero).
func withTimeout(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(parent, timeout)
	}
	return context.WithCancel(parent)
}

func (c *cli) workflowTerminate() *cobra.Command {
	var reason, details string
	var execution int64
	cmd := &cobra.Command{
		Use:   "terminate ID [--reason TEXT] [--details JSON] [--execution N]",
		Short: "end a running workflow at once, without running its code",
		Long: `Terminate a running instance: no workflow code runs, its history ends with a
WorkflowTerminated event carrying the reason and details, its status becomes
terminated, its outstanding activities are cancelled and its pending timers
and signals dropped. A finished instance is refused (exit 4); so is
--execution N when N is not the current execution.`,
		Example: `  tether workflow terminate order-42 --reason "stuck on a bad deploy"
  tether workflow terminate order-42 --reason cleanup --details '{"ticket":"OPS-7"}' --execution 3`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if execution < 0 {
				return usageErrorf("--execution must be positive, not %d", execution)
			}
			var extra []any
			raw, err := jsonFlag("details", details)
			if err != nil {
				return err
			}
			if raw != nil {
				extra = append(extra, raw)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			run := ""
			if execution > 0 {
				run = strconv.FormatInt(execution, 10)
			}
			if err := cl.TerminateWorkflow(cmd.Context(), args[0], run, reason, extra...); err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(map[string]any{"instance_id": args[0], "terminated": true})
			}
			fmt.Fprintf(c.stdout, "terminated %s\n", args[0])
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&reason, "reason", "", "why (recorded in the WorkflowTerminated event and the error; at most 1024 bytes)")
	f.StringVar(&details, "details", "", "details recorded with the termination, as JSON")
	f.Int64Var(&execution, "execution", 0, "terminate only if N is the current execution (0: the current one)")
	return cmd
}

func (c *cli) workflowQuery() *cobra.Command {
	var inputs []string
	var execution int64
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "query ID QUERY_TYPE [--input JSON]... [--execution N] [--timeout D]",
		Short: "ask a workflow's query handler and print its answer",
		Long: `Run the query handler QUERY_TYPE of a workflow (registered with
workflow.SetQueryHandler) on a worker and print its answer as JSON. Each
--input is one argument of the handler, as JSON. A handler that returns an
error exits 1 with its message; an unknown query type exits 2 (the error
names the known ones); no worker answering within the wait exits 6.`,
		Example: `  tether workflow query order-42 status
  tether workflow query order-42 items-since --input '"2026-01-01"' -o json
  tether workflow query order-42 price --input '"A1"' --input 2 --timeout 10s`,
		Args: exactArgs("ID", "QUERY_TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if execution < 0 {
				return usageErrorf("--execution must be positive, not %d", execution)
			}
			in, err := jsonArgs("input", inputs)
			if err != nil {
				return err
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			run := ""
			if execution > 0 {
				run = strconv.FormatInt(execution, 10)
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			v, err := cl.QueryWorkflow(ctx, args[0], run, args[1], in...)
			if err != nil {
				return apiError(err)
			}
			var raw json.RawMessage
			if v.HasValue() {
				if err := v.Get(&raw); err != nil {
					return &exitError{code: exitFailure, err: err}
				}
			}
			if c.json() {
				return c.printJSON(api.QueryWorkflowResponse{Result: raw})
			}
			fmt.Fprintln(c.stdout, rawJSON(raw))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&inputs, "input", "i", nil, "an argument of the handler, as JSON (repeat for several)")
	f.Int64Var(&execution, "execution", 0, "query only if N is the current execution (0: the current one)")
	f.DurationVar(&timeout, "timeout", 0, "how long to wait for a worker's answer (0: the server's default)")
	return cmd
}

func (c *cli) workflowUpdate() *cobra.Command {
	var inputs []string
	var updateID, waitFor string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "update ID UPDATE_NAME [--input JSON]... [--update-id ID] [--wait-for STAGE] [--timeout D]",
		Short: "send an update to a workflow and wait for its result",
		Long: `Send the update UPDATE_NAME to a running workflow (its handler registered
with workflow.SetUpdateHandler) and wait for its result, printed as JSON.
Each --input is one argument of the handler, as JSON. --wait-for accepted
returns once the workflow accepted it (prints the update id and stage).
A rejected update, or a handler that returns an error, exits 1 with the
error; a finished workflow exits 4. Sending the same --update-id again
returns the first outcome instead of running the handler twice.`,
		Example: `  tether workflow update order-42 add-item --input '"book"'
  tether workflow update order-42 set-address --input '{"city":"Oslo"}' --update-id addr-1 -o json
  tether workflow update order-42 approve --wait-for accepted`,
		Args: exactArgs("ID", "UPDATE_NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var stage client.WorkflowUpdateStage
			switch waitFor {
			case api.UpdateStageCompleted:
				stage = client.WorkflowUpdateStageCompleted
			case api.UpdateStageAccepted:
				stage = client.WorkflowUpdateStageAccepted
			default:
				return usageErrorf("--wait-for must be accepted or completed, not %q", waitFor)
			}
			in, err := jsonArgs("input", inputs)
			if err != nil {
				return err
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			h, err := cl.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				UpdateID: updateID, WorkflowID: args[0], UpdateName: args[1], Args: in, WaitForStage: stage,
			})
			if err != nil {
				return c.updateError(ctx, cmd.Context(), err)
			}
			if stage == client.WorkflowUpdateStageAccepted {
				if c.json() {
					return c.printJSON(api.UpdateWorkflowResponse{UpdateID: h.UpdateID(), Stage: api.UpdateStageAccepted})
				}
				return c.fields("update_id", h.UpdateID(), "stage", api.UpdateStageAccepted)
			}
			var raw json.RawMessage
			if err := h.Get(ctx, &raw); err != nil {
				return c.updateError(ctx, cmd.Context(), err)
			}
			if c.json() {
				return c.printJSON(api.UpdateWorkflowResponse{UpdateID: h.UpdateID(), Stage: api.UpdateStageCompleted, Result: raw})
			}
			fmt.Fprintln(c.stdout, rawJSON(raw))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&inputs, "input", "i", nil, "an argument of the handler, as JSON (repeat for several)")
	f.StringVar(&updateID, "update-id", "", "the update's id, for an idempotent retry (default: a new one)")
	f.StringVar(&waitFor, "wait-for", api.UpdateStageCompleted, "wait until the update is accepted or completed")
	f.DurationVar(&timeout, "timeout", 0, "how long to wait (0: as long as it takes)")
	return cmd
}

// updateError gives an update's error its exit code: a rejected or failed
// update exits 1 with the handler's error, a wait that ran out exits 1.
func (c *cli) updateError(ctx, parent context.Context, err error) error {
	var ufe *client.UpdateFailedError
	if errors.As(err, &ufe) {
		return &exitError{code: exitFailure, err: err}
	}
	if ctx.Err() != nil && parent.Err() == nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("timed out: %w", err)}
	}
	return apiError(err)
}
