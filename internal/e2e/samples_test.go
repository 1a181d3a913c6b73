package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Ports of Temporal Go samples (pickfirst, await-signals, greetings,
// greetingslocal, versioning), kept as close to the originals as the
// tests allow: each runs through the public SDK with real workers, then
// its history is replayed through the same code.

// ---------------------------------------------------------------------------
// pickfirst: two activities raced with a Selector; the loser is cancelled
// through its context.

// PickFirstActivities hold what the test observes of SampleActivity's
// branches.
type PickFirstActivities struct {
	mu       sync.Mutex
	canceled map[int]string // branch → the cancellation's reason
}

// SampleActivity is the pickfirst sample's activity: it works for
// duration, heartbeating, and returns early when it is cancelled.
func (a *PickFirstActivities) SampleActivity(ctx context.Context, branchID int, duration time.Duration) (string, error) {
	logger := activity.GetLogger(ctx)
	elapsedDuration := time.Nanosecond
	for elapsedDuration < duration {
		time.Sleep(20 * time.Millisecond) // the sample sleeps a second
		elapsedDuration += 20 * time.Millisecond

		// record heartbeat every step to check if we are been cancelled
		_ = activity.RecordHeartbeat(ctx, "status-report-to-workflow")

		select {
		case <-ctx.Done():
			// We have been cancelled.
			msg := fmt.Sprintf("Branch %d is cancelled.", branchID)
			logger.Info(msg)
			reason := "unknown"
			var ce *activity.CanceledError
			if errors.As(context.Cause(ctx), &ce) {
				reason = ce.Reason
			}
			a.mu.Lock()
			a.canceled[branchID] = reason
			a.mu.Unlock()
			return msg, ctx.Err()
		default:
			// We are not cancelled yet.
		}

		// Do some work
	}

	msg := fmt.Sprintf("Branch %d done in %s.", branchID, duration)
	return msg, nil
}

// SamplePickFirstWorkflow is the pickfirst sample's workflow.
func SamplePickFirstWorkflow(ctx workflow.Context) (string, error) {
	selector := workflow.NewSelector(ctx)
	var firstResponse string

	// Use one cancel handler to cancel all of them. Cancelling on parent handler will close all the child ones
	// as well.
	childCtx, cancelHandler := workflow.WithCancel(ctx)
	ao := workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		WaitForCancellation: true, // Wait for cancellation to complete.
	}
	childCtx = workflow.WithActivityOptions(childCtx, ao)

	var a *PickFirstActivities
	// Run two activities in parallel
	f1 := workflow.ExecuteActivity(childCtx, a.SampleActivity, 0, 100*time.Millisecond)
	f2 := workflow.ExecuteActivity(childCtx, a.SampleActivity, 1, 10*time.Minute)
	pendingFutures := []workflow.Future{f1, f2}
	selector.AddFuture(f1, func(f workflow.Future) {
		_ = f.Get(ctx, &firstResponse)
	}).AddFuture(f2, func(f workflow.Future) {
		_ = f.Get(ctx, &firstResponse)
	})

	// wait for any of the future to complete
	selector.Select(ctx)

	// now at least one future is complete, so cancel all other pending futures.
	cancelHandler()

	// The futures of the activities still running resolve with
	// ErrCanceled once their activity has returned (WaitForCancellation).
	var canceled int
	for _, f := range pendingFutures {
		if err := f.Get(ctx, nil); errors.Is(err, workflow.ErrCanceled) {
			canceled++
		}
	}
	workflow.GetLogger(ctx).Info("Workflow completed.")
	return fmt.Sprintf("%s canceled=%d", firstResponse, canceled), nil
}

