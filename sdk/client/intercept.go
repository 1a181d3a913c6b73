package client

import (
	"context"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// This file runs a client's interceptors and context propagators
// (Options.Interceptors, Options.ContextPropagators) around its calls to
// workflows. Without any, each call goes straight to its …Direct method:
// no header is made or sent.

// sendHeaderKey is the context key of the header a request sends (its wire
// form), set by withSendHeader and read where the request is built.
type sendHeaderKey struct{}

// sendHeader returns the header the request made with ctx sends (nil:
// none).
func sendHeader(ctx context.Context) api.Header {
	h, _ := ctx.Value(sendHeaderKey{}).(api.Header)
	return h
}

// withSendHeader returns ctx whose request sends h (the interceptors'
// header, nil without them) with what the propagators inject from ctx. A
// propagator's error is returned, naming it.
func (c *TetherClient) withSendHeader(ctx context.Context, h map[string]*common.Payload) (context.Context, error) {
	if len(c.propagators) > 0 {
		if h == nil {
			h = map[string]*common.Payload{}
		}
		for _, p := range c.propagators {
			if err := p.Inject(ctx, wf.MapHeader(h)); err != nil {
				return ctx, fmt.Errorf("tether: context propagator %T: Inject: %w", p, err)
			}
		}
	}
	raw, err := wf.EncodeHeader(h)
	if err != nil {
		return ctx, fmt.Errorf("tether: %w", err)
	}
	if raw == nil {
		return ctx, nil
	}
	return context.WithValue(ctx, sendHeaderKey{}, api.Header(raw)), nil
}

// intercepted reports whether the client's calls go through interceptors
// or propagators.
func (c *TetherClient) intercepted() bool { return c.out != nil || len(c.propagators) > 0 }

// outbound returns the interceptors' chain, or the root when there are
// none (only propagators).
func (c *TetherClient) outbound() ClientOutboundInterceptor {
	if c.out != nil {
		return c.out
	}
	return &clientRoot{c: c}
}

// buildInterceptors builds the outbound chain of Options.Interceptors, the
// first outermost.
func (c *TetherClient) buildInterceptors() {
	if len(c.interceptors) == 0 {
		return
	}
	var out ClientOutboundInterceptor = &clientRoot{c: c}
	for i := len(c.interceptors) - 1; i >= 0; i-- {
		out = c.interceptors[i].InterceptClient(out)
	}
	c.out = out
}

// newHeader returns ctx with a fresh header for an intercepted call
// (what interceptor.Header returns).
func newHeader(ctx context.Context) context.Context {
	return wf.WithHeader(ctx, map[string]*common.Payload{})
}

// ExecuteWorkflow starts workflow (a workflow function, or its registered
// name) with args (none, one — sent as its JSON value — or several — sent
// as a JSON array), as Temporal's Client.ExecuteWorkflow. A function's
// arguments are checked against its parameters. When a running workflow
// has options.ID, it returns a handle on that run, unless
// options.WorkflowExecutionErrorWhenAlreadyStarted (then an error matching
// ErrAlreadyRunning). Options that Tether does not support are refused,
// naming the option (see StartWorkflowOptions). The call goes through
// Options.Interceptors and sends the propagators' header.
func (c *TetherClient) ExecuteWorkflow(ctx context.Context, options StartWorkflowOptions, workflow any, args ...any) (WorkflowRun, error) {
	if !c.intercepted() {
		return c.executeWorkflowDirect(ctx, options, workflow, args...)
	}
	name, err := workflowName(workflow)
	if err != nil {
		return nil, fmt.Errorf("tether: execute workflow: %w", err)
	}
	if err := checkWorkflowArgs(workflow, args); err != nil {
		return nil, fmt.Errorf("tether: execute workflow %s: %w", name, err)
	}
	return c.outbound().ExecuteWorkflow(newHeader(ctx), &ClientExecuteWorkflowInput{Options: &options, WorkflowType: name, Args: args})
}

// SignalWorkflow sends the signal signalName with arg (nil for none) to a
// running workflow (Temporal's Client.SignalWorkflow). runID "" signals
// the current execution; another run id must be the current one.
func (c *TetherClient) SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error {
	if !c.intercepted() {
		return c.signalWorkflowDirect(ctx, workflowID, runID, signalName, arg)
	}
	return c.outbound().SignalWorkflow(newHeader(ctx), &ClientSignalWorkflowInput{WorkflowID: workflowID, RunID: runID, SignalName: signalName, Arg: arg})
}

// SignalWithStartWorkflow signals workflowID with signalName and
// signalArg, starting it first (as ExecuteWorkflow would, with options and
// workflow(workflowArgs...)) when it is not running — unknown, or finished
// (then as its next execution). Both happen in one server transaction. A
// started workflow finds the signal in its channel when its code's first
// line runs. workflowID is required (options.ID is ignored). The run
// returned is the execution that received the signal.
func (c *TetherClient) SignalWithStartWorkflow(ctx context.Context, workflowID, signalName string, signalArg any,
	options StartWorkflowOptions, workflow any, workflowArgs ...any) (WorkflowRun, error) {
	if !c.intercepted() {
		return c.signalWithStartWorkflowDirect(ctx, workflowID, signalName, signalArg, options, workflow, workflowArgs...)
	}
	name, err := workflowName(workflow)
	if err != nil {
		return nil, fmt.Errorf("tether: signal with start: %w", err)
	}
	options.ID = workflowID
	return c.outbound().SignalWithStartWorkflow(newHeader(ctx), &ClientSignalWithStartWorkflowInput{SignalName: signalName, SignalArg: signalArg,
		Options: &options, WorkflowType: name, Args: workflowArgs})
}

// CancelWorkflow requests the cancellation of a workflow (Temporal's
// Client.CancelWorkflow); the workflow sees its context cancelled. A
// cancellation already requested, or of a closed workflow, is not an
// error; an unknown workflow is ErrNotFound.
func (c *TetherClient) CancelWorkflow(ctx context.Context, workflowID, runID string) error {
	if c.out == nil {
		return c.cancelWorkflowDirect(ctx, workflowID, runID)
	}
	return c.out.CancelWorkflow(ctx, &ClientCancelWorkflowInput{WorkflowID: workflowID, RunID: runID})
}

// TerminateWorkflow ends the current execution of a running workflow at
// once, without running its code (Temporal's Client.TerminateWorkflow):
// see terminateWorkflowDirect.
func (c *TetherClient) TerminateWorkflow(ctx context.Context, workflowID, runID, reason string, details ...any) error {
	if c.out == nil {
		return c.terminateWorkflowDirect(ctx, workflowID, runID, reason, details...)
	}
	return c.out.TerminateWorkflow(ctx, &ClientTerminateWorkflowInput{WorkflowID: workflowID, RunID: runID, Reason: reason, Details: details})
}

// QueryWorkflow asks a workflow's query handler queryType with args and
// returns its result, as Temporal's Client.QueryWorkflow (see
// queryWorkflowDirect).
func (c *TetherClient) QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (EncodedValue, error) {
	if !c.intercepted() {
		return c.queryWorkflowDirect(ctx, workflowID, runID, queryType, args...)
	}
	return c.outbound().QueryWorkflow(newHeader(ctx), &ClientQueryWorkflowInput{WorkflowID: workflowID, RunID: runID, QueryType: queryType, Args: args})
}

// UpdateWorkflow sends the update opts.UpdateName to a running workflow and
// waits for opts.WaitForStage, as Temporal's Client.UpdateWorkflow. A
// rejected update returns an *UpdateFailedError (Rejected) here; the
// handler's result or error comes from the handle's Get. Errors:
// ErrNotFound (no such workflow), ErrConflict (it has finished).
func (c *TetherClient) UpdateWorkflow(ctx context.Context, opts UpdateWorkflowOptions) (WorkflowUpdateHandle, error) {
	if !c.intercepted() {
		return c.updateWorkflowDirect(ctx, opts)
	}
	return c.outbound().UpdateWorkflow(newHeader(ctx), &ClientUpdateWorkflowInput{UpdateID: opts.UpdateID, WorkflowID: opts.WorkflowID,
		RunID: opts.RunID, UpdateName: opts.UpdateName, Args: opts.Args, WaitForStage: opts.WaitForStage})
}

// clientRoot is the end of the outbound chain: the client's own calls,
// sending the header of the context with the propagators' additions.
type clientRoot struct {
	ClientOutboundInterceptorBase
	c *TetherClient
}

func (r *clientRoot) ExecuteWorkflow(ctx context.Context, in *ClientExecuteWorkflowInput) (WorkflowRun, error) {
	ctx, err := r.c.withSendHeader(ctx, wf.Header(ctx))
	if err != nil {
		return nil, err
	}
	return r.c.executeWorkflowDirect(ctx, *in.Options, in.WorkflowType, in.Args...)
}

func (r *clientRoot) SignalWorkflow(ctx context.Context, in *ClientSignalWorkflowInput) error {
	ctx, err := r.c.withSendHeader(ctx, wf.Header(ctx))
	if err != nil {
		return err
	}
	return r.c.signalWorkflowDirect(ctx, in.WorkflowID, in.RunID, in.SignalName, in.Arg)
}

func (r *clientRoot) SignalWithStartWorkflow(ctx context.Context, in *ClientSignalWithStartWorkflowInput) (WorkflowRun, error) {
	ctx, err := r.c.withSendHeader(ctx, wf.Header(ctx))
	if err != nil {
		return nil, err
	}
	return r.c.signalWithStartWorkflowDirect(ctx, in.Options.ID, in.SignalName, in.SignalArg, *in.Options, in.WorkflowType, in.Args...)
}

func (r *clientRoot) CancelWorkflow(ctx context.Context, in *ClientCancelWorkflowInput) error {
	return r.c.cancelWorkflowDirect(ctx, in.WorkflowID, in.RunID)
}

func (r *clientRoot) TerminateWorkflow(ctx context.Context, in *ClientTerminateWorkflowInput) error {
	return r.c.terminateWorkflowDirect(ctx, in.WorkflowID, in.RunID, in.Reason, in.Details...)
}

func (r *clientRoot) QueryWorkflow(ctx context.Context, in *ClientQueryWorkflowInput) (EncodedValue, error) {
	ctx, err := r.c.withSendHeader(ctx, wf.Header(ctx))
	if err != nil {
		return nil, err
	}
	return r.c.queryWorkflowDirect(ctx, in.WorkflowID, in.RunID, in.QueryType, in.Args...)
}

func (r *clientRoot) UpdateWorkflow(ctx context.Context, in *ClientUpdateWorkflowInput) (WorkflowUpdateHandle, error) {
	ctx, err := r.c.withSendHeader(ctx, wf.Header(ctx))
	if err != nil {
		return nil, err
	}
	return r.c.updateWorkflowDirect(ctx, UpdateWorkflowOptions{UpdateID: in.UpdateID, WorkflowID: in.WorkflowID, RunID: in.RunID,
		UpdateName: in.UpdateName, Args: in.Args, WaitForStage: in.WaitForStage})
}
