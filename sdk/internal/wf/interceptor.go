package wf

import (
	"context"
	"time"

	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/actenv"
	"github.com/tetherhq/tether/sdk/log"
)

// The worker's interceptors, in Temporal's shapes (go.temporal.io/sdk's
// internal/interceptor.go): package interceptor exports them under
// Temporal's names. They are defined here because the workflow runtime
// calls them. Each interface has an unexported method that only its Base
// has, so that every implementation embeds the Base and keeps compiling
// when a method is added.

// WorkerInterceptor intercepts the workflows and activities a worker runs
// (Temporal's interceptor.WorkerInterceptor).
type WorkerInterceptor interface {
	// InterceptActivity is called before each activity attempt with the
	// next inbound interceptor of the chain; it returns the interceptor to
	// call instead (next itself to intercept nothing).
	InterceptActivity(ctx context.Context, next ActivityInboundInterceptor) ActivityInboundInterceptor
	// InterceptWorkflow is called once per workflow execution the worker
	// runs (and again when it replays it) with the next inbound
	// interceptor of the chain.
	InterceptWorkflow(ctx Context, next WorkflowInboundInterceptor) WorkflowInboundInterceptor

	mustEmbedWorkerInterceptorBase()
}

// WorkerInterceptorBase is the WorkerInterceptor that intercepts nothing;
// embed it in every WorkerInterceptor.
type WorkerInterceptorBase struct{}

var _ WorkerInterceptor = &WorkerInterceptorBase{}

// InterceptActivity returns an ActivityInboundInterceptorBase calling next.
func (*WorkerInterceptorBase) InterceptActivity(_ context.Context, next ActivityInboundInterceptor) ActivityInboundInterceptor {
	return &ActivityInboundInterceptorBase{Next: next}
}

// InterceptWorkflow returns a WorkflowInboundInterceptorBase calling next.
func (*WorkerInterceptorBase) InterceptWorkflow(_ Context, next WorkflowInboundInterceptor) WorkflowInboundInterceptor {
	return &WorkflowInboundInterceptorBase{Next: next}
}

func (*WorkerInterceptorBase) mustEmbedWorkerInterceptorBase() {}

// ActivityInboundInterceptor intercepts what the worker does to run an
// activity attempt (Temporal's interceptor.ActivityInboundInterceptor).
type ActivityInboundInterceptor interface {
	// Init is called first, with the outbound interceptor the activity's
	// calls go through; wrap it before passing it to the next Init.
	Init(outbound ActivityOutboundInterceptor) error
	// ExecuteActivity runs the activity; Header(ctx) is the attempt's
	// header.
	ExecuteActivity(ctx context.Context, in *ExecuteActivityInput) (any, error)

	mustEmbedActivityInboundInterceptorBase()
}

// ExecuteActivityInput is the input of
// ActivityInboundInterceptor.ExecuteActivity.
type ExecuteActivityInput struct {
	// Args are the activity's arguments, decoded.
	Args []any
}

// ActivityInboundInterceptorBase forwards every call to Next; embed it in
// every ActivityInboundInterceptor.
type ActivityInboundInterceptorBase struct {
	// Next is the next interceptor of the chain.
	Next ActivityInboundInterceptor
}

var _ ActivityInboundInterceptor = &ActivityInboundInterceptorBase{}

// Init calls Next.Init.
func (a *ActivityInboundInterceptorBase) Init(outbound ActivityOutboundInterceptor) error {
	return a.Next.Init(outbound)
}

// ExecuteActivity calls Next.ExecuteActivity.
func (a *ActivityInboundInterceptorBase) ExecuteActivity(ctx context.Context, in *ExecuteActivityInput) (any, error) {
	return a.Next.ExecuteActivity(ctx, in)
}

func (*ActivityInboundInterceptorBase) mustEmbedActivityInboundInterceptorBase() {}

// ActivityOutboundInterceptor intercepts the calls an activity makes to
// package activity (Temporal's interceptor.ActivityOutboundInterceptor).
type ActivityOutboundInterceptor interface {
	// GetInfo intercepts activity.GetInfo.
	GetInfo(ctx context.Context) actenv.ActivityInfo
	// GetLogger intercepts activity.GetLogger.
	GetLogger(ctx context.Context) log.Logger
	// RecordHeartbeat intercepts activity.RecordHeartbeat.
	RecordHeartbeat(ctx context.Context, details ...any)
	// HasHeartbeatDetails intercepts activity.HasHeartbeatDetails.
	HasHeartbeatDetails(ctx context.Context) bool
	// GetHeartbeatDetails intercepts activity.GetHeartbeatDetails.
	GetHeartbeatDetails(ctx context.Context, d ...any) error

	mustEmbedActivityOutboundInterceptorBase()
}

