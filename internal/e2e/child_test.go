package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// ---------------------------------------------------------------------------
// Temporal's child-workflow sample, ported, and child workflows that fail,
// are cancelled by their parent's context, or outlive their parent.

// SampleChildWorkflow is the sample's child.
func SampleChildWorkflow(ctx workflow.Context, name string) (string, error) {
	greeting := "Hello " + name + "!"
	if p := workflow.GetInfo(ctx).ParentWorkflowExecution; p == nil || p.ID != "parent" || uuid.Validate(p.RunID) != nil {
		return "", fmt.Errorf("parent %+v", p)
	}
	workflow.GetLogger(ctx).Info("Child workflow execution: " + greeting)
	return greeting, nil
}

// SampleParentWorkflow is the sample's parent: it runs the child under a
// given workflow id and returns its greeting, with the child's execution.
func SampleParentWorkflow(ctx workflow.Context) (string, error) {
	cwo := workflow.ChildWorkflowOptions{WorkflowID: "ABC-SIMPLE-CHILD-WORKFLOW-ID"}
	ctx = workflow.WithChildOptions(ctx, cwo)
	f := workflow.ExecuteChildWorkflow(ctx, SampleChildWorkflow, "World")
	var exec workflow.Execution
	if err := f.GetChildWorkflowExecution().Get(ctx, &exec); err != nil {
		return "", err
	}
	var result string
	if err := f.Get(ctx, &result); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (%s run %s)", result, exec.ID, exec.RunID), nil
}

func TestChildWorkflow_Sample(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		if err := w.AddWorkflow(SampleParentWorkflow); err != nil {
			return err
		}
		return w.AddWorkflow(SampleChildWorkflow)
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "parent", TaskQueue: "q"}, SampleParentWorkflow, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	child, err := e.c.Describe(ctx, "ABC-SIMPLE-CHILD-WORKFLOW-ID")
	if err != nil {
		t.Fatal(err)
	}
	if child.ParentRunID != run.GetRunID() {
		t.Fatalf("the child's parent run %q, the parent's run %q", child.ParentRunID, run.GetRunID())
	}
	if want := "Hello World! (ABC-SIMPLE-CHILD-WORKFLOW-ID run " + child.RunID + ")"; uuid.Validate(child.RunID) != nil || got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	h := e.history("parent")
	for _, k := range []string{api.EventChildWorkflowInitiated, api.EventChildWorkflowStarted, api.EventChildWorkflowCompleted} {
		if count(h, k, "") != 1 {
			t.Fatalf("parent history has %d %s", count(h, k, ""), k)
		}
	}
	if child.Status != api.StatusCompleted || child.ParentWorkflowID != "parent" || child.ParentExecutionID != 1 {
		t.Fatalf("child %+v", child)
	}
	e.replayClean("parent", SampleParentWorkflow)
}

// FailingChild fails with an application error.
func FailingChild(ctx workflow.Context) (string, error) {
	return "", workflow.NewError("Boom", "the child broke", nil)
}

// ParentOfFailing reports how its child failed.
func ParentOfFailing(ctx workflow.Context) (string, error) {
	err := workflow.ExecuteChildWorkflow(ctx, FailingChild).Get(ctx, nil)
	var ce *workflow.ChildWorkflowExecutionError
	var ae *workflow.ApplicationError
	if !errors.As(err, &ce) || !errors.As(err, &ae) {
		return "", fmt.Errorf("unexpected child error %T %v", err, err)
	}
	return ce.WorkflowType + ": " + ae.Type + ": " + ae.Message, nil
}

func TestChildWorkflow_FailureReachesTheParent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		if err := w.AddWorkflow(ParentOfFailing); err != nil {
			return err
		}
		return w.AddWorkflow(FailingChild)
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "pf", TaskQueue: "q"}, ParentOfFailing, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "FailingChild: Boom: the child broke"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	if n := count(e.history("pf"), api.EventChildWorkflowFailed, ""); n != 1 {
		t.Fatalf("%d ChildWorkflowFailed", n)
	}
	e.replayClean("pf", ParentOfFailing)
}

// WaitingChild runs until it is cancelled or signalled "done".
func WaitingChild(ctx workflow.Context) (string, error) {
	var s string
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, "done"), func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &s) })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "done " + s, nil
}

