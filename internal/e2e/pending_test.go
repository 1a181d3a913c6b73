package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// describeHTTP describes instance id with a plain GET, as an operator's
// tool would.
func (e *env) describeHTTP(id string) api.Workflow {
	e.t.Helper()
	resp, err := http.Get(e.addr + "/v1/namespaces/default/workflows/" + id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("describe %s: %s", id, resp.Status)
	}
	var w api.Workflow
	if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
		e.t.Fatal(err)
	}
	return w
}

// AlwaysFails fails every attempt with a typed error.
func AlwaysFails(ctx context.Context) error {
	return activity.NewError("Flaky", "backend unavailable", nil)
}

// RetryForeverFlow runs AlwaysFails with a growing backoff and no bound.
func RetryForeverFlow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 3, MaximumInterval: time.Minute},
	})
	return workflow.ExecuteActivity(ctx, AlwaysFails).Get(ctx, nil)
}

// Goal: describe shows a failing activity's attempt, the previous
// attempt's failure (type, message, time) and its next retry time.
func TestPending_FailingActivity(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(RetryForeverFlow), w.AddActivity(AlwaysFails))
	})
	if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "pending-fail", TaskQueue: "q"}, RetryForeverFlow, nil); err != nil {
		t.Fatal(err)
	}
	var got api.PendingActivity
	waitFor(t, 30*time.Second, "an activity in backoff after two failures", func() bool {
		w := e.describeHTTP("pending-fail")
		if len(w.PendingActivities) != 1 {
			return false
		}
		got = w.PendingActivities[0]
		return got.State == api.PendingBackoff && got.Attempt >= 3
	})
	f := got.LastFailure
	if f == nil || f.Type != "Flaky" || f.Message != "backend unavailable" || f.At.IsZero() {
		t.Fatalf("last failure %+v, want Flaky: backend unavailable with its time", f)
	}
	if got.NextRetryAt == nil || !got.NextRetryAt.After(f.At) {
		t.Fatalf("next retry at %v, want after the failure at %v", got.NextRetryAt, f.At)
	}
	if got.ActivityType != "AlwaysFails" || got.MaximumAttempts != 0 || got.WorkerID != "" {
		t.Fatalf("pending activity %+v", got)
	}
}

// Heartbeater records its progress and runs until cancelled.
func Heartbeater(ctx context.Context) error {
	if err := activity.RecordHeartbeat(ctx, 42); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// HeartbeatAndTimerFlow runs Heartbeater with an hour's timer pending.
func HeartbeatAndTimerFlow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Hour})
	timer := workflow.NewTimer(ctx, time.Hour)
	act := workflow.ExecuteActivity(ctx, Heartbeater)
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.AddFuture(act, func(workflow.Future) {})
	sel.Select(ctx)
	return nil
}

// Goal: describe shows the worker holding a started activity, its last
// heartbeat and details, and a pending timer with its fire time.
func TestPending_HeartbeatAndTimer(t *testing.T) {
	e := newEnv(t)
	opts := testOptions()
	opts.Identity = "hb-worker"
	e.startWorker("q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(HeartbeatAndTimerFlow), w.AddActivity(Heartbeater))
	})
	if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "pending-hb", TaskQueue: "q"}, HeartbeatAndTimerFlow, nil); err != nil {
		t.Fatal(err)
	}
	var w api.Workflow
	waitFor(t, 30*time.Second, "a heartbeat on the pending activity", func() bool {
		w = e.describeHTTP("pending-hb")
		return len(w.PendingActivities) == 1 && w.PendingActivities[0].LastHeartbeatAt != nil
	})
	a := w.PendingActivities[0]
	if a.State != api.PendingStarted || a.WorkerID == "" || a.Attempt != 1 || a.StartedAt == nil || string(a.HeartbeatDetails) != "42" {
		t.Fatalf("pending activity %+v, details %s", a, a.HeartbeatDetails)
	}
	if w.PendingActivityCount != 1 || w.PendingTimerCount != 1 || len(w.PendingTimers) != 1 {
		t.Fatalf("counts: %d activities, %d timers (%+v)", w.PendingActivityCount, w.PendingTimerCount, w.PendingTimers)
	}
	if d := time.Until(w.PendingTimers[0].FireAt); d < 50*time.Minute || d > time.Hour {
		t.Fatalf("timer fires in %s, want about an hour", d)
	}
	if w.TaskFailing != nil {
		t.Fatalf("task failing %+v on a healthy workflow", w.TaskFailing)
	}
}

// PanickyFlow panics on every turn.
func PanickyFlow(ctx workflow.Context) error {
	panic("bad deploy")
}

