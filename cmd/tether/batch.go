package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// batchCommand is `tether batch …`.
func (c *cli) batchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "batch",
		Short: "cancel, terminate, signal or delete every workflow a list query matches, as a server-side job",
		Long: `Start and steer batch jobs over the REST API (docs/api.md, "Batch operations").

A batch job applies one operation (cancel, terminate, signal, delete) to every
workflow of the namespace that a list query matches ("tether workflow list
--query" shows which), in the background on the server, at a bounded rate.
It survives a server restart and resumes where it was; it can be paused,
resumed and cancelled. describe shows its progress: done, failed (with the
first failures' reasons), total matched when it started.`,
		Example: `  tether batch start --operation terminate --query "WorkflowType = 'Charge' AND ExecutionStatus = 'Running'" --reason "bad deploy"
  tether batch describe 5b0c…
  tether batch pause 5b0c…`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(c.batchStart(), c.batchList(), c.batchDescribe(),
		c.batchChange("pause", "pause a running batch job (after the workflow in hand)", (*client.TetherClient).PauseBatch),
		c.batchChange("resume", "resume a paused batch job where it stopped", (*client.TetherClient).ResumeBatch),
		c.batchChange("cancel", "stop a batch job for good (the workflows it handled stay as they are)", (*client.TetherClient).CancelBatch))
	return cmd
}

func (c *cli) batchStart() *cobra.Command {
	var o client.BatchOptions
	var signalInput, resetType, resetBuildID string
	var resetExclude []string
	cmd := &cobra.Command{
		Use:   "start --operation OP --query QUERY [--reason TEXT] [--signal-name NAME [--signal-input JSON]] [--force] [--rate N] [--id ID]",
		Short: "start a batch job",
		Long: `Start a batch job that applies --operation to every workflow --query matches:
cancel (ask each to cancel), terminate (end each running one at once), signal
(send --signal-name with --signal-input to each running one) or delete
(delete each and its history; running ones only with --force, and only with
an admin key) or reset (go back to --reset-type first, last or build-id, as
tether workflow reset does, each workflow in its own transaction; signals
after the point are re-applied unless --reapply-exclude signal). The job
handles at most --rate
workflows a second (default 50). The job is printed; its id names it in the
other commands.`,
		Example: `  tether batch start --operation terminate --query "WorkflowType = 'Charge'" --reason "bad deploy" --rate 20
  tether batch start --operation signal --query "BuildId = 'v41'" --signal-name pause --signal-input '{"why":"incident"}'
  tether batch start --operation delete --query "ExecutionStatus = 'Failed'" --id cleanup-1 -o json
  tether batch start --operation reset --query "ExecutionStatus = 'Failed' AND BuildId = 'v41'" --reset-type last --reason "fixed in v42"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Operation == "" || o.Query == "" {
				return usageErrorf("--operation and --query are required")
			}
			if o.RatePerSecond < 0 || o.RatePerSecond > api.MaxBatchRate {
				return usageErrorf("--rate must be between 1 and %d (0: the server's default)", api.MaxBatchRate)
			}
			if o.SignalName == "" && signalInput != "" {
				return usageErrorf("--signal-input needs --signal-name")
			}
			if err := batchResetOptions(&o, resetType, resetBuildID, resetExclude); err != nil {
				return err
			}
			raw, err := jsonFlag("signal-input", signalInput)
			if err != nil {
				return err
			}
			if raw != nil {
				o.SignalArg = raw
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			b, err := cl.StartBatch(cmd.Context(), o)
			if err != nil {
				return apiError(err)
			}
			return c.printBatch(b)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Operation, "operation", "", "what to do to each workflow: "+strings.Join(api.BatchOperations(), ", ")+" (required)")
	f.StringVarP(&o.Query, "query", "q", "", `the list query that selects the workflows, as "tether workflow list --query" (required)`)
	f.StringVar(&o.Reason, "reason", "", "why (recorded with each cancel or termination; default \"batch <id>\")")
	f.StringVar(&o.SignalName, "signal-name", "", "the signal to send (operation signal)")
	f.StringVar(&signalInput, "signal-input", "", "the signal's input, as JSON")
	f.BoolVar(&o.Force, "force", false, "delete running workflows too (operation delete)")
	f.IntVar(&o.RatePerSecond, "rate", 0, "workflows a second at most (0: the server's default, 50)")
	f.StringVar(&o.ID, "id", "", "the job's id (default: chosen by the server)")
	f.StringVar(&resetType, "reset-type", "", "where each reset goes back to: first, last or build-id (operation reset)")
	f.StringVar(&resetBuildID, "build-id", "", "the build whose first turn each reset goes back to (--reset-type build-id)")
	f.StringSliceVar(&resetExclude, "reapply-exclude", nil, "what the resets do not re-apply: signal (operation reset)")
	return cmd
}

// batchResetOptions sets o.Reset from the reset flags of batch start: they
// are for a reset batch only, which needs --reset-type.
func batchResetOptions(o *client.BatchOptions, typ, buildID string, exclude []string) error {
	if o.Operation != api.BatchOpReset {
		if typ != "" || buildID != "" || len(exclude) > 0 {
			return usageErrorf("--reset-type, --build-id and --reapply-exclude are for --operation reset")
		}
		return nil
	}
	rt, ok := resetTypes[typ]
	if !ok || rt == api.ResetEvent {
		return usageErrorf("--reset-type must be first, last or build-id for a reset batch, not %q", typ)
	}
	reapply := true
	for _, x := range exclude {
		if x != "signal" {
			return usageErrorf("--reapply-exclude must be signal, not %q", x)
		}
		reapply = false
	}
	o.Reset = &api.BatchReset{ResetType: rt, BuildID: buildID, ReapplySignals: &reapply}
	return nil
}

func (c *cli) batchList() *cobra.Command {
	var token string
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list batch jobs, newest first",
		Long: `List the namespace's batch jobs, newest first, one page (--limit) at a time; the
token of the next page is printed on stderr (table) or in next_page_token
(json). --all follows every page.`,
		Example: `  tether batch list
  tether batch list --all -o json | jq -r '.batches[] | select(.state == "running") | .batch_id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 || limit > 1000 {
				return usageErrorf("--limit must be between 0 and 1000")
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			var resp api.ListBatchesResponse
			resp.Batches, resp.NextPageToken, err = collectPages(all, token, func(token string) ([]api.Batch, string, error) {
				page, err := cl.ListBatches(cmd.Context(), limit, token)
				return page.Batches, page.NextPageToken, err
			})
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(resp)
			}
			rows := [][]string{{"BATCH ID", "OPERATION", "STATE", "TOTAL", "DONE", "FAILED", "CREATED", "QUERY"}}
			for _, b := range resp.Batches {
				rows = append(rows, []string{b.BatchID, b.Operation, b.State, strconv.FormatInt(b.Total, 10),
					strconv.FormatInt(b.Done, 10), strconv.FormatInt(b.Failed, 10), timeText(b.CreatedAt), b.Query})
			}
			if err := c.table(rows); err != nil {
				return err
			}
			if resp.NextPageToken != "" {
				fmt.Fprintf(c.stderr, "more: add --page-token %s (or --all)\n", resp.NextPageToken)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&limit, "limit", 0, "jobs per page (0: the server's default)")
	f.StringVar(&token, "page-token", "", "the next_page_token of the previous page")
	f.BoolVar(&all, "all", false, "follow every page")
	return cmd
}

