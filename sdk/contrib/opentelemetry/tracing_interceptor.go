package opentelemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/interceptor"
	"github.com/tetherhq/tether/sdk/log"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Span attribute keys: Temporal's tag names.
const (
	workflowIDTagKey = "temporalWorkflowID"
	runIDTagKey      = "temporalRunID"
	activityIDTagKey = "temporalActivityID"
	updateIDTagKey   = "temporalUpdateID"
)

// TracerOptions are the options of NewTracingInterceptor and NewTracer.
type TracerOptions struct {
	// Tracer makes the spans. Default: the global tracer provider's tracer
	// "tether-sdk-go".
	Tracer trace.Tracer
	// DisableSignalTracing turns the spans of signals off.
	DisableSignalTracing bool
	// DisableQueryTracing turns the spans of queries off.
	DisableQueryTracing bool
	// DisableUpdateTracing turns the spans of updates off.
	DisableUpdateTracing bool
	// DisableBaggage stops OpenTelemetry baggage from travelling with the
	// spans.
	DisableBaggage bool
	// AllowInvalidParentSpans ignores a header whose span cannot be read
	// (the span starts without a parent) instead of failing the call.
	AllowInvalidParentSpans bool
	// TextMapPropagator writes and reads the spans in headers. Default:
	// DefaultTextMapPropagator (W3C trace context and baggage), not the
	// global one.
	TextMapPropagator propagation.TextMapPropagator
	// SpanContextKey is the key of the span in a workflow.Context. Default:
	// a key of this package (recommended).
	SpanContextKey any
	// HeaderKey is the header field the span travels in. Default
	// "_tracer-data", the one Temporal's SDKs use.
	HeaderKey string
	// SpanStarter makes a span. Default: Tracer.Start.
	SpanStarter func(ctx context.Context, t trace.Tracer, spanName string, opts ...trace.SpanStartOption) trace.Span
}

type spanContextKey struct{}

const defaultHeaderKey = "_tracer-data"

// Tracer makes the spans of the tracing interceptor and moves them in and
// out of headers (Temporal's opentelemetry tracer). Most callers use
// NewTracingInterceptor.
type Tracer struct {
	options TracerOptions
}

// NewTracer returns a Tracer with options' defaults filled in.
func NewTracer(options TracerOptions) (*Tracer, error) {
	if options.Tracer == nil {
		options.Tracer = otel.GetTracerProvider().Tracer("tether-sdk-go")
	}
	if options.TextMapPropagator == nil {
		options.TextMapPropagator = DefaultTextMapPropagator
	}
	if options.SpanContextKey == nil {
		options.SpanContextKey = spanContextKey{}
	}
	if options.HeaderKey == "" {
		options.HeaderKey = defaultHeaderKey
	}
	if options.SpanStarter == nil {
		options.SpanStarter = func(ctx context.Context, t trace.Tracer, name string, opts ...trace.SpanStartOption) trace.Span {
			_, span := t.Start(ctx, name, opts...)
			return span
		}
	}
	return &Tracer{options: options}, nil
}

// NewTracingInterceptor returns an interceptor that traces workflows (set
// it in client.Options.Interceptors; the workers built on the client take
// it too): spans StartWorkflow, SignalWorkflow, SignalWithStartWorkflow,
// QueryWorkflow and UpdateWorkflow in the client, RunWorkflow,
// HandleSignal, HandleQuery, ValidateUpdate and HandleUpdate in the
// worker's workflows, StartActivity, StartChildWorkflow and
// SignalExternalWorkflow from workflow code, and RunActivity in the
// worker's activities. Each call's span travels in its header, so that the
// spans of one workflow, across the client's, the workers' and (with
// InjectTraceContext) the server's processes, form one trace.
func NewTracingInterceptor(options TracerOptions) (interceptor.Interceptor, error) {
	t, err := NewTracer(options)
	if err != nil {
		return nil, err
	}
	return &tracingInterceptor{t: t}, nil
}

// spanRef is a span read from a header: a parent, not a span of this
// process.
type spanRef struct {
	sc  trace.SpanContext
	bag baggage.Baggage
}

// tracerSpan is a span of this process with the baggage it carries.
type tracerSpan struct {
	trace.Span
	bag baggage.Baggage
}

// startOptions describe a span to start.
type startOptions struct {
	operation, name string
	kind            trace.SpanKind
	parent          *spanRef
	attrs           map[string]string
}

