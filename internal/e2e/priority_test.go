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

// PriorityChild does nothing: its priority is what the test looks at.
func PriorityChild(ctx workflow.Context) error { return nil }

// PriorityActivity does nothing.
func PriorityActivity(ctx context.Context) error { return nil }

// PriorityParent runs a child without a priority (it inherits the
// parent's), a child with one, and an activity with one.
func PriorityParent(ctx workflow.Context) error {
	inherit := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "prio-inherit"})
	if err := workflow.ExecuteChildWorkflow(inherit, PriorityChild).Get(ctx, nil); err != nil {
		return err
	}
	own := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "prio-own",
		Priority: temporal.Priority{PriorityKey: 4}})
	if err := workflow.ExecuteChildWorkflow(own, PriorityChild).Get(ctx, nil); err != nil {
		return err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		Priority: temporal.Priority{PriorityKey: 5, FairnessKey: "batch"}})
	return workflow.ExecuteActivity(actx, PriorityActivity).Get(ctx, nil)
}

// Goal: Temporal's Priority on StartWorkflowOptions, ChildWorkflowOptions
// and ActivityOptions reaches the server: describe shows the workflow's
// and a child's own, a child without one inherits its parent's, and the
// activity's is in its ActivityScheduled options; a key out of bounds is a
// ProblemError naming priority.priority_key.
func TestPriority_SDKOptions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		if err := w.AddActivity(PriorityActivity); err != nil {
			return err
		}
		if err := w.AddWorkflow(PriorityParent); err != nil {
			return err
		}
		return w.AddWorkflow(PriorityChild)
	})
	prio := temporal.Priority{PriorityKey: 1, FairnessKey: "tenant-7", FairnessWeight: 2}
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "prio-parent", TaskQueue: "q", Priority: prio},
		PriorityParent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := result[any](t, run, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	want := api.Priority{PriorityKey: 1, FairnessKey: "tenant-7", FairnessWeight: 2}
	for id, w := range map[string]api.Priority{"prio-parent": want, "prio-inherit": want, "prio-own": {PriorityKey: 4}} {
		d, err := e.c.Describe(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Priority == nil || *d.Priority != w {
			t.Fatalf("%s: priority %+v, want %+v", id, d.Priority, w)
		}
	}
	var scheduled *api.Event
	for _, ev := range e.history("prio-parent") {
		if ev.Kind == api.EventActivityScheduled {
			scheduled = &ev
		}
	}
	if scheduled == nil || scheduled.Options == nil || scheduled.Options.Priority == nil ||
		*scheduled.Options.Priority != (api.Priority{PriorityKey: 5, FairnessKey: "batch"}) {
		t.Fatalf("ActivityScheduled %+v", scheduled)
	}

	_, err = e.c.StartWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "q", Priority: temporal.Priority{PriorityKey: 6}},
		PriorityParent, nil)
	var pe *client.ProblemError
	if !errors.As(err, &pe) || len(pe.Problem.Errors) == 0 || pe.Problem.Errors[0].Field != "priority.priority_key" {
		t.Fatalf("a priority key of 6: %v", err)
	}
}
