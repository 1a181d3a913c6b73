package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// RunIDActivity returns the run id its info names; its first attempt
// fails, so that the retry's info is the one returned.
func RunIDActivity(ctx context.Context) (string, error) {
	info := activity.GetInfo(ctx)
	if info.Attempt == 1 {
		return "", errors.New("first attempt fails")
	}
	return info.WorkflowExecution.RunID, nil
}

// RunIDFlow returns its own run id and the one its activity saw.
func RunIDFlow(ctx workflow.Context) ([]string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 3}})
	var seen string
	err := workflow.ExecuteActivity(ctx, RunIDActivity).Get(ctx, &seen)
	return []string{workflow.GetInfo(ctx).WorkflowExecution.RunID, seen}, err
}

// TestActivityInfoRunID: activity.GetInfo(ctx).WorkflowExecution.RunID is
// the run id of the execution that scheduled the activity — for a polled
// attempt (eager dispatch off), and for its retry — as Temporal's is.
func TestActivityInfoRunID(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	ctx := context.Background()
	w := worker.New(c, "runid", worker.Options{DisableEagerActivities: true})
	must(t, w.AddWorkflow(RunIDFlow))
	must(t, w.AddActivity(RunIDActivity))
	must(t, w.Start())
	t.Cleanup(w.Stop)
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "runid-1", TaskQueue: "runid"}, RunIDFlow)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := we.Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(we.GetRunID()); err != nil {
		t.Fatalf("run id %q: %v", we.GetRunID(), err)
	}
	if len(got) != 2 || got[0] != we.GetRunID() || got[1] != we.GetRunID() {
		t.Fatalf("workflow and activity saw %q, want the run id %s twice", got, we.GetRunID())
	}
}
