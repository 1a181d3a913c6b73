package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// workerCommand is `tether worker list|describe`.
func (c *cli) workerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "list and describe worker sessions",
		Example: `  tether worker list --state active
  tether worker describe 3f2a9c1e-…`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(c.workerList(), c.workerDescribe())
	return cmd
}

func (c *cli) workerList() *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:   "list [--state STATE]",
		Short: "list the namespace's worker sessions (every page)",
		Example: `  tether worker list
  tether worker list --state active -o json | jq -r '.workers[].worker_id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if state != "" && !contains(api.WorkerStates(), state) {
				return usageErrorf("--state must be one of %v, not %q", api.WorkerStates(), state)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			all := api.ListWorkersResponse{Workers: []api.Worker{}}
			opts := client.WorkerListOptions{State: state}
			for {
				page, err := cl.ListWorkers(cmd.Context(), opts)
				if err != nil {
					return apiError(err)
				}
				all.Workers = append(all.Workers, page.Workers...)
				if page.NextPageToken == "" || len(page.Workers) == 0 {
					break
				}
				opts.PageToken = page.NextPageToken
			}
			if c.json() {
				return c.printJSON(all)
			}
			rows := [][]string{{"WORKER ID", "STATE", "IDENTITY", "TASK QUEUES", "BOUND", "LAST HEARTBEAT", "LEASE EXPIRES"}}
			for _, w := range all.Workers {
				rows = append(rows, []string{w.WorkerID, w.State, w.Identity, strings.Join(w.TaskQueues, ","),
					strconv.Itoa(len(w.BoundActivities)), timeText(w.LastHeartbeatAt), timeText(w.LeaseExpiresAt)})
			}
			return c.table(rows)
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only workers in this state (active, inactive, cleaned_up)")
	return cmd
}

func (c *cli) workerDescribe() *cobra.Command {
	return &cobra.Command{
		Use:   "describe WORKER_ID",
		Short: "describe a worker session and the activity attempts bound to it",
		Example: `  tether worker describe 3f2a9c1e-5b7d-4c1a-9e8f-0a1b2c3d4e5f
  tether worker describe 3f2a9c1e-5b7d-4c1a-9e8f-0a1b2c3d4e5f -o json`,
		Args: exactArgs("WORKER_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			w, err := cl.DescribeWorker(cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(w)
			}
			var meta []string
			for k, v := range w.Metadata {
				meta = append(meta, k+"="+v)
			}
			if err := c.fields(
				"worker_id", w.WorkerID,
				"namespace", w.Namespace,
				"state", w.State,
				"identity", w.Identity,
				"host", w.Host,
				"task_queues", strings.Join(w.TaskQueues, ","),
				"host_task_queue", w.HostTaskQueue,
				"build_id", w.BuildID,
				"metadata", strings.Join(meta, " "),
				"lease_duration", w.LeaseDuration.D().String(),
				"lease_expires_at", timeText(w.LeaseExpiresAt),
				"last_heartbeat_at", timeText(w.LastHeartbeatAt),
				"state_changed_at", timeText(w.StateChangedAt),
				"created_at", timeText(w.CreatedAt),
				"bound_activities", strconv.Itoa(len(w.BoundActivities)),
			); err != nil {
				return err
			}
			if len(w.BoundActivities) == 0 {
				return nil
			}
			rows := [][]string{{"", "INSTANCE ID", "EXECUTION", "ACTIVITY", "ATTEMPT", "TYPE", "TASK QUEUE", "LOCKED UNTIL", "CANCEL"}}
			for _, b := range w.BoundActivities {
				cancel := ""
				if b.CancelRequested {
					cancel = "requested " + b.CancelReason
				}
				rows = append(rows, []string{"", b.InstanceID, strconv.FormatInt(b.ExecutionID, 10), strconv.FormatInt(b.ActivityID, 10),
					strconv.Itoa(int(b.Attempt)), b.ActivityType, b.TaskQueue, timeText(b.LockedUntil), cancel})
			}
			return c.table(rows)
		},
	}
}

// taskQueueCommand is `tether task-queue describe`.
func (c *cli) taskQueueCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "task-queue",
		Aliases: []string{"tq"},
		Short:   "describe task queues: backlog, its age, pollers",
		Example: `  tether task-queue describe main`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "describe NAME",
		Short: "a task queue's backlog, the age of its oldest task, running attempts and pollers",
		Long: `Describe a task queue: activity attempts waiting (backlog) and the age of
