package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// workflowCommand is `tether workflow …`.
func (c *cli) workflowCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "workflow",
		Aliases: []string{"wf"},
		Short:   "start, list, describe, show, signal, query, update, cancel, terminate and delete workflows",
		Long: `Start, inspect and drive workflow instances over the REST API.

cancel asks the workflow to stop (its code decides how); terminate ends it
at once without running its code; delete --force removes a running one with
its history.

--codec-endpoint names a codec server (Temporal's protocol, such as the Go
SDK's converter.NewPayloadCodecHTTPHandler): payloads stored encoded by a
codec (encrypted, compressed) are shown decoded through it, and --input
values are encoded through it.`,
		Example: `  tether workflow start Greet --task-queue main --id greet-1 --input '"Ada"'
  tether workflow list --status running
  tether workflow list --query "WorkflowType = 'Order' AND CustomerId = 'c-1'"
  tether workflow show greet-1
  tether workflow describe order-42 --codec-endpoint http://localhost:8081`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&c.codecEndpoint, "codec-endpoint", os.Getenv(envCodecEndpoint),
		"a codec server's URL: payloads are decoded and encoded through it ($"+envCodecEndpoint+")")
	cmd.AddCommand(c.workflowStart(), c.workflowList(), c.workflowCount(), c.workflowDescribe(), c.workflowShow(),
		c.workflowResult(), c.workflowSignal(), c.workflowQuery(), c.workflowUpdate(), c.workflowCancel(),
		c.workflowTerminate(), c.workflowDelete(), c.workflowReset())
	return cmd
}

// envCodecEndpoint is the default of the workflow commands'
// --codec-endpoint.
const envCodecEndpoint = "TETHER_CODEC_ENDPOINT"

func (c *cli) workflowStart() *cobra.Command {
	var queue, id, input, attrs, memo string
	var timeout time.Duration
	var wait bool
	var conc client.Concurrency
	cmd := &cobra.Command{
		Use:   "start TYPE --task-queue QUEUE [--id ID] [--input JSON]",
		Short: "start a workflow",
		Long: `Start a workflow of type TYPE (its registered name) on a task queue. Prints
the instance id and execution; with --wait, waits for the outcome and prints
it as 'workflow result' does.`,
		Example: `  tether workflow start Greet --task-queue main --input '"Ada"'
  tether workflow start Order --task-queue orders --id order-42 --input '{"sku":"A1","qty":2}' --wait
  tether workflow start Greet --task-queue main -o json | jq -r .instance_id
  tether workflow start Report --task-queue main --concurrency-key customer-7 --concurrency-limit 2`,
		Args: exactArgs("TYPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if queue == "" {
				return usageErrorf("--task-queue is required")
			}
			cl, in, err := c.clientWithPayload("input", input)
			if err != nil {
				return err
			}
			opts := client.StartWorkflowOptions{ID: id, TaskQueue: queue, ExecutionTimeout: timeout}
			if opts.SearchAttributes, err = objectFlag("search-attributes", attrs); err != nil {
				return err
			}
			if opts.Memo, err = objectFlag("memo", memo); err != nil {
				return err
			}
			if conc.Key != "" || conc.Limit != 0 || conc.Strategy != "" {
				opts.Concurrency = &conc
			}
			run, err := cl.StartWorkflow(cmd.Context(), opts, args[0], in)
			if err != nil {
				return apiError(err)
			}
			if wait {
				return c.printOutcome(cmd.Context(), cl, run.ID(), 0)
			}
			if c.json() {
				return c.printJSON(api.StartWorkflowResponse{InstanceID: run.ID(), ExecutionID: run.ExecutionID()})
			}
			return c.fields("instance_id", run.ID(), "execution_id", strconv.FormatInt(run.ExecutionID(), 10))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&queue, "task-queue", "q", "", "the task queue whose workers run it (required)")
	f.StringVar(&id, "id", "", "the instance id (default: the server chooses one)")
	f.StringVarP(&input, "input", "i", "", "the input, as JSON")
	f.DurationVar(&timeout, "execution-timeout", 0, "bound on the whole workflow (0: none)")
	f.BoolVarP(&wait, "wait", "w", false, "wait for the outcome and print it")
	f.StringVar(&attrs, "search-attributes", "", `search attributes, as a JSON object ('{"CustomerId":"c-1"}'; each registered: tether search-attribute create)`)
	f.StringVar(&memo, "memo", "", "a memo, as a JSON object (shown by describe)")
	f.StringVar(&conc.Key, "concurrency-key", "", "a concurrency key: at most --concurrency-limit workflows of the key run at once")
	f.IntVar(&conc.Limit, "concurrency-limit", 0, "how many workflows of --concurrency-key may run at once")
	f.StringVar((*string)(&conc.Strategy), "concurrency-strategy", "", "past the limit: queue (default: wait), cancel_newest (refuse) or cancel_oldest (cancel the oldest running)")
	return cmd
}