func TestPickFirstSample(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &PickFirstActivities{canceled: map[int]string{}}
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(SamplePickFirstWorkflow), w.AddActivity(acts))
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "pickfirst", TaskQueue: "q"}, SamplePickFirstWorkflow, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Branch 0 done in 100ms. canceled=1"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	// The loser's handler saw its context cancelled and returned before
	// the workflow went on (WaitForCancellation): no wait needed.
	acts.mu.Lock()
	if _, ok := acts.canceled[0]; ok || acts.canceled[1] != api.CancelReasonContextCanceled {
		t.Fatalf("cancelled branches %v, want branch 1 alone, by its context", acts.canceled)
	}
	acts.mu.Unlock()
	h := e.history("pickfirst")
	var cancelled []int64
	for _, ev := range h {
		if ev.Kind == api.EventActivityCancelRequested {
			cancelled = append(cancelled, ev.ActivityID)
		}
	}
	if len(cancelled) != 1 || cancelled[0] != 2 || count(h, api.EventActivityCancelRequested, api.CancelReasonContextCanceled) != 1 {
		t.Fatalf("cancel requests for activities %v, want activity 2 (%s)", cancelled, api.CancelReasonContextCanceled)
	}
	// Its end is in history, after its cancel request.
	req := slices.IndexFunc(h, func(ev api.Event) bool { return ev.Kind == api.EventActivityCancelRequested })
	end := slices.IndexFunc(h, func(ev api.Event) bool { return ev.Kind == api.EventActivityCanceled && ev.ActivityID == 2 })
	if end < req || count(h, api.EventActivityCanceled, "") != 1 {
		t.Fatalf("ActivityCanceled of activity 2 at %d, its ActivityCancelRequested at %d", end, req)
	}
	e.replayClean("pickfirst", SamplePickFirstWorkflow)
}

// ---------------------------------------------------------------------------
// await-signals: the workflow awaits conditions on state that signal
// handlers set, whatever order the signals come in.

// AwaitSignals expects three signals in any order.
type AwaitSignals struct {
	FirstSignalTime time.Time
	Signal1Received bool
	Signal2Received bool
	Signal3Received bool
}

// Listen to signals Signal1, Signal2, and Signal3.
func (a *AwaitSignals) Listen(ctx workflow.Context) {
	log := workflow.GetLogger(ctx)
	for {
		selector := workflow.NewSelector(ctx)
		selector.AddReceive(workflow.GetSignalChannel(ctx, "Signal1"), func(c workflow.ReceiveChannel, more bool) {
			c.Receive(ctx, nil)
			a.Signal1Received = true
			log.Info("Signal1 Received")
		})
		selector.AddReceive(workflow.GetSignalChannel(ctx, "Signal2"), func(c workflow.ReceiveChannel, more bool) {
			c.Receive(ctx, nil)
			a.Signal2Received = true
			log.Info("Signal2 Received")
		})
		selector.AddReceive(workflow.GetSignalChannel(ctx, "Signal3"), func(c workflow.ReceiveChannel, more bool) {
			c.Receive(ctx, nil)
			a.Signal3Received = true
			log.Info("Signal3 Received")
		})
		selector.Select(ctx)
		if ctx.Err() != nil {
			return
		}
		if a.FirstSignalTime.IsZero() {
			a.FirstSignalTime = workflow.Now(ctx)
		}
	}
}

// GetNextTimeout returns the maximum time allowed to wait for the next
// signal.
func (a *AwaitSignals) GetNextTimeout(ctx workflow.Context, timeout time.Duration) (time.Duration, error) {
	if a.FirstSignalTime.IsZero() {
		panic("FirstSignalTime is not yet set")
	}
	total := workflow.Now(ctx).Sub(a.FirstSignalTime)
	totalLeft := timeout - total
	if totalLeft <= 0 {
		return 0, workflow.NewError("timeout", fmt.Sprintf("FirstSignalTime: %v, Now: %v", a.FirstSignalTime, workflow.Now(ctx)), nil)
	}
	return totalLeft, nil
}

