package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/log"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// The tests of this file use the SDK the way Temporal code does: the
// client.Client interface from client.Dial, worker.New on it with
// Start/Stop/Run, workflows and activities of several arguments, and the
// temporal package's errors, retry policy and typed search attributes.

// dialTemporal returns a client as Temporal code makes one: client.Dial
// with HostPort and a log.Logger.
func (e *env) dialTemporal() client.Client {
	e.t.Helper()
	c, err := client.Dial(client.Options{HostPort: e.addr, Logger: log.NewStructuredLogger(e.log)})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c
}

// startTemporalWorker starts a worker with Start and stops it with Stop at
// the end of the test.
func (e *env) startTemporalWorker(c client.Client, queue string, register func(w worker.Worker)) worker.Worker {
	e.t.Helper()
	w := worker.New(c, queue, testOptions())
	register(w)
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
	return w
}

// SurfaceGreeting is an activity of three arguments, without a context.
func SurfaceGreeting(greeting, name string, times int) (string, error) {
	return strings.Repeat(greeting+", "+name+"! ", times), nil
}

// SurfaceHello is a workflow of two arguments.
func SurfaceHello(ctx workflow.Context, name string, times int) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, SurfaceGreeting, "Hello", name, times).Get(ctx, &out)
	return strings.TrimSpace(out), err
}

func TestTemporalSurface_HelloWorldWithSeveralArguments(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "hello", func(w worker.Worker) {
		must(t, w.AddWorkflow(SurfaceHello))
		must(t, w.AddActivity(SurfaceGreeting))
	})
	ctx := context.Background()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "hello-1", TaskQueue: "hello"}, SurfaceHello, "Temporal", 2)
	if err != nil {
		t.Fatal(err)
	}
	if we.GetID() != "hello-1" || we.GetRunID() == "" {
		t.Fatalf("run %q/%q", we.GetID(), we.GetRunID())
	}
	var result string
	if err := we.Get(ctx, &result); err != nil || result != "Hello, Temporal! Hello, Temporal!" {
		t.Fatalf("result %q, %v", result, err)
	}
	// A function's arguments are checked before anything is started.
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "hello-2", TaskQueue: "hello"}, SurfaceHello, "a", "b"); err == nil || !strings.Contains(err.Error(), "takes int") {
		t.Fatalf("bad argument: %v", err)
	}
	if _, err := c.DescribeWorkflowExecution(ctx, "hello-2", ""); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a refused start created the workflow: %v", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// cardDetail is the detail of SurfaceCharge's error.
type cardDetail struct {
	Reason string
	Code   int
}

// surfaceAttempts counts SurfaceCharge's attempts by card.
var surfaceAttempts = struct {
	n [2]atomic.Int32
}{}

// SurfaceCharge fails with an application error: retryable for card 0,
// non-retryable for card 1.
func SurfaceCharge(ctx context.Context, card int) (string, error) {
	surfaceAttempts.n[card].Add(1)
	if card == 1 {
		return "", temporal.NewNonRetryableApplicationError("card declined", "CardDeclined", nil, cardDetail{"stolen", 43})
	}
	return "", temporal.NewApplicationError("card declined", "CardDeclined", cardDetail{"expired", 54})
}

// SurfaceChargeFlow reports what it learns from the activity's error as
// Temporal code reads it, then fails with its own application error.
func SurfaceChargeFlow(ctx workflow.Context, card int) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: 3},
	})
	err := workflow.ExecuteActivity(ctx, SurfaceCharge, card).Get(ctx, nil)
	var actErr *temporal.ActivityError
	var appErr *temporal.ApplicationError
	if !errors.As(err, &actErr) || !errors.As(err, &appErr) {
		return "", fmt.Errorf("activity error %T %v is not an ActivityError wrapping an ApplicationError", err, err)
	}
	var d cardDetail
	if err := appErr.Details(&d); err != nil {
		return "", err
	}
	return "", temporal.NewApplicationError(fmt.Sprintf("%s/%v/%s/%d", appErr.Type(), appErr.NonRetryable(), d.Reason, d.Code), "PaymentFailed", d)
}

