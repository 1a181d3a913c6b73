package opentelemetry

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
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
// request joins the caller's trace. A context without a span adds nothing.
func InjectTraceContext(req *http.Request) {
	DefaultTextMapPropagator.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
}

// NewRequestHook returns a client.Options.RequestHook that injects the
// request context's span with prop (DefaultTextMapPropagator when nil).
func NewRequestHook(prop propagation.TextMapPropagator) func(*http.Request) {
	if prop == nil {
		prop = DefaultTextMapPropagator
	}
	return func(req *http.Request) { prop.Inject(req.Context(), propagation.HeaderCarrier(req.Header)) }
}
