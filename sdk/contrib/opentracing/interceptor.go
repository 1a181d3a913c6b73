// Package opentracing is an interceptor that traces clients and workers
// with OpenTracing (Temporal's go.temporal.io/sdk/contrib/opentracing):
// a span for each workflow start, signal, query and update a client
// sends, for each workflow run, signal and query a worker handles, for
// each activity, child workflow and external signal a workflow starts,
// and for each activity attempt — all on one trace, linked through a
// header of the calls (TracerOptions.HeaderKey).
//
// Workflow code is replayed, so its spans (RunWorkflow, StartActivity,
// StartChildWorkflow, HandleSignal, …) are finished as soon as they are
// made and are not made again while a history replays; activity spans
// last as long as the attempt. Put it in client.Options.Interceptors: the
// workers built on the client use it too.
package opentracing

import (
	"context"
	"fmt"

	"github.com/opentracing/opentracing-go"
	"github.com/opentracing/opentracing-go/ext"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/interceptor"
	"github.com/tetherhq/tether/sdk/workflow"
)

// DefaultHeaderKey is the header key the span context travels under
// (Temporal's).
const DefaultHeaderKey = "_tracer-data"

// TracerOptions configure NewInterceptor (Temporal's).
type TracerOptions struct {
	// Tracer makes the spans; nil: opentracing.GlobalTracer() at each
	// span.
	Tracer opentracing.Tracer
	// DisableSignalTracing makes no span for signals.
	DisableSignalTracing bool
	// DisableQueryTracing makes no span for queries.
	DisableQueryTracing bool
	// HeaderKey is the header key of the span context (default
	// DefaultHeaderKey).
	HeaderKey string
}

// NewInterceptor returns the tracing interceptor, for
// client.Options.Interceptors (or worker.Options.Interceptors).
func NewInterceptor(options TracerOptions) (interceptor.Interceptor, error) {
	if options.HeaderKey == "" {
		options.HeaderKey = DefaultHeaderKey
	}
	return &tracer{opts: options}, nil
}

type tracer struct {
	interceptor.InterceptorBase
	opts TracerOptions
}

func (t *tracer) tracer() opentracing.Tracer {
	if t.opts.Tracer != nil {
		return t.opts.Tracer
	}
	return opentracing.GlobalTracer()
}

// inject writes sc into h.
func (t *tracer) inject(sc opentracing.SpanContext, h map[string]*common.Payload) error {
	if sc == nil || h == nil {
		return nil
	}
	carrier := opentracing.TextMapCarrier{}
	if err := t.tracer().Inject(sc, opentracing.TextMap, carrier); err != nil {
		return fmt.Errorf("opentracing: inject span context: %w", err)
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(map[string]string(carrier))
	if err != nil {
		return fmt.Errorf("opentracing: encode span context: %w", err)
	}
	h[t.opts.HeaderKey] = p
	return nil
}

// extract reads the span context of h (nil when it has none).
func (t *tracer) extract(h map[string]*common.Payload) (opentracing.SpanContext, error) {
	p, ok := h[t.opts.HeaderKey]
	if !ok {
		return nil, nil
	}
	var carrier map[string]string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &carrier); err != nil {
		return nil, fmt.Errorf("opentracing: decode span context: %w", err)
	}
	sc, err := t.tracer().Extract(opentracing.TextMap, opentracing.TextMapCarrier(carrier))
	if err != nil {
		return nil, fmt.Errorf("opentracing: extract span context: %w", err)
	}
	return sc, nil
}

// start starts a span, child of parent when there is one.
func (t *tracer) start(name string, parent opentracing.SpanContext, tags opentracing.Tags) opentracing.Span {
	opts := []opentracing.StartSpanOption{tags}
	if parent != nil {
		opts = append(opts, opentracing.ChildOf(parent))
	}
	return t.tracer().StartSpan(name, opts...)
}

