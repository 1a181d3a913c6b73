package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// The tests of this file port Temporal Go SDK samples and idioms; each
// runs through the public SDK with real workers, then replays the
// recorded history through the same code (worker.ReplayWorkflowHistory).

// replayClean replays the history of id through fn and fails on any error.
func (e *env) replayClean(id string, fn any) {
	e.t.Helper()
	r := worker.NewWorkflowReplayer()
	if err := r.RegisterWorkflow(fn); err != nil {
		e.t.Fatal(err)
	}
	if err := r.ReplayWorkflowHistory(nil, e.history(id)); err != nil {
		e.t.Fatalf("replay of %s: %v", id, err)
	}
}

// ---------------------------------------------------------------------------
// Await, AwaitWithTimeout, channels, Selector

// Pick is the Selector test's activity.
func Pick(ctx context.Context, s string) (string, error) { return s, nil }

// AwaitFlow moves signals through a workflow channel from one goroutine to
// another, awaits a condition on them, times out an AwaitWithTimeout and a
// ReceiveWithTimeout, and selects two activities with a Selector, which
// cancels neither.
func AwaitFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var got []string
	ch := workflow.NewChannel(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) { // Temporal's shape
		sig := workflow.GetSignalChannel(ctx, "item")
		for {
			var s string
			sig.Receive(ctx, &s)
			ch.Send(ctx, s)
			if s == "last" {
				ch.Close()
				return
			}
		}
	})
	workflow.Go(ctx, func(ctx workflow.Context) error {
		for {
			var s string
			if !ch.Receive(ctx, &s) {
				return nil // closed
			}
			got = append(got, s)
		}
	})
	if err := workflow.Await(ctx, func() bool { return len(got) == 3 }); err != nil {
		return "", err
	}
	timedOut, err := workflow.AwaitWithTimeout(ctx, 10*time.Millisecond, func() bool { return false })
	if err != nil {
		return "", err
	}
	quick, err := workflow.AwaitWithTimeout(ctx, time.Hour, func() bool { return len(got) == 3 })
	if err != nil {
		return "", err
	}
	var none string
	recvOK, more := workflow.GetSignalChannel(ctx, "never").ReceiveWithTimeout(ctx, 10*time.Millisecond, &none)

	var picked []string
	sel := workflow.NewSelector(ctx)
	for _, s := range []string{"x", "y"} {
		sel.AddFuture(workflow.ExecuteActivity(ctx, Pick, s), func(f workflow.Future) {
			var v string
			_ = f.Get(ctx, &v)
			picked = append(picked, v)
		})
	}
	defaulted := false
	sel.AddDefault(func() { defaulted = true })
	for len(picked) < 2 {
		if !sel.HasPending() {
			sel.Select(ctx) // nothing ready: the default runs
			if err := workflow.Await(ctx, sel.HasPending); err != nil {
				return "", err
			}
		}
		sel.Select(ctx)
	}
	slices.Sort(picked)
	return fmt.Sprintf("got=%s timedOut=%v quick=%v recv=%v/%v picked=%s default=%v",
		strings.Join(got, ","), !timedOut, quick, recvOK, more, strings.Join(picked, ","), defaulted), nil
}

