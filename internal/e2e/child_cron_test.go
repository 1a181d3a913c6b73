package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// CronChildRun is one run of a cron child: it returns the number of runs
// so far, counted through the last completion result.
func CronChildRun(ctx workflow.Context, label string) (int, error) {
	last := 0
	if workflow.HasLastCompletionResult(ctx) {
		if err := workflow.GetLastCompletionResult(ctx, &last); err != nil {
			return 0, err
		}
	}
	return last + 1, nil
}

// CronChildParent starts CronChildRun as a cron child (Temporal's
// ChildWorkflowOptions.CronSchedule) and waits for it; a "stop" signal
// cancels the child. It returns how the child ended.
func CronChildParent(ctx workflow.Context) (string, error) {
	childCtx, cancel := workflow.WithCancel(ctx)
	childCtx = workflow.WithChildOptions(childCtx, workflow.ChildWorkflowOptions{
		WorkflowID:          workflow.GetInfo(ctx).WorkflowExecution.ID + "-child",
		CronSchedule:        "@every 1s",
		WaitForCancellation: true,
	})
	child := workflow.ExecuteChildWorkflow(childCtx, CronChildRun, "tick")
	var exec workflow.Execution
	if err := child.GetChildWorkflowExecution().Get(ctx, &exec); err != nil {
		return "", err
	}
	var childErr error
	done := false
	selector := workflow.NewSelector(ctx)
	selector.AddFuture(child, func(f workflow.Future) {
		var n int
		childErr, done = f.Get(ctx, &n), true
	})
	selector.AddReceive(workflow.GetSignalChannel(ctx, "stop"), func(c workflow.ReceiveChannel, more bool) {
		c.Receive(ctx, nil)
		cancel()
	})
	for !done {
		selector.Select(ctx)
	}
	switch {
	case childErr == nil:
		return "completed", nil
	case temporal.IsCanceledError(childErr):
		return "canceled", nil
	case temporal.IsTerminatedError(childErr):
		return "terminated", nil
	}
	return "", childErr
}

// TestChildCronSchedule: a child started with a CronSchedule runs as
// successive runs of one instance, each with the last run's result (as a
// cron workflow started by a client does); its parent sees it running
// through the runs, and learns of its end only when it is terminated, or
// canceled (between two runs) by the parent or a client.
func TestChildCronSchedule(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "cron-child", func(w worker.Worker) {
		w.RegisterWorkflow(CronChildParent)
		w.RegisterWorkflow(CronChildRun)
	})
	ctx := context.Background()
	for _, mode := range []string{"terminated", "canceled", "canceled-by-client"} {
		id := "cron-parent-" + mode
		stop := strings.TrimSuffix(mode, "-by-client")
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "cron-child"}, CronChildParent)
		if err != nil {
			t.Fatal(err)
		}
		var child *api.Workflow
		waitFor(t, 30*time.Second, "the cron child's second completed run", func() bool {
			child, err = e.c.Describe(ctx, id+"-child")
			return err == nil && string(child.Result) == "2"
		})
		if child.Status != api.StatusRunning || child.CronSchedule != "@every 1s" || child.ExecutionID < 3 {
			t.Fatalf("%s: child %+v: want running, with its schedule, at execution 3 or later", stop, child)
		}
		parent, err := e.c.Describe(ctx, id)
		if err != nil || parent.Status != api.StatusRunning {
			t.Fatalf("%s: the parent of a cron child that completed runs: %+v, %v; want running", stop, parent, err)
		}
		switch mode {
		case "terminated":
			err = c.TerminateWorkflow(ctx, id+"-child", "", "enough")
		case "canceled":
			err = c.SignalWorkflow(ctx, id, "", "stop", nil)
		default:
			err = c.CancelWorkflow(ctx, id+"-child", "")
		}
		if err != nil {
			t.Fatal(err)
		}
		var got string
		getCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = run.Get(getCtx, &got)
		cancel()
		if err != nil || got != stop {
			t.Fatalf("%s: parent: %q, %v; want %q", mode, got, err, stop)
		}
		child, err = e.c.Describe(ctx, id+"-child")
		if want := map[string]string{"terminated": api.StatusTerminated, "canceled": api.StatusCanceled}[stop]; err != nil || child.Status != want {
			t.Fatalf("child after %s: %+v, %v", stop, child, err)
		}
	}
}
