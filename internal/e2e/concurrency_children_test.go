package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ConcurrencyChildParentFlow starts child "kid-1" under the key "kids"
// (limit 1), then "kid-2" under the same key with cancel_newest, which
// the key refuses; it signals kid-1 to end and returns the refused
// child's failure type and kid-1's result.
func ConcurrencyChildParentFlow(ctx workflow.Context) (string, error) {
	first := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "kid-1",
		Concurrency: &workflow.Concurrency{Key: "kids", Limit: 1}}), ConcurrencyGateFlow)
	if err := first.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return "", err
	}
	second := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "kid-2",
		Concurrency: &workflow.Concurrency{Key: "kids", Limit: 1, Strategy: workflow.ConcurrencyCancelNewest}}), ConcurrencyGateFlow)
	err := second.Get(ctx, nil)
	var ce *workflow.ChildWorkflowExecutionError
	if !errors.As(err, &ce) || ce.Failure == nil {
		return "", errors.New("kid-2 was not refused by its key")
	}
	if err := first.SignalChildWorkflow(ctx, "go", "done").Get(ctx, nil); err != nil {
		return "", err
	}
	var v string
	if err := first.Get(ctx, &v); err != nil {
		return "", err
	}
	return ce.Failure.Type + ":" + v, nil
}

// Goal: through the SDK, workflow.ChildWorkflowOptions.Concurrency
// reaches the server: a child runs under its key (describe shows it), a
// cancel_newest child past the limit is not started and its future fails
// with a ChildWorkflowExecutionError whose failure is LimitExceeded; and
// client.ScheduleWorkflowAction.Concurrency is stored with the schedule
// and given back by Describe.
func TestConcurrency_ChildAndScheduleSDKOptions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("cq", testOptions(), registers([]any{ConcurrencyChildParentFlow, ConcurrencyGateFlow}))
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "kid-parent", TaskQueue: "cq"}, ConcurrencyChildParentFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := result[string](t, run, 60*time.Second)
	if err != nil || v != api.ErrorTypeLimitExceeded+":done" {
		t.Fatalf("parent: %q, %v", v, err)
	}
	if w, err := e.c.Describe(ctx, "kid-1"); err != nil || w.Concurrency == nil || w.Concurrency.Key != "kids" {
		t.Fatalf("kid-1: %+v, %v", w.Concurrency, err)
	}
	if _, err := e.c.Describe(ctx, "kid-2"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("kid-2: %v, want not found", err)
	}

	limit := &client.Concurrency{Key: "nightly", Limit: 1, Strategy: client.ConcurrencyCancelNewest}
	h, err := e.c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: "keyed",
		Spec:   client.ScheduleSpec{CronExpressions: []string{"0 0 1 1 *"}},
		Action: &client.ScheduleWorkflowAction{Workflow: ConcurrencyGateFlow, TaskQueue: "cq", Concurrency: limit}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction); !ok || a.Concurrency == nil || *a.Concurrency != *limit {
		t.Fatalf("described action %+v", d.Schedule.Action)
	}
}