func TestAwaitChannelsAndSelector(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), registers([]any{AwaitFlow}, Pick))
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "await", TaskQueue: "q"}, AwaitFlow, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "last"} {
		if err := e.c.Signal(ctx, "await", "item", s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := "got=a,b,last timedOut=true quick=true recv=false/true picked=x,y default=true"
	if got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	h := e.history("await")
	if n := count(h, api.EventActivityCancelRequested, ""); n != 0 {
		t.Fatalf("%d activities cancelled: a Selector cancels no loser", n)
	}
	if n := count(h, api.EventActivityCompleted, ""); n != 2 {
		t.Fatalf("%d activities completed, want 2", n)
	}
	e.replayClean("await", AwaitFlow)
}

// CartWorkflow is the shopping-cart pattern: the Await condition takes
// the next update with ReceiveAsync (a side effect) and the loop ends on a
// "checkout" signal.
func CartWorkflow(ctx workflow.Context) ([]string, error) {
	add := workflow.GetSignalChannel(ctx, "add")
	checkout := workflow.GetSignalChannel(ctx, "checkout")
	var cart []string
	for {
		var item string
		done := false
		err := workflow.Await(ctx, func() bool {
			if add.ReceiveAsync(&item) {
				return true
			}
			done = checkout.ReceiveAsync(nil)
			return done
		})
		if err != nil {
			return nil, err
		}
		if done {
			return cart, nil
		}
		cart = append(cart, item)
	}
}

// TestShoppingCartAwait: every signal reaches the cart, none is lost to
// a second evaluation of the condition, and the workflow ends.
func TestShoppingCartAwait(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), registers([]any{CartWorkflow}))
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "cart", TaskQueue: "q"}, CartWorkflow, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"apple", "pear", "plum", "fig", "kiwi"}
	for _, item := range want {
		if err := e.c.Signal(ctx, "cart", "add", item); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.c.Signal(ctx, "cart", "checkout", nil); err != nil {
		t.Fatal(err)
	}
	got, err := result[[]string](t, run, 30*time.Second)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("cart %v, %v; want %v", got, err, want)
	}
	e.replayClean("cart", CartWorkflow)
}

// ---------------------------------------------------------------------------
// Temporal's mutex sample, ported: the lock's workflow drains its requests
// with ReceiveAsync and waits for each holder's release with a Selector.
// As in Temporal's, an activity takes the lock with
// client.SignalWithStartWorkflow, and the workflows tell each other with
// workflow.SignalExternalWorkflow.

const (
	requestLockSignalName = "request-lock"
	acquireLockSignalName = "acquire-lock"
)

// MutexActivities are the activities of the mutex sample.
type MutexActivities struct {
	C       *client.TetherClient
	mu      sync.Mutex
	holders int
	most    int
	order   []string
}

// SignalWithStartMutexWorkflowActivity sends the lock request, starting
// the lock's workflow if it does not run (Temporal's, verbatim but for the
// options).
func (a *MutexActivities) SignalWithStartMutexWorkflowActivity(ctx context.Context, mutexWorkflowID, senderWorkflowID string) error {
	workflowOptions := client.StartWorkflowOptions{ID: mutexWorkflowID, TaskQueue: "q"}
	_, err := a.C.SignalWithStartWorkflow(ctx, mutexWorkflowID, requestLockSignalName, senderWorkflowID, workflowOptions, MutexWorkflow)
	return err
}

// CriticalSection records that who holds the lock while it runs.
func (a *MutexActivities) CriticalSection(ctx context.Context, who string) error {
	a.mu.Lock()
	a.holders++
	a.most = max(a.most, a.holders)
	a.order = append(a.order, who)
	a.mu.Unlock()
	time.Sleep(20 * time.Millisecond) // a window for another holder to overlap
	a.mu.Lock()
	a.holders--
	a.mu.Unlock()
	return nil
}

// MutexWorkflow is the lock: it grants it to each request in turn and
// ends when none is left.
func MutexWorkflow(ctx workflow.Context) error {
	logger := workflow.GetLogger(ctx)
	var ack string
	unlockTimeout := time.Minute
	requestLockCh := workflow.GetSignalChannel(ctx, requestLockSignalName)
	for {
		var senderWorkflowID string
		if !requestLockCh.ReceiveAsync(&senderWorkflowID) {
			logger.Info("no more signals")
			break
		}
		releaseLockChannelName := "unlock-event-" + senderWorkflowID
		err := workflow.SignalExternalWorkflow(ctx, senderWorkflowID, "", acquireLockSignalName, releaseLockChannelName).Get(ctx, nil)
		if err != nil {
			logger.Info("SignalExternalWorkflow error", "Error", err)
			continue
		}
		selector := workflow.NewSelector(ctx)
		selector.AddFuture(workflow.NewTimer(ctx, unlockTimeout), func(f workflow.Future) {
			logger.Info("unlockTimeout exceeded")
		})
		selector.AddReceive(workflow.GetSignalChannel(ctx, releaseLockChannelName), func(c workflow.ReceiveChannel, more bool) {
			c.Receive(ctx, &ack)
			logger.Info("release signal received")
		})
		selector.Select(ctx)
	}
	return nil
}

