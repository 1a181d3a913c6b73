package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// doubler is the activity of the reset tests: it counts its runs.
type doubler struct{ runs atomic.Int32 }

// Double returns 2n.
func (d *doubler) Double(ctx context.Context, n int) (int, error) {
	d.runs.Add(1)
	return 2 * n, nil
}

// doubledFlow is a workflow that doubles n in an activity. The buggy
// build uses the activity's result wrongly and fails at its second turn;
// the fixed build returns it.
func doubledFlow(fixed bool) func(ctx workflow.Context, n int) (string, error) {
	return func(ctx workflow.Context, n int) (string, error) {
		var d int
		if err := workflow.ExecuteActivity(ctx, "Double", n).Get(ctx, &d); err != nil {
			return "", err
		}
		if !fixed {
			return "", fmt.Errorf("bug: %d taken for a string", d)
		}
		return fmt.Sprintf("doubled %d", d), nil
	}
}

// After a bad deploy: workflows that a buggy build failed at their second
// turn are reset once the fixed build runs — to the last turn (the
// activity's result is replayed, the activity does not run again), to the
// first turn (it runs again), to an event id — and complete with the
// fixed code; the old run ends with WorkflowReset and describe names the
// run it came from.
func TestResetAfterABadDeploy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &doubler{}
	startBuild := func(build string, fixed bool) *running {
		opts := testOptions()
		opts.BuildID = build
		return e.startWorker("orders", opts, func(w worker.Worker) error {
			return errors.Join(w.AddWorkflow(doubledFlow(fixed), worker.WithName("Doubled")),
				w.AddActivity(acts.Double, worker.WithName("Double")))
		})
	}
	bad := startBuild("v1", false)
	ids := []string{"last", "first", "event"}
	for _, id := range ids {
		run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "orders"}, "Doubled", 3)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := result[string](t, run, 30*time.Second); err == nil {
			t.Fatalf("%s: the buggy build's run did not fail", id)
		}
	}
	bad.stop()
	if n := acts.runs.Load(); n != 3 {
		t.Fatalf("activity ran %d times before the resets, want 3", n)
	}
	startBuild("v2", true)

	reset := func(id string, req client.ResetWorkflowExecutionRequest) string {
		t.Helper()
		req.WorkflowExecution = &common.WorkflowExecution{WorkflowId: id}
		req.Reason = "fixed in v2"
		resp, err := e.c.ResetWorkflowExecution(ctx, &req)
		if err != nil {
			t.Fatalf("reset %s: %v", id, err)
		}
		got, err := result[string](t, e.c.GetWorkflow(ctx, id, ""), 30*time.Second)
		if err != nil || got != "doubled 6" {
			t.Fatalf("%s after the reset: %q, %v; want the fixed build's result", id, got, err)
		}
		d, err := e.c.Describe(ctx, id)
		if err != nil || d.RunID != resp.GetRunId() || d.ExecutionID != 2 || d.ResetFrom == nil || d.ResetFrom.Reason != "fixed in v2" {
			t.Fatalf("%s: describe %+v (reset_from %+v), %v; want run %s", id, d, d.ResetFrom, err, resp.GetRunId())
		}
		old, err := e.c.History(ctx, id, 1)
		if err != nil {
			t.Fatal(err)
		}
		if last := old.Events[len(old.Events)-1]; last.Kind != api.EventWorkflowReset || last.NewRunID != resp.GetRunId() {
			t.Fatalf("%s: the old run ends with %+v", id, last)
		}
		return resp.GetRunId()
	}
	reset("last", client.ResetWorkflowExecutionRequest{ResetType: client.ResetTypeLastTurn})
	if n := acts.runs.Load(); n != 3 {
		t.Fatalf("a reset to the last turn ran the activity again (%d runs)", n)
	}
	reset("first", client.ResetWorkflowExecutionRequest{ResetType: client.ResetTypeFirstTurn})
	if n := acts.runs.Load(); n != 4 {
		t.Fatalf("a reset to the first turn ran the activity %d times in all, want 4", n)
	}
	// Event 2 (ActivityScheduled) ends the first turn: the same as
	// first_turn, named as Temporal names it.
	reset("event", client.ResetWorkflowExecutionRequest{WorkflowTaskFinishEventId: 2})
	if n := acts.runs.Load(); n != 5 {
		t.Fatalf("a reset to event 2 ran the activity %d times in all, want 5", n)
	}
	// A point that is not the end of a turn is refused, naming event_id.
	_, err := e.c.ResetWorkflowExecution(ctx, &client.ResetWorkflowExecutionRequest{
		WorkflowExecution: &common.WorkflowExecution{WorkflowId: "event"}, WorkflowTaskFinishEventId: 1})
	if field, _ := problemField(err); !errors.Is(err, client.ErrInvalidRequest) || field != "event_id" {
		t.Fatalf("reset to event 1: %v (field %q), want a 400 naming event_id", err, field)
	}
}