// AwaitSignalsWorkflow waits for Signal1, Signal2 and Signal3, in this
// order, whatever order they arrive in; Signal2 and Signal3 must come
// within timeout of the first signal.
func AwaitSignalsWorkflow(ctx workflow.Context, timeout time.Duration) (err error) {
	log := workflow.GetLogger(ctx)
	var a AwaitSignals
	// Listen to signals in a different goroutine
	workflow.Go(ctx, a.Listen)

	// Wait for Signal1
	err = workflow.Await(ctx, func() bool {
		return a.Signal1Received
	})
	// Cancellation is the only error returned by Await
	if err != nil {
		return
	}
	log.Info("Signal1 Processed")

	// Wait for Signal2
	t, err := a.GetNextTimeout(ctx, timeout)
	// Timeout
	if err != nil {
		return
	}
	ok, err := workflow.AwaitWithTimeout(ctx, t, func() bool {
		return a.Signal2Received
	})
	// Cancellation
	if err != nil {
		return
	}
	// Timeout
	if !ok {
		return workflow.NewError("timeout", "Timed out waiting for signal2", nil)
	}
	log.Info("Signal2 Processed")

	// Wait for Signal3
	t, err = a.GetNextTimeout(ctx, timeout)
	// Timeout
	if err != nil {
		return
	}
	ok, err = workflow.AwaitWithTimeout(ctx, t, func() bool {
		return a.Signal3Received
	})
	// Cancellation
	if err != nil {
		return
	}
	// Timeout
	if !ok {
		return workflow.NewError("timeout", "Timed out waiting for signal3", nil)
	}
	log.Info("Signal3 Processed")
	return nil
}

func TestAwaitSignalsSample(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(AwaitSignalsWorkflow) })

	// Out of order, each in its own turn: the workflow waits for Signal1.
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "await-signals", TaskQueue: "q"}, AwaitSignalsWorkflow, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"Signal3", "Signal2", "Signal1"} {
		if i == 2 {
			// The built-in stack_trace query shows where each goroutine
			// waits (asked before the last signal, which ends the
			// workflow's root).
			v, err := e.c.QueryWorkflow(ctx, "await-signals", "", workflow.StackTraceQuery)
			if err != nil {
				t.Fatal(err)
			}
			var trace string
			if err := v.Get(&trace); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"coroutine root [blocked]:", "e2e.AwaitSignalsWorkflow(", "e2e.(*AwaitSignals).Listen("} {
				if !strings.Contains(trace, want) {
					t.Fatalf("stack_trace lacks %q:\n%s", want, trace)
				}
			}
		}
		if err := e.c.Signal(ctx, "await-signals", name, nil); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			// The signal is consumed by a turn before the next is sent.
			waitFor(t, 30*time.Second, name+" to be consumed", func() bool {
				return count(e.history("await-signals"), api.EventSignalReceived, "") == i+1
			})
			d, err := e.c.Describe(ctx, "await-signals")
			if err != nil || d.Status != api.StatusRunning {
				t.Fatalf("after %s: %+v, %v; want running", name, d, err)
			}
		}
	}
	if _, err := result[struct{}](t, run, 60*time.Second); err != nil {
		t.Fatalf("await-signals: %v", err)
	}
	e.replayClean("await-signals", AwaitSignalsWorkflow)

	// Signal1 alone: waiting for Signal2 times out on a durable timer.
	run, err = e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "await-timeout", TaskQueue: "q"}, AwaitSignalsWorkflow, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.Signal(ctx, "await-timeout", "Signal1", nil); err != nil {
		t.Fatal(err)
	}
	_, err = result[struct{}](t, run, 60*time.Second)
	if err == nil || !strings.Contains(err.Error(), "Timed out waiting for signal2") {
		t.Fatalf("err %v, want the timeout waiting for signal2", err)
	}
	if n := count(e.history("await-timeout"), api.EventTimerFired, ""); n != 1 {
		t.Fatalf("%d timers fired, want 1", n)
	}
	e.replayClean("await-timeout", AwaitSignalsWorkflow)
}

