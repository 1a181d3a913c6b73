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

// Resumable records its progress with heartbeats; its first attempt fails
// after progress 3, the second resumes from the recorded details.
func Resumable(ctx context.Context, total int) (int, error) {
	start := 0
	if ok, err := activity.HeartbeatDetails(ctx, &start); err != nil {
		return 0, err
	} else if ok {
		start++
	}
	info := activity.GetInfo(ctx)
	if info.Deadline.IsZero() {
		return 0, errors.New("no deadline despite a start-to-close timeout")
	}
	for i := start; i < total; i++ {
		if err := activity.RecordHeartbeat(ctx, i); err != nil {
			return 0, err
		}
		if info.Attempt == 1 && i == 3 {
			time.Sleep(400 * time.Millisecond) // let a renewal carry the details
			return 0, errors.New("crash after 3")
		}
	}
	return start, nil
}

func ResumeFlow(ctx workflow.Context) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3},
	})
	return workflow.ExecuteActivityFunc(ctx, Resumable, 10).Get(ctx)
}

func TestHeartbeatDetailsResumeNextAttempt(t *testing.T) {
	e := newEnv(t)
	opts := testOptions()
	opts.ActivityLockDuration = time.Second // renew every ~330ms
	e.startWorker("q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(ResumeFlow), w.AddActivity(Resumable))
	})
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "resume", TaskQueue: "q"}, ResumeFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 30*time.Second)
	if err != nil || got != 4 {
		t.Fatalf("second attempt started at %d, %v; want 4 (after the heartbeat of 3)", got, err)
	}
}

type neverRun struct{ runs atomic.Int64 }

func (n *neverRun) NeverRun(ctx context.Context) error {
	n.runs.Add(1)
	return nil
}

// CancelAtOnce schedules an activity and cancels it in the same turn: its
// attempt is flagged before any worker fetches it.
func CancelAtOnce(ctx workflow.Context) (string, error) {
	cctx, cancel := workflow.WithCancel(ctx)
	f := workflow.ExecuteActivity(cctx, "NeverRun", nil)
	cancel()
	if err := f.Get(ctx, nil); !errors.Is(err, workflow.ErrCanceled) {
		return "", errors.New("not canceled")
	}
	// Give a worker time to fetch the flagged attempt.
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return "", err
	}
	return "done", nil
}

func TestAttemptFetchedCancelledIsNotRun(t *testing.T) {
	e := newEnv(t)
	n := &neverRun{}
	r := e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(CancelAtOnce), w.AddActivity(n.NeverRun))
	})
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "at-once", TaskQueue: "q"}, CancelAtOnce, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, run, 30*time.Second); err != nil || got != "done" {
		t.Fatalf("result %q, %v", got, err)
	}
	h := e.history("at-once")
	if count(h, api.EventActivityCancelRequested, "context_canceled") != 1 {
		t.Fatalf("history lacks the cancel: %+v", h)
	}
	waitFor(t, 10*time.Second, "the flagged attempt to be fetched", func() bool { return r.w.Stats().SkippedCanceled == 1 })
	if n.runs.Load() != 0 {
		t.Fatal("an attempt fetched cancelled was run")
	}
}