// objectFlag decodes a flag holding a JSON object (nil when empty).
func objectFlag(name, v string) (map[string]any, error) {
	if v == "" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, usageErrorf("--%s must be a JSON object: %q", name, v)
	}
	return m, nil
}

func (c *cli) workflowList() *cobra.Command {
	var status, typ, token, query string
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "list [--status STATUS] [--type TYPE] [--query QUERY]",
		Short: "list workflow instances, newest first",
		Long: `List workflow instances, newest first, one page (--limit) at a time; the
token of the next page is printed on stderr (table) or in next_page_token
(json). --all follows every page. --query takes a list query (docs/api.md,
"Visibility"): built-in attributes WorkflowId, WorkflowType, ExecutionStatus,
TaskQueue, StartTime, CloseTime and the namespace's search attributes, with
=, !=, <, <=, >, >=, IN, STARTS_WITH, IS [NOT] NULL, AND, OR, parentheses and
ORDER BY StartTime [ASC|DESC].`,
		Example: `  tether workflow list
  tether workflow list --status running --type Order
  tether workflow list --query "WorkflowType = 'Order' AND ExecutionStatus = 'Running' AND CustomerId = 'c-1'"
  tether workflow list --all -o json | jq -r '.workflows[].instance_id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status != "" && !contains(api.Statuses(), status) {
				return usageErrorf("--status must be one of %v, not %q", api.Statuses(), status)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			opts := client.ListOptions{Status: status, WorkflowType: typ, Limit: limit, PageToken: token, Query: query}
			var resp api.ListWorkflowsResponse
			if all {
				resp.Workflows = []api.Workflow{}
				for w, err := range cl.ListAll(cmd.Context(), opts) {
					if err != nil {
						return apiError(err)
					}
					resp.Workflows = append(resp.Workflows, w)
				}
			} else {
				page, err := cl.List(cmd.Context(), opts)
				if err != nil {
					return apiError(err)
				}
				resp = *page
			}
			if c.json() {
				return c.printJSON(resp)
			}
			rows := [][]string{{"INSTANCE ID", "TYPE", "STATUS", "TASK QUEUE", "EXECUTION", "CREATED", "COMPLETED"}}
			for _, w := range resp.Workflows {
				rows = append(rows, []string{w.InstanceID, w.WorkflowType, w.Status, w.TaskQueue,
					strconv.FormatInt(w.ExecutionID, 10), timeText(w.CreatedAt), timePtrText(w.CompletedAt)})
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
	f.StringVar(&status, "status", "", "only instances with this status (running, completed, failed, canceled, terminated)")
	f.StringVar(&typ, "type", "", "only instances of this workflow type")
	f.IntVar(&limit, "limit", 0, "instances per page (0: the server's default)")
	f.StringVar(&token, "page-token", "", "the next_page_token of the previous page")
	f.BoolVar(&all, "all", false, "follow every page")
	f.StringVar(&query, "query", "", "a list query, e.g. \"CustomerId = 'c-1' ORDER BY StartTime ASC\"")
	return cmd
}

func (c *cli) workflowCount() *cobra.Command {
	var query string
	cmd := &cobra.Command{
		Use:   "count [--query QUERY]",
		Short: "count the workflow instances a list query selects",
		Example: `  tether workflow count
  tether workflow count --query "ExecutionStatus = 'Running' AND CustomerId = 'c-1'"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			n, err := cl.CountWorkflow(cmd.Context(), query)
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(api.CountWorkflowsResponse{Count: n})
			}
			return c.fields("count", strconv.FormatInt(n, 10))
		},
	}
	cmd.Flags().StringVar(&query, "query", "", "a list query (as workflow list's)")
	return cmd
}

