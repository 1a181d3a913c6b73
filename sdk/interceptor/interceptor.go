// Package interceptor holds the interceptors of clients and workers, in
// Temporal's shapes (go.temporal.io/sdk/interceptor): a ClientInterceptor
// in client.Options.Interceptors wraps the client's calls to workflows; a
// WorkerInterceptor in worker.Options.Interceptors wraps what the worker
// runs — the inbound calls of workflows (start, signals, queries, updates)
// and of activities, and, through the outbound interceptors they install
// in Init, the calls workflow and activity code makes (activities, child
// workflows, timers, loggers, …).
//
// Every implementation embeds the Base of its interface (a
// WorkerInterceptor embeds WorkerInterceptorBase, …): the Base forwards
// each call to Next, so that an interceptor overrides only what it needs
// and keeps compiling when a method is added.
//
// Calls carry a header, a map of payloads by key, which travels with
// workflow starts, signals (signal-with-start's too), queries, updates,
// activities and child workflows: a client outbound interceptor adds to
// Header(ctx), a workflow outbound interceptor to WorkflowHeader(ctx),
// and the inbound interceptors of the worker read them there. The
// context propagators of workflow.ContextPropagator are built on it.
//
// The order of a chain is the order of the slice: the first interceptor
// is called first.
package interceptor

