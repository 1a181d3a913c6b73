package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// flaky fails its first failures attempts, recording when each ran.
type flaky struct {
	failures int32
	mu       sync.Mutex
	attempts []time.Time
}

func (f *flaky) Flaky(ctx context.Context, in string) (string, error) {
	f.mu.Lock()
	f.attempts = append(f.attempts, time.Now())
	f.mu.Unlock()
	if a := activity.GetInfo(ctx).Attempt; a <= f.failures {
		return "", errors.New("transient failure")
	}
	return in + " ok", nil
}

func (f *flaky) Reject(ctx context.Context, in string) (string, error) {
	f.mu.Lock()
	f.attempts = append(f.attempts, time.Now())
	f.mu.Unlock()
	return "", activity.NewNonRetryableError("BadInput", "cannot use "+in, map[string]string{"field": "in"})
}

func RetryFlow(ctx workflow.Context, activityName string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &workflow.RetryPolicy{
			InitialInterval:    200 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Second,
			MaximumAttempts:    5,
		},
	})
	var out string
	err := workflow.ExecuteActivity(ctx, activityName, "x").Get(ctx, &out)
	return out, err
}

func registerFlaky(f *flaky) func(w worker.Worker) error {
	return func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(RetryFlow), w.AddActivity(f.Flaky), w.AddActivity(f.Reject))
	}
}

func TestRetriesWithBackoff(t *testing.T) {
	e := newEnv(t)
	f := &flaky{failures: 2}
	e.startWorker("q", testOptions(), registerFlaky(f))
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "retry", TaskQueue: "q"}, RetryFlow, "Flaky")
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "x ok" {
		t.Fatalf("result %q, %v", got, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.attempts) != 3 {
		t.Fatalf("%d attempts, want 3", len(f.attempts))
	}
	// Backoff: 200ms then 400ms (the server may round; allow some slack).
	if d := f.attempts[1].Sub(f.attempts[0]); d < 150*time.Millisecond {
		t.Fatalf("second attempt after %s, want about 200ms", d)
	}
	if d := f.attempts[2].Sub(f.attempts[1]); d < 300*time.Millisecond {
		t.Fatalf("third attempt after %s, want about 400ms", d)
	}
	h := e.history("retry")
	if count(h, api.EventActivityScheduled, "") != 1 || count(h, api.EventActivityFailed, "") != 0 {
		t.Fatal("retries leaked into the workflow's history")
	}
}

func TestNonRetryableError(t *testing.T) {
	e := newEnv(t)
	f := &flaky{}
	e.startWorker("q", testOptions(), registerFlaky(f))
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "reject", TaskQueue: "q"}, RetryFlow, "Reject")
	if err != nil {
		t.Fatal(err)
	}
	_, err = result[string](t, run, 30*time.Second)
	var wfe *client.WorkflowFailedError
	if !errors.As(err, &wfe) || wfe.Failure.Type != "BadInput" || !strings.Contains(wfe.Failure.Message, "cannot use x") {
		t.Fatalf("error %v, want a workflow failure of type BadInput", err)
	}
	var apiErr *api.Error
	if !errors.As(err, &apiErr) {
		t.Fatal("WorkflowFailedError does not unwrap to the api.Error")
	}
	f.mu.Lock()
	n := len(f.attempts)
	f.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d attempts of a non-retryable failure, want 1", n)
	}
	h := e.history("reject")
	var failed *api.Event
	for i := range h {
		if h[i].Kind == api.EventActivityFailed {
			failed = &h[i]
		}
	}
	if failed == nil || failed.Error.Type != "BadInput" || string(failed.Error.Details) != `{"field":"in"}` {
		t.Fatalf("ActivityFailed %+v", failed)
	}
}

func PanicWorkflow(ctx workflow.Context) error {
	var p *struct{ x int }
	_ = p.x // nil dereference
	return nil
}

func PanicActivity(ctx context.Context) error {
	panic("activity exploded")
}

func CallPanicActivity(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &workflow.RetryPolicy{MaximumAttempts: 1},
	})
	err := workflow.ExecuteActivity(ctx, PanicActivity, nil).Get(ctx, nil)
	var pe *workflow.PanicError
	if !errors.As(err, &pe) {
		return "", errors.New("want a PanicError, got " + err.Error())
	}
	return pe.Value + "|" + pe.Stack, nil
}