// ActivityOutboundInterceptorBase forwards every call to Next; embed it in
// every ActivityOutboundInterceptor.
type ActivityOutboundInterceptorBase struct {
	// Next is the next interceptor of the chain.
	Next ActivityOutboundInterceptor
}

var _ ActivityOutboundInterceptor = &ActivityOutboundInterceptorBase{}

// GetInfo calls Next.GetInfo.
func (a *ActivityOutboundInterceptorBase) GetInfo(ctx context.Context) actenv.ActivityInfo {
	return a.Next.GetInfo(ctx)
}

// GetLogger calls Next.GetLogger.
func (a *ActivityOutboundInterceptorBase) GetLogger(ctx context.Context) log.Logger {
	return a.Next.GetLogger(ctx)
}

// RecordHeartbeat calls Next.RecordHeartbeat.
func (a *ActivityOutboundInterceptorBase) RecordHeartbeat(ctx context.Context, details ...any) {
	a.Next.RecordHeartbeat(ctx, details...)
}

// HasHeartbeatDetails calls Next.HasHeartbeatDetails.
func (a *ActivityOutboundInterceptorBase) HasHeartbeatDetails(ctx context.Context) bool {
	return a.Next.HasHeartbeatDetails(ctx)
}

// GetHeartbeatDetails calls Next.GetHeartbeatDetails.
func (a *ActivityOutboundInterceptorBase) GetHeartbeatDetails(ctx context.Context, d ...any) error {
	return a.Next.GetHeartbeatDetails(ctx, d...)
}

func (*ActivityOutboundInterceptorBase) mustEmbedActivityOutboundInterceptorBase() {}

// WorkflowInboundInterceptor intercepts what reaches a workflow from the
// server: its start, signals, queries and updates (Temporal's
// interceptor.WorkflowInboundInterceptor).
type WorkflowInboundInterceptor interface {
	// Init is called first, with the outbound interceptor the workflow's
	// calls go through; wrap it before passing it to the next Init.
	Init(outbound WorkflowOutboundInterceptor) error
	// ExecuteWorkflow runs the workflow function; WorkflowHeader(ctx) is
	// the start's header.
	ExecuteWorkflow(ctx Context, in *ExecuteWorkflowInput) (any, error)
	// HandleSignal delivers a signal to its channel; WorkflowHeader(ctx)
	// is the signal's header. It runs while the turn applies its
	// messages: it must not block.
	HandleSignal(ctx Context, in *HandleSignalInput) error
	// HandleQuery answers a query; WorkflowHeader(ctx) is the query's
	// header. It must not block.
	HandleQuery(ctx Context, in *HandleQueryInput) (any, error)
	// ValidateUpdate runs the update's validator (nil without one); an
	// error rejects the update. WorkflowHeader(ctx) is the update's
	// header. It must not block.
	ValidateUpdate(ctx Context, in *UpdateInput) error
	// ExecuteUpdate runs the update's handler, in a workflow goroutine;
	// WorkflowHeader(ctx) is the update's header.
	ExecuteUpdate(ctx Context, in *UpdateInput) (any, error)

	mustEmbedWorkflowInboundInterceptorBase()
}

// ExecuteWorkflowInput is the input of
// WorkflowInboundInterceptor.ExecuteWorkflow.
type ExecuteWorkflowInput struct {
	// Args are the workflow's arguments, decoded.
	Args []any
}

// HandleSignalInput is the input of WorkflowInboundInterceptor.HandleSignal.
type HandleSignalInput struct {
	// SignalName is the signal's name.
	SignalName string
	// Arg is the signal's argument as sent (one payload; none when the
	// signal had no argument): the type to decode it into is the
	// receiver's.
	Arg *common.Payloads
}

// HandleQueryInput is the input of WorkflowInboundInterceptor.HandleQuery.
type HandleQueryInput struct {
	// QueryType is the query's name.
	QueryType string
	// Args are the query's arguments, decoded for the handler.
	Args []any
}

// UpdateInput is the input of WorkflowInboundInterceptor.ValidateUpdate
// and ExecuteUpdate.
type UpdateInput struct {
	// Name is the update's name.
	Name string
	// Args are the update's arguments, decoded for the handler.
	Args []any
}

// WorkflowInboundInterceptorBase forwards every call to Next and, in
// Init, passes the outbound interceptor on unchanged; embed it in every
// WorkflowInboundInterceptor.
type WorkflowInboundInterceptorBase struct {
	// Next is the next interceptor of the chain.
	Next WorkflowInboundInterceptor
}