// SampleWorkflowWithMutex takes the lock of resourceID, runs its critical
// section, and releases the lock.
func SampleWorkflowWithMutex(ctx workflow.Context, resourceID string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var a *MutexActivities
	currentWorkflowID := workflow.GetInfo(ctx).InstanceID
	if err := workflow.ExecuteActivity(ctx, a.SignalWithStartMutexWorkflowActivity, resourceID, currentWorkflowID).Get(ctx, nil); err != nil {
		return err
	}
	var releaseLockChannelName string
	workflow.GetSignalChannel(ctx, acquireLockSignalName).Receive(ctx, &releaseLockChannelName)
	if err := workflow.ExecuteActivity(ctx, a.CriticalSection, currentWorkflowID).Get(ctx, nil); err != nil {
		return err
	}
	return workflow.SignalExternalWorkflow(ctx, resourceID, "", releaseLockChannelName, "releaseLock").Get(ctx, nil)
}

func TestMutexSample(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &MutexActivities{C: e.c}
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		if err := w.AddWorkflow(MutexWorkflow); err != nil {
			return err
		}
		if err := w.AddWorkflow(SampleWorkflowWithMutex); err != nil {
			return err
		}
		return w.AddActivity(acts)
	})
	var runs []client.WorkflowRun
	for i := range 4 {
		run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("requester-%d", i), TaskQueue: "q"}, SampleWorkflowWithMutex, "resource")
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	for _, run := range runs {
		if _, err := result[struct{}](t, run, 60*time.Second); err != nil {
			t.Fatalf("%s: %v", run.GetID(), err)
		}
	}
	acts.mu.Lock()
	defer acts.mu.Unlock()
	if acts.most != 1 || len(acts.order) != 4 {
		t.Fatalf("critical sections %v, at most %d at once: want 4, one at a time", acts.order, acts.most)
	}
	for i := range 4 {
		h := e.history(fmt.Sprintf("requester-%d", i))
		if a, b := count(h, api.EventExternalSignalInitiated, ""), count(h, api.EventExternalCompleted, ""); a != 1 || b != 1 {
			t.Fatalf("requester-%d: %d ExternalSignalInitiated, %d ExternalCompleted: want 1 and 1", i, a, b)
		}
	}
	e.replayClean("resource", MutexWorkflow)
	e.replayClean("requester-0", SampleWorkflowWithMutex)
}

// ---------------------------------------------------------------------------
// Temporal's cancellation sample, ported: the deferred cleanup activity
// runs on a disconnected context after the workflow's cancellation.

// CancelActivities are the activities of the cancellation sample.
type CancelActivities struct {
	started atomic.Bool
	cleaned atomic.Int32
	skipped atomic.Int32
}

// ActivityToBeCanceled heartbeats until it is cancelled.
func (a *CancelActivities) ActivityToBeCanceled(ctx context.Context) (string, error) {
	logger := activity.GetLogger(ctx)
	logger.Info("activity started, to cancel the Workflow Execution, use 'go run cancellation/cancel/main.go " +
		"-w <WorkflowID>' or use the CLI: 'tctl wf cancel -w <WorkflowID>'")
	a.started.Store(true)
	for {
		select {
		case <-time.After(100 * time.Millisecond):
			logger.Info("heartbeating...")
			_ = activity.RecordHeartbeat(ctx, "")
		case <-ctx.Done():
			logger.Info("context is cancelled")
			return "I am canceled by Done", nil
		}
	}
}

// CleanupActivity is the cleanup.
func (a *CancelActivities) CleanupActivity(ctx context.Context) error {
	activity.GetLogger(ctx).Info("Cleanup Activity started")
	a.cleaned.Add(1)
	return nil
}