func (c *cli) batchDescribe() *cobra.Command {
	return &cobra.Command{
		Use:   "describe ID",
		Short: "describe a batch job: state, progress, failures",
		Example: `  tether batch describe cleanup-1
  tether batch describe cleanup-1 -o json | jq '.done, .failed'`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			b, err := cl.DescribeBatch(cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			return c.printBatch(b)
		},
	}
}

// batchChange is pause, resume or cancel: a finished job exits with the
// conflict code, an unknown one with the not-found code.
func (c *cli) batchChange(use, short string, call func(*client.TetherClient, context.Context, string) (*api.Batch, error)) *cobra.Command {
	return &cobra.Command{
		Use:     use + " ID",
		Short:   short,
		Example: "  tether batch " + use + " cleanup-1",
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			b, err := call(cl, cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			return c.printBatch(b)
		},
	}
}

// printBatch prints a job as JSON, or as name/value lines followed by its
// failures.
func (c *cli) printBatch(b *api.Batch) error {
	if c.json() {
		return c.printJSON(b)
	}
	signal, input := "", ""
	if b.Signal != nil {
		signal, input = b.Signal.Name, jsonText(b.Signal.Input)
	}
	if err := c.fields(
		"batch_id", b.BatchID,
		"operation", b.Operation,
		"query", b.Query,
		"state", b.State,
		"reason", b.Reason,
		"signal", signal,
		"signal_input", input,
		"force", map[bool]string{true: "true"}[b.Force],
		"rate_per_second", strconv.Itoa(int(b.RatePerSecond)),
		"total", strconv.FormatInt(b.Total, 10),
		"done", strconv.FormatInt(b.Done, 10),
		"failed", strconv.FormatInt(b.Failed, 10),
		"error", b.Error,
		"created_at", timeText(b.CreatedAt),
		"finished_at", timePtrText(b.FinishedAt),
	); err != nil {
		return err
	}
	if len(b.Failures) == 0 {
		return nil
	}
	fmt.Fprintln(c.stdout)
	rows := [][]string{{"WORKFLOW ID", "REASON", "AT"}}
	for _, f := range b.Failures {
		rows = append(rows, []string{f.WorkflowID, f.Reason, timeText(f.At)})
	}
	return c.table(rows)
}