// finish ends span, marking it failed when err is not nil.
func finish(span opentracing.Span, err error) {
	if err != nil {
		ext.Error.Set(span, true)
		span.SetTag("error.message", err.Error())
	}
	span.Finish()
}

// Client side.

func (t *tracer) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	o := &clientOutbound{t: t}
	o.Next = next
	return o
}

type clientOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	t *tracer
}

// span starts a client span child of ctx's and writes it into the call's
// header.
func (o *clientOutbound) span(ctx context.Context, name string, tags opentracing.Tags) (opentracing.Span, error) {
	var parent opentracing.SpanContext
	if s := opentracing.SpanFromContext(ctx); s != nil {
		parent = s.Context()
	}
	span := o.t.start(name, parent, tags)
	if err := o.t.inject(span.Context(), interceptor.Header(ctx)); err != nil {
		finish(span, err)
		return nil, err
	}
	return span, nil
}

func (o *clientOutbound) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	span, err := o.span(ctx, "StartWorkflow:"+in.WorkflowType, opentracing.Tags{"temporalWorkflowID": in.Options.ID})
	if err != nil {
		return nil, err
	}
	run, err := o.Next.ExecuteWorkflow(opentracing.ContextWithSpan(ctx, span), in)
	finish(span, err)
	return run, err
}

func (o *clientOutbound) SignalWorkflow(ctx context.Context, in *interceptor.ClientSignalWorkflowInput) error {
	if o.t.opts.DisableSignalTracing {
		return o.Next.SignalWorkflow(ctx, in)
	}
	span, err := o.span(ctx, "SignalWorkflow:"+in.SignalName, opentracing.Tags{"temporalWorkflowID": in.WorkflowID})
	if err != nil {
		return err
	}
	err = o.Next.SignalWorkflow(opentracing.ContextWithSpan(ctx, span), in)
	finish(span, err)
	return err
}

func (o *clientOutbound) SignalWithStartWorkflow(ctx context.Context, in *interceptor.ClientSignalWithStartWorkflowInput) (client.WorkflowRun, error) {
	span, err := o.span(ctx, "SignalWithStartWorkflow:"+in.WorkflowType, opentracing.Tags{"temporalWorkflowID": in.Options.ID})
	if err != nil {
		return nil, err
	}
	run, err := o.Next.SignalWithStartWorkflow(opentracing.ContextWithSpan(ctx, span), in)
	finish(span, err)
	return run, err
}

func (o *clientOutbound) QueryWorkflow(ctx context.Context, in *interceptor.ClientQueryWorkflowInput) (client.EncodedValue, error) {
	if o.t.opts.DisableQueryTracing {
		return o.Next.QueryWorkflow(ctx, in)
	}
	span, err := o.span(ctx, "QueryWorkflow:"+in.QueryType, opentracing.Tags{"temporalWorkflowID": in.WorkflowID})
	if err != nil {
		return nil, err
	}
	v, err := o.Next.QueryWorkflow(opentracing.ContextWithSpan(ctx, span), in)
	finish(span, err)
	return v, err
}

func (o *clientOutbound) UpdateWorkflow(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput) (client.WorkflowUpdateHandle, error) {
	span, err := o.span(ctx, "UpdateWorkflow:"+in.UpdateName, opentracing.Tags{"temporalWorkflowID": in.WorkflowID})
	if err != nil {
		return nil, err
	}
	h, err := o.Next.UpdateWorkflow(opentracing.ContextWithSpan(ctx, span), in)
	finish(span, err)
	return h, err
}

// Activity side.

func (t *tracer) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &activityInbound{t: t}
	i.Next = next
	return i
}

type activityInbound struct {
	interceptor.ActivityInboundInterceptorBase
	t *tracer
}