func (c *cli) workflowDescribe() *cobra.Command {
	return &cobra.Command{
		Use:   "describe ID",
		Short: "describe a workflow instance: status, input, result or error, pending work",
		Example: `  tether workflow describe order-42
  tether workflow describe order-42 -o json | jq .status`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			w, err := cl.Describe(cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(w)
			}
			if err := c.describeWorkflow(w); err != nil {
				return err
			}
			return c.describePending(w)
		},
	}
}

// describeWorkflow prints w as name/value lines.
func (c *cli) describeWorkflow(w *api.Workflow) error {
	cancel := ""
	if w.CancelRequested {
		cancel = "requested"
		if w.CancelReason != "" {
			cancel += " (" + w.CancelReason + ")"
		}
	}
	return c.fields(
		"instance_id", w.InstanceID,
		"namespace", w.Namespace,
		"workflow_type", w.WorkflowType,
		"task_queue", w.TaskQueue,
		"status", w.Status,
		"execution_id", strconv.FormatInt(w.ExecutionID, 10),
		"input", jsonText(w.Input),
		"result", jsonText(w.Result),
		"error", errorText(w.Error),
		"cancel", cancel,
		"last_task_error", errorText(w.LastTaskError),
		"created_at", timeText(w.CreatedAt),
		"updated_at", timeText(w.UpdatedAt),
		"completed_at", timePtrText(w.CompletedAt),
		"search_attributes", attributesText(w.SearchAttributes),
		"memo", jsonText(w.Memo),
		"concurrency", concurrencyText(w.Concurrency),
	)
}

// concurrencyText is a workflow's concurrency limit and state for a table.
func concurrencyText(cc *api.WorkflowConcurrency) string {
	if cc == nil {
		return ""
	}
	strategy := cc.Strategy
	if strategy == "" {
		strategy = api.ConcurrencyQueue
	}
	state := "running"
	if cc.State == api.ConcurrencyWaiting {
		state = "waiting for a slot"
	}
	return fmt.Sprintf("%s: key %s, %d of %d running, %d waiting (%s)", state, cc.Key, cc.Running, cc.Limit, cc.Waiting, strategy)
}

// attributesText is a workflow's search attributes for a table:
// name=value pairs by name.
func attributesText(attrs map[string]json.RawMessage) string {
	parts := make([]string, 0, len(attrs))
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		parts = append(parts, k+"="+string(attrs[k]))
	}
	return strings.Join(parts, " ")
}

// errorText is a recorded error for a table: its type, its message and its
// causes' (api.Error.Error).
func errorText(e *api.Error) string {
	if e == nil {
		return ""
	}
	return e.Error()
}

func (c *cli) workflowShow() *cobra.Command {
	var execution int64
	cmd := &cobra.Command{
		Use:   "show ID [--execution N]",
		Short: "show an execution's history (every page)",
		Example: `  tether workflow show order-42
  tether workflow show order-42 --execution 1 -o json | jq '.events[].kind'`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if execution < 0 {
				return usageErrorf("--execution must be at least 1 (0: the current execution)")
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			h, err := cl.History(cmd.Context(), args[0], execution)
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(h)
			}
			rows := [][]string{{"EVENT", "TIME", "KIND", "DETAILS"}}
			for _, e := range h.Events {
				rows = append(rows, []string{strconv.FormatInt(e.EventID, 10), timeText(e.Timestamp), e.Kind, eventDetails(e)})
			}
			return c.table(rows)
		},
	}
	cmd.Flags().Int64Var(&execution, "execution", 0, "the execution (0: the current one)")
	return cmd
}

// eventDetails summarizes an event for a table.
func eventDetails(e api.Event) string {
	var parts []string
	add := func(k, v string) {
		if v != "" && v != "0" {
			parts = append(parts, k+"="+v)
		}
	}
	add("type", e.WorkflowType)
	add("activity", strconv.FormatInt(e.ActivityID, 10))
	add("activity_type", e.ActivityType)
	add("attempt", strconv.FormatInt(int64(e.Attempt), 10))
	add("timer", strconv.FormatInt(e.TimerID, 10))
	if e.FireAfter != 0 {
		add("fire_after", e.FireAfter.D().String())
	}
	add("input", truncate(jsonText(e.Input), 60))
	add("result", truncate(jsonText(e.Result), 60))
	add("error", truncate(errorText(e.Error), 80))
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += " "
		}
		out += p
	}
	return out
}

