package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ApprovalFlow's update "approve" waits for the signal "release" before it
// answers; the workflow ends once the update has.
func ApprovalFlow(ctx workflow.Context) (string, error) {
	done := false
	if err := workflow.SetUpdateHandler(ctx, "approve", func(ctx workflow.Context, who string) (string, error) {
		workflow.GetSignalChannel(ctx, "release").Receive(ctx, nil)
		done = true
		return "approved by " + who, nil
	}); err != nil {
		return "", err
	}
	if err := workflow.Await(ctx, func() bool { return done }); err != nil {
		return "", err
	}
	return "closed", nil
}

// TestGetWorkflowUpdateHandle: an update sent with WaitForStage accepted is
// picked up by another handle, from its id alone (Temporal's
// GetWorkflowUpdateHandle), whose Get waits for the handler's result; an
// id never sent is ErrNotFound, and the handle sends nothing.
func TestGetWorkflowUpdateHandle(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "approvals", func(w worker.Worker) { must(t, w.AddWorkflow(ApprovalFlow)) })
	ctx := context.Background()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "approval-1", TaskQueue: "approvals"}, ApprovalFlow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "approval-1", UpdateID: "approve-1",
		UpdateName: "approve", Args: []any{"ada"}, WaitForStage: client.WorkflowUpdateStageAccepted}); err != nil {
		t.Fatal(err)
	}
	h := c.GetWorkflowUpdateHandle(client.GetWorkflowUpdateHandleOptions{WorkflowID: "approval-1", RunID: we.GetRunID(), UpdateID: "approve-1"})
	if h.WorkflowID() != "approval-1" || h.RunID() != we.GetRunID() || h.UpdateID() != "approve-1" {
		t.Fatalf("handle %s/%s/%s", h.WorkflowID(), h.RunID(), h.UpdateID())
	}
	// Not completed yet: a Get bounded by a short context ends with it.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	var out string
	err = h.Get(short, &out)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get before the update completed: %v, want the context's deadline", err)
	}
	if err := c.SignalWorkflow(ctx, "approval-1", "", "release", nil); err != nil {
		t.Fatal(err)
	}
	if err := h.Get(ctx, &out); err != nil || out != "approved by ada" {
		t.Fatalf("Get: %q, %v", out, err)
	}
	var res string
	if err := we.Get(ctx, &res); err != nil || res != "closed" {
		t.Fatalf("workflow: %q, %v", res, err)
	}
	missing := c.GetWorkflowUpdateHandle(client.GetWorkflowUpdateHandleOptions{WorkflowID: "approval-1", UpdateID: "never-sent"})
	if err := missing.Get(ctx, &out); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Get of an id never sent: %v, want ErrNotFound", err)
	}
}
