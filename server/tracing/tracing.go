// Package tracing is the server's OpenTelemetry tracing: a span per
// request, a child of the W3C trace context it carries, child spans for
// store transactions, and the tracer provider built from the OTEL_*
// environment variables (FromEnv). It never imports package server.
package tracing

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tetherhq/tether/server/edge"
)

// tracerName is the instrumentation scope of the server's spans.
const tracerName = "github.com/tetherhq/tether/server"

// Attributes of the server's spans besides OpenTelemetry's HTTP ones.
const (
	// AttrNamespace is the request's namespace.
	AttrNamespace = attribute.Key("tether.namespace")
	// AttrWorkflowID is the workflow's instance id.
	AttrWorkflowID = attribute.Key("tether.workflow_id")
	// AttrRequestID is the request's X-Request-ID.
	AttrRequestID = attribute.Key("tether.request_id")
	// AttrWorkflowType is the started workflow's type.
	AttrWorkflowType = attribute.Key("tether.workflow_type")
)

// Tracer is the server's tracer and the propagator that reads a
// request's W3C trace context. Its zero value (no tracer) is tracing off:
// no middleware is installed and StoreSpan returns at once.
type Tracer struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// New returns the tracer of tp; nil: tracing off (the zero Tracer).
func New(tp trace.TracerProvider) Tracer {
	if tp == nil {
		return Tracer{}
	}
	return Tracer{
		tracer: tp.Tracer(tracerName),
		prop:   propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

// Middleware makes one server span per request, named "METHOD route"
// by its route template, as a child of the trace context the request
// carries (traceparent, tracestate, baggage), with the namespace, the
// workflow id and the answer's status. It runs outside the middleware
// that answers errors, so the status it records is the one sent. It is
// for a Tracer that is on (On).
func (t Tracer) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := t.prop.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		ctx, span := t.tracer.Start(ctx, req.Method+" "+route,
			trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("http.request.method", req.Method),
				attribute.String("http.route", route),
				attribute.String("url.path", req.URL.Path),
			))
		defer span.End()
		if ns := c.Param("namespace"); ns != "" {
			span.SetAttributes(AttrNamespace.String(ns))
		}
		if id := c.Param("instance_id"); id != "" {
			span.SetAttributes(AttrWorkflowID.String(id))
		}
		c.SetRequest(req.WithContext(ctx))
		err := next(c)
		status := c.Response().Status
		span.SetAttributes(attribute.Int("http.response.status_code", status),
			AttrRequestID.String(edge.RequestID(c)))
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		return err
	}
}

// StoreSpan starts the span of one store transaction, a child of the
// request's span, when tracing is on; end records err and ends it. With
// tracing off it returns ctx and a no-op at once.
func (t Tracer) StoreSpan(ctx context.Context, name string) (context.Context, func(err error)) {
	if t.tracer == nil {
		return ctx, endNothing
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("db.system.name", "postgresql")))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// endNothing is the end of a span not made.
func endNothing(error) {}

// On reports whether the server traces requests. Check it before
// building attributes for Annotate, so that nothing is built when off.
func (t Tracer) On() bool { return t.tracer != nil }

// Annotate adds attributes to the span of c's request.
func Annotate(c echo.Context, kv ...attribute.KeyValue) {
	trace.SpanFromContext(c.Request().Context()).SetAttributes(kv...)
}
