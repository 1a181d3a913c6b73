package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// cronFlow counts its completed runs through the last completion result:
// each run returns the last one's plus one. The run that would return
// failAt fails once (failed, a test-level counter), so the next run still
// sees the result before it.
func cronFlow(failAt int, failed *atomic.Bool) func(ctx workflow.Context) (int, error) {
	return func(ctx workflow.Context) (int, error) {
		last := 0
		if workflow.HasLastCompletionResult(ctx) {
			if err := workflow.GetLastCompletionResult(ctx, &last); err != nil {
				return 0, err
			}
		} else if err := workflow.GetLastCompletionResult(ctx, &last); !errors.Is(err, workflow.ErrNoLastCompletionResult) {
			return 0, fmt.Errorf("no last result, but GetLastCompletionResult says %v", err)
		}
		if last+1 == failAt && failed.CompareAndSwap(false, true) {
			return 0, errors.New("this run fails")
		}
		return last + 1, nil
	}
}

// A cron workflow runs as successive executions of one instance, each
// started by the server at the schedule's next time with the last
// completed run's result; a failed run passes on the result before it;
// the runs replay from their histories; Cancel stops the cron.
func TestCronWorkflow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var failed atomic.Bool
	flow := cronFlow(3, &failed)
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return w.AddWorkflow(flow, worker.WithName("CronFlow"))
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "cron", TaskQueue: "q", CronSchedule: "@every 1s"}, "CronFlow", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Runs: 1 → 1, 2 → 2, 3 fails, 4 → 3, 5 → 4.
	var desc *api.Workflow
	waitFor(t, 60*time.Second, "the cron's fourth completed run", func() bool {
		desc, err = e.c.Describe(ctx, "cron")
		return err == nil && string(desc.Result) == "4"
	})
	if desc.Status != api.StatusRunning || desc.CronSchedule != "@every 1s" || desc.ExecutionID < 5 {
		t.Fatalf("instance %+v: want running, with its schedule, at execution 5 or later", desc)
	}
	outcome := map[int64]string{}
	for exec := int64(1); exec <= 5; exec++ {
		h, err := e.c.History(ctx, "cron", exec)
		if err != nil {
			t.Fatal(err)
		}
		ev := h.Events
		start, end := ev[0], ev[len(ev)-1]
		if start.Kind != api.EventWorkflowStarted {
			t.Fatalf("execution %d starts with %s", exec, start.Kind)
		}
		outcome[exec] = fmt.Sprintf("%s last=%s", end.Kind, start.LastCompletionResult)
		r := worker.NewWorkflowReplayer()
		if err := r.RegisterWorkflow(cronFlow(3, &atomic.Bool{}), worker.WithName("CronFlow")); err != nil {
			t.Fatal(err)
		}
		if err := r.ReplayWorkflowHistory(nil, ev); err != nil {
			t.Fatalf("replay of execution %d: %v", exec, err)
		}
	}
	want := map[int64]string{1: "WorkflowCompleted last=", 2: "WorkflowCompleted last=1", 3: "WorkflowFailed last=2",
		4: "WorkflowCompleted last=2", 5: "WorkflowCompleted last=3"}
	for exec, w := range want {
		if outcome[exec] != w {
			t.Fatalf("executions %v, want %v", outcome, want)
		}
	}
	if _, err := e.c.Cancel(ctx, "cron", "enough"); err != nil {
		t.Fatal(err)
	}
	if _, err := result[int](t, run, 30*time.Second); err == nil {
		t.Fatal("a cancelled cron returned no error")
	}
	desc, err = e.c.Describe(ctx, "cron")
	if err != nil || desc.Status != api.StatusCanceled {
		t.Fatalf("after cancel: %+v, %v; want canceled", desc, err)
	}
}

// A cron workflow cancelled before its first run (the schedule's next time
// is far away) ends at once, without running.
func TestCronCancelBeforeFirstRun(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var runs atomic.Int32
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return w.AddWorkflow(func(ctx workflow.Context) error { runs.Add(1); return nil }, worker.WithName("Yearly"))
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "yearly", TaskQueue: "q", CronSchedule: "0 0 1 1 *"}, "Yearly", nil)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := e.c.Cancel(ctx, "yearly", "not this year")
	if err != nil || !changed {
		t.Fatalf("cancel: %v, %v", changed, err)
	}
	if _, err := result[any](t, run, 10*time.Second); err == nil {
		t.Fatal("a cancelled cron returned no error")
	}
	desc, err := e.c.Describe(ctx, "yearly")
	if err != nil || desc.Status != api.StatusCanceled || runs.Load() != 0 {
		t.Fatalf("%+v, %v, %d runs; want canceled without a run", desc, err, runs.Load())
	}
}
