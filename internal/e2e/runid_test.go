package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// RunIDChild returns its own workflow id.
func RunIDChild(ctx workflow.Context) (string, error) {
	return workflow.GetInfo(ctx).WorkflowExecution.ID, nil
}

// RunIDParent returns its run id and starts a child whose id is built from
// it, as Temporal code does (workflow.GetInfo(ctx).WorkflowExecution.RunID).
func RunIDParent(ctx workflow.Context) ([]string, error) {
	runID := workflow.GetInfo(ctx).WorkflowExecution.RunID
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:               "child-of-" + runID,
		WorkflowExecutionTimeout: time.Minute,
	})
	var childID string
	if err := workflow.ExecuteChildWorkflow(cctx, RunIDChild).Get(ctx, &childID); err != nil {
		return nil, err
	}
	return []string{runID, childID}, nil
}

// TestRunIDsAreUUIDs: a run id is a UUID of its own for every execution,
// the same in workflow.GetInfo, the client's WorkflowRun and describe, so
// that child ids built from it do not collide across parents (with run ids
// that were execution numbers, every parent's first run was "1").
func TestRunIDsAreUUIDs(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "runids", func(w worker.Worker) {
		must(t, w.AddWorkflow(RunIDParent))
		must(t, w.AddWorkflow(RunIDChild))
	})
	ctx := context.Background()
	seen := map[string]bool{}
	for _, id := range []string{"parent-a", "parent-b"} {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "runids"}, RunIDParent)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := uuid.Parse(run.GetRunID()); err != nil {
			t.Fatalf("%s: run id %q is not a UUID: %v", id, run.GetRunID(), err)
		}
		var out []string
		if err := run.Get(ctx, &out); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if out[0] != run.GetRunID() {
			t.Fatalf("%s: GetInfo's run id %q, the client's %q", id, out[0], run.GetRunID())
		}
		if out[1] != "child-of-"+run.GetRunID() || seen[out[1]] {
			t.Fatalf("%s: child id %q (seen before: %v)", id, out[1], seen[out[1]])
		}
		seen[out[1]] = true
		d, err := c.DescribeWorkflowExecution(ctx, id, run.GetRunID())
		if err != nil {
			t.Fatal(err)
		}
		if d.WorkflowExecutionInfo.Execution.RunId != run.GetRunID() {
			t.Fatalf("%s: describe's run id %q", id, d.WorkflowExecutionInfo.Execution.RunId)
		}
	}
}

// RunIDWaiter waits for the signal "go" and returns its value.
func RunIDWaiter(ctx workflow.Context) (string, error) {
	var v string
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, &v)
	return v, nil
}

// RunIDSignaller signals the workflow id's run runID.
func RunIDSignaller(ctx workflow.Context, id, runID string) error {
	return workflow.SignalExternalWorkflow(ctx, id, runID, "go", "by run id").Get(ctx, nil)
}

// TestSignalExternalByRunID: a workflow names another's execution by its
// run id (a UUID), as Temporal code passes WorkflowExecution.RunID.
func TestSignalExternalByRunID(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "runids", func(w worker.Worker) {
		must(t, w.AddWorkflow(RunIDWaiter))
		must(t, w.AddWorkflow(RunIDSignaller))
	})
	ctx := context.Background()
	target, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "waiter", TaskQueue: "runids"}, RunIDWaiter)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "signaller", TaskQueue: "runids"}, RunIDSignaller, "waiter", target.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	if err := sender.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := target.Get(ctx, &got); err != nil || got != "by run id" {
		t.Fatalf("target: %q, %v", got, err)
	}
}