func TestTemporalSurface_ApplicationErrorsAndRetries(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "pay", func(w worker.Worker) {
		must(t, w.AddWorkflow(SurfaceChargeFlow))
		must(t, w.AddActivity(SurfaceCharge))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for card, want := range []struct {
		msg      string
		attempts int32
	}{{"CardDeclined/false/expired/54", 3}, {"CardDeclined/true/stolen/43", 1}} {
		we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "pay"}, SurfaceChargeFlow, card)
		if err != nil {
			t.Fatal(err)
		}
		err = we.Get(ctx, nil)
		var wfErr *temporal.WorkflowExecutionError
		var appErr *temporal.ApplicationError
		if !errors.As(err, &wfErr) || !errors.As(err, &appErr) {
			t.Fatalf("card %d: %T %v is not a WorkflowExecutionError wrapping an ApplicationError", card, err, err)
		}
		var d cardDetail
		if appErr.Type() != "PaymentFailed" || appErr.Message() != want.msg || appErr.Details(&d) != nil || d.Code == 0 {
			t.Fatalf("card %d: type %q message %q detail %+v", card, appErr.Type(), appErr.Message(), d)
		}
		if got := surfaceAttempts.n[card].Load(); got != want.attempts {
			t.Fatalf("card %d: %d attempts, want %d", card, got, want.attempts)
		}
	}
}

// SurfaceResumable records heartbeat details of two values and fails its
// first attempt; the second resumes from them.
func SurfaceResumable(ctx context.Context) (string, error) {
	if activity.HasHeartbeatDetails(ctx) {
		var n int
		var s string
		if err := activity.GetHeartbeatDetails(ctx, &n, &s); err != nil {
			return "", err
		}
		return fmt.Sprintf("resumed at %d %s", n, s), nil
	}
	var none int
	if err := activity.GetHeartbeatDetails(ctx, &none); !errors.Is(err, temporal.ErrNoData) {
		return "", fmt.Errorf("first attempt: GetHeartbeatDetails = %v, want ErrNoData", err)
	}
	if err := activity.RecordHeartbeat(ctx, 7, "files"); err != nil {
		return "", err
	}
	return "", errors.New("transient")
}

// SurfaceSignalOther signals a workflow through activity.GetClient, and
// logs as Temporal's slog adapter sample does.
func SurfaceSignalOther(ctx context.Context, workflowID, value string) error {
	withLogger, ok := activity.GetLogger(ctx).(log.WithLogger)
	if !ok {
		return errors.New("activity.GetLogger is not a log.WithLogger")
	}
	withLogger.With("activity", "SurfaceSignalOther").Info("signalling", "workflow", workflowID)
	info := activity.GetInfo(ctx)
	if info.ActivityType.Name != "SurfaceSignalOther" || info.WorkflowType.Name != "SurfaceActivitiesFlow" ||
		info.WorkflowExecution.ID == "" || info.WorkflowExecution.RunID == "" || info.ActivityID == "" || info.IsLocalActivity {
		return fmt.Errorf("activity info %+v", info)
	}
	return activity.GetClient(ctx).SignalWorkflow(ctx, workflowID, "", "note", value)
}

// SurfaceActivitiesFlow runs SurfaceResumable and SurfaceSignalOther.
func SurfaceActivitiesFlow(ctx workflow.Context, target string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 2},
	})
	var out string
	if err := workflow.ExecuteActivity(ctx, SurfaceResumable).Get(ctx, &out); err != nil {
		return "", err
	}
	return out, workflow.ExecuteActivity(ctx, SurfaceSignalOther, target, out).Get(ctx, nil)
}

// SurfaceNoteFlow returns the first "note" signal.
func SurfaceNoteFlow(ctx workflow.Context) (string, error) {
	var s string
	_ = workflow.GetSignalChannel(ctx, "note").Receive(ctx, &s)
	return s, nil
}

func TestTemporalSurface_ActivityHelpers(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "acts", func(w worker.Worker) {
		must(t, w.AddWorkflow(SurfaceActivitiesFlow))
		must(t, w.AddWorkflow(SurfaceNoteFlow))
		must(t, w.AddActivity(SurfaceResumable))
		must(t, w.AddActivity(SurfaceSignalOther))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	target, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "note-target", TaskQueue: "acts"}, SurfaceNoteFlow)
	if err != nil {
		t.Fatal(err)
	}
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "acts"}, SurfaceActivitiesFlow, "note-target")
	if err != nil {
		t.Fatal(err)
	}
	var out, note string
	if err := we.Get(ctx, &out); err != nil || out != "resumed at 7 files" {
		t.Fatalf("result %q, %v", out, err)
	}
	if err := target.Get(ctx, &note); err != nil || note != out {
		t.Fatalf("signalled %q, %v; want %q", note, err, out)
	}
}

