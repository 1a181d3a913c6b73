package e2e

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
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

// keyedWork counts the attempts of KeyedWork that run at once.
type keyedWork struct{ running, most, runs atomic.Int64 }

// KeyedWork holds its slot a moment (the activity's work), counting.
func (k *keyedWork) KeyedWork(ctx context.Context) error {
	n := k.running.Add(1)
	for m := k.most.Load(); n > m && !k.most.CompareAndSwap(m, n); m = k.most.Load() {
	}
	time.Sleep(30 * time.Millisecond)
	k.running.Add(-1)
	k.runs.Add(1)
	return nil
}

// KeyedActivitiesFlow runs six KeyedWork activities at once under the
// activity concurrency key "kw" (limit 2).
func KeyedActivitiesFlow(ctx workflow.Context) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		Concurrency: &workflow.Concurrency{Key: "kw", Limit: 2}})
	var fs []workflow.Future
	for range 6 {
		fs = append(fs, workflow.ExecuteActivity(actx, "KeyedWork"))
	}
	for _, f := range fs {
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// Goal: through the SDK and a real worker (whose activity slots exceed
// the limit), workflow.ActivityOptions.Concurrency holds the attempts of a
// key to its limit: six activities of a key limited to 2 all run, never
// more than two at once.
func TestConcurrency_ActivitySDKOption(t *testing.T) {
	e := newEnv(t)
	k := &keyedWork{}
	e.startWorker("kq", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(KeyedActivitiesFlow), w.AddActivity(k.KeyedWork))
	})
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "keyed-acts", TaskQueue: "kq"}, KeyedActivitiesFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := result[any](t, run, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	if k.runs.Load() != 6 || k.most.Load() > 2 {
		t.Fatalf("%d runs, at most %d at once; want 6, at most 2", k.runs.Load(), k.most.Load())
	}
}