// ActivityToBeSkipped must not run.
func (a *CancelActivities) ActivityToBeSkipped(ctx context.Context) error {
	activity.GetLogger(ctx).Info("this Activity will be skipped due to cancellation")
	a.skipped.Add(1)
	return nil
}

// YourWorkflow is the cancellation sample's workflow.
func YourWorkflow(ctx workflow.Context) error {
	ao := workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    5 * time.Second,
		WaitForCancellation: true,
	}
	ctx = workflow.WithActivityOptions(ctx, ao)
	logger := workflow.GetLogger(ctx)
	logger.Info("cancel workflow started")
	var a *CancelActivities // Used to call Activities by function pointer
	defer func() {
		if !errors.Is(ctx.Err(), workflow.ErrCanceled) {
			return
		}
		// When the Workflow is canceled, it has to get a new disconnected context to execute any Activities
		newCtx, _ := workflow.NewDisconnectedContext(ctx)
		err := workflow.ExecuteActivity(newCtx, a.CleanupActivity).Get(ctx, nil)
		if err != nil {
			logger.Error("CleanupActivity failed", "Error", err)
		}
	}()

	var result string
	err := workflow.ExecuteActivity(ctx, a.ActivityToBeCanceled).Get(ctx, &result)
	logger.Info(fmt.Sprintf("ActivityToBeCanceled returns %v, %v", result, err))

	err = workflow.ExecuteActivity(ctx, a.ActivityToBeSkipped).Get(ctx, nil)
	logger.Error("Error from ActivityToBeSkipped", "Error", err)

	logger.Info("Workflow Execution complete.")

	return nil
}

func TestCancellationSample(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := &CancelActivities{}
	e.startWorker("q", testOptions(), registers([]any{YourWorkflow}, acts))
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "cancellation", TaskQueue: "q"}, YourWorkflow, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "ActivityToBeCanceled to start", acts.started.Load)
	if _, err := e.c.Cancel(ctx, "cancellation", "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := result[struct{}](t, run, 60*time.Second); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	if c, s := acts.cleaned.Load(), acts.skipped.Load(); c != 1 || s != 0 {
		t.Fatalf("cleanup ran %d times, skipped activity %d: want 1 and 0", c, s)
	}
	// WaitForCancellation: ActivityToBeCanceled's own end (it returns a
	// result when cancelled) reaches the workflow after its cancel request.
	h := e.history("cancellation")
	req := slices.IndexFunc(h, func(ev api.Event) bool {
		return ev.Kind == api.EventActivityCancelRequested && ev.ActivityID == 1 && ev.Reason == api.CancelReasonWorkflowCanceled
	})
	end := slices.IndexFunc(h, func(ev api.Event) bool { return ev.Kind == api.EventActivityCompleted && ev.ActivityID == 1 })
	if req < 0 || end < req || string(h[end].Result) != `"I am canceled by Done"` {
		t.Fatalf("ActivityCancelRequested at %d, ActivityCompleted at %d: want the result after the cancel request (%+v)", req, end, h)
	}
	e.replayClean("cancellation", YourWorkflow)
}

// ---------------------------------------------------------------------------
// Registration like Temporal's; loggers and info.

// Join3 is an activity without a context and with several inputs.
func Join3(s string, n int, b bool) (string, error) { return fmt.Sprintf("%s-%d-%v", s, n, b), nil }

// Scale is an activity with a context and two inputs.
func Scale(ctx context.Context, n, by int) (int, error) {
	info := activity.GetInfo(ctx)
	activity.GetLogger(ctx).Info("scaling", "n", n)
	return n * by * int(info.Attempt), nil
}

