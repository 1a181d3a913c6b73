package bench

import (
	"context"
	"errors"
	"time"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// The workflows and activities of the scenarios. Every bench worker, in
// a process of its own or in-process, registers all of them.

// stepOptions are the activity options of the short activities.
var stepOptions = workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second}

// OneStep is a workflow of one activity (throughput).
func OneStep(ctx workflow.Context, n int) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, stepOptions)
	err := workflow.ExecuteActivity(ctx, "Step", n).Get(ctx, &n)
	return n, err
}

// FanoutInput is the input of Fanout.
type FanoutInput struct {
	Width int           `json:"width"`
	Sleep time.Duration `json:"sleep"`
}

// Fanout runs Width activities of Sleep each in parallel and waits for all
// of them (fanout).
func Fanout(ctx workflow.Context, in FanoutInput) error {
	ctx = workflow.WithActivityOptions(ctx, stepOptions)
	fs := make([]workflow.Future, in.Width)
	for i := range fs {
		fs[i] = workflow.ExecuteActivity(ctx, "Nap", in.Sleep)
	}
	return workflow.All(ctx, fs...)
}

// Stamp is what Dispatch's activity saw of its attempt.
type Stamp struct {
	// ScheduledAt and StartedAt are the attempt's, on the database's clock.
	ScheduledAt time.Time `json:"scheduled_at"`
	StartedAt   time.Time `json:"started_at"`
	// RanAt is when the activity function began, on the worker's clock.
	RanAt time.Time `json:"ran_at"`
}

// Dispatch runs one activity that reports its attempt's times (dispatch).
func Dispatch(ctx workflow.Context) (Stamp, error) {
	ctx = workflow.WithActivityOptions(ctx, stepOptions)
	var s Stamp
	err := workflow.ExecuteActivity(ctx, "StampAttempt", nil).Get(ctx, &s)
	return s, err
}

// holdOptions are those of activities that run until cancelled: no
// timeout gets in the way of the measurement.
var holdOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Hour,
	RetryPolicy:         &workflow.RetryPolicy{MaximumAttempts: 1},
}

// Hold runs one activity that blocks until it is cancelled (cancel).
func Hold(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, holdOptions)
	return workflow.ExecuteActivity(ctx, "Wait", nil).Get(ctx, nil)
}

// LingerInput is the input of Linger.
type LingerInput struct {
	// Queue is the activity's task queue.
	Queue string `json:"queue"`
	// Hold is how long the first attempt runs (unless cancelled).
	Hold time.Duration `json:"hold"`
}

// Linger runs one activity on in.Queue whose first attempt runs for
// in.Hold and whose later attempts return at once (failover).
func Linger(ctx workflow.Context, in LingerInput) (string, error) {
	o := holdOptions
	o.TaskQueue = in.Queue
	o.RetryPolicy = &workflow.RetryPolicy{MaximumAttempts: 5, InitialInterval: 100 * time.Millisecond}
	ctx = workflow.WithActivityOptions(ctx, o)
	var who string
	err := workflow.ExecuteActivity(ctx, "Linger", in.Hold).Get(ctx, &who)
	return who, err
}

// Event is something a bench activity reports to the scenario.
type Event struct {
	// Kind is "started" (the activity function began) or "canceled" (it saw
	// its context cancelled).
	Kind       string
	InstanceID string
	Attempt    int32
	WorkerID   string
	// At is when it happened, on the worker's clock.
	At time.Time
}

// activities are the bench activities; report tells the scenario what
// happened (in a worker process: a line on stdout).
type activities struct {
	report func(Event)
}

func (a *activities) event(ctx context.Context, kind string, at time.Time) {
	if a.report == nil {
		return
	}
	info := activity.GetInfo(ctx)
	a.report(Event{Kind: kind, InstanceID: info.InstanceID, Attempt: info.Attempt, WorkerID: info.WorkerID, At: at})
}

// Step returns n+1.
func (a *activities) Step(_ context.Context, n int) (int, error) { return n + 1, nil }

// Nap sleeps for d (or until cancelled).
func (a *activities) Nap(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// StampAttempt returns its attempt's times.
func (a *activities) StampAttempt(ctx context.Context) (Stamp, error) {
	now := time.Now()
	info := activity.GetInfo(ctx)
	return Stamp{ScheduledAt: info.ScheduledAt, StartedAt: info.StartedAt, RanAt: now}, nil
}

// Wait reports its start and blocks until its context is cancelled, which
// it reports too.
func (a *activities) Wait(ctx context.Context) error {
	a.event(ctx, "started", time.Now())
	<-ctx.Done()
	a.event(ctx, "canceled", time.Now())
	return context.Cause(ctx)
}

// Linger reports its start; the first attempt then runs for d (or until
// cancelled), later attempts return at once. It returns its worker's id.
func (a *activities) Linger(ctx context.Context, d time.Duration) (string, error) {
	a.event(ctx, "started", time.Now())
	info := activity.GetInfo(ctx)
	if info.Attempt > 1 {
		return info.WorkerID, nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return info.WorkerID, nil
	case <-ctx.Done():
		a.event(ctx, "canceled", time.Now())
		return "", context.Cause(ctx)
	}
}

// register registers every bench workflow and activity on w.
func register(w worker.Worker, acts *activities) error {
	return errors.Join(
		w.AddWorkflow(OneStep),
		w.AddWorkflow(Fanout),
		w.AddWorkflow(Dispatch),
		w.AddWorkflow(Hold),
		w.AddWorkflow(Linger),
		w.AddActivity(acts.Step, worker.WithName("Step")),
		w.AddActivity(acts.Nap, worker.WithName("Nap")),
		w.AddActivity(acts.StampAttempt, worker.WithName("StampAttempt")),
		w.AddActivity(acts.Wait, worker.WithName("Wait")),
		w.AddActivity(acts.Linger, worker.WithName("Linger")),
	)
}
