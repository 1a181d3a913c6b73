package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

func TestClientAPI(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	// No worker serves "idle": the instances stay running.
	for i := 0; i < 5; i++ {
		if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("idle-%d", i), TaskQueue: "idle"}, "Idle", i); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "idle-0", TaskQueue: "idle"}, "Idle", nil)
	if !errors.Is(err, client.ErrAlreadyRunning) || !errors.Is(err, client.ErrConflict) {
		t.Fatalf("duplicate start: %v", err)
	}
	var pe *client.ProblemError
	if !errors.As(err, &pe) || pe.Status != http.StatusConflict || pe.Problem.Title == "" {
		t.Fatalf("problem %+v", pe)
	}

	_, err = e.c.StartWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: ""}, "Idle", nil)
	if !errors.Is(err, client.ErrInvalidRequest) || !errors.As(err, &pe) || len(pe.Problem.Errors) == 0 || pe.Problem.Errors[0].Field != "task_queue" {
		t.Fatalf("invalid start: %v (%+v)", err, pe)
	}

	if _, err := e.c.Describe(ctx, "missing"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("describe missing: %v", err)
	}
	d, err := e.c.Describe(ctx, "idle-3")
	if err != nil || d.Status != api.StatusRunning || d.WorkflowType != "Idle" || string(d.Input) != "3" {
		t.Fatalf("describe %+v, %v", d, err)
	}

	page, err := e.c.List(ctx, client.ListOptions{Limit: 2, Status: api.StatusRunning})
	if err != nil || len(page.Workflows) != 2 || page.NextPageToken == "" {
		t.Fatalf("first page %+v, %v", page, err)
	}
	seen := map[string]bool{}
	for w, err := range e.c.ListAll(ctx, client.ListOptions{Limit: 2, WorkflowType: "Idle"}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[w.InstanceID] {
			t.Fatalf("%s listed twice", w.InstanceID)
		}
		seen[w.InstanceID] = true
	}
	if len(seen) != 5 {
		t.Fatalf("listed %d instances, want 5", len(seen))
	}

	h, err := e.c.History(ctx, "idle-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = h // a running instance not yet turned may have an empty history

	if err := e.c.Delete(ctx, "idle-4", false); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("delete running without force: %v", err)
	}
	if err := e.c.Delete(ctx, "idle-4", true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Describe(ctx, "idle-4"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("describe deleted: %v", err)
	}

	if changed, err := e.c.Cancel(ctx, "idle-2", "first"); err != nil || !changed {
		t.Fatalf("cancel: %v %v", changed, err)
	}
	if changed, err := e.c.Cancel(ctx, "idle-2", "second"); err != nil || changed {
		t.Fatalf("second cancel: %v %v", changed, err)
	}

	// Get honours its context while the workflow runs.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := e.c.GetWorkflow(context.Background(), "idle-1", "").Get(short, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get on a running workflow: %v", err)
	}
}