var _ WorkflowInboundInterceptor = &WorkflowInboundInterceptorBase{}

// Init calls Next.Init.
func (w *WorkflowInboundInterceptorBase) Init(outbound WorkflowOutboundInterceptor) error {
	return w.Next.Init(outbound)
}

// ExecuteWorkflow calls Next.ExecuteWorkflow.
func (w *WorkflowInboundInterceptorBase) ExecuteWorkflow(ctx Context, in *ExecuteWorkflowInput) (any, error) {
	return w.Next.ExecuteWorkflow(ctx, in)
}

// HandleSignal calls Next.HandleSignal.
func (w *WorkflowInboundInterceptorBase) HandleSignal(ctx Context, in *HandleSignalInput) error {
	return w.Next.HandleSignal(ctx, in)
}

// HandleQuery calls Next.HandleQuery.
func (w *WorkflowInboundInterceptorBase) HandleQuery(ctx Context, in *HandleQueryInput) (any, error) {
	return w.Next.HandleQuery(ctx, in)
}

// ValidateUpdate calls Next.ValidateUpdate.
func (w *WorkflowInboundInterceptorBase) ValidateUpdate(ctx Context, in *UpdateInput) error {
	return w.Next.ValidateUpdate(ctx, in)
}

// ExecuteUpdate calls Next.ExecuteUpdate.
func (w *WorkflowInboundInterceptorBase) ExecuteUpdate(ctx Context, in *UpdateInput) (any, error) {
	return w.Next.ExecuteUpdate(ctx, in)
}

func (*WorkflowInboundInterceptorBase) mustEmbedWorkflowInboundInterceptorBase() {}

// WorkflowOutboundInterceptor intercepts the calls workflow code makes to
// package workflow (Temporal's interceptor.WorkflowOutboundInterceptor).
type WorkflowOutboundInterceptor interface {
	// Go intercepts workflow.Go: it starts f as a workflow goroutine and
	// returns the context f runs with.
	Go(ctx Context, name string, f func(ctx Context)) Context
	// Await intercepts workflow.Await.
	Await(ctx Context, condition func() bool) error
	// AwaitWithTimeout intercepts workflow.AwaitWithTimeout.
	AwaitWithTimeout(ctx Context, timeout time.Duration, condition func() bool) (bool, error)
	// ExecuteActivity intercepts workflow.ExecuteActivity;
	// WorkflowHeader(ctx) is the header the activity gets.
	ExecuteActivity(ctx Context, activityType string, args ...any) Future
	// ExecuteLocalActivity intercepts workflow.ExecuteLocalActivity;
	// WorkflowHeader(ctx) is the header the local activity gets.
	ExecuteLocalActivity(ctx Context, activityType string, args ...any) Future
	// ExecuteChildWorkflow intercepts workflow.ExecuteChildWorkflow;
	// WorkflowHeader(ctx) is the header the child's start carries.
	ExecuteChildWorkflow(ctx Context, childWorkflowType string, args ...any) ChildWorkflowFuture
	// GetInfo intercepts workflow.GetInfo.
	GetInfo(ctx Context) *Info
	// GetLogger intercepts workflow.GetLogger.
	GetLogger(ctx Context) log.Logger
	// Now intercepts workflow.Now.
	Now(ctx Context) time.Time
	// NewTimer intercepts workflow.NewTimer.
	NewTimer(ctx Context, d time.Duration) Future
	// Sleep intercepts workflow.Sleep.
	Sleep(ctx Context, d time.Duration) error
	// RequestCancelExternalWorkflow intercepts
	// workflow.RequestCancelExternalWorkflow.
	RequestCancelExternalWorkflow(ctx Context, workflowID, runID string) Future
	// SignalExternalWorkflow intercepts workflow.SignalExternalWorkflow;
	// WorkflowHeader(ctx) is the header the signal carries.
	SignalExternalWorkflow(ctx Context, workflowID, runID, signalName string, arg any) Future
	// UpsertSearchAttributes intercepts workflow.UpsertSearchAttributes.
	UpsertSearchAttributes(ctx Context, attributes map[string]any) error
	// GetSignalChannel intercepts workflow.GetSignalChannel.
	GetSignalChannel(ctx Context, signalName string) ReceiveChannel
	// SideEffect intercepts workflow.SideEffect.
	SideEffect(ctx Context, f func(ctx Context) any) EncodedValue
	// MutableSideEffect intercepts workflow.MutableSideEffect.
	MutableSideEffect(ctx Context, id string, f func(ctx Context) any, equals func(a, b any) bool) EncodedValue
	// GetVersion intercepts workflow.GetVersion.
	GetVersion(ctx Context, changeID string, minSupported, maxSupported Version) Version
	// SetQueryHandler intercepts workflow.SetQueryHandler.
	SetQueryHandler(ctx Context, queryType string, handler any) error
	// SetUpdateHandler intercepts workflow.SetUpdateHandler and
	// SetUpdateHandlerWithOptions.
	SetUpdateHandler(ctx Context, updateName string, handler any, opts UpdateHandlerOptions) error
	// IsReplaying intercepts workflow.IsReplaying.
	IsReplaying(ctx Context) bool
	// HasLastCompletionResult intercepts workflow.HasLastCompletionResult.
	HasLastCompletionResult(ctx Context) bool
	// GetLastCompletionResult intercepts workflow.GetLastCompletionResult.
	GetLastCompletionResult(ctx Context, d ...any) error
	// NewContinueAsNewError intercepts workflow.NewContinueAsNewError;
	// WorkflowHeader(ctx) is the header the next execution starts with.
	NewContinueAsNewError(ctx Context, wfn any, args ...any) error

	mustEmbedWorkflowOutboundInterceptorBase()
}