import (
	"context"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/wf"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Interceptor is both a ClientInterceptor and a WorkerInterceptor
// (Temporal's interceptor.Interceptor): set in client.Options.Interceptors
// it also intercepts the workers built on the client.
type Interceptor interface {
	ClientInterceptor
	WorkerInterceptor
}

// InterceptorBase is the Interceptor that intercepts nothing; embed it in
// every Interceptor.
type InterceptorBase struct {
	ClientInterceptorBase
	WorkerInterceptorBase
}

var _ Interceptor = &InterceptorBase{}

// WorkerInterceptor intercepts the workflows and activities of a worker.
type WorkerInterceptor = wf.WorkerInterceptor

// WorkerInterceptorBase is the WorkerInterceptor that intercepts nothing.
type WorkerInterceptorBase = wf.WorkerInterceptorBase

// ActivityInboundInterceptor intercepts the worker's run of an activity
// attempt.
type ActivityInboundInterceptor = wf.ActivityInboundInterceptor

// ActivityInboundInterceptorBase forwards every call to Next.
//
// Fields (the type is defined in an internal package):
//
//   - Next ActivityInboundInterceptor: Next is the next interceptor of the
//     chain.
type ActivityInboundInterceptorBase = wf.ActivityInboundInterceptorBase

// ExecuteActivityInput is the input of
// ActivityInboundInterceptor.ExecuteActivity.
//
// Fields (the type is defined in an internal package):
//
//   - Args []any: Args are the activity's arguments, decoded.
type ExecuteActivityInput = wf.ExecuteActivityInput

// ActivityOutboundInterceptor intercepts the calls of activity code to
// package activity.
type ActivityOutboundInterceptor = wf.ActivityOutboundInterceptor

// ActivityOutboundInterceptorBase forwards every call to Next.
//
// Fields (the type is defined in an internal package):
//
//   - Next ActivityOutboundInterceptor: Next is the next interceptor of the
//     chain.
type ActivityOutboundInterceptorBase = wf.ActivityOutboundInterceptorBase

// WorkflowInboundInterceptor intercepts the start, signals, queries and
// updates of a workflow.
type WorkflowInboundInterceptor = wf.WorkflowInboundInterceptor

// WorkflowInboundInterceptorBase forwards every call to Next.
//
// Fields (the type is defined in an internal package):
//
//   - Next WorkflowInboundInterceptor: Next is the next interceptor of the
//     chain.
type WorkflowInboundInterceptorBase = wf.WorkflowInboundInterceptorBase

// ExecuteWorkflowInput is the input of
// WorkflowInboundInterceptor.ExecuteWorkflow.
//
// Fields (the type is defined in an internal package):
//
//   - Args []any: Args are the workflow's arguments, decoded.
type ExecuteWorkflowInput = wf.ExecuteWorkflowInput

// HandleSignalInput is the input of WorkflowInboundInterceptor.HandleSignal.
//
// Fields (the type is defined in an internal package):
//
//   - SignalName string: SignalName is the signal's name.
//   - Arg *common.Payloads: Arg is the signal's argument as sent (one payload;
//     none when the signal had no argument): the type to decode it into is the
//     receiver's.
type HandleSignalInput = wf.HandleSignalInput

// HandleQueryInput is the input of WorkflowInboundInterceptor.HandleQuery.
//
// Fields (the type is defined in an internal package):
//
//   - QueryType string: QueryType is the query's name.
//   - Args []any: Args are the query's arguments, decoded for the handler.
type HandleQueryInput = wf.HandleQueryInput

// UpdateInput is the input of WorkflowInboundInterceptor.ValidateUpdate and
// ExecuteUpdate.
//
// Fields (the type is defined in an internal package):
//
//   - Name string: Name is the update's name.
//   - Args []any: Args are the update's arguments, decoded for the handler.
type UpdateInput = wf.UpdateInput

// WorkflowOutboundInterceptor intercepts the calls of workflow code to
// package workflow.
type WorkflowOutboundInterceptor = wf.WorkflowOutboundInterceptor

// WorkflowOutboundInterceptorBase forwards every call to Next.
//
// Fields (the type is defined in an internal package):
//
//   - Next WorkflowOutboundInterceptor: Next is the next interceptor of the
//     chain.
type WorkflowOutboundInterceptorBase = wf.WorkflowOutboundInterceptorBase

// ClientInterceptor intercepts a client's calls to workflows.
type ClientInterceptor = client.ClientInterceptor

// ClientInterceptorBase is the ClientInterceptor that intercepts nothing.
type ClientInterceptorBase = client.ClientInterceptorBase

// ClientOutboundInterceptor intercepts the calls of a client.
type ClientOutboundInterceptor = client.ClientOutboundInterceptor

// ClientOutboundInterceptorBase forwards every call to Next.
type ClientOutboundInterceptorBase = client.ClientOutboundInterceptorBase

// ClientExecuteWorkflowInput is the input of
// ClientOutboundInterceptor.ExecuteWorkflow.
type ClientExecuteWorkflowInput = client.ClientExecuteWorkflowInput

// ClientSignalWorkflowInput is the input of
// ClientOutboundInterceptor.SignalWorkflow.
type ClientSignalWorkflowInput = client.ClientSignalWorkflowInput

// ClientSignalWithStartWorkflowInput is the input of
// ClientOutboundInterceptor.SignalWithStartWorkflow.
type ClientSignalWithStartWorkflowInput = client.ClientSignalWithStartWorkflowInput

// ClientCancelWorkflowInput is the input of
// ClientOutboundInterceptor.CancelWorkflow.
type ClientCancelWorkflowInput = client.ClientCancelWorkflowInput

// ClientTerminateWorkflowInput is the input of
// ClientOutboundInterceptor.TerminateWorkflow.
type ClientTerminateWorkflowInput = client.ClientTerminateWorkflowInput

// ClientQueryWorkflowInput is the input of
// ClientOutboundInterceptor.QueryWorkflow.
type ClientQueryWorkflowInput = client.ClientQueryWorkflowInput

// ClientUpdateWorkflowInput is the input of
// ClientOutboundInterceptor.UpdateWorkflow.
type ClientUpdateWorkflowInput = client.ClientUpdateWorkflowInput

// Header returns the header of a call, to read or add to: non-nil inside
// ClientOutboundInterceptor.ExecuteWorkflow, SignalWorkflow,
// SignalWithStartWorkflow, QueryWorkflow and UpdateWorkflow (the header
// the call sends) and inside ActivityInboundInterceptor.ExecuteActivity
// (the header the activity received).
func Header(ctx context.Context) map[string]*common.Payload { return wf.Header(ctx) }

// WorkflowHeader returns the header of a workflow call, to read or add
// to: non-nil inside WorkflowInboundInterceptor.ExecuteWorkflow,
// HandleSignal, HandleQuery, ValidateUpdate and ExecuteUpdate (the header
// received) and inside WorkflowOutboundInterceptor.ExecuteActivity,
// ExecuteLocalActivity, ExecuteChildWorkflow, SignalExternalWorkflow and
// NewContinueAsNewError (the header sent).
func WorkflowHeader(ctx workflow.Context) map[string]*common.Payload { return wf.WorkflowHeader(ctx) }
