package e2e

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// resumer is an activity that resumes from its heartbeat details.
type resumer struct {
	mu   sync.Mutex
	seen []string // per attempt: the details it started from ("" for none)
}

func (r *resumer) Resume(ctx context.Context) (int, error) {
	var from int
	ok, err := activity.HeartbeatDetails(ctx, &from)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	if ok {
		r.seen = append(r.seen, "from")
	} else {
		r.seen = append(r.seen, "")
	}
	r.mu.Unlock()
	if activity.GetInfo(ctx).Attempt == 1 {
		// Progress recorded right before failing, long before the next
		// lock renewal would carry it.
		if err := activity.RecordHeartbeat(ctx, 7); err != nil {
			return 0, err
		}
		return 0, errors.New("transient failure")
	}
	return from, nil
}

func FailFastResumeFlow(ctx workflow.Context) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 50 * time.Millisecond, MaximumAttempts: 3},
	})
	var out int
	err := workflow.ExecuteActivity(ctx, "Resume", nil).Get(ctx, &out)
	return out, err
}

// Goal: the heartbeat details an attempt recorded before it failed reach
// the next attempt, also when no lock renewal sent them.
func TestHeartbeatDetails_CarriedByTheFailure(t *testing.T) {
	e := newEnv(t)
	r := &resumer{}
	opts := testOptions()
	opts.ActivityLockDuration = 30 * time.Second // renewals every 10s: none during attempt 1
	e.startWorker("q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(FailFastResumeFlow), w.AddActivity(r.Resume))
	})
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "resume-fail-fast", TaskQueue: "q"}, FailFastResumeFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[int](t, run, 30*time.Second)
	if err != nil || got != 7 {
		t.Fatalf("result %d, %v; want 7 (attempt 2 resumes from attempt 1's details)", got, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) != 2 || r.seen[0] != "" || r.seen[1] != "from" {
		t.Fatalf("attempts started from %q, want [\"\" \"from\"]", r.seen)
	}
}