// SurfaceWaitFlow waits for a "go" signal or its cancellation.
func SurfaceWaitFlow(ctx workflow.Context, fail bool) (string, error) {
	var s string
	got := false
	workflow.Go(ctx, func(ctx workflow.Context) {
		_ = workflow.GetSignalChannel(ctx, "go").Receive(ctx, &s)
		got = true
	})
	if err := workflow.Await(ctx, func() bool { return got }); err != nil {
		return "", err
	}
	if fail {
		return "", temporal.NewApplicationErrorWithCause("asked to fail", "Asked", errors.New("root"))
	}
	return s, nil
}

func TestTemporalSurface_ClientCalls(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "calls", func(w worker.Worker) { must(t, w.AddWorkflow(SurfaceWaitFlow)) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for name, typ := range map[string]string{"CustomerId": api.SearchAttributeKeyword, "Amount": api.SearchAttributeDouble} {
		if _, err := e.c.RegisterSearchAttribute(ctx, name, typ); err != nil {
			t.Fatal(err)
		}
	}
	customer := temporal.NewSearchAttributeKeyKeyword("CustomerId")
	amount := temporal.NewSearchAttributeKeyFloat64("Amount")
	opts := client.StartWorkflowOptions{
		ID: "calls-1", TaskQueue: "calls", WorkflowExecutionTimeout: time.Hour,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		TypedSearchAttributes:    temporal.NewSearchAttributes(customer.ValueSet("c-42"), amount.ValueSet(9.5)),
		Memo:                     map[string]any{"note": "vip"},
	}
	we, err := c.ExecuteWorkflow(ctx, opts, SurfaceWaitFlow, false)
	if err != nil {
		t.Fatal(err)
	}

	// Describe, in Temporal's shape.
	desc, err := c.DescribeWorkflowExecution(ctx, "calls-1", we.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING || info.GetExecution().GetRunId() != we.GetRunID() ||
		info.GetType().GetName() != "SurfaceWaitFlow" || string(info.GetSearchAttributes().GetIndexedFields()["CustomerId"].GetData()) != `"c-42"` ||
		string(info.GetMemo().GetFields()["note"].GetData()) != `"vip"` {
		t.Fatalf("describe: %+v", info)
	}

	// A start of the running id returns the running workflow, as in
	// Temporal, unless WorkflowExecutionErrorWhenAlreadyStarted.
	again, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "calls-1", TaskQueue: "calls"}, SurfaceWaitFlow, true)
	if err != nil || again.GetRunID() != we.GetRunID() {
		t.Fatalf("second start: %v, run %q want %q", err, again.GetRunID(), we.GetRunID())
	}
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "calls-1", TaskQueue: "calls", WorkflowExecutionErrorWhenAlreadyStarted: true},
		SurfaceWaitFlow, true); !errors.Is(err, client.ErrAlreadyRunning) {
		t.Fatalf("WorkflowExecutionErrorWhenAlreadyStarted: %v", err)
	}

	// Signal to the wrong run is refused; to the right one it arrives.
	if err := c.SignalWorkflow(ctx, "calls-1", "999", "go", "no"); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("signal to another run: %v", err)
	}
	if err := c.SignalWorkflow(ctx, "calls-1", we.GetRunID(), "go", "done"); err != nil {
		t.Fatal(err)
	}
	var s string
	if err := c.GetWorkflow(ctx, "calls-1", "").Get(ctx, &s); err != nil || s != "done" {
		t.Fatalf("result %q, %v", s, err)
	}

	// A failed workflow: a WorkflowExecutionError wrapping the
	// ApplicationError it returned, whose cause is its own link of the
	// chain (Temporal's Message() leaves it out).
	failed, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "calls"}, SurfaceWaitFlow, true)
	must(t, err)
	must(t, c.SignalWorkflow(ctx, failed.GetID(), "", "go", ""))
	err = failed.Get(ctx, nil)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != "Asked" || appErr.Message() != "asked to fail" ||
		errors.Unwrap(appErr) == nil || errors.Unwrap(appErr).Error() != "root" {
		t.Fatalf("failed workflow: %T %v", err, err)
	}

	// CancelWorkflow: a canceled error.
	canceled, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "calls"}, SurfaceWaitFlow, false)
	must(t, err)
	must(t, c.CancelWorkflow(ctx, canceled.GetID(), ""))
	err = canceled.Get(ctx, nil)
	var canceledErr *temporal.CanceledError
	if !errors.As(err, &canceledErr) || !temporal.IsCanceledError(err) || !errors.Is(err, client.ErrWorkflowCanceled) {
		t.Fatalf("canceled workflow: %T %v", err, err)
	}
	desc, err = c.DescribeWorkflowExecution(ctx, canceled.GetID(), "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Fatalf("describe canceled: %v %v", desc.GetWorkflowExecutionInfo().GetStatus(), err)
	}

	// TerminateWorkflow: a terminated error.
	terminated, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "calls"}, SurfaceWaitFlow, false)
	must(t, err)
	must(t, c.TerminateWorkflow(ctx, terminated.GetID(), "", "enough"))
	if err := terminated.Get(ctx, nil); !temporal.IsTerminatedError(err) || !errors.Is(err, client.ErrWorkflowTerminated) {
		t.Fatalf("terminated workflow: %T %v", err, err)
	}

	// Counting and listing through the interface.
	if n, err := c.CountWorkflow(ctx, "CustomerId = 'c-42'"); err != nil || n != 1 {
		t.Fatalf("count %d, %v", n, err)
	}
}

