package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nexus-rpc/sdk-go/nexus"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/nexusop"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/temporal"
)

// Nexus (docs/sdk.md, "Nexus"). A worker that runs workflows answers its
// workflows' Nexus starts and cancels (the local activities
// wf.NexusStartActivity, wf.NexusCancelActivity); a worker with
// RegisterNexusService runs the operations of its services
// (wf.NexusOperationWorkflow and its activities).

// NexusServiceRegistry registers Nexus services (Temporal's
// worker.NexusServiceRegistry).
type NexusServiceRegistry interface {
	// RegisterNexusService registers a service's operations; it panics
	// on an invalid service, as Temporal's does.
	RegisterNexusService(service *nexus.Service)
}

// RegisterNexusService registers the operations of service: the worker
// runs those that callers send through an endpoint whose target is the
// worker's namespace and task queue (Temporal's
// Worker.RegisterNexusService). It panics on a service without a name or
// one registered twice; AddNexusService returns the error instead.
func (w *TetherWorker) RegisterNexusService(service *nexus.Service) {
	if err := w.AddNexusService(service); err != nil {
		panic(err)
	}
}

// AddNexusService is RegisterNexusService returning the error.
func (w *TetherWorker) AddNexusService(service *nexus.Service) error {
	if service == nil || service.Name == "" {
		return errors.New("worker: register nexus service: a service needs a name")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.nexusServices {
		if s.Name == service.Name {
			return fmt.Errorf("worker: nexus service %q registered twice", service.Name)
		}
	}
	if len(w.nexusServices) == 0 {
		def, err := wf.NewDefinition(nexusOperationWorkflow, wf.NexusOperationWorkflow)
		if err != nil {
			return fmt.Errorf("worker: register nexus service: %w", err)
		}
		if err := w.reg.addWorkflow(def, true); err != nil {
			return err
		}
		if err := w.reg.addActivityPC(w.nexusHandle, wf.NexusHandleActivity, false, true); err != nil {
			return err
		}
		if err := w.reg.addActivityPC(w.nexusDeliver, wf.NexusDeliverActivity, false, true); err != nil {
			return err
		}
	}
	w.nexusServices = append(w.nexusServices, service)
	return nil
}

// nexusCalls are the local activities that start and cancel the Nexus
// operations of the worker's workflows: run in the worker that runs the
// turn, they need no registration, and a worker of workflows alone does
// not poll activities for them.
type nexusCalls struct{ start, cancel *fnsig.Sig }

// newNexusCalls inspects w's start and cancel functions.
func (w *TetherWorker) newNexusCalls() (nexusCalls, error) {
	start, err := fnsig.InspectActivity(w.nexusStart, contextType)
	if err != nil {
		return nexusCalls{}, err
	}
	cancel, err := fnsig.InspectActivity(w.nexusCancel, contextType)
	return nexusCalls{start: start, cancel: cancel}, err
}

// localActivity resolves a local activity's name: the Nexus calls, then
// the registered activities.
func (w *TetherWorker) localActivity(name string) *fnsig.Sig {
	switch name {
	case wf.NexusStartActivity:
		return w.nexus.start
	case wf.NexusCancelActivity:
		return w.nexus.cancel
	}
	return w.reg.localActivity(name)
}

// nexusRetry is how the built-in steps of an operation's workflow are
// retried.
func nexusRetry() *wf.RetryPolicy {
	return &wf.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second}
}

// nexusStart starts an operation for a caller workflow of this worker:
// it resolves the endpoint and starts the operation's workflow in the
// endpoint's namespace and task queue, once (req.OperationID is the
// caller's: a start run again finds the workflow it started).
func (w *TetherWorker) nexusStart(ctx context.Context, req wf.NexusStartRequest) (wf.NexusStartResult, error) {
	ep, err := w.c.GetNexusEndpoint(ctx, req.Endpoint)
	if errors.Is(err, client.ErrNotFound) {
		return wf.NexusStartResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("nexus endpoint %q not found", req.Endpoint), "NexusEndpointNotFound", err)
	}
	if err != nil {
		return wf.NexusStartResult{}, fmt.Errorf("nexus endpoint %q: %w", req.Endpoint, err)
	}
	id := req.OperationID
	target := w.c.WithNamespace(ep.TargetNamespace)
	out := wf.NexusStartResult{OperationID: id, TargetNamespace: ep.TargetNamespace}
	// A start run again finds the workflow the first one started,
	// running or closed: an operation runs once.
	if _, err := target.Describe(ctx, id); err == nil {
		return out, nil
	} else if !errors.Is(err, client.ErrNotFound) {
		return out, fmt.Errorf("nexus operation %s: %w", req.Operation, err)
	}
	op := wf.NexusOperationRequest{Endpoint: req.Endpoint, Service: req.Service, Operation: req.Operation,
		Input: req.Input, Header: req.Header, RequestID: id, Caller: req.Caller}
	_, err = target.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: ep.TargetTaskQueue,
		WorkflowExecutionTimeout: req.ScheduleToClose}, wf.NexusOperationWorkflow, op)
	if errors.Is(err, client.ErrNotFound) {
		return out, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("nexus endpoint %q: target namespace %q not found", req.Endpoint, ep.TargetNamespace),
			"NexusTargetNotFound", err)
	}
	if err != nil {
		return out, fmt.Errorf("nexus operation %s: start in namespace %s: %w", req.Operation, ep.TargetNamespace, err)
	}
	return out, nil
}