// truncate shortens s to n runes with an ellipsis.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func (c *cli) workflowResult() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "result ID [--timeout D]",
		Short: "wait for a workflow's outcome and print it",
		Long: `Wait until the instance is no longer running (following continue-as-new)
and print its outcome: the result as JSON when it completed (exit 0), or its
status and error on stderr when it failed, was canceled or terminated (exit 1).
With -o json the whole description is printed either way.`,
		Example: `  tether workflow result order-42
  tether workflow result order-42 --timeout 30s -o json`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			return c.printOutcome(cmd.Context(), cl, args[0], timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "how long to wait (0: as long as it takes)")
	return cmd
}

// printOutcome waits (at most timeout, when positive) for the outcome of
// id and prints it.
func (c *cli) printOutcome(parent context.Context, cl *client.TetherClient, id string, timeout time.Duration) error {
	ctx := parent
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, timeout)
		defer cancel()
	}
	w, err := cl.WaitResult(ctx, id)
	if err != nil {
		if ctx.Err() != nil && parent.Err() == nil {
			return &exitError{code: exitFailure, err: fmt.Errorf("timed out: workflow %s is still running", id)}
		}
		return apiError(err)
	}
	if c.json() {
		if err := c.printJSON(w); err != nil {
			return err
		}
	} else if w.Status == api.StatusCompleted {
		out := jsonText(w.Result)
		if out == "" {
			out = "null"
		}
		fmt.Fprintln(c.stdout, out)
	}
	if w.Status == api.StatusCompleted {
		return nil
	}
	msg := fmt.Sprintf("workflow %s %s", w.InstanceID, w.Status)
	if e := errorText(w.Error); e != "" {
		msg += ": " + e
	} else if w.CancelReason != "" {
		msg += ": " + w.CancelReason
	}
	return &exitError{code: exitFailure, err: fmt.Errorf("%s", msg)}
}

func (c *cli) workflowSignal() *cobra.Command {
	var input string
	cmd := &cobra.Command{
		Use:   "signal ID NAME [--input JSON]",
		Short: "send a signal to a running workflow",
		Example: `  tether workflow signal order-42 approve
  tether workflow signal order-42 item --input '"book"'`,
		Args: exactArgs("ID", "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, payload, err := c.clientWithPayload("input", input)
			if err != nil {
				return err
			}
			if err := cl.Signal(cmd.Context(), args[0], args[1], payload); err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(map[string]string{"instance_id": args[0], "signal": args[1]})
			}
			fmt.Fprintf(c.stdout, "signal %s sent to %s\n", args[1], args[0])
			return nil
		},
	}
	cmd.Flags().StringVarP(&input, "input", "i", "", "the signal's payload, as JSON")
	return cmd
}

func (c *cli) workflowCancel() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "cancel ID [--reason TEXT]",
		Short: "ask a running workflow to cancel",
		Long: `Request the cancellation of a running instance: the workflow sees its context
canceled and ends canceled (or however it handles it). The first reason wins;
'no change' means the cancellation was requested already or the instance is
finished.`,
		Example: `  tether workflow cancel order-42 --reason "customer asked"`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			changed, err := cl.Cancel(cmd.Context(), args[0], reason)
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(api.Accepted{Changed: changed})
			}
			if changed {
				fmt.Fprintf(c.stdout, "cancellation of %s requested\n", args[0])
			} else {
				fmt.Fprintf(c.stdout, "no change: %s was asked to cancel already, or is finished\n", args[0])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded with the cancellation)")
	return cmd
}

func (c *cli) workflowDelete() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete ID [--force]",
		Short: "delete a workflow instance with its history",
		Long: `Delete an instance and its history. A running instance is refused (exit 4)
unless --force, which also flags its outstanding activities canceled.`,
		Example: `  tether workflow delete order-42
  tether workflow delete stuck-7 --force`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if err := cl.Delete(cmd.Context(), args[0], force); err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(map[string]any{"instance_id": args[0], "deleted": true})
			}
			fmt.Fprintf(c.stdout, "deleted %s\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete a running instance too")
	return cmd
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
