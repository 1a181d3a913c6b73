package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// SlowKid sleeps an hour.
func SlowKid(ctx workflow.Context) error { return workflow.Sleep(ctx, time.Hour) }

// RunTimeoutParent starts SlowKid with a run timeout of a second and
// returns the child's error.
func RunTimeoutParent(ctx workflow.Context) (string, error) {
	ctx = workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "slow-kid",
		WorkflowRunTimeout: time.Second, WorkflowTaskTimeout: time.Minute})
	err := workflow.ExecuteChildWorkflow(ctx, SlowKid).Get(ctx, nil)
	var childErr *temporal.ChildWorkflowExecutionError
	if !errors.As(err, &childErr) {
		return "", err
	}
	return err.Error(), nil
}

// TestChildWorkflowRunTimeout: ChildWorkflowOptions.WorkflowRunTimeout ends
// a child that runs longer with a timeout, which its parent sees as a
// ChildWorkflowExecutionError.
func TestChildWorkflowRunTimeout(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "runtimeout", func(w worker.Worker) {
		must(t, w.AddWorkflow(RunTimeoutParent))
		must(t, w.AddWorkflow(SlowKid))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "rt-parent", TaskQueue: "runtimeout"}, RunTimeoutParent)
	if err != nil {
		t.Fatal(err)
	}
	var msg string
	if err := we.Get(ctx, &msg); err != nil {
		t.Fatal(err)
	}
	kid, err := e.c.Describe(ctx, "slow-kid")
	if err != nil {
		t.Fatal(err)
	}
	if kid.Status != api.StatusFailed || kid.Error == nil || kid.Error.TimeoutType != api.TimeoutExecution {
		t.Fatalf("child %s, error %+v; parent saw %q", kid.Status, kid.Error, msg)
	}
	t.Logf("parent saw: %s", msg)
}