// RegFlow calls the activities by function and by registered name, and
// returns what GetInfo says.
func RegFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	workflow.GetLogger(ctx).Info("reg flow")
	var byFunc, byName string
	if err := workflow.ExecuteActivity(ctx, Join3, "a", 1, true).Get(ctx, &byFunc); err != nil {
		return "", err
	}
	if err := workflow.ExecuteActivity(ctx, "join", "b", 2, false).Get(ctx, &byName); err != nil {
		return "", err
	}
	scaled, err := workflow.ExecuteActivityT[int](ctx, Scale, 6, 7).Get(ctx)
	if err != nil {
		return "", err
	}
	info := workflow.GetInfo(ctx)
	return fmt.Sprintf("%s %s %d attempt=%d queue=%s started=%v type=%s", byFunc, byName, scaled,
		info.Attempt, info.TaskQueue, !info.StartedAt.IsZero(), info.WorkflowType.Name), nil
}

// recorder keeps the attributes of the records logged with a message. The
// handlers WithAttrs derives share its records and their mutex.
type recorder struct {
	mu    *sync.Mutex
	attrs []slog.Attr
	recs  map[string][]map[string]string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]string{}
	for _, a := range r.attrs {
		m[a.Key] = a.Value.String()
	}
	rec.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	r.recs[rec.Message] = append(r.recs[rec.Message], m)
	return nil
}
func (r *recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recorder{attrs: append(slices.Clone(r.attrs), attrs...), recs: r.recs, mu: r.mu}
}
func (r *recorder) WithGroup(string) slog.Handler { return r }