func (i *activityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	parent, err := i.t.extract(interceptor.Header(ctx))
	if err != nil {
		return nil, err
	}
	info := activity.GetInfo(ctx)
	span := i.t.start("RunActivity:"+info.ActivityType.Name, parent, opentracing.Tags{
		"temporalWorkflowID": info.WorkflowExecution.ID, "temporalRunID": info.WorkflowExecution.RunID,
		"temporalActivityID": info.ActivityID})
	out, err := i.Next.ExecuteActivity(opentracing.ContextWithSpan(ctx, span), in)
	finish(span, err)
	return out, err
}

// Workflow side: spans are finished at once (see the package comment).

// spanKey is the workflow context key of the span context of the
// workflow's calls.
type spanKey struct{}

func (t *tracer) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &workflowInbound{t: t}
	i.Next = next
	return i
}

type workflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	t *tracer
}

func (i *workflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	o := &workflowOutbound{t: i.t}
	o.Next = outbound
	return i.Next.Init(o)
}

// instant makes a workflow span and finishes it at once (nothing while
// replaying); it returns the span context the calls it leads to carry.
func (t *tracer) instant(ctx workflow.Context, name string, parent opentracing.SpanContext) opentracing.SpanContext {
	if workflow.IsReplaying(ctx) {
		return parent
	}
	info := workflow.GetInfo(ctx)
	span := t.start(name, parent, opentracing.Tags{"temporalWorkflowID": info.WorkflowExecution.ID,
		"temporalRunID": info.WorkflowExecution.RunID})
	span.Finish()
	return span.Context()
}

func (i *workflowInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	parent, err := i.t.extract(interceptor.WorkflowHeader(ctx))
	if err != nil {
		return nil, err
	}
	sc := i.t.instant(ctx, "RunWorkflow:"+workflow.GetInfo(ctx).WorkflowType.Name, parent)
	if sc != nil {
		ctx = workflow.WithValue(ctx, spanKey{}, sc)
	}
	return i.Next.ExecuteWorkflow(ctx, in)
}

func (i *workflowInbound) HandleSignal(ctx workflow.Context, in *interceptor.HandleSignalInput) error {
	if !i.t.opts.DisableSignalTracing {
		parent, err := i.t.extract(interceptor.WorkflowHeader(ctx))
		if err != nil {
			return err
		}
		i.t.instant(ctx, "HandleSignal:"+in.SignalName, parent)
	}
	return i.Next.HandleSignal(ctx, in)
}

func (i *workflowInbound) HandleQuery(ctx workflow.Context, in *interceptor.HandleQueryInput) (any, error) {
	if !i.t.opts.DisableQueryTracing {
		parent, err := i.t.extract(interceptor.WorkflowHeader(ctx))
		if err != nil {
			return nil, err
		}
		span := i.t.start("HandleQuery:"+in.QueryType, parent, nil)
		out, err := i.Next.HandleQuery(ctx, in)
		finish(span, err)
		return out, err
	}
	return i.Next.HandleQuery(ctx, in)
}

type workflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	t *tracer
}

// carry makes the span of an outbound call and writes it into the call's
// header; an error fails the workflow task.
func (o *workflowOutbound) carry(ctx workflow.Context, name string) {
	parent, _ := ctx.Value(spanKey{}).(opentracing.SpanContext)
	sc := o.t.instant(ctx, name, parent)
	if err := o.t.inject(sc, interceptor.WorkflowHeader(ctx)); err != nil {
		panic(err)
	}
}

func (o *workflowOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.carry(ctx, "StartActivity:"+activityType)
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (o *workflowOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.carry(ctx, "StartLocalActivity:"+activityType)
	return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

func (o *workflowOutbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	o.carry(ctx, "StartChildWorkflow:"+childWorkflowType)
	return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
}

func (o *workflowOutbound) SignalExternalWorkflow(ctx workflow.Context, workflowID, runID, signalName string, arg any) workflow.Future {
	if !o.t.opts.DisableSignalTracing {
		o.carry(ctx, "SignalExternalWorkflow:"+signalName)
	}
	return o.Next.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
}
