package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nexus-rpc/sdk-go/nexus"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/temporalnexus"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Nexus operations across two namespaces (docs/sdk.md, "Nexus"): caller
// workflows in nx-caller call the service nxService through the endpoint
// nxEndpoint, whose handler worker runs in nx-target.
const (
	nxCallerNS  = "nx-caller"
	nxTargetNS  = "nx-target"
	nxEndpoint  = "nx-endpoint"
	nxService   = "nx-service"
	nxHandlerQ  = "nx-handler"
	nxCallerQ   = "nx-callers"
	nxWaitToken = "nx-wait"
)

// NxEchoInput is the input of the echo operation.
type NxEchoInput struct{ Message string }

// NxHello is the handler's workflow of the hello operation.
func NxHello(_ workflow.Context, name string) (string, error) { return "Hello " + name, nil }

// NxWait is the handler's workflow of the wait operation: it waits for
// the signal "go" (whose value it returns) or its cancellation.
func NxWait(ctx workflow.Context, _ string) (string, error) {
	var v string
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, "go"), func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &v) })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	if ctx.Err() != nil {
		return "", temporal.NewCanceledError()
	}
	return "waited for " + v, nil
}

// nxService returns the handler's service: a sync operation, two
// workflow-run operations and one that fails.
func nxHandlerService() *nexus.Service {
	s := nexus.NewService(nxService)
	s.MustRegister(
		nexus.NewSyncOperation("echo", func(ctx context.Context, in NxEchoInput, _ nexus.StartOperationOptions) (NxEchoInput, error) {
			// The handler's client is the worker's, of the target namespace.
			return NxEchoInput{Message: strings.ToUpper(in.Message) + " from " + temporalnexus.GetClient(ctx).(*client.TetherClient).Namespace()}, nil
		}),
		temporalnexus.NewWorkflowRunOperation("hello", NxHello,
			func(_ context.Context, name string, _ nexus.StartOperationOptions) (client.StartWorkflowOptions, error) {
				return client.StartWorkflowOptions{ID: "nx-hello-" + name}, nil
			}),
		temporalnexus.NewWorkflowRunOperation("wait", NxWait,
			func(_ context.Context, id string, _ nexus.StartOperationOptions) (client.StartWorkflowOptions, error) {
				return client.StartWorkflowOptions{ID: id}, nil
			}),
		nexus.NewSyncOperation("fail", func(_ context.Context, customer string, _ nexus.StartOperationOptions) (string, error) {
			return "", nexus.NewHandlerErrorf(nexus.HandlerErrorTypeBadRequest, "no such customer %q", customer)
		}),
	)
	return s
}

// NxSyncCaller calls the sync operation.
func NxSyncCaller(ctx workflow.Context, msg string) (string, error) {
	c := workflow.NewNexusClient(nxEndpoint, nxService)
	var out NxEchoInput
	if err := c.ExecuteOperation(ctx, "echo", NxEchoInput{Message: msg}, workflow.NexusOperationOptions{}).Get(ctx, &out); err != nil {
		return "", err
	}
	return out.Message, nil
}

// NxRunCaller calls the workflow-run operation and reports its token and
// result.
func NxRunCaller(ctx workflow.Context, name string) (string, error) {
	c := workflow.NewNexusClient(nxEndpoint, nxService)
	fut := c.ExecuteOperation(ctx, "hello", name, workflow.NexusOperationOptions{ScheduleToCloseTimeout: time.Minute})
	var exec workflow.NexusOperationExecution
	if err := fut.GetNexusOperationExecution().Get(ctx, &exec); err != nil {
		return "", err
	}
	var out string
	if err := fut.Get(ctx, &out); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (token: %t)", out, exec.OperationToken != ""), nil
}

// NxFailCaller calls an operation that fails, and an endpoint that does
// not exist, and describes both errors.
func NxFailCaller(ctx workflow.Context) (string, error) {
	describe := func(err error) string {
		var ne *temporal.NexusOperationError
		var ae *temporal.ApplicationError
		if !errors.As(err, &ne) || !errors.As(err, &ae) {
			return fmt.Sprintf("unexpected %T: %v", err, err)
		}
		return fmt.Sprintf("%s/%s/%s: %s: %s", ne.Endpoint, ne.Service, ne.Operation, ae.Type(), ae.Error())
	}
	err := workflow.NewNexusClient(nxEndpoint, nxService).ExecuteOperation(ctx, "fail", "c-42", workflow.NexusOperationOptions{}).Get(ctx, nil)
	first := describe(err)
	err = workflow.NewNexusClient("nx-nowhere", nxService).ExecuteOperation(ctx, "echo", NxEchoInput{}, workflow.NexusOperationOptions{}).Get(ctx, nil)
	return first + "\n" + describe(err), nil
}