func (t *Tracer) start(o startOptions) *tracerSpan {
	ctx := context.Background()
	var bag baggage.Baggage
	if o.parent != nil && o.parent.sc.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, o.parent.sc)
		bag = o.parent.bag
	}
	attrs := make([]attribute.KeyValue, 0, len(o.attrs))
	for k, v := range o.attrs {
		if v != "" {
			attrs = append(attrs, attribute.String(k, v))
		}
	}
	span := t.options.SpanStarter(ctx, t.options.Tracer, o.operation+":"+o.name,
		trace.WithSpanKind(o.kind), trace.WithTimestamp(time.Now()), trace.WithAttributes(attrs...))
	s := &tracerSpan{Span: span}
	if !t.options.DisableBaggage {
		s.bag = bag
	}
	return s
}

// finish ends s, recording err (a benign application error is not an
// error status).
func (s *tracerSpan) finish(err error) {
	if err != nil {
		s.RecordError(err)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Category() != temporal.ApplicationErrorCategoryBenign {
			s.SetStatus(codes.Error, err.Error())
		}
	}
	s.End()
}

func (s *tracerSpan) ref() *spanRef { return &spanRef{sc: s.SpanContext(), bag: s.bag} }

// goContext returns ctx with s as its span (and baggage).
func (t *Tracer) goContext(ctx context.Context, s *tracerSpan) context.Context {
	if !t.options.DisableBaggage && s.bag.Len() > 0 {
		ctx = baggage.ContextWithBaggage(ctx, s.bag)
	}
	return trace.ContextWithSpan(ctx, s.Span)
}

// fromGoContext returns the span of ctx as a parent (nil when none).
func (t *Tracer) fromGoContext(ctx context.Context) *spanRef {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	r := &spanRef{sc: sc}
	if !t.options.DisableBaggage {
		r.bag = baggage.FromContext(ctx)
	}
	return r
}

// fromWorkflowContext returns the span a workflow context carries as a
// parent (nil when none).
func (t *Tracer) fromWorkflowContext(ctx workflow.Context) *spanRef {
	switch v := ctx.Value(t.options.SpanContextKey).(type) {
	case *tracerSpan:
		return v.ref()
	case *spanRef:
		return v
	}
	return nil
}

// writeHeader writes s into header.
func (t *Tracer) writeHeader(header map[string]*common.Payload, s *tracerSpan) error {
	if header == nil {
		return nil
	}
	ctx := context.Background()
	if !t.options.DisableBaggage && s.bag.Len() > 0 {
		ctx = baggage.ContextWithBaggage(ctx, s.bag)
	}
	data := propagation.MapCarrier{}
	t.options.TextMapPropagator.Inject(trace.ContextWithSpan(ctx, s.Span), data)
	if len(data) == 0 {
		return nil
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(map[string]string(data))
	if err != nil {
		return fmt.Errorf("opentelemetry: writing the span to the header: %w", err)
	}
	header[t.options.HeaderKey] = p
	return nil
}

// readHeader reads the span of header (nil, nil when it has none).
func (t *Tracer) readHeader(header map[string]*common.Payload) (*spanRef, error) {
	p := header[t.options.HeaderKey]
	if p == nil {
		return nil, nil
	}
	var data map[string]string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &data); err != nil {
		if t.options.AllowInvalidParentSpans {
			return nil, nil
		}
		return nil, fmt.Errorf("opentelemetry: reading the span of the header: %w", err)
	}
	if _, ok := data["traceparent"]; !ok {
		return nil, nil
	}
	ctx := t.options.TextMapPropagator.Extract(context.Background(), propagation.MapCarrier(data))
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		if t.options.AllowInvalidParentSpans {
			return nil, nil
		}
		return nil, errors.New("opentelemetry: the header's span is not valid")
	}
	r := &spanRef{sc: sc}
	if !t.options.DisableBaggage {
		r.bag = baggage.FromContext(ctx)
	}
	return r, nil
}

// GetLogger returns logger with the trace and span ids of the span in a
// context, for correlating logs with traces.
func (t *Tracer) GetLogger(logger log.Logger, sc trace.SpanContext) log.Logger {
	if !sc.IsValid() {
		return logger
	}
	return log.With(logger, "TraceID", sc.TraceID().String(), "SpanID", sc.SpanID().String())
}

// SpanFromWorkflowContext returns the OpenTelemetry span of a workflow
// context (the RunWorkflow, HandleSignal … span the interceptor put there)
// and whether there was one; without one it returns a no-op span.
func SpanFromWorkflowContext(ctx workflow.Context) (trace.Span, bool) {
	if s, ok := ctx.Value(spanContextKey{}).(*tracerSpan); ok {
		return s.Span, true
	}
	return trace.SpanFromContext(context.Background()), false
}