// WorkflowOutboundInterceptorBase forwards every call to Next; embed it in
// every WorkflowOutboundInterceptor.
type WorkflowOutboundInterceptorBase struct {
	// Next is the next interceptor of the chain.
	Next WorkflowOutboundInterceptor
}

var _ WorkflowOutboundInterceptor = &WorkflowOutboundInterceptorBase{}

// Go calls Next.Go.
func (w *WorkflowOutboundInterceptorBase) Go(ctx Context, name string, f func(ctx Context)) Context {
	return w.Next.Go(ctx, name, f)
}

// Await calls Next.Await.
func (w *WorkflowOutboundInterceptorBase) Await(ctx Context, condition func() bool) error {
	return w.Next.Await(ctx, condition)
}

// AwaitWithTimeout calls Next.AwaitWithTimeout.
func (w *WorkflowOutboundInterceptorBase) AwaitWithTimeout(ctx Context, timeout time.Duration, condition func() bool) (bool, error) {
	return w.Next.AwaitWithTimeout(ctx, timeout, condition)
}

// ExecuteActivity calls Next.ExecuteActivity.
func (w *WorkflowOutboundInterceptorBase) ExecuteActivity(ctx Context, activityType string, args ...any) Future {
	return w.Next.ExecuteActivity(ctx, activityType, args...)
}