// ---------------------------------------------------------------------------
// greetings and greetingslocal: the activities of a struct, registered at
// once, called through a nil pointer of the struct, as ordinary and as
// local activities.

// GreetingActivities are the greetings samples' activities (the sample's
// Activities).
type GreetingActivities struct {
	Name     string
	Greeting string
}

// GetName returns the name to greet.
func (a *GreetingActivities) GetName() (string, error) { return a.Name, nil }

// GetGreeting returns the greeting.
func (a *GreetingActivities) GetGreeting() (string, error) { return a.Greeting, nil }

// SayGreeting greets name.
func (a *GreetingActivities) SayGreeting(greeting string, name string) (string, error) {
	result := fmt.Sprintf("Greeting: %s %s!\n", greeting, name)
	return result, nil
}

// GreetingSample is the greetings sample's workflow.
func GreetingSample(ctx workflow.Context) (string, error) {
	logger := workflow.GetLogger(ctx)

	ao := workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
	}
	ctx = workflow.WithActivityOptions(ctx, ao)

	var a *GreetingActivities // use a nil struct pointer to call activities that are part of a structure

	var greetResult string
	err := workflow.ExecuteActivity(ctx, a.GetGreeting).Get(ctx, &greetResult)
	if err != nil {
		logger.Error("Get greeting failed.", "Error", err)
		return "", err
	}

	// Get Name.
	var nameResult string
	err = workflow.ExecuteActivity(ctx, a.GetName).Get(ctx, &nameResult)
	if err != nil {
		logger.Error("Get name failed.", "Error", err)
		return "", err
	}

	// Say Greeting.
	var sayResult string
	err = workflow.ExecuteActivity(ctx, a.SayGreeting, greetResult, nameResult).Get(ctx, &sayResult)
	if err != nil {
		logger.Error("Marshalling failed with error.", "Error", err)
		return "", err
	}

	logger.Info("GreetingSample completed.", "Result", sayResult)
	return sayResult, nil
}

// GreetingLocalSample is the greetingslocal sample's workflow (the
// sample's GreetingSample): the greetings sample's three calls as local
// activities, of methods on a nil struct pointer, written as one loop
// rather than three copies of GreetingSample's blocks.
func GreetingLocalSample(ctx workflow.Context) (string, error) {
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{ScheduleToCloseTimeout: 10 * time.Second})
	var a *GreetingActivities // use a nil struct pointer to call activities that are part of a structure
	var greeting, name, said string
	for _, call := range []func() error{
		func() error { return workflow.ExecuteLocalActivity(ctx, a.GetGreeting).Get(ctx, &greeting) },
		func() error { return workflow.ExecuteLocalActivity(ctx, a.GetName).Get(ctx, &name) },
		func() error { return workflow.ExecuteLocalActivity(ctx, a.SayGreeting, greeting, name).Get(ctx, &said) },
	} {
		if err := call(); err != nil {
			workflow.GetLogger(ctx).Error("Local activity failed.", "Error", err)
			return "", err
		}
	}
	return said, nil
}

func TestGreetingsSamples(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	activities := &GreetingActivities{Name: "Temporal", Greeting: "Hello"}
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(GreetingSample), w.AddWorkflow(GreetingLocalSample), w.AddActivity(activities))
	})
	for _, c := range []struct {
		id    string
		fn    any
		kinds map[string]int
	}{
		{"greetings", GreetingSample, map[string]int{api.EventActivityScheduled: 3, api.EventActivityCompleted: 3, api.EventMarkerRecorded: 0}},
		{"greetingslocal", GreetingLocalSample, map[string]int{api.EventActivityScheduled: 0, api.EventMarkerRecorded: 3}},
	} {
		run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: c.id, TaskQueue: "q"}, c.fn, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := result[string](t, run, 60*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if want := "Greeting: Hello Temporal!\n"; got != want {
			t.Fatalf("%s: result %q, want %q", c.id, got, want)
		}
		h := e.history(c.id)
		for kind, n := range c.kinds {
			if got := count(h, kind, ""); got != n {
				t.Fatalf("%s: %d %s events, want %d", c.id, got, kind, n)
			}
		}
		e.replayClean(c.id, c.fn)
	}
}