// tracingInterceptor is the Interceptor of NewTracingInterceptor.
type tracingInterceptor struct {
	interceptor.InterceptorBase
	t *Tracer
}

// InterceptClient wraps the client's calls.
func (i *tracingInterceptor) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	c := &clientOutbound{t: i.t}
	c.Next = next
	return c
}

// InterceptWorkflow wraps a workflow's inbound calls.
func (i *tracingInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	w := &workflowInbound{t: i.t}
	w.Next = next
	return w
}

// InterceptActivity wraps an activity's run.
func (i *tracingInterceptor) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	a := &activityInbound{t: i.t}
	a.Next = next
	return a
}

// clientOutbound makes the client's spans.
type clientOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	t *Tracer
}

// clientSpan starts a client span as a child of ctx's span, writes it
// into the call's header and returns ctx with it.
func (c *clientOutbound) clientSpan(ctx context.Context, operation, name string, attrs map[string]string) (*tracerSpan, context.Context, error) {
	s := c.t.start(startOptions{operation: operation, name: name, kind: trace.SpanKindClient,
		parent: c.t.fromGoContext(ctx), attrs: attrs})
	if err := c.t.writeHeader(interceptor.Header(ctx), s); err != nil {
		s.finish(err)
		return nil, ctx, err
	}
	return s, c.t.goContext(ctx, s), nil
}

// ExecuteWorkflow traces a start: StartWorkflow:<type>.
func (c *clientOutbound) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	id := ""
	if in.Options != nil {
		id = in.Options.ID
	}
	s, ctx, err := c.clientSpan(ctx, "StartWorkflow", in.WorkflowType, map[string]string{workflowIDTagKey: id})
	if err != nil {
		return nil, err
	}
	run, err := c.Next.ExecuteWorkflow(ctx, in)
	s.finish(err)
	return run, err
}

// SignalWorkflow traces a signal: SignalWorkflow:<name>.
func (c *clientOutbound) SignalWorkflow(ctx context.Context, in *interceptor.ClientSignalWorkflowInput) error {
	if c.t.options.DisableSignalTracing {
		return c.Next.SignalWorkflow(ctx, in)
	}
	s, ctx, err := c.clientSpan(ctx, "SignalWorkflow", in.SignalName, map[string]string{workflowIDTagKey: in.WorkflowID})
	if err != nil {
		return err
	}
	err = c.Next.SignalWorkflow(ctx, in)
	s.finish(err)
	return err
}

// SignalWithStartWorkflow traces a signal-with-start:
// SignalWithStartWorkflow:<type>.
func (c *clientOutbound) SignalWithStartWorkflow(ctx context.Context, in *interceptor.ClientSignalWithStartWorkflowInput) (client.WorkflowRun, error) {
	id := ""
	if in.Options != nil {
		id = in.Options.ID
	}
	s, ctx, err := c.clientSpan(ctx, "SignalWithStartWorkflow", in.WorkflowType, map[string]string{workflowIDTagKey: id})
	if err != nil {
		return nil, err
	}
	run, err := c.Next.SignalWithStartWorkflow(ctx, in)
	s.finish(err)
	return run, err
}

// QueryWorkflow traces a query: QueryWorkflow:<type>.
func (c *clientOutbound) QueryWorkflow(ctx context.Context, in *interceptor.ClientQueryWorkflowInput) (client.EncodedValue, error) {
	if c.t.options.DisableQueryTracing {
		return c.Next.QueryWorkflow(ctx, in)
	}
	s, ctx, err := c.clientSpan(ctx, "QueryWorkflow", in.QueryType, map[string]string{workflowIDTagKey: in.WorkflowID})
	if err != nil {
		return nil, err
	}
	v, err := c.Next.QueryWorkflow(ctx, in)
	s.finish(err)
	return v, err
}

// UpdateWorkflow traces an update: UpdateWorkflow:<name>.
func (c *clientOutbound) UpdateWorkflow(ctx context.Context, in *interceptor.ClientUpdateWorkflowInput) (client.WorkflowUpdateHandle, error) {
	if c.t.options.DisableUpdateTracing {
		return c.Next.UpdateWorkflow(ctx, in)
	}
	s, ctx, err := c.clientSpan(ctx, "UpdateWorkflow", in.UpdateName,
		map[string]string{workflowIDTagKey: in.WorkflowID, updateIDTagKey: in.UpdateID})
	if err != nil {
		return nil, err
	}
	h, err := c.Next.UpdateWorkflow(ctx, in)
	s.finish(err)
	return h, err
}

