// Package flows holds the workflows and activities shared by the end-to-end
// tests and the worker binary they start (internal/e2e/testworker), so that
// a killed worker process and its in-process replacement run the same code.
package flows

import (
	"context"
	"fmt"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// StepDelay is how long each SlowStep takes.
const StepDelay = 300 * time.Millisecond

// SlowStep sleeps StepDelay (watching its context) and returns its input
// tagged with the attempt.
func SlowStep(ctx context.Context, i int) (string, error) {
	select {
	case <-time.After(StepDelay):
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	return fmt.Sprintf("step%d", i), nil
}

// KillFlow runs n SlowSteps one after the other and returns their results.
func KillFlow(ctx workflow.Context, n int) ([]string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumInterval: time.Second},
	})
	var out []string
	for i := 0; i < n; i++ {
		var s string
		if err := workflow.ExecuteActivity(ctx, SlowStep, i).Get(ctx, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// WhoRuns reports the worker id and attempt of the worker that runs it.
func WhoRuns(ctx context.Context) (string, error) {
	return activity.GetInfo(ctx).WorkerID, nil
}

// Register registers the shared workflows and activities on w.
func Register(w worker.Worker) error {
	if err := w.AddWorkflow(KillFlow); err != nil {
		return err
	}
	if err := w.AddActivity(SlowStep); err != nil {
		return err
	}
	return w.AddActivity(WhoRuns)
}
