package e2e

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// blocker is an activity that runs until its context is cancelled and
// reports the cancellation's cause.
type blocker struct {
	started chan string
	causes  chan error
	// release, when set, makes it ignore its context (non-cooperative)
	// until the channel is closed.
	release chan struct{}
	// returned counts the activities that returned.
	returned atomic.Int64
}

func newBlocker() *blocker {
	return &blocker{started: make(chan string, 16), causes: make(chan error, 16)}
}

func (b *blocker) Block(ctx context.Context) (string, error) {
	defer b.returned.Add(1)
	b.started <- activity.GetInfo(ctx).ActivityID
	if b.release != nil {
		<-b.release
		return "ignored cancellation", nil
	}
	<-ctx.Done()
	b.causes <- context.Cause(ctx)
	return "", context.Cause(ctx)
}

func (b *blocker) Cleanup(ctx context.Context, what string) (string, error) {
	return "cleaned " + what, nil
}

func SelectTimeoutFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	act := workflow.ExecuteActivity(ctx, "Block", nil)
	timer := workflow.NewTimer(ctx, 500*time.Millisecond)
	if workflow.Select(ctx, act, timer) == 0 {
		return "activity won", nil
	}
	if err := act.Get(ctx, nil); !errors.Is(err, workflow.ErrCanceled) {
		return "", err
	}
	return "timeout", nil
}

func registerBlocker(b *blocker) func(w worker.Worker) error {
	return func(w worker.Worker) error {
		return errors.Join(
			w.AddWorkflow(SelectTimeoutFlow),
			w.AddWorkflow(CancelFlow),
			w.AddActivity(b.Block),
			w.AddActivity(b.Cleanup),
		)
	}
}

func TestSelectTimerWinsCancelsActivity(t *testing.T) {
	e := newEnv(t)
	b := newBlocker()
	e.startWorker("q", testOptions(), registerBlocker(b))
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "sel", TaskQueue: "q"}, SelectTimeoutFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "timeout" {
		t.Fatalf("result %q, %v", got, err)
	}
	h := e.history("sel")
	if n := count(h, api.EventActivityCancelRequested, "select_loser:timeout"); n != 1 {
		t.Errorf("%d ActivityCancelRequested{select_loser:timeout} in history, want 1", n)
	}
	wantCanceled(t, b.causes, 20*time.Second, "select_loser:timeout", "the losing activity")
}

func CancelFlow(ctx workflow.Context) (string, error) {
	err := workflow.ExecuteActivity(ctx, "Block", nil).Get(ctx, nil)
	if !errors.Is(err, workflow.ErrCanceled) {
		return "", err
	}
	dc, _ := workflow.NewDisconnectedContext(ctx)
	var out string
	if err := workflow.ExecuteActivity(dc, "Cleanup", "tmp").Get(dc, &out); err != nil {
		return "", err
	}
	workflow.GetLogger(ctx).Info("cleanup done", "out", out)
	return "", ctx.Err()
}

func TestWorkflowCancel(t *testing.T) {
	e := newEnv(t)
	b := newBlocker()
	e.startWorker("q", testOptions(), registerBlocker(b))
	ctx := context.Background()
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "cancel-me", TaskQueue: "q"}, CancelFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.started:
	case <-time.After(20 * time.Second):
		t.Fatal("activity did not start")
	}
	if changed, err := e.c.Cancel(ctx, "cancel-me", "user said so"); err != nil || !changed {
		t.Fatalf("cancel: %v %v", changed, err)
	}
	if _, err := result[string](t, run, 30*time.Second); !errors.Is(err, client.ErrWorkflowCanceled) {
		t.Fatalf("result error %v, want ErrWorkflowCanceled", err)
	}
	wantCanceled(t, b.causes, 20*time.Second, "workflow_canceled", "the activity")
	h := e.history("cancel-me")
	if h[len(h)-1].Kind != api.EventWorkflowCanceled {
		t.Fatalf("history ends with %s", h[len(h)-1].Kind)
	}
	var cleanup bool
	for _, ev := range h {
		if ev.Kind == api.EventActivityCompleted && string(ev.Result) == `"cleaned tmp"` {
			cleanup = true
		}
	}
	if !cleanup || count(h, api.EventCancelRequested, "") != 1 || count(h, api.EventActivityCancelRequested, "workflow_canceled") != 1 {
		t.Fatalf("history lacks the cleanup or the cancel events: %+v", h)
	}
	if _, err := e.c.Cancel(ctx, "nope", ""); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("cancel of unknown instance: %v", err)
	}
}

// A non-cooperative activity is abandoned after the grace period: its
// attempt is acknowledged, the workflow goes on, and the goroutine's late
// result is dropped.
func TestNonCooperativeActivityAbandoned(t *testing.T) {
	e := newEnv(t)
	b := newBlocker()
	b.release = make(chan struct{})
	opts := testOptions()
	opts.CancelGracePeriod = 500 * time.Millisecond
	r := e.startWorker("q", opts, registerBlocker(b))
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "stubborn", TaskQueue: "q"}, SelectTimeoutFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "timeout" {
		t.Fatalf("result %q, %v", got, err)
	}
	waitFor(t, 10*time.Second, "the activity to be abandoned", func() bool { return r.w.Stats().Abandoned == 1 })
	if b.returned.Load() != 0 {
		t.Fatal("the activity returned before it was abandoned: the test proves nothing")
	}
	close(b.release)
	waitFor(t, 10*time.Second, "the abandoned goroutine to return", func() bool { return b.returned.Load() == 1 })
	h := e.history("stubborn")
	if n := count(h, api.EventActivityCompleted, ""); n != 0 {
		t.Fatalf("the late result was recorded (%d ActivityCompleted)", n)
	}
}