// ---------------------------------------------------------------------------
// versioning: a workflow changed with GetVersion while an instance runs.
// The three versions of the code are registered under one name.

// VersioningActivities record which steps ran.
type VersioningActivities struct {
	mu    sync.Mutex
	steps []string
}

// Step records name and returns it.
func (a *VersioningActivities) Step(name string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.steps = append(a.steps, name)
	return name, nil
}

// VersioningV1 is the original code: the old step, then a signal.
func VersioningV1(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var a *VersioningActivities
	var step string
	if err := workflow.ExecuteActivity(ctx, a.Step, "old").Get(ctx, &step); err != nil {
		return "", err
	}
	workflow.GetSignalChannel(ctx, "finish").Receive(ctx, nil)
	return step, nil
}

// VersioningV2 replaces the old step with a new one behind GetVersion;
// executions that ran the old step keep it.
func VersioningV2(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var a *VersioningActivities
	var step string
	v := workflow.GetVersion(ctx, "new-step", workflow.DefaultVersion, 1)
	if v == workflow.DefaultVersion {
		if err := workflow.ExecuteActivity(ctx, a.Step, "old").Get(ctx, &step); err != nil {
			return "", err
		}
	} else {
		if err := workflow.ExecuteActivity(ctx, a.Step, "new").Get(ctx, &step); err != nil {
			return "", err
		}
	}
	workflow.GetSignalChannel(ctx, "finish").Receive(ctx, nil)
	return fmt.Sprintf("%s v%d", step, v), nil
}

// VersioningV3 drops the old step once no execution needs it: the
// minimum supported version is 1.
func VersioningV3(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var a *VersioningActivities
	var step string
	v := workflow.GetVersion(ctx, "new-step", 1, 1)
	if err := workflow.ExecuteActivity(ctx, a.Step, "new").Get(ctx, &step); err != nil {
		return "", err
	}
	workflow.GetSignalChannel(ctx, "finish").Receive(ctx, nil)
	return fmt.Sprintf("%s v%d", step, v), nil
}