func TestPanics(t *testing.T) {
	e := newEnv(t)
	opts := testOptions()
	opts.WorkflowPanicPolicy = worker.FailWorkflow
	r := e.startWorker("q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(PanicWorkflow), w.AddWorkflow(CallPanicActivity),
			w.AddWorkflow(SequentialFlow), w.AddActivity(PanicActivity), w.AddActivity(Inc))
	})
	ctx := context.Background()

	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "panic-wf", TaskQueue: "q"}, PanicWorkflow, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = result[any](t, run, 30*time.Second)
	var wfe *client.WorkflowFailedError
	if !errors.As(err, &wfe) || wfe.Failure.Type != "Panic" || !strings.Contains(wfe.Failure.Stack, "PanicWorkflow") {
		t.Fatalf("panicking workflow: %v (%+v)", err, wfe)
	}

	run, err = e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "panic-act", TaskQueue: "q"}, CallPanicActivity, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || !strings.HasPrefix(got, "activity exploded|") || !strings.Contains(got, "PanicActivity") {
		t.Fatalf("panicking activity: %q, %v", got, err)
	}

	// The worker survived both and serves the next workflow.
	run, err = e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "after-panics", TaskQueue: "q"}, SequentialFlow, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := result[int](t, run, 30*time.Second); err != nil || n != 5 {
		t.Fatalf("workflow after panics: %d, %v", n, err)
	}
	if s := r.w.Stats(); s.ActivityFailures != 1 {
		t.Fatalf("stats %+v: want one failed attempt", s)
	}
}

// OrderFlow is the workflow before its fix: it runs an activity, then
// panics on the signal's value.
func OrderFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var n int
	if err := workflow.ExecuteActivity(ctx, Inc, 1).Get(ctx, &n); err != nil {
		return "", err
	}
	var items map[string]int
	var item string
	workflow.GetSignalChannel(ctx, "add").Receive(ctx, &item)
	items[item]++ //nolint:staticcheck // the bug under test: a nil map write
	return fmt.Sprint(n, items), nil
}

// OrderFlowFixed is the fixed code, registered under the same name.
func OrderFlowFixed(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var n int
	if err := workflow.ExecuteActivity(ctx, Inc, 1).Get(ctx, &n); err != nil {
		return "", err
	}
	items := map[string]int{}
	var item string
	workflow.GetSignalChannel(ctx, "add").Receive(ctx, &item)
	items[item]++
	return fmt.Sprintf("%d %v attempt>1:%v", n, items, workflow.GetInfo(ctx).Attempt > 1), nil
}

// TestPanicBlocksWorkflowUntilFixed: under the default panic policy
// (Temporal's BlockWorkflow) a panic fails the turn only. The server
// retries it with a backoff and shows the panic as last_task_error while
// the workflow stays running; a worker with the fixed code, registered
// under the same name, replays the history and completes the workflow.
func TestPanicBlocksWorkflowUntilFixed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	broken := e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(OrderFlow), w.AddActivity(Inc))
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "order-1", TaskQueue: "q"}, OrderFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the activity's result", func() bool {
		return count(e.history(run.ID()), api.EventActivityCompleted, "") == 1
	})
	if err := e.c.Signal(ctx, run.ID(), "add", "book"); err != nil {
		t.Fatal(err)
	}
	// The panicking turn is failed and retried (on the same, broken code).
	waitFor(t, 30*time.Second, "the turn failed and retried", func() bool { return broken.w.Stats().FailedTurns >= 2 })
	wfd, err := e.c.Describe(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	if wfd.Status != api.StatusRunning || wfd.LastTaskError == nil || wfd.LastTaskError.Type != "Panic" ||
		!strings.Contains(wfd.LastTaskError.Message, "nil map") {
		t.Fatalf("described %s, last task error %+v: want running with the panic", wfd.Status, wfd.LastTaskError)
	}
	h := e.history(run.ID())
	if n := count(h, api.EventWorkflowFailed, ""); n != 0 {
		t.Fatalf("the workflow failed: %+v", h)
	}
	broken.stop()

	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflowWithOptions(OrderFlowFixed, workflow.RegisterOptions{Name: "OrderFlow"}),
			w.AddActivity(Inc))
	})
	got, err := result[string](t, run, 30*time.Second)
	if err != nil || got != "2 map[book:1] attempt>1:true" {
		t.Fatalf("after the fix: %q, %v", got, err)
	}
	if n := count(e.history(run.ID()), api.EventActivityScheduled, ""); n != 1 {
		t.Fatalf("the fixed code ran the activity again: %d scheduled", n)
	}
}

// Versioned workflows: v1 is the original, v2 a change that breaks the
// running instance, both registered as "Versioned".
func VersionedV1(ctx workflow.Context) (int, error) {
	var n int
	if err := workflow.ExecuteActivity(ctx, Inc, 1).Get(ctx, &n); err != nil {
		return 0, err
	}
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	if err := workflow.ExecuteActivity(ctx, Square, n).Get(ctx, &n); err != nil {
		return 0, err
	}
	return n, nil
}

func VersionedV2(ctx workflow.Context) (int, error) {
	var n int
	if err := workflow.ExecuteActivity(ctx, Square, 1).Get(ctx, &n); err != nil { // was Inc
		return 0, err
	}
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	return n, nil
}

