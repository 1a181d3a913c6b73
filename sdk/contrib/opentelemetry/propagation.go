package opentelemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// DefaultTextMapPropagator writes and reads spans in headers: W3C trace
// context and baggage. It is used unless TracerOptions sets another.
var DefaultTextMapPropagator = propagation.NewCompositeTextMapPropagator(
	propagation.TraceContext{},
	propagation.Baggage{},
)

// InjectTraceContext is a client.Options.RequestHook: it writes the W3C
// trace context (traceparent, tracestate) and baggage of the span in the
// request's context into its headers, so that the server's span of the
// request joins the caller's trace. The worker's reports carry the values
// of the work they report, so an activity's report carries its
// RunActivity span and a turn's ack its workflow's RunWorkflow span (the
// tracing interceptor's, under the default SpanContextKey). A context
// without a span adds nothing.
func InjectTraceContext(req *http.Request) { inject(DefaultTextMapPropagator, req) }

// NewRequestHook returns a client.Options.RequestHook that injects as
// InjectTraceContext does, with prop (DefaultTextMapPropagator when nil).
func NewRequestHook(prop propagation.TextMapPropagator) func(*http.Request) {
	if prop == nil {
		prop = DefaultTextMapPropagator
	}
	return func(req *http.Request) { inject(prop, req) }
}

func inject(prop propagation.TextMapPropagator, req *http.Request) {
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = workflowSpanContext(ctx)
	}
	prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
}

// workflowSpanContext returns ctx with the span that a workflow context's
// values hold (the tracing interceptor's, by spanContextKey) as its
// OpenTelemetry span; ctx as it is when there is none.
func workflowSpanContext(ctx context.Context) context.Context {
	switch s := ctx.Value(spanContextKey{}).(type) {
	case *tracerSpan:
		if s.bag.Len() > 0 {
			ctx = baggage.ContextWithBaggage(ctx, s.bag)
		}
		return trace.ContextWithSpan(ctx, s.Span)
	case *spanRef:
		if s.bag.Len() > 0 {
			ctx = baggage.ContextWithBaggage(ctx, s.bag)
		}
		return trace.ContextWithRemoteSpanContext(ctx, s.sc)
	}
	return ctx
}