// workflowInbound makes a workflow's spans.
type workflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	t *Tracer
}

// Init installs the outbound interceptor of workflow code's calls.
func (w *workflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	o := &workflowOutbound{t: w.t}
	o.Next = outbound
	return w.Next.Init(o)
}

// workflowSpan starts a span of a workflow's inbound call as a child of
// the span in its header, and returns ctx with it. While the workflow
// replays it starts none: ctx gets the header's span as the parent of
// what follows, so that a replay does not repeat the spans it once made.
func (w *workflowInbound) workflowSpan(ctx workflow.Context, operation, name string, extra map[string]string) (*tracerSpan, workflow.Context, error) {
	parent, err := w.t.readHeader(interceptor.WorkflowHeader(ctx))
	if err != nil {
		return nil, ctx, err
	}
	if parent == nil {
		parent = w.t.fromWorkflowContext(ctx)
	}
	if workflow.IsReplaying(ctx) {
		if parent != nil {
			ctx = workflow.WithValue(ctx, w.t.options.SpanContextKey, parent)
		}
		return nil, ctx, nil
	}
	info := workflow.GetInfo(ctx)
	attrs := map[string]string{workflowIDTagKey: info.WorkflowExecution.ID, runIDTagKey: info.WorkflowExecution.RunID}
	for k, v := range extra {
		attrs[k] = v
	}
	s := w.t.start(startOptions{operation: operation, name: name, kind: trace.SpanKindServer, parent: parent, attrs: attrs})
	return s, workflow.WithValue(ctx, w.t.options.SpanContextKey, s), nil
}

// ExecuteWorkflow traces the workflow's run: RunWorkflow:<type>, ended
// when the workflow function returns.
func (w *workflowInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	s, ctx, err := w.workflowSpan(ctx, "RunWorkflow", workflow.GetInfo(ctx).WorkflowType.Name, nil)
	if err != nil {
		return nil, err
	}
	v, err := w.Next.ExecuteWorkflow(ctx, in)
	if s != nil {
		s.finish(err)
	}
	return v, err
}

// HandleSignal traces a signal's handling: HandleSignal:<name>.
func (w *workflowInbound) HandleSignal(ctx workflow.Context, in *interceptor.HandleSignalInput) error {
	if w.t.options.DisableSignalTracing {
		return w.Next.HandleSignal(ctx, in)
	}
	s, ctx, err := w.workflowSpan(ctx, "HandleSignal", in.SignalName, nil)
	if err != nil {
		return err
	}
	err = w.Next.HandleSignal(ctx, in)
	if s != nil {
		s.finish(err)
	}
	return err
}

// HandleQuery traces a query's handling: HandleQuery:<type>.
func (w *workflowInbound) HandleQuery(ctx workflow.Context, in *interceptor.HandleQueryInput) (any, error) {
	if w.t.options.DisableQueryTracing {
		return w.Next.HandleQuery(ctx, in)
	}
	s, ctx, err := w.workflowSpan(ctx, "HandleQuery", in.QueryType, nil)
	if err != nil {
		return nil, err
	}
	v, err := w.Next.HandleQuery(ctx, in)
	if s != nil {
		s.finish(err)
	}
	return v, err
}

// ValidateUpdate traces an update's validation: ValidateUpdate:<name>.
func (w *workflowInbound) ValidateUpdate(ctx workflow.Context, in *interceptor.UpdateInput) error {
	if w.t.options.DisableUpdateTracing {
		return w.Next.ValidateUpdate(ctx, in)
	}
	s, ctx, err := w.workflowSpan(ctx, "ValidateUpdate", in.Name, nil)
	if err != nil {
		return err
	}
	err = w.Next.ValidateUpdate(ctx, in)
	if s != nil {
		s.finish(err)
	}
	return err
}

// ExecuteUpdate traces an update's handling: HandleUpdate:<name>.
func (w *workflowInbound) ExecuteUpdate(ctx workflow.Context, in *interceptor.UpdateInput) (any, error) {
	if w.t.options.DisableUpdateTracing {
		return w.Next.ExecuteUpdate(ctx, in)
	}
	s, ctx, err := w.workflowSpan(ctx, "HandleUpdate", in.Name, nil)
	if err != nil {
		return nil, err
	}
	v, err := w.Next.ExecuteUpdate(ctx, in)
	if s != nil {
		s.finish(err)
	}
	return v, err
}

// workflowOutbound makes the spans of workflow code's calls.
type workflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	t *Tracer
}