func TestNondeterminismDetectedAndFixed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	build := func(fn any) func(w worker.Worker) error {
		return func(w worker.Worker) error {
			return errors.Join(w.AddWorkflow(fn, worker.WithName("Versioned")), w.AddActivity(Inc), w.AddActivity(Square))
		}
	}
	v1 := e.startWorker("q", testOptions(), build(VersionedV1))
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "versioned", TaskQueue: "q"}, "Versioned", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the first activity to complete", func() bool {
		return count(e.history("versioned"), api.EventActivityCompleted, "") == 1 && v1.w.Stats().Turns >= 2
	})
	v1.stop()

	v2 := e.startWorker("q", testOptions(), build(VersionedV2))
	if err := e.c.Signal(ctx, "versioned", "go", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the nondeterminism to be reported", func() bool {
		d, err := e.c.Describe(ctx, "versioned")
		return err == nil && d.LastTaskError != nil && d.LastTaskError.Type == "Nondeterminism"
	})
	d, err := e.c.Describe(ctx, "versioned")
	if err != nil || d.Status != api.StatusRunning || !strings.Contains(d.LastTaskError.Message, `history has type "Inc"`) {
		t.Fatalf("describe %+v, %v", d, err)
	}
	if s := v2.w.Stats(); s.FailedTurns == 0 || s.Turns != 0 {
		t.Fatalf("v2 stats %+v", s)
	}
	v2.stop()

	e.startWorker("q", testOptions(), build(VersionedV1))
	n, err := result[int](t, run, 30*time.Second)
	if err != nil || n != 4 {
		t.Fatalf("result %d, %v; want 4", n, err)
	}
}

// TestNondeterminismFailsWorkflowUnderFailWorkflow: with the FailWorkflow
// panic policy a nondeterminism error fails the workflow (Temporal's), where
// the default policy fails the turn (TestNondeterminismDetectedAndFixed).
func TestNondeterminismFailsWorkflowUnderFailWorkflow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	build := func(fn any) func(w worker.Worker) error {
		return func(w worker.Worker) error {
			return errors.Join(w.AddWorkflow(fn, worker.WithName("Versioned")), w.AddActivity(Inc), w.AddActivity(Square))
		}
	}
	v1 := e.startWorker("q", testOptions(), build(VersionedV1))
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "versioned", TaskQueue: "q"}, "Versioned", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the first activity to complete", func() bool {
		return count(e.history("versioned"), api.EventActivityCompleted, "") == 1 && v1.w.Stats().Turns >= 2
	})
	v1.stop()

	opts := testOptions()
	opts.WorkflowPanicPolicy = worker.FailWorkflow
	e.startWorker("q", opts, build(VersionedV2))
	if err := e.c.Signal(ctx, "versioned", "go", nil); err != nil {
		t.Fatal(err)
	}
	_, err = result[int](t, run, 30*time.Second)
	var wfe *client.WorkflowFailedError
	if !errors.As(err, &wfe) || wfe.Failure.Type != "Nondeterminism" || !strings.Contains(wfe.Failure.Message, `history has type "Inc"`) {
		t.Fatalf("result error %v, want the workflow failed with the nondeterminism", err)
	}
}

func ShareFlow(ctx workflow.Context, n int) ([]string, error) {
	fs := make([]workflow.FutureOf[string], n)
	for i := range fs {
		fs[i] = workflow.ExecuteActivityT[string](ctx, "SlowWho", nil)
	}
	var out []string
	for _, f := range fs {
		v, err := f.Get(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func SlowWho(ctx context.Context) (string, error) {
	time.Sleep(50 * time.Millisecond)
	return activity.GetInfo(ctx).WorkerID, nil
}

func TestTwoWorkersShareTheLoad(t *testing.T) {
	e := newEnv(t)
	reg := func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(ShareFlow), w.AddActivity(SlowWho))
	}
	opts := testOptions()
	opts.MaxConcurrentActivities = 4
	a := e.startWorker("q", opts, reg)
	b := e.startWorker("q", opts, reg)
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "share", TaskQueue: "q"}, ShareFlow, 40)
	if err != nil {
		t.Fatal(err)
	}
	who, err := result[[]string](t, run, 60*time.Second)
	if err != nil || len(who) != 40 {
		t.Fatalf("result %v, %v", who, err)
	}
	byWorker := map[string]int{}
	for _, id := range who {
		byWorker[id]++
	}
	if byWorker[a.w.ID()] == 0 || byWorker[b.w.ID()] == 0 || len(byWorker) != 2 {
		t.Fatalf("activities per worker %v (a=%s b=%s)", byWorker, a.w.ID(), b.w.ID())
	}
}