// ExecuteLocalActivity calls Next.ExecuteLocalActivity.
func (w *WorkflowOutboundInterceptorBase) ExecuteLocalActivity(ctx Context, activityType string, args ...any) Future {
	return w.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

// ExecuteChildWorkflow calls Next.ExecuteChildWorkflow.
func (w *WorkflowOutboundInterceptorBase) ExecuteChildWorkflow(ctx Context, childWorkflowType string, args ...any) ChildWorkflowFuture {
	return w.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
}

// GetInfo calls Next.GetInfo.
func (w *WorkflowOutboundInterceptorBase) GetInfo(ctx Context) *Info { return w.Next.GetInfo(ctx) }

// GetLogger calls Next.GetLogger.
func (w *WorkflowOutboundInterceptorBase) GetLogger(ctx Context) log.Logger {
	return w.Next.GetLogger(ctx)
}

// Now calls Next.Now.
func (w *WorkflowOutboundInterceptorBase) Now(ctx Context) time.Time { return w.Next.Now(ctx) }

// NewTimer calls Next.NewTimer.
func (w *WorkflowOutboundInterceptorBase) NewTimer(ctx Context, d time.Duration) Future {
	return w.Next.NewTimer(ctx, d)
}

// Sleep calls Next.Sleep.
func (w *WorkflowOutboundInterceptorBase) Sleep(ctx Context, d time.Duration) error {
	return w.Next.Sleep(ctx, d)
}

// RequestCancelExternalWorkflow calls Next.RequestCancelExternalWorkflow.
func (w *WorkflowOutboundInterceptorBase) RequestCancelExternalWorkflow(ctx Context, workflowID, runID string) Future {
	return w.Next.RequestCancelExternalWorkflow(ctx, workflowID, runID)
}

// SignalExternalWorkflow calls Next.SignalExternalWorkflow.
func (w *WorkflowOutboundInterceptorBase) SignalExternalWorkflow(ctx Context, workflowID, runID, signalName string, arg any) Future {
	return w.Next.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
}

// UpsertSearchAttributes calls Next.UpsertSearchAttributes.
func (w *WorkflowOutboundInterceptorBase) UpsertSearchAttributes(ctx Context, attributes map[string]any) error {
	return w.Next.UpsertSearchAttributes(ctx, attributes)
}

// GetSignalChannel calls Next.GetSignalChannel.
func (w *WorkflowOutboundInterceptorBase) GetSignalChannel(ctx Context, signalName string) ReceiveChannel {
	return w.Next.GetSignalChannel(ctx, signalName)
}

// SideEffect calls Next.SideEffect.
func (w *WorkflowOutboundInterceptorBase) SideEffect(ctx Context, f func(ctx Context) any) EncodedValue {
	return w.Next.SideEffect(ctx, f)
}

// MutableSideEffect calls Next.MutableSideEffect.
func (w *WorkflowOutboundInterceptorBase) MutableSideEffect(ctx Context, id string, f func(ctx Context) any, equals func(a, b any) bool) EncodedValue {
	return w.Next.MutableSideEffect(ctx, id, f, equals)
}

// GetVersion calls Next.GetVersion.
func (w *WorkflowOutboundInterceptorBase) GetVersion(ctx Context, changeID string, minSupported, maxSupported Version) Version {
	return w.Next.GetVersion(ctx, changeID, minSupported, maxSupported)
}

// SetQueryHandler calls Next.SetQueryHandler.
func (w *WorkflowOutboundInterceptorBase) SetQueryHandler(ctx Context, queryType string, handler any) error {
	return w.Next.SetQueryHandler(ctx, queryType, handler)
}

// SetUpdateHandler calls Next.SetUpdateHandler.
func (w *WorkflowOutboundInterceptorBase) SetUpdateHandler(ctx Context, updateName string, handler any, opts UpdateHandlerOptions) error {
	return w.Next.SetUpdateHandler(ctx, updateName, handler, opts)
}

// IsReplaying calls Next.IsReplaying.
func (w *WorkflowOutboundInterceptorBase) IsReplaying(ctx Context) bool {
	return w.Next.IsReplaying(ctx)
}

// HasLastCompletionResult calls Next.HasLastCompletionResult.
func (w *WorkflowOutboundInterceptorBase) HasLastCompletionResult(ctx Context) bool {
	return w.Next.HasLastCompletionResult(ctx)
}

// GetLastCompletionResult calls Next.GetLastCompletionResult.
func (w *WorkflowOutboundInterceptorBase) GetLastCompletionResult(ctx Context, d ...any) error {
	return w.Next.GetLastCompletionResult(ctx, d...)
}

// NewContinueAsNewError calls Next.NewContinueAsNewError.
func (w *WorkflowOutboundInterceptorBase) NewContinueAsNewError(ctx Context, wfn any, args ...any) error {
	return w.Next.NewContinueAsNewError(ctx, wfn, args...)
}

func (*WorkflowOutboundInterceptorBase) mustEmbedWorkflowOutboundInterceptorBase() {}

// HeaderWriter is the header a ContextPropagator writes into (Temporal's
// workflow.HeaderWriter).
type HeaderWriter interface {
	// Set sets key to value.
	Set(key string, value *common.Payload)
}

// HeaderReader is the header a ContextPropagator reads (Temporal's
// workflow.HeaderReader).
type HeaderReader interface {
	// Get returns the value of key.
	Get(key string) (*common.Payload, bool)
	// ForEachKey calls handler for each key, in key order, and stops at
	// its first error, which it returns.
	ForEachKey(handler func(key string, value *common.Payload) error) error
}

// ContextPropagator carries values of a context across the calls of a
// workflow, through headers (Temporal's workflow.ContextPropagator): the
// client and workflow code write them (Inject, InjectFromWorkflow), the
// worker reads them into the workflow's and the activity's contexts
// (ExtractToWorkflow, Extract).
type ContextPropagator interface {
	// Inject writes values of ctx (a client's or an activity's) into the
	// header of a call.
	Inject(ctx context.Context, hw HeaderWriter) error
	// Extract returns ctx with the values of the header (an activity's
	// context).
	Extract(ctx context.Context, hr HeaderReader) (context.Context, error)
	// InjectFromWorkflow writes values of a workflow context into the
	// header of a call (an activity, a child workflow, a signal).
	InjectFromWorkflow(ctx Context, hw HeaderWriter) error
	// ExtractToWorkflow returns ctx with the values of the header (a
	// workflow's context, a signal's, a query's, an update's).
	ExtractToWorkflow(ctx Context, hr HeaderReader) (Context, error)
}
