package client

import (
	"context"
)

// ClientInterceptor wraps a client's outbound calls (Temporal's
// interceptor.ClientInterceptor; package interceptor exports it). Set it
// in Options.Interceptors. Embed ClientInterceptorBase in every
// implementation.
type ClientInterceptor interface {
	// InterceptClient is called once, when the client is made, with the
	// next interceptor of the chain; it returns the interceptor to call
	// instead.
	InterceptClient(next ClientOutboundInterceptor) ClientOutboundInterceptor

	mustEmbedClientInterceptorBase()
}

// ClientInterceptorBase is the ClientInterceptor that intercepts nothing;
// embed it in every ClientInterceptor.
type ClientInterceptorBase struct{}

var _ ClientInterceptor = &ClientInterceptorBase{}

// InterceptClient returns a ClientOutboundInterceptorBase calling next.
func (*ClientInterceptorBase) InterceptClient(next ClientOutboundInterceptor) ClientOutboundInterceptor {
	return &ClientOutboundInterceptorBase{Next: next}
}

func (*ClientInterceptorBase) mustEmbedClientInterceptorBase() {}

// ClientOutboundInterceptor intercepts the calls of a Client to workflows
// (Temporal's interceptor.ClientOutboundInterceptor). Where the method says
// so, interceptor.Header(ctx) is the header the call sends: add to it.
// Embed ClientOutboundInterceptorBase in every implementation.
type ClientOutboundInterceptor interface {
	// ExecuteWorkflow intercepts Client.ExecuteWorkflow; Header(ctx) is
	// the start's header.
	ExecuteWorkflow(ctx context.Context, in *ClientExecuteWorkflowInput) (WorkflowRun, error)
	// SignalWorkflow intercepts Client.SignalWorkflow; Header(ctx) is the
	// signal's header.
	SignalWorkflow(ctx context.Context, in *ClientSignalWorkflowInput) error
	// SignalWithStartWorkflow intercepts Client.SignalWithStartWorkflow;
	// Header(ctx) is the header of the start and of the signal.
	SignalWithStartWorkflow(ctx context.Context, in *ClientSignalWithStartWorkflowInput) (WorkflowRun, error)
	// CancelWorkflow intercepts Client.CancelWorkflow.
	CancelWorkflow(ctx context.Context, in *ClientCancelWorkflowInput) error
	// TerminateWorkflow intercepts Client.TerminateWorkflow.
	TerminateWorkflow(ctx context.Context, in *ClientTerminateWorkflowInput) error
	// QueryWorkflow intercepts Client.QueryWorkflow; Header(ctx) is the
	// query's header.
	QueryWorkflow(ctx context.Context, in *ClientQueryWorkflowInput) (EncodedValue, error)
	// UpdateWorkflow intercepts Client.UpdateWorkflow and the update of
	// Client.UpdateWithStartWorkflow; Header(ctx) is the update's header.
	UpdateWorkflow(ctx context.Context, in *ClientUpdateWorkflowInput) (WorkflowUpdateHandle, error)

	mustEmbedClientOutboundInterceptorBase()
}

// ClientExecuteWorkflowInput is the input of
// ClientOutboundInterceptor.ExecuteWorkflow.
type ClientExecuteWorkflowInput struct {
	// Options are the start's options.
	Options *StartWorkflowOptions
	// WorkflowType is the workflow's registered name.
	WorkflowType string
	// Args are the workflow's arguments.
	Args []any
}

// ClientSignalWorkflowInput is the input of
// ClientOutboundInterceptor.SignalWorkflow.
type ClientSignalWorkflowInput struct {
	// WorkflowID and RunID name the workflow ("" RunID: the current run).
	WorkflowID string
	RunID      string
	// SignalName is the signal's name.
	SignalName string
	// Arg is the signal's argument.
	Arg any
}

// ClientSignalWithStartWorkflowInput is the input of
// ClientOutboundInterceptor.SignalWithStartWorkflow.
type ClientSignalWithStartWorkflowInput struct {
	// SignalName and SignalArg are the signal.
	SignalName string
	SignalArg  any
	// Options are the start's options (their ID is the workflow id).
	Options *StartWorkflowOptions
	// WorkflowType is the workflow's registered name.
	WorkflowType string
	// Args are the workflow's arguments.
	Args []any
}