the oldest, attempts running, workflow tasks waiting, the workers polling it on
the server that answers, and the live workers that serve it.`,
		Example: `  tether task-queue describe main
  tether task-queue describe main -o json | jq .backlog`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			tq, err := cl.DescribeTaskQueue(cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(tq)
			}
			kv := []string{
				"name", tq.Name,
				"backlog", strconv.FormatInt(tq.Backlog, 10),
				"oldest_backlog_age", tq.OldestBacklogAge.D().String(),
				"running", strconv.FormatInt(tq.Running, 10),
				"workflow_backlog", strconv.FormatInt(tq.WorkflowBacklog, 10),
				"pollers", strconv.Itoa(len(tq.Pollers)) + " " + strings.Join(tq.Pollers, ","),
				"workers", strconv.Itoa(len(tq.Workers)) + " " + strings.Join(tq.Workers, ","),
				"is_host_queue", strconv.FormatBool(tq.IsHostQueue),
				"orphaned", strconv.FormatBool(tq.Orphaned),
			}
			if l := tq.Limits; l != nil {
				kv = append(kv, "workflow_tasks_per_second", strconv.FormatFloat(l.WorkflowTasksPerSecond, 'g', -1, 64),
					"activity_tasks_per_second", strconv.FormatFloat(l.ActivityTasksPerSecond, 'g', -1, 64))
			}
			for _, b := range tq.BacklogByPriority {
				kv = append(kv, fmt.Sprintf("%s_backlog_priority_%d", b.Kind, b.PriorityKey), strconv.FormatInt(b.Count, 10))
			}
			for _, k := range tq.ConcurrencyKeys {
				kv = append(kv, "concurrency_key "+k.Key, fmt.Sprintf("%d of %d running, %d waiting", k.Running, k.Limit, k.Waiting))
			}
			return c.fields(kv...)
		},
	})
	cmd.AddCommand(c.taskQueueLimitsCommand())
	return cmd
}

// taskQueueLimitsCommand is `tether task-queue set-limits`.
func (c *cli) taskQueueLimitsCommand() *cobra.Command {
	var limits api.TaskQueueLimits
	cmd := &cobra.Command{
		Use:   "set-limits NAME [--workflow-rate N] [--activity-rate N]",
		Short: "set a task queue's rate limits (dispatches per second, across all servers)",
		Long: `Set the rate limits of a task queue: at most N workflow tasks (turns) and N
activity tasks (attempts) dispatched per second, across every server replica,
with a burst of one second's worth. A rate of 0 (or a flag left out) removes
that limit. Needs an admin key.`,
		Example: `  tether task-queue set-limits main --activity-rate 10
  tether task-queue set-limits main   # no limits`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if err := cl.SetTaskQueueLimits(cmd.Context(), args[0], limits); err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(limits)
			}
			return c.fields("name", args[0],
				"workflow_tasks_per_second", strconv.FormatFloat(limits.WorkflowTasksPerSecond, 'g', -1, 64),
				"activity_tasks_per_second", strconv.FormatFloat(limits.ActivityTasksPerSecond, 'g', -1, 64))
		},
	}
	cmd.Flags().Float64Var(&limits.WorkflowTasksPerSecond, "workflow-rate", 0, "workflow tasks dispatched per second (0: no limit)")
	cmd.Flags().Float64Var(&limits.ActivityTasksPerSecond, "activity-rate", 0, "activity tasks dispatched per second (0: no limit)")
	return cmd
}