func TestRegistrationLoggersAndInfo(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := &recorder{recs: map[string][]map[string]string{}, mu: &sync.Mutex{}}
	opts := testOptions()
	opts.Logger = slog.New(rec)
	e.startWorker("q", opts, func(w worker.Worker) error {
		if err := w.AddWorkflowWithOptions(RegFlow, workflow.RegisterOptions{Name: "reg-flow"}); err != nil {
			return err
		}
		if err := w.AddActivityWithOptions(Join3, activity.RegisterOptions{Name: "join"}); err != nil {
			return err
		}
		return w.AddActivity(Scale)
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "reg", TaskQueue: "q"}, "reg-flow", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a-1-true b-2-false 42 attempt=1 queue=q started=true type=reg-flow"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	replayer := worker.NewWorkflowReplayer()
	if err := replayer.RegisterWorkflowWithOptions(RegFlow, workflow.RegisterOptions{Name: "reg-flow"}); err != nil {
		t.Fatal(err)
	}
	if err := replayer.ReplayWorkflowHistory(nil, e.history("reg")); err == nil {
		t.Fatal("replay without the activity's registered name: no nondeterminism")
	}
	if err := replayer.RegisterActivityWithOptions(Join3, activity.RegisterOptions{Name: "join"}); err != nil {
		t.Fatal(err)
	}
	if err := replayer.ReplayWorkflowHistory(slog.New(rec), e.history("reg")); err != nil {
		t.Fatalf("replay: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	// The workflow's line is logged once: the replays above log nothing.
	wl := rec.recs["reg flow"]
	if len(wl) != 1 || wl[0]["instance_id"] != "reg" || wl[0]["execution_id"] != "1" || wl[0]["workflow_type"] != "reg-flow" {
		t.Fatalf("workflow log records %v: want one, with the instance, execution and type", wl)
	}
	al := rec.recs["scaling"]
	if len(al) != 1 || al[0]["instance_id"] != "reg" || al[0]["execution_id"] != "1" || al[0]["activity_type"] != "Scale" ||
		al[0]["attempt"] != "1" || al[0]["activity_id"] != "3" {
		t.Fatalf("activity log records %v: want one, with instance, execution, activity and attempt", al)
	}
}

// ---------------------------------------------------------------------------
// SideEffect, MutableSideEffect and GetVersion on MarkerRecorded events.

// markerCounts counts how often the functions of MarkerFlow ran, per
// worker process (the tests' own state, not the workflow's).
type markerCounts struct {
	sideEffect atomic.Int32
	mutable    atomic.Int32
}

// markerFlow draws an id with SideEffect, reads a setting with
// MutableSideEffect before and after a signal, and branches on GetVersion.
func markerFlow(counts *markerCounts, setting *atomic.Value) func(ctx workflow.Context) (string, error) {
	return func(ctx workflow.Context) (string, error) {
		var id string
		if err := workflow.SideEffect(ctx, func(workflow.Context) any {
			return fmt.Sprintf("id-%d", counts.sideEffect.Add(1))
		}).Get(&id); err != nil {
			return "", err
		}
		read := func() string {
			var v string
			_ = workflow.MutableSideEffect(ctx, "setting", func(workflow.Context) any {
				counts.mutable.Add(1)
				return setting.Load().(string)
			}, func(a, b any) bool { return a == b }).Get(&v)
			return v
		}
		first := read()
		v := workflow.GetVersion(ctx, "greeting", workflow.DefaultVersion, 2)
		if _, err := workflow.ReceiveSignal[string](ctx, "go"); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s %s v%d", id, first, read(), v), nil
	}
}

// The markers are recorded once, as MarkerRecorded events, and a worker
// without the cache (every turn a replay) reads them back from history:
// the side effect's function runs once in all, the result holds the
// recorded values, and the history replays cleanly.
func TestSideEffectAndVersionMarkers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	counts := &markerCounts{}
	var setting atomic.Value
	setting.Store("a")
	opts := testOptions()
	opts.CacheSize = -1
	flow := markerFlow(counts, &setting)
	e.startWorker("q", opts, func(w worker.Worker) error {
		return w.AddWorkflow(flow, worker.WithName("MarkerFlow"))
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "markers", TaskQueue: "q"}, "MarkerFlow", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the markers", func() bool { return count(e.history("markers"), api.EventMarkerRecorded, "") == 3 })
	setting.Store("b")
	if err := e.c.Signal(ctx, "markers", "go", "now"); err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "id-1 a b v2"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	if n := counts.sideEffect.Load(); n != 1 {
		t.Fatalf("the side effect ran %d times, want once (then read from history)", n)
	}
	var markers []string
	for _, ev := range e.history("markers") {
		if ev.Kind == api.EventMarkerRecorded {
			markers = append(markers, fmt.Sprintf("%s/%s=%s", ev.MarkerName, ev.MarkerID, ev.MarkerDetails))
		}
	}
	want := []string{`SideEffect/1="id-1"`, `MutableSideEffect/setting#1={"call":1,"value":"a"}`, `Version/greeting=2`,
		`MutableSideEffect/setting#2={"call":2,"value":"b"}`}
	if !slices.Equal(markers, want) {
		t.Fatalf("markers\n got %v\nwant %v", markers, want)
	}
	r := worker.NewWorkflowReplayer()
	if err := r.RegisterWorkflow(markerFlow(&markerCounts{}, &setting), worker.WithName("MarkerFlow")); err != nil {
		t.Fatal(err)
	}
	setting.Store("changed since")
	if err := r.ReplayWorkflowHistory(nil, e.history("markers")); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// InfoFlow continues as new once, passing on what its first execution's
// GetInfo said of the run it continues.
func InfoFlow(ctx workflow.Context, prev int64) (string, error) {
	info := workflow.GetInfo(ctx)
	if prev == -1 {
		return "", workflow.NewContinueAsNewError(ctx, InfoFlow, info.ContinuedFromExecutionID)
	}
	return fmt.Sprintf("first-from=%d exec=%d from=%d", prev, info.ExecutionID, info.ContinuedFromExecutionID), nil
}

// GetInfo names the execution an execution continues (Temporal's
// ContinuedExecutionRunID); a started one continues none.
func TestInfoContinuedFrom(t *testing.T) {
	e := newEnv(t)
	e.startWorker("q", testOptions(), func(w worker.Worker) error { return w.AddWorkflow(InfoFlow) })
	run, err := e.c.StartWorkflow(context.Background(), client.StartWorkflowOptions{ID: "info", TaskQueue: "q"}, InfoFlow, int64(-1))
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "first-from=0 exec=2 from=1"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	e.replayClean("info", InfoFlow)
}

// ---------------------------------------------------------------------------
// Workflow API: Mutex, AllHandlersFinished, DeterministicKeys,
// NewContinueAsNewError(ctx, wfn, args...), GetInfo in Temporal's names.

// CheckoutWorkflow takes updates that each hold a mutex until a "release"
// signal; on "done" it waits for every handler to finish (Temporal's
// AllHandlersFinished idiom), then continues as new once, by function.
func CheckoutWorkflow(ctx workflow.Context, round int) (string, error) {
	lock := workflow.NewMutex(ctx)
	totals := map[string]int{}
	release := workflow.GetSignalChannel(ctx, "release")
	if err := workflow.SetUpdateHandler(ctx, "add", func(ctx workflow.Context, item string) (int, error) {
		if err := lock.Lock(ctx); err != nil {
			return 0, err
		}
		defer lock.Unlock()
		release.Receive(ctx, nil)
		totals[item]++
		return totals[item], nil
	}); err != nil {
		return "", err
	}
	workflow.GetSignalChannel(ctx, "done").Receive(ctx, nil)
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return "", err
	}
	info := workflow.GetInfo(ctx)
	var parts []string
	for _, k := range workflow.DeterministicKeys(totals) {
		parts = append(parts, fmt.Sprint(k, "=", totals[k]))
	}
	summary := fmt.Sprintf("%s run=%s type=%s queue=%s from=%q %s", info.WorkflowExecution.ID, info.WorkflowExecution.RunID,
		info.WorkflowType.Name, info.TaskQueueName, info.ContinuedExecutionRunID, strings.Join(parts, ","))
	if round == 0 {
		return "", workflow.NewContinueAsNewError(ctx, CheckoutWorkflow, round+1)
	}
	return summary, nil
}

func TestWorkflowAPIMutexHandlersContinueAsNew(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), registers([]any{CheckoutWorkflow}))
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "checkout", TaskQueue: "q"}, CheckoutWorkflow, 0)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		var handles []client.WorkflowUpdateHandle
		for i, item := range []string{"pear", "apple", "pear"} {
			uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			h, err := e.c.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{WorkflowID: "checkout",
				UpdateID: fmt.Sprint("u", round, i), UpdateName: "add", Args: []any{item},
				WaitForStage: client.WorkflowUpdateStageAccepted})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			handles = append(handles, h)
		}
		// "done" comes before the handlers are released: the workflow
		// waits for them.
		if err := e.c.Signal(ctx, "checkout", "done", nil); err != nil {
			t.Fatal(err)
		}
		for range handles {
			if err := e.c.Signal(ctx, "checkout", "release", nil); err != nil {
				t.Fatal(err)
			}
		}
		var got []int
		for _, h := range handles {
			var n int
			gctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := h.Get(gctx, &n)
			cancel()
			if err != nil {
				t.Fatalf("round %d: update: %v", round, err)
			}
			got = append(got, n)
		}
		if !slices.Equal(got, []int{1, 1, 2}) {
			t.Fatalf("round %d: update results %v, want [1 1 2] (one at a time, in order)", round, got)
		}
		if round == 0 {
			waitFor(t, 30*time.Second, "the second execution", func() bool {
				w, err := e.c.Describe(ctx, "checkout")
				return err == nil && w.ExecutionID == 2
			})
		}
	}
	got, err := result[string](t, run, 30*time.Second)
	second, derr := e.c.Describe(ctx, "checkout")
	if derr != nil || second.ExecutionID != 2 || second.RunID == run.GetRunID() {
		t.Fatalf("describe: %+v, %v", second, derr)
	}
	// Run ids are UUIDs: the second execution's own, continued from the first's.
	if want := fmt.Sprintf(`checkout run=%s type=CheckoutWorkflow queue=q from=%q apple=1,pear=2`, second.RunID, run.GetRunID()); err != nil || got != want {
		t.Fatalf("result %q, %v; want %q", got, err, want)
	}
	e.replayClean("checkout", CheckoutWorkflow)
}
