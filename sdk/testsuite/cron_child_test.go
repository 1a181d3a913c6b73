package testsuite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

// HourlyRun is one run of a cron child: it returns the start times of the
// runs so far, carried through the last completion result.
func HourlyRun(ctx workflow.Context) ([]time.Time, error) {
	var runs []time.Time
	if workflow.HasLastCompletionResult(ctx) {
		if err := workflow.GetLastCompletionResult(ctx, &runs); err != nil {
			return nil, err
		}
	}
	return append(runs, workflow.Now(ctx).UTC()), nil
}

// Goal: a child with a CronSchedule runs as a cron workflow in the test
// environment, as in Temporal's (samples-go's cron test): its first run
// at once, the next ones at the schedule's times with the last completed
// run's result; the parent sees it running, until it cancels it; and a
// test's anonymous workflow function is registered and run, as Temporal's
// test environment allows.
func TestCronChildInTestEnvironment(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	start := time.Date(2018, 8, 22, 16, 30, 0, 0, time.UTC)
	env.SetStartTime(start)
	var readyAfterTwoHours bool
	parent := func(ctx workflow.Context) (string, error) {
		childCtx, cancel := workflow.WithCancel(ctx)
		childCtx = workflow.WithChildOptions(childCtx, workflow.ChildWorkflowOptions{
			WorkflowID: "hourly", CronSchedule: "0 * * * *", WorkflowRunTimeout: 10 * time.Minute,
			WaitForCancellation: true,
		})
		child := workflow.ExecuteChildWorkflow(childCtx, HourlyRun)
		if err := workflow.Sleep(ctx, 2*time.Hour); err != nil {
			return "", err
		}
		readyAfterTwoHours = child.IsReady()
		cancel()
		err := child.Get(ctx, nil)
		if !temporal.IsCanceledError(err) {
			return "", err
		}
		return "canceled", nil
	}
	var runs []time.Time
	env.SetOnChildWorkflowCompletedListener(func(info *workflow.Info, result testsuite.EncodedValue, err error) {
		require.NoError(t, err)
		require.NoError(t, result.Get(&runs))
	})
	env.RegisterWorkflow(parent)
	env.RegisterWorkflow(HourlyRun)

	env.ExecuteWorkflow(parent)

	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got string
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, "canceled", got)
	require.False(t, readyAfterTwoHours, "the parent saw its cron child end")
	require.Equal(t, []time.Time{start, start.Add(30 * time.Minute), start.Add(90 * time.Minute)}, runs)
}