// NxCancelCaller starts the wait operation, cancels it once it started,
// and reports what its future says.
func NxCancelCaller(ctx workflow.Context, id string) (string, error) {
	c := workflow.NewNexusClient(nxEndpoint, nxService)
	cctx, cancel := workflow.WithCancel(ctx)
	fut := c.ExecuteOperation(cctx, "wait", id, workflow.NexusOperationOptions{
		CancellationType: workflow.NexusOperationCancellationTypeWaitCompleted})
	if err := fut.GetNexusOperationExecution().Get(ctx, nil); err != nil {
		return "", err
	}
	cancel()
	err := fut.Get(ctx, nil)
	if errors.As(err, new(*temporal.CanceledError)) && errors.As(err, new(*temporal.NexusOperationError)) {
		return "canceled", nil
	}
	return "", fmt.Errorf("not canceled: %w", err)
}

// NxWaitCaller starts the wait operation and returns its result.
func NxWaitCaller(ctx workflow.Context, id string) (string, error) {
	var out string
	err := workflow.NewNexusClient(nxEndpoint, nxService).ExecuteOperation(ctx, "wait", id, workflow.NexusOperationOptions{}).Get(ctx, &out)
	return out, err
}

// nexusEnv is a server with the two namespaces and the endpoint, and the
// clients of each namespace.
type nexusEnv struct {
	*env
	caller, handler *client.TetherClient
}

func newNexusEnv(t *testing.T) *nexusEnv {
	e := newEnv(t)
	ctx := context.Background()
	for _, ns := range []string{nxCallerNS, nxTargetNS} {
		if _, err := e.c.CreateNamespace(ctx, api.CreateNamespaceRequest{Name: ns}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.c.CreateNexusEndpoint(ctx, api.CreateNexusEndpointRequest{Name: nxEndpoint,
		TargetNamespace: nxTargetNS, TargetTaskQueue: nxHandlerQ}); err != nil {
		t.Fatal(err)
	}
	return &nexusEnv{env: e, caller: e.c.WithNamespace(nxCallerNS), handler: e.c.WithNamespace(nxTargetNS)}
}

func (e *nexusEnv) startHandler() *running {
	return e.startWorkerOn(e.handler, nxHandlerQ, testOptions(), func(w worker.Worker) error {
		w.RegisterNexusService(nxHandlerService())
		w.RegisterWorkflow(NxHello)
		w.RegisterWorkflow(NxWait)
		return nil
	})
}

func (e *nexusEnv) startCaller() *running {
	return e.startWorkerOn(e.caller, nxCallerQ, testOptions(), func(w worker.Worker) error {
		for _, f := range []any{NxSyncCaller, NxRunCaller, NxFailCaller, NxCancelCaller, NxWaitCaller} {
			w.RegisterWorkflow(f)
		}
		return nil
	})
}

// run starts a caller workflow and returns its result.
func (e *nexusEnv) run(id string, wf any, args ...any) (string, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := e.caller.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: nxCallerQ}, wf, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	var out string
	err = r.Get(ctx, &out)
	return out, err
}

// dump logs the histories of the caller's workflow id and of every
// workflow of the target namespace (for a failed test).
func (e *nexusEnv) dump(id string) {
	ctx := context.Background()
	show := func(c *client.TetherClient, id string) {
		h, err := c.History(ctx, id, 0)
		if err != nil {
			e.t.Logf("history of %s/%s: %v", c.Namespace(), id, err)
			return
		}
		for _, ev := range h.Events {
			raw, _ := json.Marshal(ev)
			e.t.Logf("%s/%s: %s", c.Namespace(), id, raw)
		}
	}
	show(e.caller, id)
	page, err := e.handler.List(ctx, client.ListOptions{})
	if err != nil {
		e.t.Logf("list %s: %v", nxTargetNS, err)
		return
	}
	for _, w := range page.Workflows {
		show(e.handler, w.InstanceID)
	}
}

// Goal: a caller workflow runs a sync operation and a workflow-run
// operation of a handler in another namespace, through an endpoint, and
// gets their results; the workflow-run operation's workflow ran in the
// target namespace.
func TestNexusOperationsAcrossNamespaces(t *testing.T) {
	e := newNexusEnv(t)
	e.startHandler()
	e.startCaller()

	got, err := e.run("nx-sync", NxSyncCaller, "hi")
	if err != nil || got != "HI from "+nxTargetNS {
		t.Fatalf("sync operation: %q, %v", got, err)
	}
	got, err = e.run("nx-run", NxRunCaller, "Ann")
	if err != nil || got != "Hello Ann (token: true)" {
		t.Fatalf("workflow-run operation: %q, %v", got, err)
	}
	w, err := e.handler.Describe(context.Background(), "nx-hello-Ann")
	if err != nil || w.Status != api.StatusCompleted || w.WorkflowType != "NxHello" {
		t.Fatalf("the operation's workflow in %s: %+v, %v", nxTargetNS, w, err)
	}
	if _, err := e.caller.Describe(context.Background(), "nx-hello-Ann"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("the operation's workflow is not in the caller's namespace: %v", err)
	}
}

// Goal: a handler's error, and an unknown endpoint, reach the caller as a
// *temporal.NexusOperationError naming the operation, with the handler's
// error (an *ApplicationError) as its cause.
func TestNexusOperationErrorsReachTheCaller(t *testing.T) {
	e := newNexusEnv(t)
	e.startHandler()
	e.startCaller()

	got, err := e.run("nx-fail", NxFailCaller)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(got, "\n")
	want0 := `nx-endpoint/nx-service/fail: HandlerError: handler error (BAD_REQUEST)`
	if !strings.HasPrefix(lines[0], want0) || !strings.Contains(lines[0], `no such customer \"c-42\"`) && !strings.Contains(lines[0], `no such customer "c-42"`) {
		t.Errorf("handler error: %q, want %q… naming the customer", lines[0], want0)
	}
	if want1 := `nx-nowhere/nx-service/echo: NexusEndpointNotFound: nexus endpoint "nx-nowhere" not found`; len(lines) < 2 || !strings.HasPrefix(lines[1], want1) {
		t.Errorf("unknown endpoint: %q, want %q…", lines[1:], want1)
	}
}

// Goal: cancelling the caller's context cancels the operation's workflow
// in the target namespace, and the caller's future fails with a
// *temporal.CanceledError inside a *temporal.NexusOperationError once it
// closed (WaitCompleted).
func TestNexusOperationCancel(t *testing.T) {
	e := newNexusEnv(t)
	e.startHandler()
	e.startCaller()

	got, err := e.run("nx-cancel", NxCancelCaller, "nx-wait-1")
	if err != nil || got != "canceled" {
		e.dump("nx-cancel")
		t.Fatalf("cancel: %q, %v", got, err)
	}
	w, err := e.handler.Describe(context.Background(), "nx-wait-1")
	if err != nil || w.Status != api.StatusCanceled {
		t.Fatalf("the operation's workflow: %+v, %v", w, err)
	}
}

// Goal: an operation in flight survives the loss of both workers: the
// caller's and the handler's workers stop while the operation's workflow
// waits; the workflow's outcome reaches the caller through new workers.
func TestNexusOperationSurvivesWorkerRestarts(t *testing.T) {
	e := newNexusEnv(t)
	h, c := e.startHandler(), e.startCaller()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := e.caller.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "nx-restart", TaskQueue: nxCallerQ}, NxWaitCaller, nxWaitToken)
	if err != nil {
		t.Fatal(err)
	}
	// The operation started: the caller heard of it (its signal is in
	// the caller's history).
	waitFor(t, 30*time.Second, "the operation's start reaches the caller", func() bool {
		hist, err := e.caller.History(ctx, "nx-restart", 0)
		if err != nil {
			return false
		}
		for _, ev := range hist.Events {
			if ev.Kind == api.EventSignalReceived {
				return true
			}
		}
		return false
	})
	h.stop()
	c.stop()
	if err := e.handler.SignalWorkflow(ctx, nxWaitToken, "", "go", "the restart"); err != nil {
		t.Fatal(err)
	}
	e.startHandler()
	e.startCaller()
	var out string
	if err := r.Get(ctx, &out); err != nil || out != "waited for the restart" {
		t.Fatalf("result after the restarts: %q, %v", out, err)
	}
}