// PolicyParent starts a request_cancel child and an abandoned one (named
// the way Temporal code names it, enums.PARENT_CLOSE_POLICY_ABANDON), and
// waits (for its cancellation).
func PolicyParent(ctx workflow.Context, prefix string) error {
	rc := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: prefix + "-rc", ParentClosePolicy: workflow.ParentClosePolicyRequestCancel}), WaitingChild)
	ab := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: prefix + "-ab", ParentClosePolicy: enums.PARENT_CLOSE_POLICY_ABANDON}), WaitingChild)
	for _, f := range []workflow.ChildWorkflowFuture{rc, ab} {
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
			return err
		}
	}
	return rc.Get(ctx, nil)
}

// CancellingParent cancels its child's context and waits for the child's
// cancellation; then starts a child whose id a running workflow holds.
func CancellingParent(ctx workflow.Context, busyID string) (string, error) {
	cctx, cancel := workflow.WithCancel(ctx)
	f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(cctx, workflow.ChildWorkflowOptions{
		WaitForCancellation: true}), WaitingChild)
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return "", err
	}
	cancel()
	err := f.Get(ctx, nil)
	var ce *workflow.ChildWorkflowExecutionError
	if !errors.As(err, &ce) || !errors.Is(err, workflow.ErrCanceled) {
		return "", fmt.Errorf("cancelled child: %v", err)
	}
	dup := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: busyID}), WaitingChild)
	err = dup.GetChildWorkflowExecution().Get(ctx, nil)
	var ase *workflow.ChildWorkflowExecutionAlreadyStartedError
	if !errors.As(err, &ase) {
		return "", fmt.Errorf("duplicate child: %v", err)
	}
	return "child canceled; " + ase.WorkflowID + " already running", nil
}

func TestChildWorkflow_ParentCancelAndClosePolicies(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		for _, fn := range []any{PolicyParent, WaitingChild, CancellingParent} {
			if err := w.AddWorkflow(fn); err != nil {
				return err
			}
		}
		return nil
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "pp", TaskQueue: "q"}, PolicyParent, "pp")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "both children started", func() bool {
		return count(e.history("pp"), api.EventChildWorkflowStarted, "") == 2
	})
	if _, err := e.c.Cancel(ctx, "pp", "enough"); err != nil {
		t.Fatal(err)
	}
	if _, err := result[any](t, run, 60*time.Second); err == nil {
		t.Fatal("the cancelled parent succeeded")
	}
	waitFor(t, 60*time.Second, "the request_cancel child canceled", func() bool {
		w, err := e.c.Describe(ctx, "pp-rc")
		return err == nil && w.Status == api.StatusCanceled
	})
	if w, err := e.c.Describe(ctx, "pp"); err != nil || w.Status != api.StatusCanceled {
		t.Fatalf("parent %+v %v", w, err)
	}
	// The abandoned child was not asked (the parent's cancel and close
	// were applied in the acks that recorded them) and still runs.
	ab, err := e.c.Describe(ctx, "pp-ab")
	if err != nil {
		t.Fatal(err)
	}
	if ab.Status != api.StatusRunning || ab.CancelRequested {
		t.Fatalf("abandoned child %+v", ab)
	}
	e.replayClean("pp", PolicyParent)

	// A parent cancels its child's context; then a child id that the
	// abandoned child holds cannot start.
	run2, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "cp", TaskQueue: "q"}, CancellingParent, "pp-ab")
	if err != nil {
		t.Fatal(err)
	}
	got, err := result[string](t, run2, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "child canceled; pp-ab already running"; got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	h := e.history("cp")
	for _, k := range []string{api.EventChildWorkflowCancelRequested, api.EventChildWorkflowCanceled, api.EventStartChildWorkflowFailed} {
		if count(h, k, "") != 1 {
			t.Fatalf("history of cp has %d %s", count(h, k, ""), k)
		}
	}
	e.replayClean("cp", CancellingParent)

	// The abandoned child finishes on its own.
	if err := e.c.Signal(ctx, "pp-ab", "done", "x"); err != nil {
		t.Fatal(err)
	}
	got, err = result[string](t, e.c.GetWorkflow(context.Background(), "pp-ab", ""), 60*time.Second)
	if err != nil || got != "done x" {
		t.Fatalf("abandoned child: %q %v", got, err)
	}
}

// TerminateArgs is TerminatePolicyParent's input.
type TerminateArgs struct {
	// ChildID is the child's workflow id.
	ChildID string
	// Wait: wait for the child's close rather than closing the parent.
	Wait bool
}

