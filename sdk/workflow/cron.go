package workflow

import "github.com/tetherhq/tether/sdk/internal/wf"

// ErrNoLastCompletionResult is GetLastCompletionResult's error when no
// earlier run of the cron workflow completed.
var ErrNoLastCompletionResult = wf.ErrNoLastCompletionResult

// HasLastCompletionResult reports whether this run of a cron workflow
// (client.StartWorkflowOptions.CronSchedule) follows a run that completed.
// Temporal's workflow.HasLastCompletionResult.
func HasLastCompletionResult(ctx Context) bool { return wf.HasLastCompletionResult(ctx) }

// GetLastCompletionResult decodes into valuePtr the result of the last run
// of this cron workflow that completed (a failed run passes on the one
// before it), or returns ErrNoLastCompletionResult. Temporal's
// workflow.GetLastCompletionResult.
func GetLastCompletionResult(ctx Context, valuePtr any) error {
	return wf.GetLastCompletionResult(ctx, valuePtr)
}