func TestVersioningSample(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &VersioningActivities{}
	build := func(fn any) func(w worker.Worker) error {
		return func(w worker.Worker) error {
			return errors.Join(w.AddWorkflow(fn, worker.WithName("Versioning")), w.AddActivity(acts))
		}
	}
	start := func(id string) client.WorkflowRun {
		t.Helper()
		run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "q"}, "Versioning", nil)
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	waitStep := func(id string) {
		t.Helper()
		waitFor(t, 30*time.Second, id+" to wait for its signal", func() bool {
			return count(e.history(id), api.EventActivityCompleted, "") == 1
		})
	}
	signal := func(id string) {
		t.Helper()
		if err := e.c.Signal(ctx, id, "finish", nil); err != nil {
			t.Fatal(err)
		}
	}

	// Two instances run the old step under v1 and wait.
	v1 := e.startWorker("q", testOptions(), build(VersioningV1))
	old, stuck := start("old"), start("stuck")
	waitStep("old")
	waitStep("stuck")
	v1.stop()

	// v2 replays the old instance on the DefaultVersion branch; a new
	// instance takes the new branch.
	v2 := e.startWorker("q", testOptions(), build(VersioningV2))
	fresh := start("new")
	waitStep("new")
	signal("old")
	signal("new")
	if got, err := result[string](t, old, 60*time.Second); err != nil || got != "old v-1" {
		t.Fatalf("old instance: %q, %v; want the old step on DefaultVersion", got, err)
	}
	if got, err := result[string](t, fresh, 60*time.Second); err != nil || got != "new v1" {
		t.Fatalf("new instance: %q, %v; want the new step on version 1", got, err)
	}
	var markers []string
	for _, ev := range e.history("new") {
		if ev.Kind == api.EventMarkerRecorded {
			markers = append(markers, fmt.Sprintf("%s/%s=%s", ev.MarkerName, ev.MarkerID, ev.MarkerDetails))
		}
	}
	if len(markers) != 1 || markers[0] != "Version/new-step=1" {
		t.Fatalf("markers of the new instance %v, want Version/new-step=1", markers)
	}
	if n := count(e.history("old"), api.EventMarkerRecorded, ""); n != 0 {
		t.Fatalf("the old instance recorded %d markers, want none", n)
	}
	v2.stop()

	// v3 no longer supports DefaultVersion: the instance still on it
	// fails its turn with the change named, and stays running.
	v3 := e.startWorker("q", testOptions(), build(VersioningV3))
	signal("stuck")
	waitFor(t, 30*time.Second, "the unsupported version to be reported", func() bool {
		d, err := e.c.Describe(ctx, "stuck")
		return err == nil && d.LastTaskError != nil && d.LastTaskError.Type == "Nondeterminism"
	})
	d, err := e.c.Describe(ctx, "stuck")
	if err != nil || d.Status != api.StatusRunning ||
		!strings.Contains(d.LastTaskError.Message, `GetVersion "new-step": version -1 is not supported by this code (supported: 1 to 1)`) {
		t.Fatalf("describe %+v, %v", d, err)
	}
	v3.stop()

	// Back on v2, the instance finishes on the old branch.
	e.startWorker("q", testOptions(), build(VersioningV2))
	if got, err := result[string](t, stuck, 60*time.Second); err != nil || got != "old v-1" {
		t.Fatalf("stuck instance: %q, %v; want the old step on DefaultVersion", got, err)
	}
	acts.mu.Lock()
	steps := strings.Join(acts.steps, ",")
	acts.mu.Unlock()
	if steps != "old,old,new" {
		t.Fatalf("steps %s, want old,old,new (replays run no activity)", steps)
	}
	replay := func(id string, fn any) error {
		r := worker.NewWorkflowReplayer()
		if err := r.RegisterWorkflow(fn, worker.WithName("Versioning")); err != nil {
			t.Fatal(err)
		}
		return r.ReplayWorkflowHistory(nil, e.history(id))
	}
	for _, id := range []string{"old", "new", "stuck"} {
		if err := replay(id, VersioningV2); err != nil {
			t.Fatalf("replay of %s through v2: %v", id, err)
		}
	}
	var nd *workflow.NondeterminismError
	if err := replay("old", VersioningV3); !errors.As(err, &nd) {
		t.Fatalf("replay of old through v3: %v, want a NondeterminismError", err)
	}
	if err := replay("new", VersioningV3); err != nil {
		t.Fatalf("replay of new through v3: %v", err)
	}
}

// ---------------------------------------------------------------------------
// ActivityOptions.WaitForCancellation (Temporal's semantics). With false the
// future resolves with ErrCanceled as soon as the cancellation is decided;
// with true it waits for the activity to react: the workflow sees the
// activity's real end (a result, or ActivityCanceled for a
// context.Canceled error) only after its cleanup, and history records
// ActivityCancelRequested before that outcome (docs/sdk.md,
// docs/cancellation.md).

// CleanupActivities is a heartbeating activity that cleans up when it is
// cancelled; the test releases its cleanup.
type CleanupActivities struct {
	started  map[string]chan struct{}
	observed map[string]chan string // the cancellation's reason
	release  map[string]chan struct{}
	cleaned  map[string]chan struct{}
}