func TestTemporalSurface_UnsupportedStartOptionsAreRefused(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	ctx := context.Background()
	for field, opts := range map[string]client.StartWorkflowOptions{
		"WorkflowRunTimeout":       {WorkflowRunTimeout: time.Minute},
		"WorkflowTaskTimeout":      {WorkflowTaskTimeout: time.Second},
		"StartDelay":               {StartDelay: time.Second},
		"RetryPolicy":              {RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2}},
		"WorkflowIDReusePolicy":    {WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE},
		"WorkflowIDConflictPolicy": {WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING},
		"WorkflowExecutionTimeout": {WorkflowExecutionTimeout: time.Hour, ExecutionTimeout: time.Minute},
	} {
		opts.ID, opts.TaskQueue = "refused", "q"
		_, err := c.ExecuteWorkflow(ctx, opts, "AnyFlow")
		if err == nil || !strings.Contains(err.Error(), "StartWorkflowOptions."+field) {
			t.Errorf("%s: %v", field, err)
		}
		_, err = c.SignalWithStartWorkflow(ctx, "refused", "sig", nil, opts, "AnyFlow")
		if err == nil || !strings.Contains(err.Error(), "StartWorkflowOptions."+field) {
			t.Errorf("signal-with-start %s: %v", field, err)
		}
	}
	if _, err := c.DescribeWorkflowExecution(ctx, "refused", ""); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a refused start created the workflow: %v", err)
	}
}

// fakeClient is a client.Client of another kind than package client's.
type fakeClient struct{ client.Client }

// surfaceKey is the key of a BackgroundActivityContext value.
type surfaceKey struct{}

// SurfaceBackground returns the BackgroundActivityContext value it sees.
func SurfaceBackground(ctx context.Context) (string, error) {
	v, _ := ctx.Value(surfaceKey{}).(string)
	return v, nil
}

// SurfaceBackgroundFlow runs SurfaceBackground.
func SurfaceBackgroundFlow(ctx workflow.Context) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, SurfaceBackground).Get(ctx, &out)
	return out, err
}