// TerminatePolicyParent starts a child under the terminate parent close
// policy (the default) and reports how the child's future ends; with
// wait false it returns once the child started, closing the parent.
func TerminatePolicyParent(ctx workflow.Context, a TerminateArgs) (string, error) {
	f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: a.ChildID}), WaitingChild)
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return "", err
	}
	if !a.Wait {
		return "started", nil
	}
	err := f.Get(ctx, nil)
	var ce *workflow.ChildWorkflowExecutionError
	if !errors.As(err, &ce) || !errors.Is(err, workflow.ErrChildWorkflowTerminated) {
		return "", fmt.Errorf("terminated child: %v", err)
	}
	return "child terminated", nil
}

// Goal: a parent that closes terminates its terminate-policy child (status
// terminated, WorkflowTerminated in its history, reason parent_closed),
// and a child terminated directly fails its parent's future with the
// terminated error.
func TestChildWorkflow_TerminatePolicyAndTerminatedChild(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		for _, fn := range []any{TerminatePolicyParent, WaitingChild} {
			if err := w.AddWorkflow(fn); err != nil {
				return err
			}
		}
		return nil
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "tp", TaskQueue: "q"}, TerminatePolicyParent, TerminateArgs{ChildID: "tp-child"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, run, 60*time.Second); err != nil || got != "started" {
		t.Fatalf("parent: %q %v", got, err)
	}
	w, err := e.c.Describe(ctx, "tp-child")
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != api.StatusTerminated || w.Error == nil || w.Error.Message != api.CancelReasonParentClosed {
		t.Fatalf("child %+v, want terminated by parent_closed", w)
	}
	if n := count(e.history("tp-child"), api.EventWorkflowTerminated, ""); n != 1 {
		t.Fatalf("%d WorkflowTerminated in the child's history", n)
	}

	run2, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "tw", TaskQueue: "q"}, TerminatePolicyParent, TerminateArgs{ChildID: "tw-child", Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the child started", func() bool {
		return count(e.history("tw"), api.EventChildWorkflowStarted, "") == 1
	})
	if err := e.c.TerminateWorkflow(ctx, "tw-child", "", "stop it"); err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, run2, 60*time.Second); err != nil || got != "child terminated" {
		t.Fatalf("parent: %q %v", got, err)
	}
	if n := count(e.history("tw"), api.EventChildWorkflowTerminated, ""); n != 1 {
		t.Fatalf("%d ChildWorkflowTerminated in the parent's history", n)
	}
	e.replayClean("tw", TerminatePolicyParent)
}

// FlakyChild fails its first two executions and succeeds in its third.
func FlakyChild(ctx workflow.Context) (string, error) {
	if n := workflow.GetInfo(ctx).ExecutionID; n < 3 {
		return "", fmt.Errorf("flaky execution %d", n)
	}
	return "ok", nil
}

// RetryingParent runs FlakyChild under a retry policy of maxAttempts.
func RetryingParent(ctx workflow.Context, maxAttempts int32) (string, error) {
	var s string
	err := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		RetryPolicy: &workflow.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: maxAttempts}}),
		FlakyChild).Get(ctx, &s)
	return s, err
}

// Goal: a child's RetryPolicy retries its failed executions on the server;
// the parent sees the result of the attempt that succeeds, or only the
// last failure when the attempts run out.
func TestChildWorkflow_RetryPolicy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.startWorker("q", testOptions(), func(w worker.Worker) error {
		for _, fn := range []any{RetryingParent, FlakyChild} {
			if err := w.AddWorkflow(fn); err != nil {
				return err
			}
		}
		return nil
	})
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "rp3", TaskQueue: "q"}, RetryingParent, int32(3))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := result[string](t, run, 60*time.Second); err != nil || got != "ok" {
		t.Fatalf("parent with 3 attempts: %q %v", got, err)
	}
	h := e.history("rp3")
	if n, m := count(h, api.EventChildWorkflowCompleted, ""), count(h, api.EventChildWorkflowFailed, ""); n != 1 || m != 0 {
		t.Fatalf("parent history: %d ChildWorkflowCompleted, %d ChildWorkflowFailed", n, m)
	}
	e.replayClean("rp3", RetryingParent)

	run2, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "rp2", TaskQueue: "q"}, RetryingParent, int32(2))
	if err != nil {
		t.Fatal(err)
	}
	_, err = result[string](t, run2, 60*time.Second)
	if err == nil || !strings.Contains(err.Error(), "flaky execution 2") {
		t.Fatalf("parent with 2 attempts: %v, want the second execution's failure", err)
	}
	if n := count(e.history("rp2"), api.EventChildWorkflowFailed, ""); n != 1 {
		t.Fatalf("%d ChildWorkflowFailed", n)
	}
}