// NxTimeoutCaller starts the wait operation with a ScheduleToCloseTimeout
// it cannot meet and describes its error.
func NxTimeoutCaller(ctx workflow.Context, id string) (string, error) {
	err := workflow.NewNexusClient(nxEndpoint, nxService).ExecuteOperation(ctx, "wait", id,
		workflow.NexusOperationOptions{ScheduleToCloseTimeout: 2 * time.Second}).Get(ctx, nil)
	var te *temporal.TimeoutError
	if errors.As(err, new(*temporal.NexusOperationError)) && errors.As(err, &te) {
		return "timed out: " + te.TimeoutType().String(), nil
	}
	return "", fmt.Errorf("not a timeout: %w", err)
}

// Goal: an operation past its ScheduleToCloseTimeout fails the caller's
// future with a timeout inside a *temporal.NexusOperationError, and the
// operation's workflow is cancelled.
func TestNexusOperationTimeout(t *testing.T) {
	e := newNexusEnv(t)
	e.startHandler()
	e.startWorkerOn(e.caller, nxCallerQ, testOptions(), func(w worker.Worker) error {
		w.RegisterWorkflow(NxTimeoutCaller)
		return nil
	})
	got, err := e.run("nx-timeout", NxTimeoutCaller, "nx-wait-timeout")
	if err != nil || got != "timed out: "+enums.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE.String() {
		t.Fatalf("timeout: %q, %v", got, err)
	}
	waitFor(t, 30*time.Second, "the operation's workflow is canceled", func() bool {
		w, err := e.handler.Describe(context.Background(), "nx-wait-timeout")
		return err == nil && w.Status == api.StatusCanceled
	})
}