// Work heartbeats until it is cancelled, then cleans up before returning:
// with setting "true-result" it returns a result, otherwise the context's
// error.
func (a *CleanupActivities) Work(ctx context.Context, setting string) (string, error) {
	close(a.started[setting])
	for {
		select {
		case <-time.After(20 * time.Millisecond):
			_ = activity.RecordHeartbeat(ctx, "working")
			continue
		case <-ctx.Done():
		}
		break
	}
	reason := "unknown"
	var ce *activity.CanceledError
	if errors.As(context.Cause(ctx), &ce) {
		reason = ce.Reason
	}
	a.observed[setting] <- reason
	<-a.release[setting] // the cleanup
	close(a.cleaned[setting])
	if setting == "true-result" {
		return "cleaned up", nil
	}
	return "", ctx.Err()
}

// WaitForCancellationFlow runs Work under a cancellable context, with
// WaitForCancellation unless setting is "false", cancels it on a signal,
// and reports what the future resolved with.
func WaitForCancellationFlow(ctx workflow.Context, setting string) (string, error) {
	cctx, cancel := workflow.WithCancel(ctx)
	cctx = workflow.WithActivityOptions(cctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		WaitForCancellation: setting != "false",
	})
	var a *CleanupActivities
	f := workflow.ExecuteActivity(cctx, a.Work, setting)
	if _, err := workflow.ReceiveSignal[string](ctx, "cancel"); err != nil {
		return "", err
	}
	cancel()
	var v string
	err := f.Get(ctx, &v)
	return fmt.Sprintf("result=%q canceled=%v", v, errors.Is(err, workflow.ErrCanceled)), nil
}

func TestWaitForCancellation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	settings := []string{"true", "true-result", "false"}
	acts := &CleanupActivities{started: map[string]chan struct{}{}, observed: map[string]chan string{},
		release: map[string]chan struct{}{}, cleaned: map[string]chan struct{}{}}
	for _, s := range settings {
		acts.started[s], acts.observed[s] = make(chan struct{}), make(chan string, 1)
		acts.release[s], acts.cleaned[s] = make(chan struct{}), make(chan struct{})
	}
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(WaitForCancellationFlow), w.AddActivity(acts))
	})
	// position is the index in h of the first event of kind about the
	// activity (-1: none).
	position := func(h []api.Event, kind string) int {
		return slices.IndexFunc(h, func(ev api.Event) bool { return ev.Kind == kind && ev.ActivityID == 1 })
	}
	for _, s := range settings {
		id := "wait-" + s
		run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "q"}, WaitForCancellationFlow, s)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-acts.started[s]:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the activity did not start", id)
		}
		if err := e.c.Signal(ctx, id, "cancel", "now"); err != nil {
			t.Fatal(err)
		}
		select {
		case reason := <-acts.observed[s]:
			if reason != api.CancelReasonContextCanceled {
				t.Fatalf("%s: cancellation reason %q, want %q", id, reason, api.CancelReasonContextCanceled)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the activity did not observe its cancellation", id)
		}
		want := map[string]string{"true": `result="" canceled=true`, "true-result": `result="cleaned up" canceled=false`,
			"false": `result="" canceled=true`}[s]
		if s == "false" {
			// The workflow finishes while the activity is still in its
			// cleanup (released only below).
			got, err := result[string](t, run, 60*time.Second)
			if err != nil || got != want {
				t.Fatalf("%s: %q, %v; want %s before the cleanup", id, got, err, want)
			}
			close(acts.release[s])
			<-acts.cleaned[s]
		} else {
			// The turn that recorded the cancel request did not end the
			// workflow: its future still waits for the activity.
			waitFor(t, 30*time.Second, id+": ActivityCancelRequested", func() bool {
				return position(e.history(id), api.EventActivityCancelRequested) >= 0
			})
			if d, err := e.c.Describe(ctx, id); err != nil || d.Status != api.StatusRunning {
				t.Fatalf("%s: describe %+v, %v; want running while the activity cleans up", id, d, err)
			}
			close(acts.release[s])
			<-acts.cleaned[s]
			got, err := result[string](t, run, 60*time.Second)
			if err != nil || got != want {
				t.Fatalf("%s: %q, %v; want %s after the cleanup", id, got, err, want)
			}
		}
		h := e.history(id)
		req := position(h, api.EventActivityCancelRequested)
		if r := count(h, api.EventActivityCancelRequested, api.CancelReasonContextCanceled); r != 1 || req < 0 {
			t.Fatalf("%s: %d ActivityCancelRequested (context_canceled), want 1", id, r)
		}
		outcome := map[string]string{"true": api.EventActivityCanceled, "true-result": api.EventActivityCompleted}[s]
		for _, kind := range []string{api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCanceled} {
			n, want := count(h, kind, ""), 0
			if kind == outcome {
				want = 1
			}
			if n != want {
				t.Fatalf("%s: %d %s events, want %d", id, n, kind, want)
			}
		}
		if outcome != "" {
			// The outcome comes after the cancel request, before the end.
			if at := position(h, outcome); at < req || h[len(h)-1].Kind != api.EventWorkflowCompleted {
				t.Fatalf("%s: %s at %d, ActivityCancelRequested at %d, in %d events", id, outcome, at, req, len(h))
			}
		}
		e.replayClean(id, WaitForCancellationFlow)
	}
}