func TestTemporalSurface_WorkerRunAndStop(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	opts := testOptions()
	// Temporal's option names, and its background activity context.
	opts.MaxConcurrentActivityExecutionSize, opts.MaxConcurrentWorkflowTaskPollers = 3, 1
	opts.BackgroundActivityContext = context.WithValue(context.Background(), surfaceKey{}, "from the worker")
	w := worker.New(c, "run", opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// As Temporal's, a worker started before its registrations polls both
	// kinds of tasks and serves what is registered when a task comes
	// (samples-go's helloworld test calls Run in a goroutine, then
	// registers).
	must(t, w.Start())
	must(t, w.AddWorkflow(SurfaceHello))
	must(t, w.AddActivity(SurfaceGreeting))
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "run"}, SurfaceHello, "Early", 1)
	must(t, err)
	var out string
	if err := we.Get(ctx, &out); err != nil || out != "Hello, Early!" {
		t.Fatalf("registered after Start: %q, %v", out, err)
	}
	w.Stop()

	must(t, w.AddWorkflow(SurfaceBackgroundFlow))
	must(t, w.AddActivity(SurfaceBackground))
	interrupt := make(chan any)
	done := make(chan error, 1)
	go func() { done <- w.Run(interrupt) }()
	we, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "run"}, SurfaceHello, "Run", 1)
	must(t, err)
	if err := we.Get(ctx, &out); err != nil || out != "Hello, Run!" {
		t.Fatalf("result %q, %v", out, err)
	}
	we, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "run"}, SurfaceBackgroundFlow)
	must(t, err)
	if err := we.Get(ctx, &out); err != nil || out != "from the worker" {
		t.Fatalf("background value %q, %v", out, err)
	}
	if err := w.Start(); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("Start while running: %v", err)
	}
	close(interrupt)
	select {
	case err := <-done:
		must(t, err)
	case <-ctx.Done():
		t.Fatal("Run did not return after the interrupt")
	}
	// Stopped: it can start again, and Stop stops it.
	must(t, w.Start())
	w.Stop()

	foreign := worker.New(fakeClient{}, "run", testOptions())
	must(t, foreign.AddWorkflow(SurfaceHello))
	if err := foreign.Start(); err == nil || !strings.Contains(err.Error(), "client of package client") {
		t.Fatalf("worker on a foreign client: %v", err)
	}
}

// SurfaceEarlyReturn answers its "add" update with the running total and
// ends with ten times it (Temporal's early-return shape).
func SurfaceEarlyReturn(ctx workflow.Context, base int) (int, error) {
	total, added := base, false
	if err := workflow.SetUpdateHandler(ctx, "add", func(ctx workflow.Context, n int) (int, error) {
		total += n
		added = true
		return total, nil
	}); err != nil {
		return 0, err
	}
	if err := workflow.Await(ctx, func() bool { return added }); err != nil {
		return 0, err
	}
	return total * 10, nil
}

func TestTemporalSurface_UpdateWithStart(t *testing.T) {
	e := newEnv(t)
	c := e.dialTemporal()
	e.startTemporalWorker(c, "early", func(w worker.Worker) { must(t, w.AddWorkflow(SurfaceEarlyReturn)) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	startOp := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: "early-1", TaskQueue: "early", WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, SurfaceEarlyReturn, 5)
	update := client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: startOp,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: "add", Args: []any{2}, WaitForStage: client.WorkflowUpdateStageCompleted}}
	h, err := c.UpdateWithStartWorkflow(ctx, update)
	if err != nil {
		t.Fatal(err)
	}
	var early int
	if err := h.Get(ctx, &early); err != nil || early != 7 {
		t.Fatalf("update result %d, %v", early, err)
	}
	run, err := startOp.Get(ctx)
	if err != nil || run.GetID() != "early-1" {
		t.Fatalf("start operation: %v", err)
	}
	var final int
	if err := run.Get(ctx, &final); err != nil || final != 70 {
		t.Fatalf("workflow result %d, %v", final, err)
	}
	if _, err := c.UpdateWithStartWorkflow(ctx, update); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("operation used twice: %v", err)
	}
	noPolicy := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{ID: "early-2", TaskQueue: "early"}, SurfaceEarlyReturn, 1)
	update.StartWorkflowOperation = noPolicy
	if _, err := c.UpdateWithStartWorkflow(ctx, update); err == nil || !strings.Contains(err.Error(), "WorkflowIDConflictPolicy") {
		t.Fatalf("no conflict policy: %v", err)
	}
	if _, err := noPolicy.Get(ctx); err == nil {
		t.Fatal("the refused operation's Get has no error")
	}
}