// ClientCancelWorkflowInput is the input of
// ClientOutboundInterceptor.CancelWorkflow.
type ClientCancelWorkflowInput struct {
	// WorkflowID and RunID name the workflow.
	WorkflowID string
	RunID      string
}

// ClientTerminateWorkflowInput is the input of
// ClientOutboundInterceptor.TerminateWorkflow.
type ClientTerminateWorkflowInput struct {
	// WorkflowID and RunID name the workflow.
	WorkflowID string
	RunID      string
	// Reason is recorded with the termination.
	Reason string
	// Details are recorded with the termination.
	Details []any
}

// ClientQueryWorkflowInput is the input of
// ClientOutboundInterceptor.QueryWorkflow.
type ClientQueryWorkflowInput struct {
	// WorkflowID and RunID name the workflow.
	WorkflowID string
	RunID      string
	// QueryType is the query's name.
	QueryType string
	// Args are the query's arguments.
	Args []any
}

// ClientUpdateWorkflowInput is the input of
// ClientOutboundInterceptor.UpdateWorkflow.
type ClientUpdateWorkflowInput struct {
	// UpdateID identifies the update ("" before the client draws one).
	UpdateID string
	// WorkflowID and RunID name the workflow.
	WorkflowID string
	RunID      string
	// UpdateName names the handler.
	UpdateName string
	// Args are the handler's arguments.
	Args []any
	// WaitForStage is the stage the call waits for.
	WaitForStage WorkflowUpdateStage
}

// ClientOutboundInterceptorBase forwards every call to Next; embed it in
// every ClientOutboundInterceptor.
type ClientOutboundInterceptorBase struct {
	// Next is the next interceptor of the chain.
	Next ClientOutboundInterceptor
}

var _ ClientOutboundInterceptor = &ClientOutboundInterceptorBase{}

// ExecuteWorkflow calls Next.ExecuteWorkflow.
func (c *ClientOutboundInterceptorBase) ExecuteWorkflow(ctx context.Context, in *ClientExecuteWorkflowInput) (WorkflowRun, error) {
	return c.Next.ExecuteWorkflow(ctx, in)
}

// SignalWorkflow calls Next.SignalWorkflow.
func (c *ClientOutboundInterceptorBase) SignalWorkflow(ctx context.Context, in *ClientSignalWorkflowInput) error {
	return c.Next.SignalWorkflow(ctx, in)
}

// SignalWithStartWorkflow calls Next.SignalWithStartWorkflow.
func (c *ClientOutboundInterceptorBase) SignalWithStartWorkflow(ctx context.Context, in *ClientSignalWithStartWorkflowInput) (WorkflowRun, error) {
	return c.Next.SignalWithStartWorkflow(ctx, in)
}

// CancelWorkflow calls Next.CancelWorkflow.
func (c *ClientOutboundInterceptorBase) CancelWorkflow(ctx context.Context, in *ClientCancelWorkflowInput) error {
	return c.Next.CancelWorkflow(ctx, in)
}

// TerminateWorkflow calls Next.TerminateWorkflow.
func (c *ClientOutboundInterceptorBase) TerminateWorkflow(ctx context.Context, in *ClientTerminateWorkflowInput) error {
	return c.Next.TerminateWorkflow(ctx, in)
}

// QueryWorkflow calls Next.QueryWorkflow.
func (c *ClientOutboundInterceptorBase) QueryWorkflow(ctx context.Context, in *ClientQueryWorkflowInput) (EncodedValue, error) {
	return c.Next.QueryWorkflow(ctx, in)
}

// UpdateWorkflow calls Next.UpdateWorkflow.
func (c *ClientOutboundInterceptorBase) UpdateWorkflow(ctx context.Context, in *ClientUpdateWorkflowInput) (WorkflowUpdateHandle, error) {
	return c.Next.UpdateWorkflow(ctx, in)
}

func (*ClientOutboundInterceptorBase) mustEmbedClientOutboundInterceptorBase() {}