// nexusCancel asks an operation's workflow to cancel; a closed or unknown
// one needs nothing.
func (w *TetherWorker) nexusCancel(ctx context.Context, req wf.NexusCancelRequest) error {
	err := w.c.WithNamespace(req.TargetNamespace).CancelWorkflow(ctx, req.OperationID, "")
	if err == nil || errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrConflict) {
		return nil
	}
	return fmt.Errorf("nexus cancel %s: %w", req.OperationID, err)
}

// nexusHandle runs the handler's StartOperation on this worker.
func (w *TetherWorker) nexusHandle(ctx context.Context, req wf.NexusOperationRequest) (wf.NexusHandled, error) {
	w.mu.Lock()
	services := append([]*nexus.Service(nil), w.nexusServices...)
	w.mu.Unlock()
	env := &nexusop.Env{Client: w.c, Logger: activity.GetLogger(ctx), Namespace: w.c.Namespace(), TaskQueue: w.queue}
	return nexusop.Handle(ctx, services, env, req)
}

// nexusDeliver signals an operation's progress to its caller; a caller
// that closed (or continued as new) no longer waits for it.
func (w *TetherWorker) nexusDeliver(ctx context.Context, caller wf.NexusCaller, m wf.NexusMessage) error {
	err := w.c.WithNamespace(caller.Namespace).SignalWorkflow(ctx, caller.WorkflowID, caller.RunID, caller.Signal, m)
	if err == nil || errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrConflict) {
		return nil
	}
	return fmt.Errorf("nexus: signal caller %s: %w", caller.WorkflowID, err)
}

// nexusOperationWorkflow runs one Nexus operation in the handler's
// namespace: the handler's start (an activity on this task queue), then
// for a workflow-run operation its workflow (a child), each step reported
// to the caller (NexusDeliverActivity). Cancelling it cancels the step in
// flight; the caller then hears of the outcome. It closes as the
// operation did: with its result, its failure, or canceled.
func nexusOperationWorkflow(ctx wf.Context, req wf.NexusOperationRequest) (json.RawMessage, error) {
	info := wf.GetInfo(ctx)
	opts := wf.ActivityOptions{TaskQueue: info.TaskQueueName, StartToCloseTimeout: time.Minute, RetryPolicy: nexusRetry()}
	dctx, _ := wf.NewDisconnectedContext(ctx)
	deliver := func(m wf.NexusMessage) error {
		for {
			err := wf.ExecuteActivity(wf.WithActivityOptions(dctx, opts), wf.NexusDeliverActivity, req.Caller, m).Get(dctx, nil)
			// A cancel of this workflow cancels every activity it has
			// outstanding, a report in flight too: the report is sent
			// again (a signal sent twice is applied once by the caller,
			// whose coroutine ignores a state it already has).
			if !errors.Is(err, wf.ErrCanceled) {
				return err
			}
		}
	}
	// finish reports the outcome and closes with it.
	finish := func(m wf.NexusMessage, outcome error) (json.RawMessage, error) {
		if err := deliver(m); err != nil {
			return nil, err
		}
		return m.Result, outcome
	}
	fail := func(err error) (json.RawMessage, error) {
		if errors.Is(err, wf.ErrCanceled) {
			return finish(wf.NexusMessage{State: wf.NexusCanceled}, wf.ErrCanceled)
		}
		e := errconv.ToAPI(err)
		return finish(wf.NexusMessage{State: wf.NexusFailed, Failure: &e}, err)
	}
	var h wf.NexusHandled
	if err := wf.ExecuteActivity(wf.WithActivityOptions(ctx, opts), wf.NexusHandleActivity, req).Get(ctx, &h); err != nil {
		var ae *wf.ActivityError
		if errors.As(err, &ae) && ae.Err != nil {
			err = ae.Err
		}
		return fail(err)
	}
	switch {
	case h.Failure != nil && h.Failure.Type == "Canceled":
		return finish(wf.NexusMessage{State: wf.NexusCanceled}, wf.ErrCanceled)
	case h.Failure != nil:
		return finish(wf.NexusMessage{State: wf.NexusFailed, Failure: h.Failure}, wf.DecodeFailure(h.Failure))
	case h.Start == nil:
		return finish(wf.NexusMessage{State: wf.NexusSucceeded, Result: h.Result, Token: h.Token}, nil)
	}
	s := h.Start
	cctx := wf.WithChildOptions(ctx, wf.ChildWorkflowOptions{WorkflowID: s.WorkflowID, TaskQueue: s.TaskQueue,
		WorkflowExecutionTimeout: s.ExecutionTimeout, WorkflowRunTimeout: s.RunTimeout, RetryPolicy: s.RetryPolicy,
		Memo: s.Memo, SearchAttributes: s.SearchAttributes, ParentClosePolicy: wf.ParentClosePolicyRequestCancel,
		WaitForCancellation: true})
	args := make([]any, len(s.Args))
	for i, a := range s.Args {
		args[i] = a
	}
	child := wf.ExecuteChildWorkflow(cctx, s.WorkflowType, args...)
	if err := child.GetChildWorkflowExecution().Get(dctx, nil); err != nil {
		return fail(err)
	}
	if err := deliver(wf.NexusMessage{State: wf.NexusStarted, Token: h.Token}); err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := child.Get(dctx, &raw); err != nil {
		var ce *wf.ChildWorkflowExecutionError
		if errors.As(err, &ce) && ce.Err != nil {
			err = ce.Err
		}
		return fail(err)
	}
	return finish(wf.NexusMessage{State: wf.NexusSucceeded, Result: raw, Token: h.Token}, nil)
}