// A reset batch: every workflow a list query matches is reset to its last
// turn, each in its own transaction, and completes on the fixed build; a
// matching workflow that cannot be reset (no turn recorded yet) is
// counted failed with the reason and left as it was.
func TestBatchResetAfterABadDeploy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &doubler{}
	startBuild := func(fixed bool) *running {
		return e.startWorker("orders", testOptions(), func(w worker.Worker) error {
			return errors.Join(w.AddWorkflow(doubledFlow(fixed), worker.WithName("Doubled")),
				w.AddActivity(acts.Double, worker.WithName("Double")))
		})
	}
	bad := startBuild(false)
	ids := []string{"b-1", "b-2", "b-3"}
	for _, id := range ids {
		run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "orders"}, "Doubled", 3)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := result[string](t, run, 30*time.Second); err == nil {
			t.Fatalf("%s: the buggy build's run did not fail", id)
		}
	}
	bad.stop()
	// On a queue no worker polls: no turn to go back to.
	if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "b-0", TaskQueue: "nobody"}, "Doubled", 3); err != nil {
		t.Fatal(err)
	}
	startBuild(true)
	reapply := true
	b, err := e.c.StartBatch(ctx, client.BatchOptions{ID: "fix", Operation: api.BatchOpReset, Query: "WorkflowType = 'Doubled'",
		Reason: "fixed build", Reset: &api.BatchReset{ResetType: api.ResetLastTurn, ReapplySignals: &reapply}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Total != 4 || b.Reset == nil || b.Reset.ResetType != api.ResetLastTurn {
		t.Fatalf("batch %+v", b)
	}
	b = waitBatch(t, e.c, "fix", api.BatchCompleted)
	if b.Done != 3 || b.Failed != 1 || len(b.Failures) != 1 || b.Failures[0].WorkflowID != "b-0" ||
		!strings.Contains(b.Failures[0].Reason, "no turn recorded") {
		t.Fatalf("batch done %d failed %d failures %+v", b.Done, b.Failed, b.Failures)
	}
	for _, id := range ids {
		got, err := result[string](t, e.c.GetWorkflow(ctx, id, ""), 30*time.Second)
		if err != nil || got != "doubled 6" {
			t.Fatalf("%s after the batch reset: %q, %v", id, got, err)
		}
		d, err := e.c.Describe(ctx, id)
		if err != nil || d.ResetFrom == nil || d.ResetFrom.Reason != "fixed build" || d.ResetFrom.RequestID != "batch fix" {
			t.Fatalf("%s: describe %+v, %v", id, d, err)
		}
	}
	if n := acts.runs.Load(); n != 3 {
		t.Fatalf("the activity ran %d times, want 3 (the resets replay its results)", n)
	}
	// The workflow the batch could not reset is as it was.
	d, err := e.c.Describe(ctx, "b-0")
	if err != nil || d.ExecutionID != 1 || d.ResetFrom != nil || d.Status != api.StatusRunning {
		t.Fatalf("b-0 after the batch: %+v, %v", d, err)
	}
}

// panickyFlow is doubledFlow whose buggy build panics at its second turn
// (the workflow stays running, its turn failing and retried).
func panickyFlow(fixed bool) func(ctx workflow.Context, n int) (string, error) {
	return func(ctx workflow.Context, n int) (string, error) {
		var d int
		if err := workflow.ExecuteActivity(ctx, "Double", n).Get(ctx, &d); err != nil {
			return "", err
		}
		if !fixed {
			panic(fmt.Sprintf("bug: %d taken for a string", d))
		}
		return fmt.Sprintf("doubled %d", d), nil
	}
}

// A workflow whose second turn panics on the buggy build (pinned to it,
// its turn failing) is reset to its last recorded turn while it runs: the
// new run is pinned to no build, the fixed build's worker takes it and it
// completes; the old run ends with WorkflowReset.
func TestResetOfAWorkflowStuckOnAPanic(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &doubler{}
	startBuild := func(build string, fixed bool) *running {
		opts := testOptions()
		opts.BuildID = build
		return e.startWorker("orders", opts, func(w worker.Worker) error {
			return errors.Join(w.AddWorkflow(panickyFlow(fixed), worker.WithName("Panicky")),
				w.AddActivity(acts.Double, worker.WithName("Double")))
		})
	}
	bad := startBuild("v1", false)
	if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "stuck", TaskQueue: "orders"}, "Panicky", 3); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the second turn to fail", func() bool {
		d, err := e.c.Describe(ctx, "stuck")
		return err == nil && d.TaskFailing != nil
	})
	bad.stop()
	startBuild("v2", true)
	resp, err := e.c.ResetWorkflowExecution(ctx, &client.ResetWorkflowExecutionRequest{
		WorkflowExecution: &common.WorkflowExecution{WorkflowId: "stuck"}, ResetType: client.ResetTypeLastTurn, Reason: "v2"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, e.c.GetWorkflow(ctx, "stuck", ""), 30*time.Second)
	if err != nil || got != "doubled 6" {
		t.Fatalf("after the reset: %q, %v", got, err)
	}
	d, err := e.c.Describe(ctx, "stuck")
	if err != nil || d.RunID != resp.GetRunId() || d.TaskFailing != nil {
		t.Fatalf("describe %+v, %v", d, err)
	}
	old, err := e.c.History(ctx, "stuck", 1)
	if err != nil {
		t.Fatal(err)
	}
	if last := old.Events[len(old.Events)-1]; last.Kind != api.EventWorkflowReset || last.NewRunID != resp.GetRunId() {
		t.Fatalf("the old run ends with %+v", last)
	}
}