// Goal: describe shows a workflow whose turns fail (a panic) with the
// attempt, the error and since when.
func TestPending_TaskFailing(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return w.AddWorkflow(PanickyFlow)
	})
	start := time.Now()
	if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "pending-panic", TaskQueue: "q"}, PanickyFlow, nil); err != nil {
		t.Fatal(err)
	}
	var w api.Workflow
	waitFor(t, 30*time.Second, "a turn that failed three times", func() bool {
		w = e.describeHTTP("pending-panic")
		return w.TaskFailing != nil && w.TaskFailing.Failures >= 3
	})
	f := w.TaskFailing
	if f.Attempt != f.Failures+1 || f.LastError == nil || f.LastError.Type != "Panic" || f.Since == nil {
		t.Fatalf("task failing %+v (error %+v)", f, f.LastError)
	}
	if f.Since.Before(start.Add(-time.Second)) || !f.Since.Before(w.UpdatedAt) {
		t.Fatalf("failing since %v: want the first failure, after the start %v and before the last at %v", f.Since, start, w.UpdatedAt)
	}
}

// PendingChildParent starts a WaitingChild and waits for it.
func PendingChildParent(ctx workflow.Context) error {
	f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "pending-kid"}), WaitingChild)
	return f.Get(ctx, nil)
}

// Goal: describe lists a running child of the execution with its state.
func TestPending_Child(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PendingChildParent), w.AddWorkflow(WaitingChild))
	})
	if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "pending-parent", TaskQueue: "q"}, PendingChildParent, nil); err != nil {
		t.Fatal(err)
	}
	var w api.Workflow
	waitFor(t, 30*time.Second, "the running child", func() bool {
		w = e.describeHTTP("pending-parent")
		return len(w.PendingChildren) == 1
	})
	k := w.PendingChildren[0]
	if k.InstanceID != "pending-kid" || k.WorkflowType != "WaitingChild" || k.State != api.PendingRunning ||
		k.ChildID < 1 || k.ExecutionID != 1 || w.PendingChildCount != 1 {
		t.Fatalf("pending child %+v (count %d)", k, w.PendingChildCount)
	}
}

// ManyPendingFlow schedules 105 activities on a queue nobody serves and
// waits for the first.
func ManyPendingFlow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: "nobody", StartToCloseTimeout: time.Minute})
	var fs []workflow.Future
	for range 105 {
		fs = append(fs, workflow.ExecuteActivity(ctx, "Unserved"))
	}
	return fs[0].Get(ctx, nil)
}

// Goal: describe lists at most api.MaxPendingListed pending activities,
// the first by id, and counts them all.
func TestPending_Bounded(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return w.AddWorkflow(ManyPendingFlow)
	})
	if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "pending-many", TaskQueue: "q"}, ManyPendingFlow, nil); err != nil {
		t.Fatal(err)
	}
	var w api.Workflow
	waitFor(t, 30*time.Second, "the scheduled activities", func() bool {
		w = e.describeHTTP("pending-many")
		return w.PendingActivityCount > 0
	})
	if w.PendingActivityCount != 105 || len(w.PendingActivities) != api.MaxPendingListed {
		t.Fatalf("%d listed of %d, want %d of 105", len(w.PendingActivities), w.PendingActivityCount, api.MaxPendingListed)
	}
	for i, a := range w.PendingActivities {
		if a.ActivityID != int64(i+1) || a.State != api.PendingScheduled || a.Attempt != 1 || a.TaskQueue != "nobody" {
			t.Fatalf("pending activity %d: %+v", i, a)
		}
	}
}

// Stuck runs until cancelled.
func Stuck(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// TimingOutFlow runs Stuck with a short StartToClose timeout and slow
// retries.
func TimingOutFlow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 300 * time.Millisecond,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: time.Minute, MaximumAttempts: 5},
	})
	return workflow.ExecuteActivity(ctx, Stuck).Get(ctx, nil)
}

// Goal: an attempt that timed out (found by the sweeper) is the retry's
// last failure, with its timeout type; the activity is listed once.
func TestPending_TimedOutAttempt(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(TimingOutFlow), w.AddActivity(Stuck))
	})
	if _, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "pending-timeout", TaskQueue: "q"}, TimingOutFlow, nil); err != nil {
		t.Fatal(err)
	}
	var w api.Workflow
	waitFor(t, 30*time.Second, "the retry of the timed-out attempt", func() bool {
		w = e.describeHTTP("pending-timeout")
		return len(w.PendingActivities) > 0 && w.PendingActivities[0].Attempt == 2
	})
	a := w.PendingActivities[0]
	if len(w.PendingActivities) != 1 || w.PendingActivityCount != 1 {
		t.Fatalf("%d activities listed (count %d), want 1: %+v", len(w.PendingActivities), w.PendingActivityCount, w.PendingActivities)
	}
	f := a.LastFailure
	if a.State != api.PendingBackoff || a.MaximumAttempts != 5 || f == nil || f.Type != api.ErrorTypeTimeout || f.TimeoutType != api.TimeoutStartToClose {
		t.Fatalf("pending activity %+v, last failure %+v", a, f)
	}
}