// outboundSpan starts and ends a span of a call workflow code makes, a
// child of the workflow context's span, and writes it into the call's
// header. It starts none while the workflow replays (the call was traced
// when it was first made).
func (o *workflowOutbound) outboundSpan(ctx workflow.Context, operation, name string) error {
	if workflow.IsReplaying(ctx) {
		return nil
	}
	info := workflow.GetInfo(ctx)
	s := o.t.start(startOptions{operation: operation, name: name, kind: trace.SpanKindClient,
		parent: o.t.fromWorkflowContext(ctx),
		attrs:  map[string]string{workflowIDTagKey: info.WorkflowExecution.ID, runIDTagKey: info.WorkflowExecution.RunID}})
	err := o.t.writeHeader(interceptor.WorkflowHeader(ctx), s)
	s.finish(err)
	return err
}

func failedFuture(ctx workflow.Context, err error) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	set.Set(nil, err)
	return f
}

// ExecuteActivity traces an activity's scheduling: StartActivity:<type>.
func (o *workflowOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if err := o.outboundSpan(ctx, "StartActivity", activityType); err != nil {
		return failedFuture(ctx, err)
	}
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

// ExecuteLocalActivity traces a local activity: StartActivity:<type>.
func (o *workflowOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if err := o.outboundSpan(ctx, "StartActivity", activityType); err != nil {
		return failedFuture(ctx, err)
	}
	return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

// ExecuteChildWorkflow traces a child's start: StartChildWorkflow:<type>.
func (o *workflowOutbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	if err := o.outboundSpan(ctx, "StartChildWorkflow", childWorkflowType); err != nil {
		return childFuture{failedFuture(ctx, err)}
	}
	return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
}

// SignalExternalWorkflow traces a signal to another workflow:
// SignalExternalWorkflow:<name>.
func (o *workflowOutbound) SignalExternalWorkflow(ctx workflow.Context, workflowID, runID, signalName string, arg any) workflow.Future {
	if !o.t.options.DisableSignalTracing {
		if err := o.outboundSpan(ctx, "SignalExternalWorkflow", signalName); err != nil {
			return failedFuture(ctx, err)
		}
	}
	return o.Next.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
}

// GetLogger adds the trace and span ids of the workflow's span.
func (o *workflowOutbound) GetLogger(ctx workflow.Context) log.Logger {
	if r := o.t.fromWorkflowContext(ctx); r != nil {
		return o.t.GetLogger(o.Next.GetLogger(ctx), r.sc)
	}
	return o.Next.GetLogger(ctx)
}

// childFuture is a failed child workflow future.
type childFuture struct{ workflow.Future }

// GetChildWorkflowExecution returns the failed future itself.
func (c childFuture) GetChildWorkflowExecution() workflow.Future { return c }

// SignalChildWorkflow returns the failed future itself: the child did not
// start.
func (c childFuture) SignalChildWorkflow(workflow.Context, string, any) workflow.Future { return c }

// activityInbound makes an activity's span.
type activityInbound struct {
	interceptor.ActivityInboundInterceptorBase
	t *Tracer
}

// Init installs the outbound interceptor of activity code's calls.
func (a *activityInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	o := &activityOutbound{t: a.t}
	o.Next = outbound
	return a.Next.Init(o)
}

// ExecuteActivity traces an attempt: RunActivity:<type>, a child of the
// StartActivity span in the activity's header. The activity's context
// carries it, so its calls (and the worker's report of it, with
// InjectTraceContext) join the trace.
func (a *activityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	parent, err := a.t.readHeader(interceptor.Header(ctx))
	if err != nil {
		return nil, err
	}
	if parent == nil {
		parent = a.t.fromGoContext(ctx)
	}
	info := activity.GetInfo(ctx)
	s := a.t.start(startOptions{operation: "RunActivity", name: info.ActivityType.Name, kind: trace.SpanKindServer, parent: parent,
		attrs: map[string]string{workflowIDTagKey: info.WorkflowExecution.ID, runIDTagKey: info.WorkflowExecution.RunID, activityIDTagKey: info.ActivityID}})
	v, err := a.Next.ExecuteActivity(a.t.goContext(ctx, s), in)
	s.finish(err)
	return v, err
}

// activityOutbound adds the trace to activity code's logger.
type activityOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	t *Tracer
}

// GetLogger adds the trace and span ids of the activity's span.
func (o *activityOutbound) GetLogger(ctx context.Context) log.Logger {
	return o.t.GetLogger(o.Next.GetLogger(ctx), trace.SpanContextFromContext(ctx))
}
