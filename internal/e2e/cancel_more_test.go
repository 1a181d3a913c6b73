package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// hangsOnce hangs on its first attempt until its context is cancelled (and
// reports the cause), and succeeds on later attempts.
type hangsOnce struct{ causes chan error }

func (f *hangsOnce) Slow(ctx context.Context) (string, error) {
	if activity.GetInfo(ctx).Attempt == 1 {
		<-ctx.Done()
		f.causes <- context.Cause(ctx)
		return "first attempt", nil // too late: the attempt was cancelled
	}
	return fmt.Sprint("attempt ", activity.GetInfo(ctx).Attempt), nil
}

func PerAttemptTimeoutFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 500 * time.Millisecond,
		RetryPolicy:         &workflow.RetryPolicy{InitialInterval: 50 * time.Millisecond, MaximumAttempts: 3},
	})
	var out string
	err := workflow.ExecuteActivity(ctx, "Slow", nil).Get(ctx, &out)
	return out, err
}

// Goal (seed runtime list): a retry with a per-attempt timeout cancels the
// timed-out attempt — its handler sees its context cancelled with reason
// timeout:start_to_close — and the next attempt runs; the first attempt's
// late result never reaches the workflow.
func TestPerAttemptTimeoutCancelsAttemptAndRetries(t *testing.T) {
	e := newEnv(t)
	f := &hangsOnce{causes: make(chan error, 4)}
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PerAttemptTimeoutFlow), w.AddActivity(f.Slow))
	})
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "pat", TaskQueue: "q"}, PerAttemptTimeoutFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "attempt 2" {
		t.Fatalf("result %q, %v; want the second attempt's", got, err)
	}
	wantCanceled(t, f.causes, 20*time.Second, "timeout:start_to_close", "the timed-out attempt")
	h := e.history("pat")
	var attemptCancel, completed []api.Event
	for _, ev := range h {
		switch ev.Kind {
		case api.EventActivityAttemptCancelRequested:
			attemptCancel = append(attemptCancel, ev)
		case api.EventActivityCompleted:
			completed = append(completed, ev)
		}
	}
	if len(attemptCancel) != 1 || attemptCancel[0].Attempt != 1 || attemptCancel[0].Reason != "timeout:start_to_close" {
		t.Fatalf("attempt cancels in history: %+v", attemptCancel)
	}
	if len(completed) != 1 || completed[0].Attempt != 2 {
		t.Fatalf("completions in history: %+v", completed)
	}
}

// lingering ignores cancellation until released, then returns a result.
type lingering struct {
	started chan struct{}
	release chan struct{}
	causes  chan error
}

func (l *lingering) Linger(ctx context.Context) (string, error) {
	l.started <- struct{}{}
	<-ctx.Done()
	l.causes <- context.Cause(ctx)
	<-l.release
	return "from execution 1", nil
}

func ContinueFlow(ctx workflow.Context, n int) (string, error) {
	if n == 1 {
		workflow.ExecuteActivity(ctx, "Linger", nil) // outstanding when we continue
		if err := workflow.Sleep(ctx, 200*time.Millisecond); err != nil {
			return "", err
		}
		return "", workflow.NewContinueAsNewError(ctx, ContinueFlow, 2)
	}
	var v string
	workflow.GetSignalChannel(ctx, "finish").Receive(ctx, &v)
	return "execution 2 finished", nil
}

// Goal (seed runtime list): continue-as-new cancels execution 1's
// outstanding activities (reason continued_as_new) and none of their
// results reach execution 2.
func TestContinueAsNewCancelsOldActivities(t *testing.T) {
	e := newEnv(t)
	l := &lingering{started: make(chan struct{}, 1), release: make(chan struct{}), causes: make(chan error, 1)}
	opts := testOptions()
	opts.CancelGracePeriod = 30 * time.Second // the activity returns late, inside its grace period
	e.startWorker("q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(ContinueFlow), w.AddActivity(l.Linger))
	})
	ctx := context.Background()
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "can", TaskQueue: "q"}, ContinueFlow, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantCanceled(t, l.causes, 20*time.Second, "continued_as_new", "execution 1's activity")
	close(l.release) // its result is now sent, and must be dropped
	waitFor(t, 10*time.Second, "execution 2", func() bool {
		d, err := e.c.Describe(ctx, "can")
		return err == nil && d.ExecutionID == 2
	})
	if err := e.c.Signal(ctx, "can", "finish", "now"); err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "execution 2 finished" {
		t.Fatalf("result %q, %v", got, err)
	}
	h2, err := e.c.History(ctx, "can", 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range h2.Events {
		if ev.ActivityID != 0 {
			t.Fatalf("execution 2's history has an activity event: %+v", ev)
		}
	}
	h1, err := e.c.History(ctx, "can", 1)
	if err != nil {
		t.Fatal(err)
	}
	if count(h1.Events, api.EventActivityCancelRequested, "continued_as_new") != 1 || count(h1.Events, api.EventActivityCompleted, "") != 0 {
		t.Fatalf("execution 1's history: %+v", h1.Events)
	}
}

// waiter blocks until cancelled and reports when it saw the cancellation.
type waiter struct {
	started chan string
	seen    chan time.Time
}

func (w *waiter) Wait(ctx context.Context) error {
	w.started <- activity.GetInfo(ctx).InstanceID
	<-ctx.Done()
	w.seen <- time.Now()
	return ctx.Err()
}

func WaitFlow(ctx workflow.Context) error {
	return workflow.ExecuteActivity(ctx, "Wait", nil).Get(ctx, nil)
}

// BenchmarkCancelDelivery: a workflow is cancelled while its activity runs
// on a worker whose lock renewal happens only every 30 s (lock 90 s); each
// op measures from the client's cancel request to the activity's context
// being cancelled — through the turn that consumes the cancel and the push
// to the worker. Reports p50 and p99.
func BenchmarkCancelDelivery(b *testing.B) {
	e := newEnv(b)
	w := &waiter{started: make(chan string, 1), seen: make(chan time.Time, 1)}
	opts := testOptions()
	opts.ActivityLockDuration = 90 * time.Second // renewals every 30 s
	opts.LeaseDuration = 90 * time.Second
	e.startWorker("q", opts, func(wk worker.Worker) error {
		return errors.Join(wk.AddWorkflow(WaitFlow), wk.AddActivity(w.Wait))
	})
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	var mu sync.Mutex
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		id := fmt.Sprint("cd-", i)
		if _, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "q"}, WaitFlow, nil); err != nil {
			b.Fatal(err)
		}
		<-w.started
		b.StartTimer()
		t0 := time.Now()
		if _, err := e.c.Cancel(ctx, id, "bench"); err != nil {
			b.Fatal(err)
		}
		select {
		case seen := <-w.seen:
			mu.Lock()
			lat = append(lat, seen.Sub(t0))
			mu.Unlock()
		case <-time.After(60 * time.Second):
			b.Fatal("cancellation not delivered")
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99-ms")
}