// StubbornActivities holds an activity that ignores its cancellation until
// the test releases it.
type StubbornActivities struct {
	started  chan struct{}
	release  chan struct{}
	returned atomic.Int32
}

// Hold ignores its context until released.
func (a *StubbornActivities) Hold(ctx context.Context) (string, error) {
	close(a.started)
	<-a.release
	a.returned.Add(1)
	return "late", nil
}

// StubbornFlow runs Hold with WaitForCancellation, cancels it on a signal,
// and reports what its future resolved with.
func StubbornFlow(ctx workflow.Context) (string, error) {
	cctx, cancel := workflow.WithCancel(ctx)
	cctx = workflow.WithActivityOptions(cctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, WaitForCancellation: true})
	var a *StubbornActivities
	f := workflow.ExecuteActivity(cctx, a.Hold)
	if _, err := workflow.ReceiveSignal[string](ctx, "cancel"); err != nil {
		return "", err
	}
	cancel()
	var v string
	err := f.Get(ctx, &v)
	return fmt.Sprintf("result=%q canceled=%v", v, errors.Is(err, workflow.ErrCanceled)), nil
}

// An activity with WaitForCancellation that ignores its cancellation is
// abandoned after the worker's grace period: the worker gives its attempt
// back and the workflow gets ActivityCanceled (it does not wait forever);
// the result the goroutine returns later is dropped.
func TestWaitForCancellationNonCooperative(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &StubbornActivities{started: make(chan struct{}), release: make(chan struct{})}
	opts := testOptions()
	opts.CancelGracePeriod = 500 * time.Millisecond
	r := e.startWorker("q", opts, func(w worker.Worker) error {
		return errors.Join(w.AddWorkflow(StubbornFlow), w.AddActivity(acts))
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "stubborn-wait", TaskQueue: "q"}, StubbornFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-acts.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the activity did not start")
	}
	if err := e.c.Signal(ctx, "stubborn-wait", "cancel", "now"); err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if want := `result="" canceled=true`; err != nil || got != want {
		t.Fatalf("%q, %v; want %s", got, err, want)
	}
	if r.w.Stats().Abandoned != 1 || acts.returned.Load() != 0 {
		t.Fatalf("abandoned %d, returned %d: want the workflow to end on the abandonment", r.w.Stats().Abandoned, acts.returned.Load())
	}
	close(acts.release)
	waitFor(t, 10*time.Second, "the abandoned goroutine to return", func() bool { return acts.returned.Load() == 1 })
	h := e.history("stubborn-wait")
	if c, n := count(h, api.EventActivityCompleted, ""), count(h, api.EventActivityCanceled, ""); c != 0 || n != 1 {
		t.Fatalf("%d ActivityCompleted, %d ActivityCanceled: want 0 and 1", c, n)
	}
	e.replayClean("stubborn-wait", StubbornFlow)
}
