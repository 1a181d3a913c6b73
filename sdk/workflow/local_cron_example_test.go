package workflow_test

import (
	"time"

	"github.com/tetherhq/tether/sdk/workflow"
)

// ExampleExecuteLocalActivity runs a short step in the worker that runs the
// turn: no activity task, its result recorded with the turn's ack.
func ExampleExecuteLocalActivity() {
	resolve := func(ctx workflow.Context, url string) (string, error) {
		ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: 2 * time.Second,
			RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 5},
		})
		var path string
		err := workflow.ExecuteLocalActivity(ctx, Download, url).Get(ctx, &path)
		return path, err
	}
	_ = resolve
}

// ExampleGetLastCompletionResult is a cron workflow (started with
// client.StartWorkflowOptions{CronSchedule: "@hourly"}) that counts its
// completed runs.
func ExampleGetLastCompletionResult() {
	hourly := func(ctx workflow.Context) (int, error) {
		runs := 0
		if workflow.HasLastCompletionResult(ctx) {
			if err := workflow.GetLastCompletionResult(ctx, &runs); err != nil {
				return 0, err
			}
		}
		return runs + 1, nil
	}
	_ = hourly
}
